package translate

import (
	"embed"
	"fmt"
	"strings"
	"sync"

	"github.com/prism-compute/prism/engine"
)

// The prelude is the files of prelude/, one concept each, concatenated in this order (each
// uses only what comes before it, and the OpenCL names come last so that nothing before
// them is rewritten by their macros):
//
//	dialect.cuh      what maps and what does not; the include guard and PRISM_CUDA
//	environment.cuh  part 1: what NVRTC provides and clang without the CUDA headers
//	                 lacks (thread indices, atomics, vector types, math declarations)
//	types.cuh        part 2 begins: scalar types, address-space qualifiers, __local
//	                 pointer parameters as offsets in dynamic shared memory
//	workitems.cuh    work-item functions, barriers and fences
//	async.cuh        async_work_group_copy, its strided form, wait_group_events, prefetch
//	atomics.cuh      atomic_* and atom_* on 32-bit integers, atom_* on 64-bit ones
//	subgroups.cuh    OpenCL C 3.0's subgroups as warps: their work-item functions,
//	                 barrier, votes, broadcast, reductions and scans (warp shuffles)
//	math.cuh         integer and common functions, float and double math, native_*
//	vectors.cuh      vector types, operators, literals, swizzles, as_<type>
//	conversions.cuh  convert_<type>[_sat][_rte|_rtz|_rtp|_rtn]
//	vload.cuh        vloadN and vstoreN
//	constants.cuh    float.h, limits.h and the M_* constants
//	builtins.cuh     integer functions on every type, relational functions, select and
//	                 bitselect, and the vector forms of the built-in functions
//	geometric.cuh    dot, cross, length, distance, normalize and their fast_* forms
//	half.cuh         half as a storage type: vload_half, vstore_half and their forms
//	names.cuh        the OpenCL names as macros over the functions above; the guard's end
//
// NVRTC gets the concatenation as one program named prelude.cuh; its messages about the
// prelude count lines of the concatenation.
//
//go:embed prelude/*.cuh
var preludeFS embed.FS

// preludeOrder names the files of prelude/ in the order above.
var preludeOrder = []string{"dialect.cuh", "environment.cuh", "types.cuh", "workitems.cuh", "async.cuh", "atomics.cuh",
	"subgroups.cuh", "math.cuh", "vectors.cuh", "conversions.cuh", "vload.cuh", "constants.cuh", "builtins.cuh", "geometric.cuh",
	"half.cuh", "names.cuh"}

// prelude is the concatenation, made once.
var prelude = sync.OnceValue(func() string {
	var b strings.Builder
	for _, name := range preludeOrder {
		text, err := preludeFS.ReadFile("prelude/" + name)
		if err != nil {
			panic("translate: prelude file " + name + ": " + err.Error()) // cannot happen: embedded at build time
		}
		b.Write(text)
	}
	return b.String()
})

// Prelude returns the CUDA C++ text placed before every translated source: the OpenCL C
// dialect of the suite in terms of CUDA (the files of prelude/, in the order above).
func Prelude() string { return prelude() }

// DefaultName is the file name NVRTC's messages and the errors give an OpenCL C source
// that has no name of its own.
const DefaultName = "kernel.cl"

// Program is an OpenCL C source translated for NVRTC.
type Program struct {
	// Text is what NVRTC compiles: the prelude, a #line directive that makes NVRTC's
	// messages count lines from the source's first line under its name, and the source
	// rewritten within its lines.
	Text string
	// Locals holds, per kernel, the indices of its __local pointer parameters in
	// increasing order: the translation makes each a uint, the byte offset of its memory in
	// the block's dynamic shared memory, which the launch places and sizes.
	Locals map[string][]int
}

// Error is a construct of an OpenCL C source that has no CUDA counterpart, at its place
// in the source. It wraps engine.ErrUnsupported.
type Error struct {
	// Name is the source's name; Line and Column, from 1, the construct's place in it.
	Name         string
	Line, Column int
	// Msg names the construct and says why it has no counterpart.
	Msg string
}

// Error returns the error as a compiler's message: name:line:column: message.
func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s: %v", e.Name, e.Line, e.Column, e.Msg, engine.ErrUnsupported)
}

// Unwrap returns engine.ErrUnsupported.
func (e *Error) Unwrap() error { return engine.ErrUnsupported }

// OpenCL translates an OpenCL C source named name (DefaultName when empty) for NVRTC: the
// prelude, a #line directive, and the source rewritten (translate.go) within its lines. A
// construct with no CUDA counterpart gives an *Error naming it, its line and its column.
func OpenCL(source, name string) (Program, error) {
	if name == "" {
		name = DefaultName
	}
	return named(source, name)
}

// named is OpenCL for a name as it is, empty or not.
func named(source, name string) (Program, error) {
	p, err := rewriteProgram(source, name)
	if err != nil {
		return Program{}, err
	}
	p.Text = Prelude() + "\n#line 1 " + cQuote(name) + "\n" + p.Text
	return p, nil
}

// nvrtcText returns what a compiler gets for an OpenCL C source named name: OpenCL's
// text, or, for a source that uses a construct with no CUDA counterpart, the prelude, an
// #error directive with OpenCL's error and the source as it is, so that the compiler
// reports the error among its own messages (the tests give it to clang).
func nvrtcText(source, name string) string {
	p, err := named(source, name)
	if err != nil {
		return Prelude() + "\n#error " + cQuote(err.Error()) + "\n#line 1 " + cQuote(name) + "\n" + source
	}
	return p.Text
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
