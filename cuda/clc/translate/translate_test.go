package translate

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// The translation tests check the tokenizer and the rewrites text for text, and compile
// the corpus (testdata/corpus: one kernel per construct the translation carries) and the
// suite's kernels through nvrtcText with clang-15, as the prelude tests do.

func TestTokenize(t *testing.T) {
	src := "#define A(x) \\\n  ((x) + 1)\nfloat f = 1.0f + 0x1p3f - 1e-5 + .5; /* a\n */ // c\nchar *s = \"a\\\"b\"; char c = '\\'';\n  # pragma x\nv->w <<= 2 ... ##"
	type tk struct {
		kind tokenKind
		text string
	}
	var got []tk
	for _, x := range tokenize(src, false) {
		if x.kind != tkSpace {
			got = append(got, tk{x.kind, x.text})
		}
	}
	want := []tk{
		{tkDirective, "#define A(x) \\\n  ((x) + 1)"},
		{tkIdent, "float"}, {tkIdent, "f"}, {tkPunct, "="}, {tkNumber, "1.0f"}, {tkPunct, "+"}, {tkNumber, "0x1p3f"},
		{tkPunct, "-"}, {tkNumber, "1e-5"}, {tkPunct, "+"}, {tkNumber, ".5"}, {tkPunct, ";"}, {tkComment, "/* a\n */"},
		{tkComment, "// c"},
		{tkIdent, "char"}, {tkPunct, "*"}, {tkIdent, "s"}, {tkPunct, "="}, {tkString, `"a\"b"`}, {tkPunct, ";"},
		{tkIdent, "char"}, {tkIdent, "c"}, {tkPunct, "="}, {tkString, `'\''`}, {tkPunct, ";"},
		{tkDirective, "# pragma x"},
		{tkIdent, "v"}, {tkPunct, "->"}, {tkIdent, "w"}, {tkPunct, "<<="}, {tkNumber, "2"}, {tkPunct, "..."}, {tkPunct, "##"},
	}
	if len(got) != len(want) {
		t.Fatalf("tokenize gives %d tokens, want %d:\n%q", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("token %d: got %v %q, want %v %q", i, got[i].kind, got[i].text, want[i].kind, want[i].text)
		}
	}
	// The tokens are the source, byte for byte, whatever it holds.
	for _, s := range []string{src, "/* unterminated", "\"unterminated\nx", "'", "#", "a\\", "\\\n#x", "1.e+", "\xff\x00"} {
		var b strings.Builder
		for _, x := range tokenize(s, false) {
			b.WriteString(x.text)
		}
		if b.String() != s {
			t.Errorf("the tokens of %q make %q", s, b.String())
		}
	}
}

