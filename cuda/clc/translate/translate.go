package translate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/prism-compute/prism/cuda/clc"
)

// The translation of OpenCL C for NVRTC rewrites, within the source's lines, what the
// prelude's macros cannot carry, so that an ordinary OpenCL C 1.2 kernel builds as it is:
//
//   - vector literals and casts to vector types: (float4)(a, b, c, d), (float4)(k) and
//     (float4)(v2, a, b) become prism_vmake<float4>(...); (float4)x, a scalar's cast,
//     becomes prism_vmake<float4>(x); outside code (a file-scope __constant table's
//     initializer), where CUDA needs a constant expression, (float4)(a, b, c, d) and
//     (float4)(a) become float4{a, b, c, d} and float4{a, a, a, a};
//   - swizzles: v.xy, v.wzyx and v.s01 become prism_swz2<0x01>(v), prism_swz4<0x3210>(v),
//     ... (the indices in hexadecimal digits), v.s3 and v.S3 prism_swz1<0x3>(v), and v.lo,
//     v.hi, v.even and v.odd prism_lo(v), ... Of an lvalue they assign: prism_swz2<0x01>(v)
//     = w writes v's first two components (prelude/vectors.cuh);
//   - convert_<type>_sat, _rte, _rtz, _rtp, _rtn and _sat_rt* become prism_cvt<type>::sat,
//     ...; convert_<type> and as_<type> are the prelude's macros.
//
// Vector arithmetic, comparisons, logical operators, as_<type>, vloadN and vstoreN need no
// rewriting: the prelude overloads them on the vector types. One-component swizzles .x .y
// .z .w are members of CUDA's vector types and stay as they are, except of a swizzle. A
// swizzle that is assigned, incremented or swizzled again is written prism_swzM_ref<I>(v),
// prism_lo_ref(v), ..., a reference to the vector's components; any other is its value, a
// vector of CUDA's type (with its members x, y, z and w).
//
// The source is tokenized as C is: comments, string and character literals and
// preprocessor lines are never rewritten, except the replacement lists of #define, which
// are rewritten as source text is; numbers are preprocessing numbers (1.0f, 0x1p3f, 1e-5).
// Rewriting never adds or removes a line inside the source, so NVRTC's messages give the
// user's line, and the column of every token before a rewrite on its line.
//
// A rewrite needs the names of vector types as written: a vector type behind a macro,
// (VEC)(a, b) with #define VEC float2, is not a literal to the translation. A swizzle
// name that a struct or union of the source declares as a member (struct { uint lo, hi; })
// is left as a member access throughout the source.

// Source returns the source rewritten as above, without the prelude, or an *Error for
// what has no CUDA counterpart (images, samplers, get_work_dim, a __global or __constant
// pointer to a 3-component vector). name names the source in the error.
func Source(src, name string) (string, error) {
	p, err := rewriteProgram(src, name)
	return p.Text, err
}

// rewriteProgram is Source, with the kernels' __local pointer parameters.
func rewriteProgram(src, name string) (Program, error) {
	toks := tokenize(src, false)
	t := &translator{src: src, name: name, members: memberNames(toks), locals: map[string][]int{}}
	t.rewrite(toks, 0, false)
	t.kernelParams(toks)
	helperParams(toks)
	programScopeGlobals(toks)
	if t.err != nil {
		return Program{}, t.err
	}
	var b strings.Builder
	b.Grow(len(src) + len(src)/8)
	for _, tk := range toks {
		tk.write(&b)
	}
	return Program{Text: b.String(), Locals: t.locals}, nil
}

// tokenKind is the kind of a token, as package clc tokenizes.
type tokenKind = clc.Kind

const (
	tkSpace     = clc.Space     // white space, newlines, backslash-newlines
	tkComment   = clc.Comment   // /* ... */ or // ...
	tkDirective = clc.Directive // a preprocessor line, continuation lines included
	tkIdent     = clc.Ident
	tkNumber    = clc.Number
	tkString    = clc.String // "..." or '...'
	tkPunct     = clc.Punct
)

