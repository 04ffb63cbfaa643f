// Package translatetest holds OpenCL C sources that exercise the translation of package
// translate, for its tests and for the tests of the backends that build what it returns.
// Its functions are safe for concurrent use.
package translatetest

import (
	"fmt"
	"strings"
)

// Builtins returns OpenCL C kernels that call every built-in function of the prelude
// (math.cuh, builtins.cuh, geometric.cuh and half.cuh of translate's prelude/) on every
// vector type (and scalar) it takes: floats and doubles of 1, 2, 3, 4, 8 and 16
// components, the integer types likewise, and half's loads and stores in every form and
// rounding mode on __global, __local and __private arrays.
func Builtins() string {
	var b strings.Builder
	widths := []string{"", "2", "3", "4", "8", "16"}
	vload := func(w, i, p string) string {
		if w == "" {
			return p + "[" + i + "]"
		}
		return "vload" + w + "(" + i + ", " + p + ")"
	}
	vstore := func(w, v, i, p string) string {
		if w == "" {
			return p + "[" + i + "] = " + v
		}
		return "vstore" + w + "(" + v + ", " + i + ", " + p + ")"
	}
	for _, e := range []string{"float", "double"} {
		mask := map[string]string{"float": "int", "double": "long"}[e]
		fmt.Fprintf(&b, "__kernel void math_%s(__global %s *out, __global const %s *in) {\n    int i = get_global_id(0);\n", e, e, e)
		for _, w := range widths {
			v, m := e+w, mask+w
			fmt.Fprintf(&b, "    {\n        %s x = %s, y = %s, z = %s;\n", v, vload(w, "i", "in"), vload(w, "i + 1", "in"), vload(w, "i + 2", "in"))
			fmt.Fprintf(&b, "        %s r = sqrt(x) + rsqrt(x) + cbrt(x) + exp(x) + exp2(x) + exp10(x) + expm1(x) + log(x) + log2(x) + log10(x) + log1p(x)\n", v)
			b.WriteString("            + sin(x) + cos(x) + tan(x) + asin(x) + acos(x) + atan(x) + sinh(x) + cosh(x) + tanh(x) + fabs(x) + floor(x) + ceil(x)\n")
			b.WriteString("            + round(x) + trunc(x) + rint(x) + erf(x) + erfc(x) + tgamma(x) + lgamma(x) + sign(x) + degrees(x) + radians(x)\n")
			fmt.Fprintf(&b, "            + pow(x, y) + powr(x, y) + fmin(x, y) + fmax(x, y) + fmin(x, (%s)1) + fmax(x, (%s)2) + fmod(x, y) + atan2(x, y) + hypot(x, y)\n", e, e)
			fmt.Fprintf(&b, "            + copysign(x, y) + fdim(x, y) + maxmag(x, y) + minmag(x, y) + min(x, y) + max(x, (%s)0) + step(x, y) + step((%s)0.5, y)\n", e, e)
			fmt.Fprintf(&b, "            + fma(x, y, z) + mad(x, y, z) + mix(x, y, z) + mix(x, y, (%s)0.5) + clamp(x, y, z) + clamp(x, (%s)0, (%s)1)\n", e, e, e)
			fmt.Fprintf(&b, "            + smoothstep(x, y, z) + smoothstep((%s)0, (%s)1, z) + bitselect(x, y, z);\n", e, e)
			if len(w) < 2 && w != "8" { // OpenCL's geometric functions take up to 4 components
				b.WriteString("        r += normalize(x) + dot(x, y) + length(x) + distance(x, y);\n")
				if e == "float" {
					b.WriteString("        r += fast_normalize(x) + fast_length(x) + fast_distance(x, y);\n")
				}
			}
			if w == "3" || w == "4" {
				b.WriteString("        r += cross(x, y);\n")
			}
			if e == "float" {
				b.WriteString("        r += native_exp(x) + native_exp2(x) + native_exp10(x) + native_log(x) + native_log2(x) + native_log10(x)\n")
				b.WriteString("            + native_sqrt(x) + native_rsqrt(x) + native_recip(x) + native_divide(x, y) + native_powr(x, y) + native_sin(x)\n")
				b.WriteString("            + native_cos(x) + native_tan(x) + half_cos(x) + half_divide(x, y) + half_exp(x) + half_exp2(x) + half_exp10(x)\n")
				b.WriteString("            + half_log(x) + half_log2(x) + half_log10(x) + half_powr(x, y) + half_recip(x) + half_rsqrt(x) + half_sin(x)\n")
				b.WriteString("            + half_sqrt(x) + half_tan(x);\n")
			}
			fmt.Fprintf(&b, "        %s m = isnan(x) | isinf(x) | isfinite(x) | isnormal(x) | signbit(x) | isequal(x, y) | isnotequal(x, y)\n", m)
			b.WriteString("            | isgreater(x, y) | isgreaterequal(x, y) | isless(x, y) | islessequal(x, y) | islessgreater(x, y) | isordered(x, y)\n")
			b.WriteString("            | isunordered(x, y);\n")
			fmt.Fprintf(&b, "        r = select(r, x, m) + (any(m) + all(m));\n        %s;\n    }\n", vstore(w, "r", "i", "out"))
		}
		b.WriteString("}\n")
	}
	for _, e := range []string{"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong"} {
		fmt.Fprintf(&b, "__kernel void integer_%s(__global %s *out, __global const %s *in) {\n    int i = get_global_id(0);\n", e, e, e)
		for _, w := range widths {
			v := e + w
			fmt.Fprintf(&b, "    {\n        %s a = %s, c = %s, d = %s;\n", v, vload(w, "i", "in"), vload(w, "i + 1", "in"), vload(w, "i + 2", "in"))
			fmt.Fprintf(&b, "        %s r = min(a, c) + max(a, c) + min(a, (%s)1) + max(a, (%s)2) + clamp(a, c, d) + clamp(a, (%s)0, (%s)9)\n", v, e, e, e, e)
			fmt.Fprintf(&b, "            + as_%s(abs(a)) + as_%s(abs_diff(a, c)) + add_sat(a, c) + sub_sat(a, c) + hadd(a, c) + rhadd(a, c)\n", v, v)
			b.WriteString("            + rotate(a, c) + mul_hi(a, c) + mad_hi(a, c, d) + popcount(a) + clz(a) + bitselect(a, c, d) + select(a, c, d);\n")
			if e == "int" || e == "uint" {
				b.WriteString("        r += mul24(a, c) + mad24(a, c, d);\n")
			}
			if !strings.HasPrefix(e, "u") {
				fmt.Fprintf(&b, "        r += (%s)(any(a) + all(c));\n", e)
			}
			fmt.Fprintf(&b, "        %s;\n    }\n", vstore(w, "r", "i", "out"))
		}
		b.WriteString("}\n")
	}
	// Arrays of half (not pointers only) need cl_khr_fp16 in OpenCL C; the translation ignores the pragma.
	b.WriteString("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n")
	b.WriteString("__kernel void halves(__global float *out, __global half *h, __global const double *d) {\n")
	b.WriteString("    __local half l[64 * 16];\n    half p[16];\n    int i = get_global_id(0), j = get_local_id(0);\n")
	b.WriteString("    float s = vload_half(i, h) + vload_half(j, l) + vload_half(0, p);\n")
	for _, r := range []string{"", "_rte", "_rtz", "_rtp", "_rtn"} {
		fmt.Fprintf(&b, "    vstore_half%s(s, i, h);\n    vstore_half%s(s, j, l);\n    vstore_half%s(d[i], 0, p);\n", r, r, r)
	}
	for _, w := range widths[1:] {
		fmt.Fprintf(&b, "    {\n        float%s v = vload_half%s(i, h) + vloada_half%s(j, l) + vload_half%s(0, p);\n        double%s w = vload%s(i, d);\n", w, w, w, w, w, w)
		for _, r := range []string{"", "_rte", "_rtz", "_rtp", "_rtn"} {
			fmt.Fprintf(&b, "        vstore_half%s%s(v, i, h);\n        vstorea_half%s%s(v, j, l);\n        vstore_half%s%s(w, 0, p);\n", w, r, w, r, w, r)
		}
		fmt.Fprintf(&b, "        vstore%s(v, i, out);\n    }\n", w)
	}
	b.WriteString("    out[i] = s;\n}\n")
	return b.String()
}