func TestTranslateRewrites(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// Vector literals, splats and casts of scalars.
		{"v = (float4)(a, b, c, d);", "v = prism_vmake<float4>(a, b, c, d);"},
		{"v = (float4)(k);", "v = prism_vmake<float4>(k);"},
		{"v = (float4)(v2, a, b);", "v = prism_vmake<float4>(v2, a, b);"},
		{"v = (int8) 3 + (uchar16)-x[i].y * (double2)f(a)[1];", "v = prism_vmake<int8>( 3) + prism_vmake<uchar16>(-x[i].y) * prism_vmake<double2>(f(a)[1]);"},
		{"v = ( float2 )\n(a,\n b);", "v = prism_vmake<float2>  \n(a,\n b);"},
		{"v = (float4)(float)i + (float2)(int)(x) * (int4)(uint)-y;", "v = prism_vmake<float4>((float)i) + prism_vmake<float2>((int)(x)) * prism_vmake<int4>((uint)-y);"},
		// Outside code, literals are aggregate initializations: constant expressions.
		{"@__constant float4 t[2] = {(float4)(1, 2, 3, 4), (float4)(0.5f)};\nfloat4 f(void) { float4 u = {0}; return (float4)(1); }\n__constant int2 s = (int2)(1, 2);",
			"__constant float4 t[2] = {float4{1, 2, 3, 4}, float4{0.5f, 0.5f, 0.5f, 0.5f}};\nfloat4 f(void) { float4 u = {0}; return prism_vmake<float4>(1); }\n__constant int2 s = int2{1, 2};"},
		{"n = sizeof(float4) + vec_step(int8); p = (float4 *)q; f = (float)(x);", "n = sizeof(float4) + prism_vec_step<int8>::value; p = (float4 *)q; f = (float)(x);"},
		// vec_step of a type is a constant of the prelude; of an expression, its macro.
		{"n = vec_step(const float3) + vec_step( uint ) + vec_step(v.xyz) + vec_step((float2)(a));", "n = prism_vec_step<const float3>::value + prism_vec_step< uint >::value + vec_step(prism_swz3<0x012>(v)) + vec_step(prism_vmake<float2>(a));"},
		// A pointer to __local memory is a generic pointer: its qualifier goes; a __local
		// variable keeps it.
		{"__local float t[4], u; __local float *p = t, *q; local const uint2 *r = (__local const uint2 *)t;", "__local float t[4], u;  float *p = t, *q;  const uint2 *r = ( const uint2 *)t;"},
		// Swizzles, read and written, nested, of calls, indexing, members and literals.
		{"w = v.xy + v.wzyx + v.s01 + v.S3;", "w = prism_swz2<0x01>(v) + prism_swz4<0x3210>(v) + prism_swz2<0x01>(v) + prism_swz1<0x3>(v);"},
		{"v.xy = w; v.s3 = 1; v.zw += u; ++v.s1; v.lo.x--; a = v.xy == b;", "prism_swz2_ref<0x01>(v) = w; prism_swz1_ref<0x3>(v) = 1; prism_swz2_ref<0x23>(v) += u; ++prism_swz1_ref<0x1>(v); prism_swz1_ref<0x0>(prism_lo_ref(v))--; a = prism_swz2<0x01>(v) == b;"},
		{"a = v.lo.x + f(b).hi.odd + p->q[2].even + (u).s0123456789ABCDEF;",
			"a = prism_swz1<0x0>(prism_lo_ref(v)) + prism_odd(prism_hi_ref(f(b))) + prism_even(p->q[2]) + prism_swz16<0x0123456789abcdefull>((u));"},
		{"a = (float4)(1, 2, 3, 4).zw;", "a = prism_swz2<0x23>(prism_vmake<float4>(1, 2, 3, 4));"},
		{"return (v).xy; if (c) v . xy = 0;", "return prism_swz2<0x01>((v)); if (c) prism_swz2_ref<0x01>(v  ) = 0;"},
		// One-component .x .y .z .w are CUDA's members; names that are no swizzle stay.
		{"a = v.x + p->y + s.xyzwx + s.s12345 + s.lox;", "a = v.x + p->y + s.xyzwx + s.s12345 + s.lox;"},
		// Conversions with saturation and rounding modes; the default ones are macros.
		{"i = convert_int4_sat_rte(f) + convert_uchar_sat(g) + convert_float_rtz(h) + convert_int(k);",
			"i = prism_cvt<int4>::sat_rte(f) + prism_cvt<uchar>::sat(g) + prism_cvt<float>::rtz(h) + convert_int(k);"},
		// Comments, strings, character literals and directives other than #define stay.
		{"/* v.xy (float4)(1) */ s = \"v.xy\"; c = '.'; // v.xy\n#if X(v.xy)\n#include \"a.xy\"\n",
			"/* v.xy (float4)(1) */ s = \"v.xy\"; c = '.'; // v.xy\n#if X(v.xy)\n#include \"a.xy\"\n"},
		// A #define's replacement list is source text.
		{"#define ONES (float4)(1.0f)\n#define SW(v) (v).yx + \\\n  (v).s10\n", "#define ONES prism_vmake<float4>(1.0f)\n#define SW(v) prism_swz2<0x10>((v)) + \\\n  prism_swz2<0x10>((v))\n"},
		// Unprefixed qualifiers; __local pointer parameters become offsets, declared in the
		// body; __constant pointer parameters const pointers.
		{"@kernel void k(global float *x, local float4 *s, constant int *c,\n  __local const uint * restrict u, int n) {\n  local int t[4];\n}",
			"__kernel void k(__global float *x, uint prism_local_s  , const int *c,\n  uint prism_local_u     , int n) { float4 * s = prism_local_at(prism_local_s); const uint * restrict u = prism_local_at(prism_local_u);\n  __local int t[4];\n}"},
		{"@__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void k(__local float *s) {}\nvoid f(__local float *p) {}",
			"__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void k(uint prism_local_s  ) { float * s = prism_local_at(prism_local_s);}\nvoid f( float *p) {}"},
		// A helper's __local pointer parameters are generic pointers in CUDA; its __local
		// arrays and its other parameters stay.
		{"@inline float g(__local const uint *f, int n, local float *h);\nfloat g(__local const uint *f, int n, local float *h) { __local float t[2]; return f[n] + h[0]; }",
			"inline float g( const uint *f, int n,  float *h);\nfloat g( const uint *f, int n,  float *h) { __local float t[2]; return f[n] + h[0]; }"},
		{"a = p.global + q->local;", "a = p.global + q->local;"},
		// Members that a struct of the source declares are members.
		{"struct P { uint lo, hi; float2 xy; }; a = p.lo + p.hi + q.xy.x + v.even;", "struct P { uint lo, hi; float2 xy; }; a = p.lo + p.hi + q.xy.x + prism_even(v);"},
	} {
		// Cases are in a function's body unless marked @ (file scope).
		in, want := "void f(void) {\n"+c.in+"\n}", "void f(void) {\n"+c.want+"\n}"
		if rest, ok := strings.CutPrefix(c.in, "@"); ok {
			in, want = rest, c.want
		}
		got, err := Source(in, "k.cl")
		if err != nil {
			t.Errorf("Source(%q): %v", in, err)
			continue
		}
		if got != want {
			t.Errorf("Source(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestTranslateUnsupported(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"__kernel void k(__global float *x,\n    __read_only image2d_t im) {}", "k.cl:2:17: images have no CUDA counterpart (image2d_t)"},
		{"#define S sampler_t\n", "k.cl:1:11: samplers have no CUDA counterpart (sampler_t)"},
		{"x = 1;\n  y = read_imagef(a, b, c);", "k.cl:2:7: images"},
		{"int d = get_work_dim();", "k.cl:1:9: work dimensions (a CUDA launch is always 3-D) have no CUDA counterpart (get_work_dim)"},
		// Every image function and sampler constant of builtins.tsv's refused rows.
		{"uint w = get_image_width(im);", "k.cl:1:10: images have no CUDA counterpart (get_image_width)"},
		{"f(x,\n  CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP);", "k.cl:2:3: samplers have no CUDA counterpart (CLK_NORMALIZED_COORDS_FALSE)"},
		{"void g(image3d_t a) {}", "k.cl:1:8: images have no CUDA counterpart (image3d_t)"},
		{"write_imageui(o, c, v);", "k.cl:1:1: images have no CUDA counterpart (write_imageui)"},
		// printf's vector conversions.
		{"printf(\"%d\\n\", 1);\nprintf(\"%f %v4hlf\\n\", a, v);", "k.cl:2:8: printf's vector conversions have no CUDA counterpart (%v4hlf)"},
		{"__kernel void k(__global float *x,\n  __global const float3 *v) {}", "k.cl:2:3: a __global pointer to float3 (parameter 1 of k) has no CUDA counterpart"},
	} {
		_, err := Source(c.src, "k.cl")
		if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Source(%q) gives %v, want an ErrUnsupported naming %q", c.src, err, c.want)
		}
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(c.want, fmt.Sprintf("%s:%d:%d: ", e.Name, e.Line, e.Column)) ||
			!strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d:%d: %s: ", e.Name, e.Line, e.Column, e.Msg)) {
			t.Errorf("Source(%q) gives %v, not an *Error at the place %q names", c.src, err, c.want)
		}
		if _, err2 := OpenCL(c.src, "k.cl"); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("OpenCL(%q) gives %v, not %v", c.src, err2, err)
		}
		if out := nvrtcText(c.src, "k.cl"); !strings.Contains(out, "\n#error ") {
			t.Errorf("nvrtcText(%q) has no #error", c.src)
		}
	}
}

