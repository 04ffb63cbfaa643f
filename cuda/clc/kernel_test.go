package clc

import (
	"strings"
	"testing"
)

func TestKernels(t *testing.T) {
	src := `// saxpy and friends
#define N 4
__kernel void saxpy(const float a, __global const float *x, __global const float *y,
                    __global float *restrict z)
{
    z[get_global_id(0)] = a * x[get_global_id(0)] + y[get_global_id(0)];
}
kernel void decl(global uint4 *v, unsigned n, unsigned long m, local float *tmp, constant short *c);
__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void none(void) {}
/* __kernel void commented(int a) {} */
void helper(__global float *p) {}
__kernel void decl(global uint4 *v, unsigned n, unsigned long m, local float *tmp, constant short *c) { }
__kernel void unnamed(float, __global int*, REAL *r) {}
`
	ks := Kernels(src)
	var names []string
	for _, k := range ks {
		names = append(names, k.Name)
	}
	if got := strings.Join(names, " "); got != "saxpy decl none decl unnamed" {
		t.Fatalf("Kernels = %s, want saxpy decl none decl unnamed", got)
	}
	if ks[0].Line != 3 || !ks[0].Defined || ks[1].Defined || ks[1].Line != 8 {
		t.Errorf("lines or definitions wrong: %+v %+v", ks[0], ks[1])
	}
	type p struct {
		name, space, typ string
		ptr, cnst        bool
		decl             string
	}
	check := func(k Kernel, want []p) {
		t.Helper()
		if len(k.Params) != len(want) {
			t.Fatalf("%s: %d parameters, want %d: %+v", k.Name, len(k.Params), len(want), k.Params)
		}
		for i, w := range want {
			g := k.Params[i]
			if g.Index != i || g.Name != w.name || g.Space != w.space || g.Type != w.typ || g.Pointer != w.ptr || g.Const != w.cnst || g.Decl != w.decl {
				t.Errorf("%s parameter %d = %+v, want %+v", k.Name, i, g, w)
			}
		}
	}
	check(ks[0], []p{
		{"a", "", "float", false, true, "const float a"},
		{"x", "global", "float", true, true, "__global const float *x"},
		{"y", "global", "float", true, true, "__global const float *y"},
		{"z", "global", "float", true, false, "__global float *restrict z"},
	})
	check(ks[3], []p{
		{"v", "global", "uint4", true, false, "global uint4 *v"},
		{"n", "", "uint", false, false, "unsigned n"},
		{"m", "", "ulong", false, false, "unsigned long m"},
		{"tmp", "local", "float", true, false, "local float *tmp"},
		{"c", "constant", "short", true, false, "constant short *c"},
	})
	check(ks[2], nil)
	check(ks[4], []p{
		{"", "", "float", false, false, "float"},
		{"", "global", "int", true, false, "__global int *"},
		{"r", "private", "REAL", true, false, "REAL *r"},
	})
	if d := Defined(src); len(d) != 4 || d[2].Name != "decl" || !d[2].Defined || d[2].Line != 12 {
		t.Errorf("Defined = %+v, want saxpy, none, decl (its definition, line 12), unnamed", d)
	}
}

func TestTypeName(t *testing.T) {
	for _, c := range []struct{ words, want string }{
		{"unsigned int", "uint"}, {"unsigned", "uint"}, {"unsigned char", "uchar"}, {"signed char", "char"},
		{"long int", "long"}, {"unsigned long int", "ulong"}, {"short", "short"}, {"float4", "float4"},
		{"signed", "int"}, {"size_t", "size_t"},
	} {
		if got := typeName(strings.Fields(c.words)); got != c.want {
			t.Errorf("typeName(%s) = %s, want %s", c.words, got, c.want)
		}
	}
}

func TestTokenize(t *testing.T) {
	src := "#define A(x) \\\n  ((x) + 1)\nfloat f = 1.0f + 0x1p3f - 1e-5 + .5; /* a\n */ // c\nchar *s = \"a\\\"b\"; char c = '\\'';\n  # pragma x\nv->w <<= 2 ... ##"
	var got []Token
	for _, x := range Tokenize(src, false) {
		if x.Kind != Space {
			x.Off = 0
			got = append(got, x)
		}
	}
	want := []Token{
		{Directive, "#define A(x) \\\n  ((x) + 1)", 0},
		{Ident, "float", 0}, {Ident, "f", 0}, {Punct, "=", 0}, {Number, "1.0f", 0}, {Punct, "+", 0}, {Number, "0x1p3f", 0},
		{Punct, "-", 0}, {Number, "1e-5", 0}, {Punct, "+", 0}, {Number, ".5", 0}, {Punct, ";", 0}, {Comment, "/* a\n */", 0},
		{Comment, "// c", 0},
		{Ident, "char", 0}, {Punct, "*", 0}, {Ident, "s", 0}, {Punct, "=", 0}, {String, `"a\"b"`, 0}, {Punct, ";", 0},
		{Ident, "char", 0}, {Ident, "c", 0}, {Punct, "=", 0}, {String, `'\''`, 0}, {Punct, ";", 0},
		{Directive, "# pragma x", 0},
		{Ident, "v", 0}, {Punct, "->", 0}, {Ident, "w", 0}, {Punct, "<<=", 0}, {Number, "2", 0}, {Punct, "...", 0}, {Punct, "##", 0},
	}
	if len(got) != len(want) {
		t.Fatalf("Tokenize gives %d tokens, want %d:\n%v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("token %d: got %v %q, want %v %q", i, got[i].Kind, got[i].Text, want[i].Kind, want[i].Text)
		}
	}
	for _, s := range []string{src, "/* unterminated", "\"unterminated\nx", "'", "#", "a\\", "\\\n#x", "1.e+", "\xff\x00"} {
		var b strings.Builder
		for _, x := range Tokenize(s, false) {
			b.WriteString(x.Text)
		}
		if b.String() != s {
			t.Errorf("the tokens of %q make %q", s, b.String())
		}
	}
}

// FuzzKernels: reading any text neither panics nor finds a parameter outside its list.
func FuzzKernels(f *testing.F) {
	f.Add("__kernel void k(__global float *x, int n) { }")
	f.Add("kernel void (")
	f.Add("__kernel __attribute__((x)) void k(int a[4], void) {")
	f.Fuzz(func(t *testing.T, src string) {
		for _, k := range Kernels(src) {
			for _, p := range k.Params {
				if p.First < k.Open || p.End > k.Close || p.First >= p.End {
					t.Fatalf("parameter %d of %s at [%d, %d) outside (%d, %d)", p.Index, k.Name, p.First, p.End, k.Open, k.Close)
				}
			}
		}
	})
}
