package translate

import (
	_ "embed"
	"strings"
	"sync"
)

// builtins.tsv is the table of OpenCL C 1.2's built-in functions (section 6.12 of the
// specification, and the atom_* functions of its extensions) and each one's state on the
// CUDA translation, one row a function, tab-separated, with a header row. Its columns:
//
//	section     the specification's section (6.12.2, ...; 9.5 and 9.7 for the extensions),
//	            or 2.0+ for what OpenCL C 2.0 and 3.0 add
//	group       work-item, math, half_math, native_math, integer, common, geometric,
//	            relational, vload, sync, async, atomic, atomic64, misc_vector, printf, image;
//	            for OpenCL C 2.0 and later (section 2.0+): subgroup, workgroup, pipe,
//	            enqueue, atomic_c11, address_space
//	name        the function's name; {n} stands for each vector width of the widths column
//	            (vload{n}: vload2, vload3, ...)
//	signature   result:arguments in the codes of docs/BUILTINS.md (g the row's type, i the
//	            int vector of its width, pg a pointer to g, ...); - where none applies
//	types       the element types it takes (- where none)
//	widths      the vector widths it takes, 1 for the scalar
//	state       supported, refused (the translation refuses it, with the note as message)
//	            or missing (neither supported nor refused)
//	ulp_float   the specification's maximum error in ulp for float (section 7.4, table 7.1):
//	            0 correctly rounded, inf any, impl implementation-defined, - not stated
//	ulp_double  the same for double (table 7.2)
//	note        what a reader should know, or the message of a refusal
//
//go:embed builtins.tsv
var builtinsTSV string

// A builtin is a row of builtins.tsv.
type builtin struct {
	section, group, name, signature string
	types, widths                   []string
	state                           string
	ulpFloat, ulpDouble, note       string
}

// names returns the function names the row stands for: its name with {n} replaced by each
// of its widths, or its name.
func (b builtin) names() []string {
	if !strings.Contains(b.name, "{n}") {
		return []string{b.name}
	}
	var out []string
	for _, w := range b.widths {
		out = append(out, strings.ReplaceAll(b.name, "{n}", w))
	}
	return out
}

// builtins returns the rows of builtins.tsv, parsed once.
var builtins = sync.OnceValue(func() []builtin {
	var out []builtin
	for i, line := range strings.Split(strings.TrimSuffix(builtinsTSV, "\n"), "\n") {
		if i == 0 {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 10 {
			panic("translate: builtins.tsv: line " + line + ": not 10 fields") // cannot happen: TestBuiltinsTable
		}
		list := func(s string) []string {
			if s == "-" {
				return nil
			}
			return strings.Split(s, ",")
		}
		out = append(out, builtin{section: f[0], group: f[1], name: f[2], signature: f[3], types: list(f[4]),
			widths: list(f[5]), state: f[6], ulpFloat: f[7], ulpDouble: f[8], note: f[9]})
	}
	return out
})