// A token is a piece of the source. Rewrites set out (the token's replacement), pre and
// post (text before and after it); a token's output keeps the newlines of its text.
type token struct {
	kind      tokenKind
	text      string
	off       int // byte offset in the source
	out       *string
	pre, post string
	swizzled  bool // the name of a rewritten swizzle
}

func (tk *token) write(b *strings.Builder) {
	b.WriteString(tk.pre)
	if tk.out != nil {
		b.WriteString(*tk.out)
	} else {
		b.WriteString(tk.text)
	}
	b.WriteString(tk.post)
}

// replace sets the token's output to s, followed by the newlines of its text.
func (tk *token) replace(s string) {
	s += strings.Repeat("\n", strings.Count(tk.text, "\n"))
	tk.out = &s
}

// tokenize splits text into tokens (clc.Tokenize): in a directive's text (directive true)
// a # is punctuation; otherwise a # first on its line starts a directive token that runs to
// the end of the line, through backslash-newlines and comments.
func tokenize(text string, directive bool) []token {
	base := clc.Tokenize(text, directive)
	toks := make([]token, len(base))
	for i, tk := range base {
		toks[i] = token{kind: tk.Kind, text: tk.Text, off: tk.Off}
	}
	return toks
}

// base returns the tokens as package clc reads them.
func base(toks []token) []clc.Token {
	out := make([]clc.Token, len(toks))
	for i, tk := range toks {
		out[i] = clc.Token{Kind: tk.kind, Text: tk.text, Off: tk.off}
	}
	return out
}

// vectorTypes are OpenCL's vector type names.
var vectorTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range []string{"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double"} {
		for _, n := range []string{"2", "3", "4", "8", "16"} {
			m[s+n] = true
		}
	}
	return m
}()

var (
	convertRE = regexp.MustCompile(`^convert_((?:u?char|u?short|u?int|u?long|float|double)(?:2|3|4|8|16)?)_(sat|sat_rt[eznp]|rt[eznp])$`)
	xyzwRE    = regexp.MustCompile(`^[xyzw]{2,4}$`)
	sRE       = regexp.MustCompile(`^[sS][0-9a-fA-F]+$`)
)

// unsupported are the identifiers of constructs that have no CUDA counterpart, each with
// the message that refuses it: the refused rows of builtins.tsv (images, samplers and
// their functions, get_work_dim).
var unsupported = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, b := range builtins() {
		if b.state == "refused" {
			for _, n := range b.names() {
				if n != "pipe" { // a keyword only before a type: refused in rewrite
					m[n] = b.note
				}
			}
		}
	}
	return m
})

// printfVectorRE finds OpenCL's vector conversions in a printf format (%v4f, %-8.3v2hlf).
var printfVectorRE = regexp.MustCompile(`%[-+ #0]*[0-9]*(\.[0-9]*)?v(2|3|4|8|16)(hh|h|hl|l)?[diouxXfFeEgGaA]`)

// keywords that may stand before a parenthesis without being called.
var keywords = map[string]bool{
	"return": true, "sizeof": true, "if": true, "while": true, "for": true, "switch": true, "case": true,
	"else": true, "do": true, "vec_step": true, "__attribute__": true, "_Alignof": true, "__alignof__": true,
}

type translator struct {
	src, name string
	members   map[string]bool
	locals    map[string][]int // Program.Locals
	err       error
}

// unprefixed are OpenCL C's address-space and kernel qualifiers without their
// underscores, keywords of OpenCL C that the translation spells as the prelude's macros
// (CUDA's own macros expand to the bare words, so they cannot be macros themselves).
var unprefixed = map[string]string{"global": "__global", "local": "__local", "constant": "__constant",
	"private": "__private", "kernel": "__kernel"}

func (t *translator) fail(off int, format string, args ...any) {
	if t.err != nil {
		return
	}
	t.err = &Error{
		Name:   t.name,
		Line:   1 + strings.Count(t.src[:off], "\n"),
		Column: off - strings.LastIndexByte(t.src[:off], '\n'),
		Msg:    fmt.Sprintf(format, args...),
	}
}

