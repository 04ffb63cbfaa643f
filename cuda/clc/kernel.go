package clc

import "strings"

// Kernel is the signature of one kernel function of a source, as written: what Kernels
// reads before any preprocessing (a macro that spells a kernel's name or a parameter's type
// is not expanded).
type Kernel struct {
	// Name is the kernel function's name.
	Name string
	// Line is the 1-based line of the name in the source.
	Line int
	// Params are the parameters in order; a (void) list has none.
	Params []Param
	// Defined reports whether this is the kernel's definition (a body follows), not a
	// declaration.
	Defined bool
	// Open, Close and Body are positions in the significant tokens (SignificantIndices of
	// the tokens KernelsOf read): the parameter list's parentheses and the body's opening
	// brace, -1 for a declaration.
	Open, Close, Body int
}

// Param is one parameter of a kernel.
type Param struct {
	// Index is the parameter's position, from 0.
	Index int
	// Name is the parameter's name, "" when it has none.
	Name string
	// Decl is the parameter as written, on one line ("__global const float *restrict x").
	Decl string
	// Space is the address space of a pointer's target: "global", "local", "constant" or
	// "private" (a pointer without a qualifier); "" for a parameter passed by value.
	Space string
	// Pointer reports whether the parameter is a pointer.
	Pointer bool
	// Const reports whether the value, or a pointer's target, is const.
	Const bool
	// Type is the element type without qualifiers, as OpenCL C names it: a pointer's
	// target type, or the value's ("float", "uint" for unsigned int, "float4"); a type
	// the source names otherwise (a typedef, a macro, a struct) is as written.
	Type string
	// First and End are the positions of its tokens in the significant tokens:
	// sig[First:End].
	First, End int
}

// Kernels returns the kernels of an OpenCL C source, definitions and declarations, in the
// order they appear.
func Kernels(src string) []Kernel {
	return KernelsOf(Tokenize(src, false))
}

// Defined returns the kernels of src that have a body, one per name, in order.
func Defined(src string) []Kernel {
	var out []Kernel
	seen := map[string]bool{}
	for _, k := range Kernels(src) {
		if k.Defined && !seen[k.Name] {
			seen[k.Name] = true
			out = append(out, k)
		}
	}
	return out
}

// qualifiers are the words of a parameter's declaration that are not its type's name:
// address spaces, access qualifiers, const, volatile, restrict.
var qualifiers = map[string]string{
	"__global": "global", "global": "global", "__local": "local", "local": "local",
	"__constant": "constant", "constant": "constant", "__private": "private", "private": "private",
	"const": "", "volatile": "", "restrict": "", "__restrict": "", "__restrict__": "",
	"__read_only": "", "read_only": "", "__write_only": "", "write_only": "", "__read_write": "", "read_write": "",
}

// KernelsOf returns the kernels of a tokenized source (Tokenize's tokens), as Kernels.
func KernelsOf(toks []Token) []Kernel {
	sig := SignificantIndices(toks)
	pair := Brackets(toks, sig)
	text := func(k int) string {
		if k < 0 || k >= len(sig) || toks[sig[k]].Kind == String {
			return ""
		}
		return toks[sig[k]].Text
	}
	var out []Kernel
	for k := 0; k < len(sig); k++ {
		if s := text(k); s != "__kernel" && s != "kernel" {
			continue
		}
		// The parameter list: the first parenthesis after a name other than __attribute__.
		open := -1
		for j := k + 1; j < len(sig) && open < 0; j++ {
			switch text(j) {
			case "(":
				if prev := toks[sig[j-1]]; prev.Kind == Ident && prev.Text != "__attribute__" && j-1 > k {
					open = j
				} else if pair[j] > j {
					j = pair[j]
				} else {
					j = len(sig)
				}
			case ";", "{", ")", "=":
				j = len(sig)
			}
		}
		if open < 0 || pair[open] < 0 {
			continue
		}
		name := toks[sig[open-1]]
		kn := Kernel{Name: name.Text, Line: lineOf(toks, sig[open-1]),
			Open: open, Close: pair[open], Body: -1}
		for j := kn.Close + 1; j < len(sig) && kn.Body < 0; j++ {
			switch text(j) {
			case "{":
				kn.Body, kn.Defined = j, true
			case ";":
				j = len(sig)
			case "(":
				j = max(pair[j], j)
			}
		}
		start := open + 1
		for j := open + 1; j <= kn.Close; j++ {
			if s := text(j); (s == "(" || s == "[") && pair[j] > j {
				j = pair[j]
				continue
			} else if s != "," && j != kn.Close {
				continue
			}
			if j > start && !(j == start+1 && text(start) == "void") {
				kn.Params = append(kn.Params, param(toks, sig, pair, start, j, len(kn.Params)))
			}
			start = j + 1
		}
		out = append(out, kn)
		k = kn.Close
	}
	return out
}

