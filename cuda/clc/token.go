package clc

import "strings"

// Kind is the kind of a Token.
type Kind uint8

// The kinds of tokens.
const (
	Space     Kind = iota // white space, newlines, backslash-newlines
	Comment               // /* ... */ or // ...
	Directive             // a preprocessor line, continuation lines included
	Ident
	Number
	String // "..." or '...'
	Punct
)

// A Token is a piece of the source: Text is its bytes, Off their offset in the source.
type Token struct {
	Kind Kind
	Text string
	Off  int
}

// Significant reports whether the token is more than space or a comment.
func (tk Token) Significant() bool { return tk.Kind != Space && tk.Kind != Comment }

var puncts = []string{"<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##"}

// Tokenize splits text into tokens, which together are text byte for byte. Comments,
// string and character literals are single tokens; numbers are preprocessing numbers
// (1.0f, 0x1p3f, 1e-5). In a directive's text (directive true) a # is punctuation;
// otherwise a # first on its line starts a Directive token that runs to the end of the
// line, through backslash-newlines and comments.
func Tokenize(text string, directive bool) []Token {
	toks := make([]Token, 0, len(text)/4+1)
	lineStart := true
	for i := 0; i < len(text); {
		c := text[i]
		start := i
		kind := Punct
		switch {
		case c == '\\' && (strings.HasPrefix(text[i+1:], "\n") || strings.HasPrefix(text[i+1:], "\r\n")):
			kind = Space
			i = i + 1 + strings.IndexByte(text[i+1:], '\n') + 1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			for i < len(text) && strings.IndexByte(" \t\n\r\f\v", text[i]) >= 0 {
				if text[i] == '\n' {
					lineStart = true
				}
				i++
			}
			toks = append(toks, Token{Kind: Space, Text: text[start:i], Off: start})
			continue
		case c == '/' && strings.HasPrefix(text[i:], "//"):
			kind = Comment
			i = lineEnd(text, i)
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			kind = Comment
			if j := strings.Index(text[i+2:], "*/"); j >= 0 {
				i += 2 + j + 2
			} else {
				i = len(text)
			}
		case c == '#' && lineStart && !directive:
			kind = Directive
			i = directiveEnd(text, i)
		case c == '"' || c == '\'':
			kind = String
			i = quotedEnd(text, i)
		case IsDigit(c) || c == '.' && i+1 < len(text) && IsDigit(text[i+1]):
			kind = Number
			i++
			for i < len(text) {
				d := text[i]
				if (d == '+' || d == '-') && strings.IndexByte("eEpP", text[i-1]) >= 0 {
					i++
				} else if IsIdent(d) || d == '.' {
					i++
				} else {
					break
				}
			}
		case IsIdent(c):
			kind = Ident
			for i < len(text) && IsIdent(text[i]) {
				i++
			}
		default:
			i++
			for _, p := range puncts {
				if strings.HasPrefix(text[start:], p) {
					i = start + len(p)
					break
				}
			}
		}
		lineStart = false
		toks = append(toks, Token{Kind: kind, Text: text[start:i], Off: start})
	}
	return toks
}

// IsDigit reports whether c is a decimal digit.
func IsDigit(c byte) bool { return '0' <= c && c <= '9' }

// IsIdent reports whether c may be part of an identifier (bytes of UTF-8 sequences
// included).
func IsIdent(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || IsDigit(c) || c >= 0x80
}

// lineEnd returns the index of the newline that ends the line at i (not one escaped by a
// backslash), or len(text).
func lineEnd(text string, i int) int {
	for {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return len(text)
		}
		k := i + j
		if k > i && text[k-1] == '\\' || k > i+1 && text[k-1] == '\r' && text[k-2] == '\\' {
			i = k + 1
			continue
		}
		return k
	}
}

// directiveEnd returns the end of the directive at i: the newline ending its last line,
// past backslash-newlines, comments and literals.
func directiveEnd(text string, i int) int {
	for i < len(text) {
		switch c := text[i]; {
		case c == '\n':
			return i
		case c == '\\' && i+1 < len(text) && (text[i+1] == '\n' || text[i+1] == '\r'):
			i += 2
		case strings.HasPrefix(text[i:], "/*"):
			if j := strings.Index(text[i+2:], "*/"); j >= 0 {
				i += 2 + j + 2
			} else {
				return len(text)
			}
		case strings.HasPrefix(text[i:], "//"):
			return lineEnd(text, i)
		case c == '"' || c == '\'':
			i = quotedEnd(text, i)
		default:
			i++
		}
	}
	return i
}

// quotedEnd returns the index after the string or character literal at i; an
// unterminated one ends at its line's end.
func quotedEnd(text string, i int) int {
	q := text[i]
	for i++; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case q:
			return i + 1
		case '\n':
			return i
		}
	}
	return len(text)
}

// SignificantIndices returns the indices of the significant tokens of toks (neither
// space nor comment), in order.
func SignificantIndices(toks []Token) []int {
	var sig []int
	for i := range toks {
		if toks[i].Significant() {
			sig = append(sig, i)
		}
	}
	return sig
}

// Brackets returns, for each significant token (sig, indices into toks), the position in
// sig of the bracket that matches it, ( with ) and [ with ], or -1. An unbalanced closing
// bracket matches nothing before it.
func Brackets(toks []Token, sig []int) []int {
	pair := make([]int, len(sig))
	var stack []int
	for k, i := range sig {
		pair[k] = -1
		if toks[i].Kind != Punct {
			continue
		}
		switch s := toks[i].Text; s {
		case "(", "[":
			stack = append(stack, k)
		case ")", "]":
			open := "("
			if s == "]" {
				open = "["
			}
			if n := len(stack); n > 0 && toks[sig[stack[n-1]]].Text == open {
				pair[k], pair[stack[n-1]] = stack[n-1], k
				stack = stack[:n-1]
			} else {
				stack = stack[:0] // unbalanced: nothing before matches across it
			}
		}
	}
	return pair
}