// corpusFiles returns the corpus's kernels.
func corpusFiles(t testing.TB) []string {
	files, err := filepath.Glob("testdata/corpus/*.cl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus found in testdata/corpus (%v)", err)
	}
	return files
}

// TestTranslateLines checks that the translation of the corpus and of the suite keeps
// every line where it was: the same number of lines, and each line unchanged up to its
// first rewrite.
// qualifierRE finds the words of a line the translation rewrites outside calls and member
// accesses: the unprefixed qualifiers, and __local and __constant parameters.
var qualifierRE = regexp.MustCompile(`\b(__)?(local|constant|global|private|kernel)\b`)

func TestTranslateLines(t *testing.T) {
	suite, _ := filepath.Glob("../../../kernels/*/*.cl")
	for _, f := range append(corpusFiles(t), append(suite, "../../../kernels/convert.cl", "testdata/dialect.cl")...) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Source(string(src), f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		in, got := strings.Split(string(src), "\n"), strings.Split(out, "\n")
		if len(in) != len(got) {
			t.Fatalf("%s: %d lines become %d", f, len(in), len(got))
		}
		for i := range in {
			if !strings.Contains(in[i], "(") && !strings.Contains(in[i], ".") && !qualifierRE.MatchString(in[i]) && in[i] != got[i] {
				t.Errorf("%s:%d: a line with nothing to rewrite changed:\n%q\n%q", f, i+1, in[i], got[i])
			}
		}
		if strings.Contains(f, "kernels/") && out != string(src) {
			t.Logf("%s: the translation rewrites the suite's kernel", f)
		}
	}
}