// lineOf returns the 1-based line of token i.
func lineOf(toks []Token, i int) int {
	n := 1
	for _, tk := range toks[:i] {
		n += strings.Count(tk.Text, "\n")
	}
	return n
}

// param reads parameter index, the significant tokens sig[a:b].
func param(toks []Token, sig, pair []int, a, b, index int) Param {
	p := Param{Index: index, First: a, End: b}
	var decl, words []string
	nameAt := -1
	for j := a; j < b; j++ {
		tk := toks[sig[j]]
		decl = append(decl, tk.Text)
		switch {
		case tk.Text == "__attribute__" && j+1 < b && pair[j+1] > j+1:
			for _, x := range sig[j+1 : pair[j+1]+1] {
				decl = append(decl, toks[x].Text)
			}
			j = pair[j+1]
		case tk.Text == "[" && pair[j] > j:
			for _, x := range sig[j+1 : pair[j]+1] {
				decl = append(decl, toks[x].Text)
			}
			j = pair[j]
		case tk.Text == "*":
			p.Pointer = true
			if p.Space == "" {
				p.Space = "private"
			}
		case tk.Kind != Ident:
		default:
			space, qual := qualifiers[tk.Text]
			switch {
			case !qual:
				words = append(words, tk.Text)
				nameAt = j
			case space != "":
				p.Space = space
			case tk.Text == "const" && !p.Pointer:
				p.Const = true
			}
		}
	}
	p.Decl = joinDecl(decl)
	if p.Space != "" && !p.Pointer {
		p.Space = "" // an address space without a pointer: a value
	}
	if len(words) > 1 && nameAt >= 0 && toks[sig[nameAt]].Text == words[len(words)-1] {
		p.Name, words = words[len(words)-1], words[:len(words)-1]
	}
	p.Type = typeName(words)
	return p
}

// joinDecl joins a declaration's tokens with spaces between words only.
func joinDecl(parts []string) string {
	var b strings.Builder
	for i, s := range parts {
		if i > 0 && (IsIdent(s[0]) && (IsIdent(parts[i-1][len(parts[i-1])-1]) || parts[i-1] == ")") ||
			s == "*" && parts[i-1] != "*") {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	return b.String()
}

// typeName returns OpenCL C's name of the type spelled by words: "unsigned int" is uint,
// "long int" long, "signed char" char.
func typeName(words []string) string {
	unsigned, rest := false, words[:0:0]
	for _, w := range words {
		switch w {
		case "unsigned":
			unsigned = true
		case "signed":
		default:
			rest = append(rest, w)
		}
	}
	if len(rest) == 2 && rest[1] == "int" && (rest[0] == "short" || rest[0] == "long") {
		rest = rest[:1]
	}
	if (unsigned || len(words) > len(rest)) && len(rest) == 0 {
		rest = []string{"int"}
	}
	s := strings.Join(rest, " ")
	if unsigned {
		switch s {
		case "char", "short", "int", "long":
			return "u" + s
		}
		return "unsigned " + s
	}
	return s
}