// memberNames returns the swizzle-like names that structs and unions of the source
// declare as members: identifiers followed by ; , [ or : directly inside their braces.
func memberNames(toks []token) map[string]bool {
	m := map[string]bool{}
	sig := significantIndices(toks)
	for k := 0; k < len(sig); k++ {
		if tk := toks[sig[k]]; tk.kind != tkIdent || tk.text != "struct" && tk.text != "union" {
			continue
		}
		j := k + 1
		if j < len(sig) && toks[sig[j]].kind == tkIdent {
			j++
		}
		if j >= len(sig) || toks[sig[j]].text != "{" {
			continue
		}
		depth := 0
		for ; j < len(sig); j++ {
			switch s := toks[sig[j]].text; s {
			case "{":
				depth++
			case "}":
				depth--
			case ";", ",", "[", ":":
				if prev := toks[sig[j-1]]; prev.kind == tkIdent && swizzleLike(prev.text) {
					m[prev.text] = true
				}
			}
			if depth == 0 {
				break
			}
		}
	}
	return m
}

func significantIndices(toks []token) []int { return clc.SignificantIndices(base(toks)) }

func swizzleLike(s string) bool {
	return xyzwRE.MatchString(s) || sRE.MatchString(s) || s == "lo" || s == "hi" || s == "even" || s == "odd"
}

// assignOps are the operators after which a swizzle is written.
var assignOps = map[string]bool{"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true, "&=": true,
	"|=": true, "^=": true, "<<=": true, ">>=": true, "++": true, "--": true}

// swizzle returns the helper call that starts the rewrite of a swizzle named s, or "":
// the swizzle's value, or with ref a reference to the components.
func swizzle(s string, ref bool) string {
	suffix := ""
	if ref {
		suffix = "_ref"
	}
	switch s {
	case "lo", "hi", "even", "odd":
		return "prism_" + s + suffix + "("
	}
	var idx []int
	switch {
	case xyzwRE.MatchString(s) || len(s) == 1 && strings.Contains("xyzw", s):
		for _, c := range s {
			idx = append(idx, strings.IndexRune("xyzw", c))
		}
	case sRE.MatchString(s):
		for _, c := range s[1:] {
			v, _ := strconv.ParseUint(string(c), 16, 8)
			idx = append(idx, int(v))
		}
	default:
		return ""
	}
	switch len(idx) {
	case 1, 2, 3, 4, 8, 16:
	default:
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "prism_swz%d%s<0x", len(idx), suffix)
	for _, v := range idx {
		b.WriteString(strconv.FormatInt(int64(v), 16))
	}
	if len(idx) > 15 {
		b.WriteString("ull")
	}
	b.WriteString(">(")
	return b.String()
}