// TestTranslateCorpus compiles every corpus kernel, and every suite kernel (behind the
// shared conversions, as TestPreludeKernels does, one build each), through nvrtcText
// with clang-15 to PTX, and checks every __kernel is an entry point.
func TestTranslateCorpus(t *testing.T) {
	clang := clangPath(t)
	convert, err := os.ReadFile("../../../kernels/convert.cl")
	if err != nil {
		t.Fatal(err)
	}
	suite, _ := filepath.Glob("../../../kernels/*/*.cl")
	for _, f := range append(corpusFiles(t), suite...) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(src)
		if strings.HasPrefix(f, "../../../kernels/") {
			text = string(convert) + familyShared(t, f) + text
		}
		base := strings.TrimSuffix(filepath.Base(f), ".cl")
		t.Run(base, func(t *testing.T) {
			t.Parallel()
			ptx, err := clangCUDA(t, clang, base, nvrtcText(text, base+".cl"), []string{"-DWG=256", "-DELEM=float"})
			if err != nil {
				t.Fatalf("%s does not compile through the translation:\n%v", f, err)
			}
			names := kernelNames(string(src))
			if len(names) == 0 {
				t.Errorf("%s: no __kernel found", f)
			}
			for name := range names {
				if !strings.Contains(ptx, ".entry "+name+"(") {
					t.Errorf("PTX has no .entry %s", name)
				}
			}
		})
	}
}

