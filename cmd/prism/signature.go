package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/bench/userkernel"
	"github.com/prism-compute/prism/cuda/clc"
	"github.com/prism-compute/prism/kernels"
)

// The checks of this file read FILE.cl's kernel signatures (package clc) before any device
// builds it, so that prism exec refuses, on every backend and before a launch, a --kernel
// that the file does not define and --arg specs that do not fit the kernel's parameters:
// their count, a buffer where a value is expected and the reverse, and an element type
// other than the one the parameter declares. A buffer's element type that differs from
// the pointee type is refused because the kernel would read it as another type, and a
// buffer of the wrong size in bytes can let a kernel reach past its end (which can crash
// the driver's process) where the launch itself reports nothing. What the source does not
// say plainly (a type behind a typedef or a function-like macro, a name pasted with ##) is
// left to the driver.

// kernelNames returns the names of the kernels that src defines, in order.
func kernelNames(src string, defines []string) []string {
	macros := objectMacros(src, defines)
	var names []string
	for _, k := range clc.Defined(src) {
		names = append(names, expand(macros, k.Name))
	}
	return names
}

// checkKernelArgs checks kernel and args against the signatures of src (file names it in
// messages), with the build's -D defines. It returns a usage error naming the kernels the
// file defines, or the parameter an argument does not fit.
func checkKernelArgs(file, src, kernel string, defines []string, args []*userkernel.Arg) error {
	if strings.Contains(src, "##") {
		return nil // a kernel's name or type may be pasted together: the driver will tell
	}
	macros := objectMacros(src, defines)
	var found []clc.Kernel
	var names []string
	for _, k := range clc.Defined(src) {
		k.Name = expand(macros, k.Name)
		names = append(names, k.Name)
		if k.Name == kernel {
			found = append(found, k)
		}
	}
	if len(found) == 0 {
		if mentions(src, kernel) {
			return nil // perhaps defined through a macro: the driver will tell
		}
		return usageError{notInFile(file, kernel, names)}
	}
	if len(found) > 1 {
		return nil // several definitions (under #if): the preprocessor chooses one
	}
	k := found[0]
	params := k.Params
	if len(args) != len(params) {
		var list []string
		for _, p := range params {
			list = append(list, describeParam(p))
		}
		msg := fmt.Sprintf("kernel %s (%s, line %d) takes %d arguments, --arg gives %d", kernel, file, k.Line, len(params), len(args))
		if len(args) < len(params) {
			msg += fmt.Sprintf(": parameter %s has none", describeParam(params[len(args)]))
		} else {
			msg += fmt.Sprintf(": --arg %d %q has no parameter", len(params), args[len(params)].Spec)
		}
		if len(list) > 0 {
			msg += fmt.Sprintf(" (the parameters: %s)", strings.Join(list, "; "))
		}
		return usageError{fmt.Errorf("%s", msg)}
	}
	for i, p := range params {
		p.Type = expand(macros, p.Type)
		if err := checkParam(p, args[i]); err != nil {
			return usageError{fmt.Errorf("--arg %d %q: parameter %s of %s: %w", i, args[i].Spec, describeParam(p), kernel, err)}
		}
	}
	return nil
}

// notInFile is the error of a --kernel that file does not define.
func notInFile(file, kernel string, names []string) error {
	switch len(names) {
	case 0:
		return fmt.Errorf("--kernel %s: %s defines no kernel (no __kernel function)", kernel, file)
	case 1:
		return fmt.Errorf("--kernel %s: %s defines no kernel of that name; its kernel is %s", kernel, file, names[0])
	}
	return fmt.Errorf("--kernel %s: %s defines no kernel of that name; its kernels are %s", kernel, file, strings.Join(names, ", "))
}

// describeParam names a parameter: its index, name and declaration.
func describeParam(p clc.Param) string {
	if p.Name == "" {
		return fmt.Sprintf("%d (%s)", p.Index, p.Decl)
	}
	return fmt.Sprintf("%d %s (%s)", p.Index, p.Name, p.Decl)
}