// rewrite rewrites toks, whose first byte is at offset base of the source; macro tells
// a #define's replacement list, whose literals are taken to be in code.
func (t *translator) rewrite(toks []token, base int, macro bool) {
	sig := significantIndices(toks)
	at := func(k int) *token {
		if k < 0 || k >= len(sig) {
			return nil
		}
		return &toks[sig[k]]
	}
	is := func(k int, s string) bool { tk := at(k); return tk != nil && tk.kind != tkString && tk.text == s }
	pair := brackets(toks, sig)
	// match returns the index (into sig) of the bracket that closes or opens the one at k,
	// or -1.
	match := func(k int) int { return pair[k] }
	// castAt reports whether sig[k..k+2] is ( vectortype ).
	castAt := func(k int) bool {
		return is(k, "(") && at(k+1) != nil && at(k+1).kind == tkIdent && vectorTypes[at(k+1).text] && is(k+2, ")")
	}
	// operandStart returns the index of the first token of the postfix expression that
	// ends at k, or -1.
	var operandStart func(k int) int
	operandStart = func(k int) int {
		tk := at(k)
		if tk == nil {
			return -1
		}
		switch {
		case tk.kind == tkIdent || tk.kind == tkNumber || tk.kind == tkString:
			if tk.kind == tkIdent && keywords[tk.text] {
				return -1
			}
			if is(k-1, ".") || is(k-1, "->") {
				return operandStart(k - 2)
			}
			return k
		case tk.text == ")" || tk.text == "]":
			j := match(k)
			switch {
			case j < 0:
				return -1
			case tk.text == ")" && castAt(j-3):
				return j - 3 // a vector literal
			case tk.text == "]":
				return operandStart(j - 1)
			}
			if p := at(j - 1); p != nil && p.kind == tkIdent && !keywords[p.text] {
				return operandStart(j - 1) // a call
			}
			return j
		}
		return -1
	}
	// sizeofAt reports whether sig[k] is an operator whose parenthesized operand is a type.
	sizeofAt := func(k int) bool {
		tk := at(k)
		return tk != nil && tk.kind == tkIdent && (tk.text == "sizeof" || tk.text == "vec_step" || tk.text == "_Alignof" || tk.text == "__alignof__")
	}
	// braces holds, for each open brace, whether it opens an initializer; code counts those
	// that do not. A literal outside code (a file-scope table's initializer) must be a
	// constant expression.
	var braces []bool
	code := 0
	for k := 0; k < len(sig); k++ {
		tk := at(k)
		switch tk.kind {
		case tkDirective:
			t.directive(tk, base)
		case tkIdent:
			if msg, ok := unsupported()[tk.text]; ok {
				t.fail(base+tk.off, "%s (%s)", msg, tk.text)
			}
			// OpenCL C 2.0's pipe qualifier (pipe int p), not a variable named pipe.
			if tk.text == "pipe" && at(k+1) != nil && at(k+1).kind == tkIdent && !is(k-1, ".") && !is(k-1, "->") {
				t.fail(base+tk.off, "pipes have no CUDA counterpart (pipe)")
			}
			if tk.text == "printf" && is(k+1, "(") && at(k+2) != nil && at(k+2).kind == tkString {
				if v := printfVectorRE.FindString(at(k + 2).text); v != "" {
					t.fail(base+at(k+2).off, "printf's vector conversions have no CUDA counterpart (%s)", v)
				}
			}
			// vec_step of a type: prism_vec_step<type>::value (of an expression, the
			// prelude's macro).
			if tk.text == "vec_step" && typeGroup(toks, sig, pair, k+1) {
				tk.replace("prism_vec_step<")
				at(k + 1).replace("")
				at(pair[k+1]).replace(">::value")
			}
			if p, ok := unprefixed[tk.text]; ok && !is(k-1, ".") && !is(k-1, "->") {
				tk.replace(p)
			}
			// A pointer to __local memory (__local float *p = tile, a cast to one) is a
			// generic pointer in CUDA: the qualifier goes, which would make it a
			// __shared__ variable.
			if (tk.text == "__local" || tk.text == "local") && !is(k-1, ".") && !is(k-1, "->") {
				j := k + 1
				for at(j) != nil && at(j).kind == tkIdent {
					j++
				}
				if j > k+1 && is(j, "*") {
					tk.replace("")
				}
			}
			if m := convertRE.FindStringSubmatch(tk.text); m != nil {
				tk.replace("prism_cvt<" + m[1] + ">::" + m[2])
			}
		case tkPunct:
			switch {
			case tk.text == "{":
				init := is(k-1, "=") || len(braces) > 0 && braces[len(braces)-1] && (is(k-1, ",") || is(k-1, "{"))
				braces = append(braces, init)
				if !init {
					code++
				}
			case tk.text == "}":
				if n := len(braces); n > 0 {
					if !braces[n-1] {
						code--
					}
					braces = braces[:n-1]
				}
			case castAt(k) && !sizeofAt(k-1):
				typ := at(k + 1).text
				if code == 0 && !macro && is(k+3, "(") && t.constantLiteral(toks, sig, pair, k) {
					k += 3
					continue
				}
				if is(k+3, "(") && !typeGroup(toks, sig, pair, k+3) {
					tk.replace("prism_vmake<" + typ + ">")
				} else if end := operandEnd(toks, sig, pair, k+3); end > k+3 {
					tk.replace("prism_vmake<" + typ + ">(")
					at(end - 1).post += ")"
				} else {
					continue
				}
				at(k + 1).replace("")
				at(k + 2).replace("")
				k += 2
			case tk.text == "." && at(k+1) != nil && at(k+1).kind == tkIdent && !t.members[at(k+1).text]:
				name := at(k + 1).text
				call := swizzle(name, false)
				if len(name) == 1 && !(at(k-1) != nil && at(k-1).swizzled) {
					call = "" // a member of CUDA's vector types, but not of a swizzle's result
				}
				if call == "" {
					continue
				}
				s := operandStart(k - 1)
				if s < 0 {
					continue
				}
				// An assigned, incremented or again swizzled swizzle refers to its vector.
				if next := at(k + 2); next != nil && next.kind == tkPunct && (assignOps[next.text] ||
					next.text == "." && at(k+3) != nil && at(k+3).kind == tkIdent && swizzle(at(k+3).text, false) != "") ||
					is(s-1, "++") || is(s-1, "--") {
					call = swizzle(name, true)
				}
				at(s).pre = call + at(s).pre
				tk.replace("")
				at(k + 1).replace(")")
				at(k + 1).swizzled = true
				k++
			}
		}
	}
}

