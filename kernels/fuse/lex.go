package fuse

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/prism-compute/prism/engine"
)

// errorAt returns the error of a problem at column col of src.
func errorAt(src string, col int, format string, args ...any) error {
	return fmt.Errorf("fuse %q: column %d: %s: %w", src, col, fmt.Sprintf(format, args...), engine.ErrInvalidArg)
}

// token is a token: kind 'i' identifier, 'n' number, 'e' end, else the operator text.
type token struct {
	kind byte
	text string
	col  int
}

// lex splits src into tokens; an error names the column of the first character it
// cannot read.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		col := i + 1
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			toks = append(toks, token{'i', src[i:j], col})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && src[k] >= '0' && src[k] <= '9' {
					for k < len(src) && src[k] >= '0' && src[k] <= '9' {
						k++
					}
					j = k
				}
			}
			if j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z') {
				return nil, errorAt(src, j+1, "unexpected %q after the number %s", src[j], src[i:j])
			}
			toks = append(toks, token{'n', src[i:j], col})
			i = j
		default:
			two := ""
			if i+1 < len(src) {
				two = src[i : i+2]
			}
			switch two {
			case "<=", ">=", "==", "!=":
				toks = append(toks, token{'o', two, col})
				i += 2
				continue
			}
			if !strings.ContainsRune("+-*/%()<>?:=;,", rune(c)) {
				r, _ := utf8.DecodeRuneInString(src[i:]) // the character written, not its first byte
				return nil, errorAt(src, col, "unexpected character %q", r)
			}
			toks = append(toks, token{'o', string(c), col})
			i++
		}
	}
	return append(toks, token{'e', "", len(src) + 1}), nil
}