// TestTranslateCorpusIsOpenCL checks that the corpus is OpenCL C 1.2 as it is (clang's
// OpenCL front end), so that what the translation accepts is what an OpenCL compiler
// accepts.
func TestTranslateCorpusIsOpenCL(t *testing.T) {
	clang := clangPath(t)
	for _, f := range corpusFiles(t) {
		args := []string{"-x", "cl", "-cl-std=CL1.2", "-Xclang", "-finclude-default-header", "-fsyntax-only", f}
		if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
			t.Errorf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestTranslateErrorLines checks that an error after rewrites is reported at the user's
// line and column: rewrites before it on earlier lines, and on its own line after it,
// move nothing.
func TestTranslateErrorLines(t *testing.T) {
	clang := clangPath(t)
	src := "__kernel void k(__global float4 *x) {\n" +
		"  float4 v = (float4)(1.0f, 2.0f,\n" +
		"                      3.0f, 4.0f);\n" +
		"  v.xy = v.yx;\n" +
		"  x[0] = prism_not_declared + v.wzyx;\n" +
		"}\n"
	_, err := clangCUDA(t, clang, "bad", nvrtcText(src, "user.cl"), nil)
	if err == nil {
		t.Fatal("clang accepted an undeclared identifier")
	}
	if !regexp.MustCompile(`user\.cl:5:10: error: use of undeclared identifier 'prism_not_declared'`).MatchString(err.Error()) {
		t.Errorf("the error is not at user.cl:5:10:\n%v", err)
	}
}

// hostShim stands for CUDA's built-in environment in a host C++ program, so that the
// prelude's part 2 and the translation run on the CPU: CUDA's vector types (part 1's own
// declarations), empty qualifiers, and declarations of what a host program never calls.
const hostShim = `#include <cstdio>
#include <cstring>
#include <cmath>
#define __device__
#define __global__
#define __host__
#define __shared__ __attribute__((section("prism_shared")))
#define __constant__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
struct prism_dim3 { unsigned int x, y, z; };
static const prism_dim3 threadIdx = {0, 0, 0}, blockIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
static void __syncthreads() {}
unsigned int __isShared(const void *);
float sinpif(float); double sinpi(double); float cospif(float); double cospi(double);
static void __threadfence() {}
static void __threadfence_block() {}
template <class T> T atomicAdd(T *, T);
template <class T> T atomicSub(T *, T);
template <class T> T atomicExch(T *, T);
template <class T> T atomicCAS(T *, T, T);
template <class T> T atomicMin(T *, T);
template <class T> T atomicMax(T *, T);
template <class T> T atomicAnd(T *, T);
template <class T> T atomicOr(T *, T);
template <class T> T atomicXor(T *, T);
float rsqrtf(float); double rsqrt(double); float __expf(float); float __exp10f(float); float __logf(float);
float __log2f(float); float __log10f(float); float __powf(float, float); float __sinf(float); float __cosf(float);
float __tanf(float); float __fdividef(float, float); int __popc(unsigned int); int __clz(int); int __mul24(int, int);
unsigned int __umul24(unsigned int, unsigned int); int __mulhi(int, int); unsigned int __umulhi(unsigned int, unsigned int);
static float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
static int __float_as_int(float x) { int i; memcpy(&i, &x, 4); return i; }
static float __uint_as_float(unsigned int x) { float f; memcpy(&f, &x, 4); return f; }
static unsigned int __float_as_uint(float x) { unsigned int i; memcpy(&i, &x, 4); return i; }
static double __longlong_as_double(long long x) { double f; memcpy(&f, &x, 8); return f; }
static long long __double_as_longlong(double x) { long long i; memcpy(&i, &x, 8); return i; }
`

// hostPrelude returns a host C++ program's beginning: hostShim, part 1's vector types and
// the prelude's part 2.
func hostPrelude(t *testing.T) string {
	t.Helper()
	cut := func(from, to string) string {
		prelude := Prelude()
		i := strings.Index(prelude, from)
		j := strings.Index(prelude[max(i, 0):], to)
		if i < 0 || j < 0 {
			t.Fatalf("the prelude: %q ... %q not found", from, to)
		}
		return prelude[i : i+j]
	}
	return hostShim + cut("// Vector types, as CUDA declares them", "// The CUDA math API") +
		cut("#define PRISM_INFINITY_F", "#ifndef __CUDACC_RTC__\n// Plain functions")
}

// TestTranslateSemantics runs translated OpenCL C on the CPU (clang-15, host C++ with the
// prelude's part 2) and checks the values of vector literals, swizzles read and written,
// .lo .hi .even .odd, operators, comparisons, as_<type>, conversions with saturation and
// rounding, vloadN and vstoreN against OpenCL's definitions.
func TestTranslateSemantics(t *testing.T) {
	const body = `
#define P4(v) printf("%g %g %g %g\n", (double)(v).x, (double)(v).y, (double)(v).z, (double)(v).w)
#define I4(v) printf("%d %d %d %d\n", (int)(v).x, (int)(v).y, (int)(v).z, (int)(v).w)
void run(void) {
    float k = 2.0f;
    float2 v2 = (float2)(1.0f, 2.0f);
    float4 a = (float4)(v2, 3.0f, 4.0f);
    P4(a);                                     // 1 2 3 4
    P4((float4)(k));                           // 2 2 2 2
    P4((float4)k + a.wzyx);                    // 6 5 4 3
    float4 b = a;
    b.xy = b.yx;
    b.s3 = 9.0f;
    b.zw += (float2)(10.0f, 10.0f);
    P4(b);                                     // 2 1 13 19
    float8 w = (float8)(0, 1, 2, 3, 4, 5, 6, 7);
    P4(w.lo + w.hi);                           // 4 6 8 10
    P4((float4)(w.even.x, w.odd.y, w.s7, w.S6));  // 0 3 7 6
    w.hi = w.lo;
    w.odd *= 2.0f;
    P4(w.hi);                                  // 0 2 2 6
    float3 t3 = (float3)(1.0f, 2.0f, 3.0f);
    t3.hi = (float2)(8.0f, 9.0f);
    printf("%g %g %g %g\n", t3.x, t3.y, t3.z, t3.hi.x); // 1 2 8 8
    int4 x = (int4)(1, -2, 3, 4), y = (int4)(1, 2, -3, 5);
    I4(x < y);                                 // 0 -1 0 -1
    I4(x == y || x > 2);                       // -1 0 -1 -1
    I4(!x + (x & y) * 2 - (y >> 33) + (x << 1)); // 4 -1 10 14
    I4(a > 2.5f);                              // 0 0 -1 -1
    uint4 bits = as_uint4(a);
    printf("%x %x\n", bits.x, as_uint(-2.0f)); // 3f800000 c0000000
    float4 r = (float4)(2.5f, -2.5f, 3.7f, -3.2f);
    I4(convert_int4_rte(r));                   // 2 -2 4 -3
    I4(convert_int4(r));                       // 2 -2 3 -3
    I4(convert_int4_rtp(r));                   // 3 -2 4 -3
    I4(convert_int4_rtn(r));                   // 2 -3 3 -4
    uchar4 s = convert_uchar4_sat_rte((float4)(300.0f, -5.0f, 127.5f, NAN));
    I4(s);                                     // 255 0 128 0
    printf("%d %d %u\n", convert_short_sat(100000), convert_char_sat(-1000), convert_uint_sat(-1)); // 32767 -128 0
    printf("%.9g %.9g %.9g\n", convert_float_rtz(16777217), convert_float_rtp(16777217), convert_float_rtn(-16777217)); // 16777216 16777218 -16777218
    float buf[40];
    for (int i = 0; i < 40; i++) buf[i] = (float)i;
    float16 h = vload16(1, buf);
    P4(h.hi.lo);                               // 24 25 26 27
    float3 f3 = vload3(2, buf + 1);
    vstore3(f3 * 2.0f, 0, buf);
    vstore8(vload8(0, buf), 3, buf);
    P4(vload4(6, buf));                        // 14 16 18 3
    int8 i8 = (int8)(0, 1, 2, 3, 4, 5, 6, 7);
    i8.s4567 = (int4)(9);
    i8 = i8 * 2 + (int8)(1);
    I4(i8.hi);                                 // 19 19 19 19
    double2 d = (double2)(0.1, 0.2) * 10.0;
    printf("%g %g\n", d.x, d.y);               // 1 2
}
`
	const want = `1 2 3 4
2 2 2 2
6 5 4 3
2 1 13 19
4 6 8 10
0 3 7 6
0 2 2 6
1 2 8 8
0 -1 0 -1
-1 0 -1 -1
4 -1 10 14
0 0 -1 -1
3f800000 c0000000
2 -2 4 -3
2 -2 3 -3
3 -2 4 -3
2 -3 3 -4
255 0 128 0
32767 -128 0
16777216 16777218 -16777218
24 25 26 27
14 16 18 3
19 19 19 19
1 2
`
	runOpenCLOnHost(t, "semantics", body, want)
}