// constantLiteral rewrites the vector literal at sig[k] outside code, (float4)(a, b, c, d)
// or (float4)(a), as an aggregate initialization, float4{a, b, c, d} or float4{a, a, a, a},
// a constant expression where its operands are; it reports false, rewriting nothing, for
// literals of another shape.
func (t *translator) constantLiteral(toks []token, sig []int, pair []int, k int) bool {
	typ := toks[sig[k+1]].text
	n, _ := strconv.Atoi(strings.TrimLeft(typ, "abcdefghijklmnopqrstuvwxyz"))
	open, close := k+3, pair[k+3]
	if close < 0 || typeGroup(toks, sig, pair, open) {
		return false
	}
	args := 1
	for j := open + 1; j < close; j++ {
		switch toks[sig[j]].text {
		case "(", "[":
			j = max(pair[j], j)
		case ",":
			args++
		}
	}
	text := ""
	switch {
	case args == n:
	case args == 1 && close > open+1:
		arg := t.src[toks[sig[open+1]].off : toks[sig[close-1]].off+len(toks[sig[close-1]].text)]
		if strings.Contains(arg, "\n") || strings.Contains(arg, "//") {
			return false
		}
		text = strings.Repeat(", "+arg, n-1)
	default:
		return false
	}
	toks[sig[k]].replace(typ + "{")
	toks[sig[k+1]].replace("")
	toks[sig[k+2]].replace("")
	toks[sig[open]].replace("")
	toks[sig[close]].replace(text + "}")
	return true
}

// kernelParams rewrites the parameters of every kernel, after rewrite: a __local pointer
// parameter, which CUDA cannot declare, becomes uint prism_local_NAME, the byte offset of
// its memory in the block's dynamic shared memory, and the body starts by declaring the
// pointer at that offset (prism_local_at, prelude/types.cuh); a __constant pointer parameter
// becomes a const one (CUDA's constant memory is file-scope only; the data stays in
// global memory, read through the same caches). A __global or __constant pointer to a
// 3-component vector is refused: OpenCL's float3 takes 16 bytes, CUDA's 12, so the
// elements would be read at the wrong places.
func (t *translator) kernelParams(toks []token) {
	sig := significantIndices(toks)
	for _, k := range clc.KernelsOf(base(toks)) { // the positions in sig are the same
		var decls []string
		for _, p := range k.Params {
			if decl := t.param(toks, sig, p.First, p.End, k.Name, p.Index); decl != "" {
				decls = append(decls, decl)
			}
		}
		if k.Body >= 0 && len(decls) > 0 {
			toks[sig[k.Body]].post += " " + strings.Join(decls, " ")
		}
	}
}

