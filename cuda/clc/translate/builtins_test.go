package translate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-compute/prism/cuda/clc/translate/translatetest"
)

// The built-in tests run translated OpenCL C on the CPU, as TestTranslateSemantics does
// (clang-15, host C++ with the prelude's part 2), and check the printed values of the
// vector forms of the math, integer, common, geometric and relational functions, select,
// bitselect and half's loads and stores against values worked out by hand from the OpenCL
// C 1.2 specification; TestBuiltinsDevice compiles them for every vector type to PTX.

// builtinsHostDefs defines, for a host program, what hostShim only declares: CUDA's
// intrinsics, as what they compute (not the fast math functions, which glibc declares
// too: native_* is not run on the host). It follows the prelude: it calls only math functions
// that the prelude's macros do not rename (the float ones, named with an f).
const builtinsHostDefs = `
float rsqrtf(float x) { return 1.0f / sqrtf(x); }
double (rsqrt)(double x) { return 1.0 / (double)sqrtl(x); }
float __fdividef(float x, float y) { return x / y; }
int __popc(unsigned int x) { return __builtin_popcount(x); }
int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
int __mul24(int a, int b) { return (int)((long long)((int)((unsigned int)a << 8) >> 8) * (long long)((int)((unsigned int)b << 8) >> 8)); }
unsigned int __umul24(unsigned int a, unsigned int b) { return (a & 0xffffffu) * (b & 0xffffffu); }
int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a * b) >> 32); }
static long double prism_host_sinpi(long double x) { // exact at integers and half-integers
    long double a = fmodl(fabsl(x), 2.0L), s = x < 0 ? -1.0L : 1.0L;
    if (a >= 1) { a -= 1; s = -s; }
    if (a > 0.5L) a = 1 - a;
    if (a == 0) return x < 0 ? -0.0L : 0.0L;
    return s * sinl(3.141592653589793238462643383279502884L * a);
}
double (sinpi)(double x) { return (double)prism_host_sinpi(x); }
double (cospi)(double x) {
    long double a = fmodl(fabsl(x), 2.0L);
    return a == 0.5L || a == 1.5L ? 0.0 : (double)prism_host_sinpi(a + 0.5L);
}
float sinpif(float x) { return (float)(sinpi)((double)x); }
float cospif(float x) { return (float)(cospi)((double)x); }
`