// checkParam checks that argument a fits parameter p, whose Type has its macros expanded.
func checkParam(p clc.Param, a *userkernel.Arg) error {
	elem, width, known := clType(p.Type)
	switch {
	case p.Pointer && p.Space == "local":
		if a.Kind != userkernel.Local {
			return fmt.Errorf("a __local pointer wants local:BYTES or local:%s:COUNT, not a %s", typeSpec(elem, known, p.Type), kindName(a))
		}
		if a.Type.Name != "" && known && a.Type.Name != elem.Name {
			return fmt.Errorf("local memory of %s, not of %s: want local:%s:COUNT", p.Type, a.Type.Name, elem.Name)
		}
	case p.Pointer:
		if a.Kind != userkernel.Buf && a.Kind != userkernel.Out && a.Kind != userkernel.InOut {
			return fmt.Errorf("a pointer wants a buffer (buf:%[1]s:SIZE, out:%[1]s:SIZE or inout:%[1]s:SIZE), not a %[2]s",
				typeSpec(elem, known, p.Type), kindName(a))
		}
		if !known || p.Type == "void" {
			return nil
		}
		if a.Type.Name != elem.Name {
			return fmt.Errorf("the kernel reads %s elements, the buffer holds %s: want %s:%s:%d", p.Type, a.Type.Name, a.Kind, elem.Name, a.Len)
		}
		if a.Len%width != 0 {
			return fmt.Errorf("%d %s elements are not a whole number of %s (a multiple of %d)", a.Len, a.Type.Name, p.Type, width)
		}
	default:
		if a.Kind != userkernel.Scalar {
			return fmt.Errorf("a value (scalar:%s:VALUE) is passed here, not a %s", typeSpec(elem, known, p.Type), kindName(a))
		}
		if !known {
			return nil
		}
		if width > 1 {
			return fmt.Errorf("%s passed by value: prism exec passes scalars only; pass a buffer of %s instead", article(p.Type), elem.Name)
		}
		if a.Type.Name != elem.Name {
			return fmt.Errorf("the kernel takes %s, --arg passes %s: want scalar:%s:%s", article(p.Type), article(a.Type.Name), elem.Name, valueOf(a))
		}
	}
	return nil
}

// kindName says what an argument is, in the words of its spec.
func kindName(a *userkernel.Arg) string {
	switch a.Kind {
	case userkernel.Scalar:
		return "scalar (" + a.Type.Name + ")"
	case userkernel.Local:
		return "local memory argument"
	}
	return a.Kind + " buffer of " + a.Type.Name
}

// typeSpec is the TYPE to write in a spec for a parameter of C type c: its element type's
// name when known, else TYPE.
func typeSpec(t kernels.Type, known bool, c string) string {
	if known && c != "void" {
		return t.Name
	}
	return "TYPE"
}

// article returns s after "a" or "an" as its first sound asks (a uint, an int32).
func article(s string) string {
	if s != "" && strings.ContainsRune("aeio", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// valueOf returns the VALUE part of a scalar's spec.
func valueOf(a *userkernel.Arg) string {
	spec := a.Spec
	if i := strings.LastIndexByte(spec, ':'); i >= 0 {
		return spec[i+1:]
	}
	return "VALUE"
}

// clType returns the element type of OpenCL C's type c and its vector width (1 for a
// scalar); known is false for a type prism exec does not know (size_t, whose size is the
// device's, a struct, a typedef). void is known, as int8 (a pointer to it takes any buffer).
func clType(c string) (t kernels.Type, width int, known bool) {
	if c == "void" {
		t, _ = userkernel.LookupType("char")
		return t, 1, true
	}
	base, width := c, 1
	for _, n := range []int{16, 8, 4, 3, 2} {
		if s, ok := strings.CutSuffix(c, strconv.Itoa(n)); ok {
			if _, isType := clScalars[s]; isType {
				base, width = s, n
				break
			}
		}
	}
	if !clScalars[base] {
		return kernels.Type{}, 0, false
	}
	t, known = userkernel.LookupType(base)
	if width == 3 {
		width = 4 // a 3-component vector takes the room of 4
	}
	return t, width, known
}

// clScalars are OpenCL C's scalar types that prism exec passes.
var clScalars = map[string]bool{"char": true, "uchar": true, "short": true, "ushort": true, "int": true, "uint": true,
	"long": true, "ulong": true, "half": true, "float": true, "double": true}

// objectMacros returns the macros whose replacement is one word: -D NAME=VALUE of the
// build and the source's own #define NAME VALUE lines (the -D ones win, as the compiler's
// command line comes first and a source's redefinition would be an error).
func objectMacros(src string, defines []string) map[string]string {
	m := map[string]string{}
	for _, tk := range clc.Tokenize(src, false) {
		if tk.Kind != clc.Directive {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(tk.Text), "#"))
		if len(f) == 3 && f[0] == "define" && !strings.Contains(f[1], "(") && isWord(f[2]) {
			m[f[1]] = f[2]
		}
	}
	for _, d := range defines {
		name, value, ok := strings.Cut(strings.TrimPrefix(d, "-D"), "=")
		if ok && isWord(value) {
			m[name] = value
		}
	}
	return m
}

// expand replaces a one-word macro name by its value, a few times at most.
func expand(macros map[string]string, s string) string {
	for range 8 {
		v, ok := macros[s]
		if !ok || v == s {
			break
		}
		s = v
	}
	return s
}

// isWord reports whether s is an identifier.
func isWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if !clc.IsIdent(s[i]) || i == 0 && clc.IsDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// mentions reports whether name is an identifier of src outside comments and strings, or a
// word of a directive.
func mentions(src, name string) bool {
	for _, tk := range clc.Tokenize(src, false) {
		switch tk.Kind {
		case clc.Ident:
			if tk.Text == name {
				return true
			}
		case clc.Directive:
			for _, d := range clc.Tokenize(tk.Text, true) {
				if d.Kind == clc.Ident && d.Text == name {
					return true
				}
			}
		}
	}
	return false
}