// param rewrites parameter index of kernel, the significant tokens sig[a:b], and returns
// the declaration its body needs (a __local pointer's), or "".
func (t *translator) param(toks []token, sig []int, a, b int, kernel string, index int) string {
	space, pointer, vec3 := -1, false, ""
	for j := a; j < b; j++ {
		tk := &toks[sig[j]]
		switch {
		case tk.text == "*":
			pointer = true
		case tk.kind != tkIdent:
		case tk.text == "__local" || tk.text == "local" || tk.text == "__constant" || tk.text == "constant" ||
			tk.text == "__global" || tk.text == "global":
			space = j
		case vectorTypes[tk.text] && strings.HasSuffix(tk.text, "3"):
			vec3 = tk.text
		}
	}
	if space < 0 || !pointer {
		return ""
	}
	kw := strings.TrimPrefix(toks[sig[space]].text, "__")
	switch {
	case vec3 != "" && kw != "local":
		t.fail(toks[sig[a]].off, "a __%s pointer to %s (parameter %d of %s) has no CUDA counterpart: OpenCL's %s takes 16 bytes, CUDA's 12; pass a pointer to its components and use vload3/vstore3",
			kw, vec3, index, kernel, vec3)
	case kw == "constant":
		toks[sig[space]].replace("const")
	case kw == "local":
		last := toks[sig[b-1]]
		if last.kind != tkIdent {
			t.fail(last.off, "a __local pointer parameter needs a name (parameter %d of %s)", index, kernel)
			return ""
		}
		var decl []string
		for j := a; j < b; j++ {
			if j != space {
				decl = append(decl, toks[sig[j]].text)
			}
		}
		for j := a + 1; j < b; j++ {
			toks[sig[j]].replace("")
		}
		toks[sig[a]].replace("uint prism_local_" + last.text)
		t.locals[kernel] = append(t.locals[kernel], index)
		return strings.Join(decl, " ") + " = prism_local_at(prism_local_" + last.text + ");"
	}
	return ""
}

// helperParams drops the address space of the __local pointer parameters of functions that
// are not kernels (void f(__local float *p)): CUDA reaches shared memory through a generic
// pointer, and the prelude's __local (a static __shared__ declaration) is no parameter's
// storage class. A helper's __global, __constant and __private pointers need nothing: the
// prelude defines those words away.
func helperParams(toks []token) {
	sig := significantIndices(toks)
	pair := brackets(toks, sig)
	depth, declStart := 0, 0
	for k := 0; k < len(sig); k++ {
		tk := toks[sig[k]]
		switch {
		case tk.kind == tkString:
			continue
		case tk.text == "{":
			depth++
			continue
		case tk.text == "}":
			depth--
			declStart = k + 1
			continue
		case tk.text == ";" && depth == 0:
			declStart = k + 1
			continue
		}
		if depth != 0 || tk.text != "(" || k == 0 || pair[k] < k || toks[sig[k-1]].kind != tkIdent || toks[sig[k-1]].text == "__attribute__" {
			continue
		}
		end := pair[k]
		if end+1 >= len(sig) || (toks[sig[end+1]].text != "{" && toks[sig[end+1]].text != ";") {
			k = end
			continue
		}
		kernel := false
		for j := declStart; j < k; j++ {
			if w := toks[sig[j]].text; w == "__kernel" || w == "kernel" {
				kernel = true
			}
		}
		if !kernel {
			// Each parameter: its tokens between commas at this depth.
			first := k + 1
			for j := k + 1; j <= end; j++ {
				if j < end && toks[sig[j]].text != "," {
					if pair[j] > j {
						j = pair[j]
					}
					continue
				}
				local, pointer := -1, false
				for i := first; i < j; i++ {
					switch toks[sig[i]].text {
					case "__local", "local":
						local = i
					case "*":
						pointer = true
					}
				}
				if local >= 0 && pointer {
					toks[sig[local]].replace("")
				}
				first = j + 1
			}
		}
		k = end
	}
}

// brackets returns, for each significant token (sig), the index of the bracket that
// matches it, ( with ) and [ with ], or -1 (clc.Brackets).
func brackets(toks []token, sig []int) []int { return clc.Brackets(base(toks), sig) }

// scalarTypes are the words that begin a scalar type's name.
var scalarTypes = map[string]bool{"char": true, "uchar": true, "short": true, "ushort": true, "int": true, "uint": true,
	"long": true, "ulong": true, "float": true, "double": true, "half": true, "bool": true, "size_t": true,
	"ptrdiff_t": true, "unsigned": true, "signed": true, "const": true, "volatile": true}