// runOpenCLOnHost translates body (OpenCL C defining void run(void)), runs it on the CPU
// and compares its output with want, line for line.
func runOpenCLOnHost(t *testing.T, name, body, want string) {
	t.Helper()
	clang := clangPath(t)
	src, err := Source(body, name+".cl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file, exe := filepath.Join(dir, name+".cc"), filepath.Join(dir, name)
	text := hostPrelude(t) + builtinsHostDefs + "#line 1 \"" + name + ".cl\"\n" + src + "\nint main() { run(); return 0; }\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-x", "c++", "-std=c++17", "-O1", "-w", "-o", exe, file, "-lm"}
	if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
		t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	out, err := exec.Command(exe).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", exe, err, out)
	}
	got, wantLines := strings.Split(string(out), "\n"), strings.Split(want, "\n")
	for i := range max(len(got), len(wantLines)) {
		g, w := "", ""
		if i < len(got) {
			g = got[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if g != w {
			t.Errorf("%s: output line %d: got %q, want %q", name, i+1, g, w)
		}
	}
}

// builtinsPrint are the printing macros of the host tests' bodies.
const builtinsPrint = `
#define P2(v) printf("%g %g\n", (double)(v).x, (double)(v).y)
#define P3(v) printf("%g %g %g\n", (double)(v).x, (double)(v).y, (double)(v).z)
#define P4(v) printf("%g %g %g %g\n", (double)(v).x, (double)(v).y, (double)(v).z, (double)(v).w)
#define I4(v) printf("%d %d %d %d\n", (int)(v).x, (int)(v).y, (int)(v).z, (int)(v).w)
#define L4(v) printf("%lld %lld %lld %lld\n", (long long)(v).x, (long long)(v).y, (long long)(v).z, (long long)(v).w)
`

// TestBuiltinsVectorMath checks the vector forms of the math, common and integer
// functions, with OpenCL's vector-and-scalar mixes, on the CPU.
func TestBuiltinsVectorMath(t *testing.T) {
	t.Parallel()
	const body = builtinsPrint + `
void run(void) {
    float4 a = (float4)(1.0f, 4.0f, 9.0f, 16.0f);
    float4 h = (float4)(1.5f, -1.5f, 2.0f, -0.25f);
    P4(sqrt(a));                                             // 1 2 3 4
    P4(rsqrt(a));                                            // 1 0.5 0.333333 0.25
    P4(floor(h));                                            // 1 -2 2 -1
    P4(ceil(h));                                             // 2 -1 2 -0
    P4(fabs(h));                                             // 1.5 1.5 2 0.25
    P4(round((float4)(0.5f, -0.5f, 1.5f, 2.5f)));            // 1 -1 2 3
    P4(rint((float4)(0.5f, -0.5f, 1.5f, 2.5f)));             // 0 -0 2 2
    P4(trunc((float4)(1.7f, -1.7f, 0.2f, -0.2f)));           // 1 -1 0 -0
    float8 e = (float8)(0, 1, 2, 3, 4, 5, 6, 7);
    P4(exp2(e).hi);                                          // 16 32 64 128
    P4(pow(a, (float4)(0.5f)));                              // 1 2 3 4
    P4(rootn((float4)(-8, 27, -0.0f, -0.0f), (int4)(3, 3, 3, -3))); // -2 3 -0 -inf
    P4(rootn((float4)(-32, 16, -0.0f, 0.0f), (int4)(5, -2, 2, -2))); // -2 0.25 0 inf
    P2(rootn((double2)(-1e-300, -INFINITY), (int2)(3, 5)));  // -1e-100 -inf
    P4(fmin(a, 5.0f));                                       // 1 4 5 5
    P4(fmax(a, (float4)(2, 3, 10, 20)));                     // 2 4 10 20
    P4(fma(a, a, a));                                        // 2 20 90 272
    P4(mad(a, (float4)(2.0f), (float4)(1.0f)));              // 3 9 19 33
    P4(mix(a, (float4)(0.0f), 0.5f));                        // 0.5 2 4.5 8
    P4(mix(a, a * 3.0f, (float4)(0, 0.5f, 1, 0.25f)));       // 1 8 27 24
    P4(clamp(a, 2.0f, 10.0f));                               // 2 4 9 10
    P4(clamp(a, (float4)(0, 5, 0, 0), (float4)(0.5f, 6, 20, 15))); // 0.5 5 9 15
    P4(min(a, 5.0f) + max(a, (float4)(0, 5, 0, 0)));         // 2 9 14 21
    P4(step(4.0f, a));                                       // 0 1 1 1
    P4(step(a, (float4)(4.0f)));                             // 1 1 0 0
    P4(smoothstep(0.0f, 2.0f, (float4)(-1, 0.5f, 1, 3)));    // 0 0.15625 0.5 1
    P4(sign((float4)(-2, 0, 3, -0.0f)));                     // -1 0 1 -0
    P4(degrees((float4)(M_PI_F, M_PI_2_F, 0, -M_PI_F)));     // 180 90 0 -180
    P4(radians((float4)(180, 90, 0, 360)));                  // 3.14159 1.5708 0 6.28319
    P4(copysign(a, (float4)(-1, 1, -0.0f, 0)));              // -1 4 -9 16
    P4(fmod(a, (float4)(3.0f)));                             // 1 1 0 1
    P4(hypot((float4)(3, 5, 8, 7), (float4)(4, 12, 15, 24))); // 5 13 17 25
    P4(fdim(a, (float4)(2.0f)));                             // 0 2 7 14
    P4(maxmag((float4)(-3, 2, -2, 1), (float4)(2, -3, 2, 1))); // -3 -3 2 1
    P4(minmag((float4)(-3, 2, -2, 1), (float4)(2, -3, 2, 1))); // 2 2 -2 1
    double4 d = (double4)(0.25, 1, 4, 100);
    P4(sqrt(d));                                             // 0.5 1 2 10
    P4(log2(d));                                             // -2 0 2 6.64386
    float16 s16 = (float16)(0.0f);
    P4((sin(s16) + cos(s16) + exp(s16) + log(s16 + 1.0f)).hi.hi); // 2 2 2 2
    P3(atan2((float3)(1, -1, 0), (float3)(1, 1, 1)));       // 0.785398 -0.785398 0
    P2(sqrt(a.zw));                                          // 3 4
    int4 i = (int4)(-5, 3, -100, 7);
    I4(abs(i));                                              // 5 3 100 7
    I4(min(i, 0));                                           // -5 0 -100 0
    I4(max(i, (int4)(0, 5, -200, 6)));                       // 0 5 -100 7
    I4(clamp(i, -10, 5));                                    // -5 3 -10 5
    I4(abs_diff(i, (int4)(5)));                              // 10 2 105 2
    char4 c = (char4)(100, -100, 120, -128);
    I4(add_sat(c, (char4)(100, -100, 7, -1)));               // 127 -128 127 -128
    I4(sub_sat(c, (char4)(-100, 100, -7, 1)));               // 127 -128 127 -128
    uchar4 u = (uchar4)(250, 3, 255, 0);
    I4(add_sat(u, (uchar4)(10)));                            // 255 13 255 10
    I4(sub_sat(u, (uchar4)(10)));                            // 240 0 245 0
    I4(add_sat((int4)(INT_MAX, INT_MIN, 5, -5), (int4)(1, -1, 6, -6)));   // 2147483647 -2147483648 11 -11
    L4(sub_sat((long4)(LONG_MIN, LONG_MAX, 0, 0), (long4)(1, -1, LONG_MIN, 5))); // LONG_MIN LONG_MAX LONG_MAX -5
    I4(hadd(i, (int4)(2)));                                  // -2 2 -49 4
    I4(rhadd(i, (int4)(2)));                                 // -1 3 -49 5
    I4(rotate((uchar4)(0x81, 1, 0xf0, 0x12), (uchar4)(1, 7, 4, 8))); // 3 128 15 18
    I4(rotate((int4)(1, INT_MIN, -1, 3), (int4)(31, 1, 5, -1)));     // -2147483648 1 -1 -2147483647
    I4(popcount((int4)(0, -1, 7, 0x100)));                   // 0 32 3 1
    I4(popcount((short4)(-1, 0, 3, 0x7fff)));                // 16 0 2 15
    I4(clz((int4)(0, -1, 1, 0x100)));                        // 32 0 31 23
    I4(clz((uchar4)(0, 1, 0x80, 0x10)));                     // 8 7 0 3
    long4 l = (long4)(1L << 40, -1, 0, 12345);
    L4(clz(l));                                              // 23 0 64 50
    L4(popcount(l));                                         // 1 64 0 6
    I4(mul_hi((int4)(0x40000000, -2, 65536, 7), (int4)(4, 3, 65536, -1))); // 1 -1 1 -1
    I4(mul_hi((ushort4)(65535, 256, 3, 0), (ushort4)(65535, 256, 5, 9)));   // 65534 1 0 0
    L4(mul_hi((long4)(1L << 62, -1, 3, -(1L << 62)), (long4)(8, 1, 5, 8))); // 2 -1 0 -2
    L4(mul_hi((ulong4)(~0UL, 1UL << 63, 5, 0), (ulong4)(~0UL, 4, 7, 9)));   // -2 2 0 0
    I4(mul24((int4)(3, -4, 1000, 0), (int4)(5, 6, 1000, 9)));               // 15 -24 1000000 0
    I4(mad24((int4)(3, -4, 1000, 0), (int4)(5, 6, 1000, 9), (int4)(1)));    // 16 -23 1000001 1
    I4(mad_hi((int4)(0x40000000), (int4)(4), (int4)(10)));  // 11 11 11 11
    I4(abs((char4)(-128, -1, 5, 0)));                        // 128 1 5 0
    I4(min((short4)(1, -2, 3, -4), (short)0));               // 0 -2 0 -4
    uint8 ub = max((uint8)(1, 2, 3, 4, 5, 6, 7, 8), 4u);
    I4(ub.lo);                                               // 4 4 4 4
    I4(ub.hi);                                               // 5 6 7 8
    printf("%d %d %d\n", (int)abs((char)-128), (int)add_sat((short)30000, (short)30000), (int)rotate((uchar)0x80, (uchar)1)); // 128 32767 1
}
`
	const want = `1 2 3 4
1 0.5 0.333333 0.25
1 -2 2 -1
2 -1 2 -0
1.5 1.5 2 0.25
1 -1 2 3
0 -0 2 2
1 -1 0 -0
16 32 64 128
1 2 3 4
-2 3 -0 -inf
-2 0.25 0 inf
-1e-100 -inf
1 4 5 5
2 4 10 20
2 20 90 272
3 9 19 33
0.5 2 4.5 8
1 8 27 24
2 4 9 10
0.5 5 9 15
2 9 14 21
0 1 1 1
1 1 0 0
0 0.15625 0.5 1
-1 0 1 -0
180 90 0 -180
3.14159 1.5708 0 6.28319
-1 4 -9 16
1 1 0 1
5 13 17 25
0 2 7 14
-3 -3 2 1
2 2 -2 1
0.5 1 2 10
-2 0 2 6.64386
2 2 2 2
0.785398 -0.785398 0
3 4
5 3 100 7
-5 0 -100 0
0 5 -100 7
-5 3 -10 5
10 2 105 2
127 -128 127 -128
127 -128 127 -128
255 13 255 10
240 0 245 0
2147483647 -2147483648 11 -11
-9223372036854775808 9223372036854775807 9223372036854775807 -5
-2 2 -49 4
-1 3 -49 5
3 128 15 18
-2147483648 1 -1 -2147483647
0 32 3 1
16 0 2 15
32 0 31 23
8 7 0 3
23 0 64 50
1 64 0 6
1 -1 1 -1
65534 1 0 0
2 -1 0 -2
-2 2 0 0
15 -24 1000000 0
16 -23 1000001 1
11 11 11 11
128 1 5 0
0 -2 0 -4
4 4 4 4
5 6 7 8
128 32767 1
`
	runOpenCLOnHost(t, "vector_math", body, want)
}

// TestBuiltinsGeometricRelational checks the geometric functions (length scaling away
// overflow and underflow, normalize of zero and infinite vectors), the relational
// functions (vector results -1 and 0 of the component's size, scalar ones 1 and 0), any,
// all, select and bitselect, on the CPU.
func TestBuiltinsGeometricRelational(t *testing.T) {
	t.Parallel()
	const body = builtinsPrint + `
void run(void) {
    float4 p = (float4)(1, 2, 2, 0);
    printf("%g %g\n", dot(p, p), length(p));                  // 9 3
    float3 q = (float3)(3, 4, 0);
    printf("%g %g\n", length(q), distance(q, (float3)(0, 0, 12))); // 5 13
    P3(normalize(q));                                         // 0.6 0.8 0
    printf("%g %g\n", length((float2)(3e30f, 4e30f)), length((float2)(3e-30f, 4e-30f))); // 5e+30 5e-30
    P4(normalize((float4)(0)));                               // 0 0 0 0
    P4(normalize((float4)(INFINITY, 1, -INFINITY, 2)));       // 0.707107 0 -0.707107 0
    P3(cross((float3)(1, 0, 0), (float3)(0, 1, 0)));          // 0 0 1
    P4(cross((float4)(1, 2, 3, 9), (float4)(4, 5, 6, 9)));    // -3 6 -3 0
    printf("%g %g\n", fast_length((float2)(6, 8)), fast_distance((float2)(1, 1), (float2)(4, 5))); // 10 5
    P2(fast_normalize((float2)(0, 5)));                       // 0 1
    printf("%g %g\n", length((double3)(2, 3, 6)), dot((double2)(1.5, 2), (double2)(2, 4))); // 7 11
    printf("%g %g %g %g\n", length(-3.0f), distance(1.0f, 4.5f), normalize(-2.0f), dot(2.0f, 3.0f)); // 3 3.5 -1 6
    float4 w = (float4)(4, 9, 16, 25);
    printf("%g\n", dot(w.xy, w.zw));                          // 289
    float4 r = (float4)(1.0f, NAN, INFINITY, -0.0f);
    I4(isnan(r));                                             // 0 -1 0 0
    I4(isinf(r));                                             // 0 0 -1 0
    I4(isfinite(r));                                          // -1 0 0 -1
    I4(isnormal(r));                                          // -1 0 0 0
    I4(signbit(r));                                           // 0 0 0 -1
    printf("%d %d %d %d\n", isnan(NAN), isinf(-INFINITY), signbit(-1.0f), isnormal(1e-40f)); // 1 1 1 0
    float4 s = (float4)(1.0f, 2.0f, NAN, 3.0f), t = (float4)(1.0f, 1.0f, 1.0f, 4.0f);
    I4(isequal(s, t));                                        // -1 0 0 0
    I4(isnotequal(s, t));                                     // 0 -1 -1 -1
    I4(isgreater(s, t));                                      // 0 -1 0 0
    I4(isgreaterequal(s, t));                                 // -1 -1 0 0
    I4(isless(s, t));                                         // 0 0 0 -1
    I4(islessequal(s, t));                                    // -1 0 0 -1
    I4(islessgreater(s, t));                                  // 0 -1 0 -1
    I4(isordered(s, t));                                      // -1 -1 0 -1
    I4(isunordered(s, t));                                    // 0 0 -1 0
    long2 m = isnan((double2)(NAN, 1.0));
    printf("%lld %lld %d\n", (long long)m.x, (long long)m.y, (int)sizeof(m.x)); // -1 0 8
    int8 m8 = isless((float8)(0), (float8)(0.5f));
    printf("%d %d\n", (int)m8.s0, (int)sizeof(isgreater((float8)(0), (float8)(1)).s0)); // -1 4
    printf("%d %d %d %d\n", any((int4)(0, 0, -1, 0)), all((int4)(-1, -1, 5, -1)), all((int4)(-1)), any((int4)(1, 2, 3, 0x7fffffff))); // 1 0 1 0
    printf("%d %d %d %d\n", any((char8)(0, 0, 0, 0, 0, 0, 0, -128)), any(-5), all(3), any(isless(s, t))); // 1 1 0 1
    printf("%d %g\n", select(1, 2, 0), select(1.0f, 2.0f, 5)); // 1 2
    I4(select((int4)(1, 2, 3, 4), (int4)(5, 6, 7, 8), (int4)(0, -1, 1, INT_MIN))); // 1 6 3 8
    P4(select((float4)(1, 2, 3, 4), (float4)(5, 6, 7, 8), (uint4)(0x80000000u, 0, 0xffffffffu, 0x7fffffffu))); // 5 2 7 4
    P4(select((float4)(0), s, isless(s, t)));                 // 0 0 0 3
    P2(select((double2)(1, 2), (double2)(3, 4), (long2)(-1, 0))); // 3 2
    I4(select((char4)(1, 2, 3, 4), (char4)(5, 6, 7, 8), (uchar4)(0x80, 0x7f, 0xff, 0))); // 5 2 7 4
    I4(bitselect((int4)(0x0f), (int4)(0xf0), (int4)(0xff, 0x0f, 0, -1))); // 240 0 15 240
    P4(bitselect((float4)(1.0f), (float4)(-1.0f), as_float4((uint4)(0x80000000u)))); // -1 -1 -1 -1
    printf("%g %d\n", bitselect(2.0f, -2.0f, as_float(0x80000000u)), bitselect(12, 3, 5)); // -2 9
}
`
	const want = `9 3
5 13
0.6 0.8 0
5e+30 5e-30
0 0 0 0
0.707107 0 -0.707107 0
0 0 1
-3 6 -3 0
10 5
0 1
7 11
3 3.5 -1 6
289
0 -1 0 0
0 0 -1 0
-1 0 0 -1
-1 0 0 0
0 0 0 -1
1 1 1 0
-1 0 0 0
0 -1 -1 -1
0 -1 0 0
-1 -1 0 0
0 0 0 -1
-1 0 0 -1
0 -1 0 -1
-1 -1 0 -1
0 0 -1 0
-1 0 8
-1 4
1 0 1 0
1 1 0 1
1 2
1 6 3 8
5 2 7 4
0 0 0 3
3 2
5 2 7 4
240 0 15 240
-1 -1 -1 -1
-2 9
`
	runOpenCLOnHost(t, "geometric_relational", body, want)
}

// TestBuiltinsHalf checks vstore_half in each rounding mode on edge values (the largest
// half, overflow to infinity or to 65504, ties, subnormals, -0, infinities, NaN),
// vload_half and the vector and aligned forms, on __private arrays of half, and half's
// arithmetic, on the CPU (the software conversions; the device's cvt instructions are
// checked to be in the PTX by TestBuiltinsDevice).
func TestBuiltinsHalf(t *testing.T) {
	t.Parallel()
	const body = builtinsPrint + `
#define N 20
#define BITS(h) do { for (int k = 0; k < N; k++) printf(k ? " %04x" : "%04x", ((ushort *)(h))[k]); printf("\n"); } while (0)
void run(void) {
    const float in[N] = {1.0f, 65504.0f, 65520.0f, -65520.0f, 65519.0f, 1.00048828125f, 1.00146484375f,
                         -1.00048828125f, 5.9604644775390625e-8f, 2.98023223876953125e-8f, 4.470348358154296875e-8f,
                         -2.98023223876953125e-8f, -0.0f, INFINITY, -INFINITY, NAN, 6.103515625e-5f, 1e-10f, 0.1f, 1e6f};
    half h[N];
    for (int i = 0; i < N; i++) vstore_half(in[i], i, h);
    BITS(h);
    for (int i = 0; i < N; i++) vstore_half_rte(in[i], i, h);
    BITS(h);
    for (int i = 0; i < N; i++) vstore_half_rtz(in[i], i, h);
    BITS(h);
    for (int i = 0; i < N; i++) vstore_half_rtp(in[i], i, h);
    BITS(h);
    for (int i = 0; i < N; i++) vstore_half_rtn(in[i], i, h);
    BITS(h);
    for (int i = 0; i < N; i++) vstore_half_rtz((double)in[i], i, h);
    BITS(h);
    vstore_half_rte(1.0 + 1.0 / 2048 + 1e-12, 0, h);          // just above the tie: 0x3c01 (a double, rounded once)
    vstore_half_rtn(-65505.0, 1, h);                           // 0xfbff - 1 ulp down is beyond: -inf
    printf("%04x %04x\n", ((ushort *)h)[0], ((ushort *)h)[1]); // 3c01 fc00
    for (int i = 0; i < N; i++) vstore_half(in[i], i, h);
    for (int i = 0; i < N; i++) printf(i ? " %g" : "%g", vload_half(i, h));
    printf("\n");
    half v[16];
    for (int i = 0; i < 16; i++) ((ushort *)v)[i] = 0;
    vstore_half3((float3)(1, 2, 3), 1, v);                     // v[3..5]
    vstorea_half3((float3)(4, 5, 6), 2, v);                    // v[8..10]
    vstore_half2_rtz((float2)(65520.0f, -1.00048828125f), 6, v); // v[12..13]: 7bff bc00
    vstorea_half2_rtp((float2)(1.00048828125f, 2.98023223876953125e-8f), 7, v); // v[14..15]: 3c01 0001
    for (int i = 0; i < 16; i++) printf(i ? " %04x" : "%04x", ((ushort *)v)[i]);
    printf("\n");
    P3(vload_half3(1, v));                                     // 1 2 3
    P3(vloada_half3(2, v));                                    // 4 5 6
    P4(vload_half4(1, v));                                     // v[4..7]: 2 3 0 0
    P2(vloada_half2(7, v));                                    // 1.00098 5.96046e-08
    float16 f16 = vload_half16(0, v);
    P4(f16.s89ab);                                             // 4 5 6 0
    vstore_half8((float8)(0.5f), 1, v);
    vstore_half4_rtn((float4)(-0.1f), 0, v);
    for (int i = 0; i < 16; i++) printf(i ? " %04x" : "%04x", ((ushort *)v)[i]);
    printf("\n");
    P4(vloada_half4(0, v) + vload_half4(3, v));                // -0.100037 (rounded down: 0xae67) + 0.5
    half x = 1.0f, y = x + (half)0.5f;
    printf("%g %g %g %g\n", (float)(y * 3), (float)(half)2049.0f, (float)((half)65504.0f + (half)65504.0f), (float)(-x)); // 4.5 2048 inf -1
    half tiny = 5.9604644775390625e-8f;
    float g = x * 2.5f;
    printf("%g %g %d %d %g\n", (float)(tiny / 2), g, x < y, y == 1.5f, (float)(half)(1.0f / 3.0f)); // 0 2.5 1 1 0.333252
    y += 1;
    y *= 2.0f;
    printf("%g %d\n", (float)y, (int)sizeof(half));            // 5 2
}
`
	const want = `3c00 7bff 7c00 fc00 7bff 3c00 3c02 bc00 0001 0000 0001 8000 8000 7c00 fc00 7e00 0400 0000 2e66 7c00
3c00 7bff 7c00 fc00 7bff 3c00 3c02 bc00 0001 0000 0001 8000 8000 7c00 fc00 7e00 0400 0000 2e66 7c00
3c00 7bff 7bff fbff 7bff 3c00 3c01 bc00 0001 0000 0000 8000 8000 7c00 fc00 7e00 0400 0000 2e66 7bff
3c00 7bff 7c00 fbff 7c00 3c01 3c02 bc00 0001 0001 0001 8000 8000 7c00 fc00 7e00 0400 0001 2e67 7c00
3c00 7bff 7bff fc00 7bff 3c00 3c01 bc01 0001 0000 0000 8001 8000 7c00 fc00 7e00 0400 0000 2e66 7bff
3c00 7bff 7bff fbff 7bff 3c00 3c01 bc00 0001 0000 0000 8000 8000 7c00 fc00 7e00 0400 0000 2e66 7bff
3c01 fc00
1 65504 inf -inf 65504 1 1.00195 -1 5.96046e-08 0 5.96046e-08 -0 -0 inf -inf nan 6.10352e-05 0 0.0999756 inf
0000 0000 0000 3c00 4000 4200 0000 0000 4400 4500 4600 0000 7bff bc00 3c01 0001
1 2 3
4 5 6
2 3 0 0
1.00098 5.96046e-08
4 5 6 0
ae67 ae67 ae67 ae67 4000 4200 0000 0000 3800 3800 3800 3800 3800 3800 3800 3800
0.399963 0.399963 0.399963 0.399963
4.5 2048 inf -1
0 2.5 1 1 0.333252
5 2
`
	runOpenCLOnHost(t, "half", body, want)
}

// TestBuiltinsDevice compiles translatetest.Builtins through the translation with clang-15 to
// PTX (as OpenCL C 1.2 too, with clang's OpenCL front end) and checks that half's
// conversions are the device's cvt instructions in every rounding mode.
func TestBuiltinsDevice(t *testing.T) {
	t.Parallel()
	clang := clangPath(t)
	src := translatetest.Builtins()
	ptx, err := clangCUDA(t, clang, "builtins", nvrtcText(src, "builtins.cl"), nil)
	if err != nil {
		t.Fatalf("the built-ins do not compile through the translation:\n%v", err)
	}
	for name := range kernelNames(src) {
		if !strings.Contains(ptx, ".entry "+name+"(") {
			t.Errorf("PTX has no .entry %s", name)
		}
	}
	for _, w := range []string{"cvt.f32.f16", "cvt.rn.f16.f32", "cvt.rz.f16.f32", "cvt.rp.f16.f32", "cvt.rm.f16.f32"} {
		if !strings.Contains(ptx, w) {
			t.Errorf("the PTX has no %s", w)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "builtins.cl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-x", "cl", "-cl-std=CL1.2", "-Xclang", "-finclude-default-header", "-fsyntax-only", file}
	if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
		t.Errorf("the built-ins' kernels are not OpenCL C 1.2: clang %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
