package cuda

import (
	_ "embed"
	"fmt"
	"strings"
)

// prelude is the translation of the suite's OpenCL C dialect to CUDA C++ (prelude.cuh),
// placed before every kernel source given to Build.
//
//go:embed prelude.cuh
var prelude string

// sourceName is the file name NVRTC's messages give an OpenCL C source that has no name
// of its own: a #line directive after the prelude makes them count lines from the
// source's first line, as an OpenCL compiler's log does.
const sourceName = "kernel.cl"

// translate returns the text NVRTC compiles for an OpenCL C source named name: the
// prelude, a #line directive, and the source rewritten (translate.go) within its lines. A
// source that uses a construct with no CUDA counterpart gets an #error directive before
// the #line that names it (translateOpenCL returns the error itself).
func translate(source, name string) string {
	tr, err := translateOpenCL(source, name)
	if err != nil {
		return prelude + "\n#error " + cQuote(err.Error()) + "\n#line 1 " + cQuote(name) + "\n" + source
	}
	return tr.text
}

// translateOpenCL returns the text NVRTC compiles for an OpenCL C source named name, or an
// error wrapping engine.ErrUnsupported that names a construct with no CUDA counterpart and
// its line and column.
func translateOpenCL(source, name string) (translation, error) {
	tr, err := translateProgram(source, name)
	if err != nil {
		return translation{}, err
	}
	tr.text = prelude + "\n#line 1 " + cQuote(name) + "\n" + tr.text
	return tr, nil
}

// cQuote writes s as a C string literal: backslash and double quote escaped, every other
// byte below 0x20, DEL and every byte of s that is not valid UTF-8 as a three-digit octal
// escape (which, unlike a hex escape, cannot swallow the characters after it). Printable
// UTF-8 stays as it is.
func cQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == 0xFFFD && !strings.HasPrefix(s[i:], "\uFFFD"), r < 0x20, r == 0x7F:
			fmt.Fprintf(&b, "\\%03o", s[i])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