// typeGroup reports whether sig[k] opens a parenthesized type name, the start of a cast:
// ( followed by a scalar or vector type's words and stars only.
func typeGroup(toks []token, sig []int, pair []int, k int) bool {
	if k >= len(sig) || toks[sig[k]].text != "(" || pair[k] < k+2 {
		return false
	}
	if first := toks[sig[k+1]]; first.kind != tkIdent || !scalarTypes[first.text] && !vectorTypes[first.text] {
		return false
	}
	for j := k + 1; j < pair[k]; j++ {
		if tk := toks[sig[j]]; tk.kind != tkIdent && tk.text != "*" {
			return false
		}
	}
	return true
}

// operandEnd returns the index (into sig) after the operand of a cast that starts at
// sig[k], a unary expression, or k when there is none.
func operandEnd(toks []token, sig []int, pair []int, k int) int {
	text := func(j int) string {
		if j >= len(sig) || toks[sig[j]].kind == tkString {
			return ""
		}
		return toks[sig[j]].text
	}
	closing := func(j int) int { return pair[j] }
	j := k
	for j < len(sig) {
		if t := text(j); t == "-" || t == "+" || t == "!" || t == "~" || t == "*" || t == "&" {
			j++
		} else if typeGroup(toks, sig, pair, j) {
			j = pair[j] + 1 // a cast
		} else {
			break
		}
	}
	if j >= len(sig) {
		return k
	}
	switch tk := toks[sig[j]]; {
	case tk.kind == tkIdent && !keywords[tk.text] || tk.kind == tkNumber || tk.kind == tkString:
		j++
	case tk.text == "(":
		c := closing(j)
		if c < 0 {
			return k
		}
		j = c + 1
	default:
		return k
	}
	for j < len(sig) {
		switch text(j) {
		case "[", "(":
			c := closing(j)
			if c < 0 {
				return k
			}
			j = c + 1
		case ".", "->":
			if j+1 >= len(sig) || toks[sig[j+1]].kind != tkIdent {
				return k
			}
			j += 2
		case "++", "--":
			j++
		default:
			return j
		}
	}
	return j
}

// directive rewrites the replacement list of a #define as source text.
func (t *translator) directive(tk *token, base int) {
	toks := tokenize(tk.text, true)
	sig := significantIndices(toks)
	if len(sig) < 3 || toks[sig[0]].text != "#" || toks[sig[1]].text != "define" || toks[sig[2]].kind != tkIdent {
		return
	}
	body := sig[2] + 1
	if body < len(toks) && toks[body].text == "(" {
		depth := 0
		for ; body < len(toks); body++ {
			if toks[body].text == "(" {
				depth++
			} else if toks[body].text == ")" {
				if depth--; depth == 0 {
					body++
					break
				}
			}
		}
	}
	if body >= len(toks) {
		return
	}
	rest := toks[body:]
	t.rewrite(rest, base+tk.off, true)
	var b strings.Builder
	for i := range toks {
		toks[i].write(&b)
	}
	if s := b.String(); s != tk.text {
		tk.out = &s
	}
}

// programScopeGlobals makes OpenCL C 2.0's program-scope variables in the global address
// space (__global int count = 0; at file scope) CUDA's __device__ variables, which live
// as long as the module and are shared by every launch of its kernels, as OpenCL's are by
// a program's: a __global outside every body, initializer and parameter list. Inside a
// function, __global qualifies pointers only, and the prelude defines it away.
func programScopeGlobals(toks []token) {
	braces, parens := 0, 0
	for _, i := range significantIndices(toks) {
		tk := &toks[i]
		switch {
		case tk.kind == tkPunct && (tk.text == "{" || tk.text == "}"):
			braces += map[string]int{"{": 1, "}": -1}[tk.text]
		case tk.kind == tkPunct && (tk.text == "(" || tk.text == ")"):
			parens += map[string]int{"(": 1, ")": -1}[tk.text]
		case tk.kind == tkIdent && (tk.text == "__global" || tk.text == "global") && braces == 0 && parens == 0:
			tk.replace("__device__")
		}
	}
}
