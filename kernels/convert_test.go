package kernels_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// convertTestSource runs the conversions of kernels.ConvertSource on every element: from
// float32 bits to float16 and bfloat16, and from every 16- and 8-bit pattern (the item
// index) to the float32 bits of its value.
const convertTestSource = `
__kernel void to_storage(__global const uint *x, __global ushort *h, __global ushort *b, __global uchar *e4, int n) {
    const int i = (int)get_global_id(0);
    if (i < n) {
        const float f = as_float(x[i]);
        h[i] = prism_to_half(f);
        b[i] = prism_to_bfloat16(f);
        e4[i] = prism_to_e4m3(f);
    }
}

__kernel void from16(__global uint *h, __global uint *b, int n) {
    const int i = (int)get_global_id(0);
    if (i < n) {
        h[i] = as_uint(prism_half((ushort)i));
        b[i] = as_uint(prism_bfloat16((ushort)i));
    }
}

__kernel void from8(__global uint *e4, __global uint *e5, int n) {
    const int i = (int)get_global_id(0);
    if (i < n) {
        e4[i] = as_uint(prism_e4m3((uchar)i));
        e5[i] = as_uint(prism_e5m2((uchar)i));
    }
}
`

// TestConvertSource runs the OpenCL C conversions of kernels.ConvertSource on every device
// and compares them bit for bit with engine's Go conversions: prism_half and
// prism_bfloat16 on all 65536 patterns, prism_e4m3 and prism_e5m2 on all 256, and
// prism_to_half, prism_to_bfloat16 and prism_to_e4m3 on convertInputs (every rounding
// boundary of the three formats, the ties and their neighbours, subnormals, overflow
// edges, infinities, NaNs with payloads, and random float32 patterns).
func TestConvertSource(t *testing.T) {
	inputs := convertInputs()
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		prog, err := dev.Build(kernels.ConvertSource + convertTestSource)
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()
		kernel := func(name string) *engine.Kernel {
			k, err := prog.Kernel(name)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { k.Close() })
			return k
		}
		launch := func(k *engine.Kernel, n int, args ...any) {
			t.Helper()
			wg := min(64, k.MaxWorkGroupSize())
			if err := q.Launch(k, engine.Range1D((n+wg-1)/wg*wg, wg), append(args, int32(n))...); err != nil {
				t.Fatal(err)
			}
		}

		t.Run("from16", func(t *testing.T) {
			const n = 1 << 16
			h, b := kerneltest.Guarded(t, q, make([]uint32, n)), kerneltest.Guarded(t, q, make([]uint32, n))
			launch(kernel("from16"), n, h, b)
			gh, gb := kerneltest.Download(t, q, "prism_half", h, n), kerneltest.Download(t, q, "prism_bfloat16", b, n)
			var bad []string
			for i := range n {
				if w := math.Float32bits(engine.Half(i).Float32()); gh[i] != w {
					bad = append(bad, fmt.Sprintf("prism_half(%#04x) = %#08x, want %#08x", i, gh[i], w))
				}
				if w := math.Float32bits(engine.BFloat16(i).Float32()); gb[i] != w {
					bad = append(bad, fmt.Sprintf("prism_bfloat16(%#04x) = %#08x, want %#08x", i, gb[i], w))
				}
			}
			report(t, bad, 2*n)
		})

		t.Run("from8", func(t *testing.T) {
			const n = 1 << 8
			e4, e5 := kerneltest.Guarded(t, q, make([]uint32, n)), kerneltest.Guarded(t, q, make([]uint32, n))
			launch(kernel("from8"), n, e4, e5)
			g4, g5 := kerneltest.Download(t, q, "prism_e4m3", e4, n), kerneltest.Download(t, q, "prism_e5m2", e5, n)
			var bad []string
			for i := range n {
				if w := math.Float32bits(engine.Float8E4M3(i).Float32()); g4[i] != w {
					bad = append(bad, fmt.Sprintf("prism_e4m3(%#02x) = %#08x, want %#08x", i, g4[i], w))
				}
				if w := math.Float32bits(engine.Float8E5M2(i).Float32()); g5[i] != w {
					bad = append(bad, fmt.Sprintf("prism_e5m2(%#02x) = %#08x, want %#08x", i, g5[i], w))
				}
			}
			report(t, bad, 2*n)
		})

		t.Run("to_storage", func(t *testing.T) {
			n := len(inputs)
			x := kerneltest.Guarded(t, q, inputs)
			h := kerneltest.Guarded(t, q, make([]engine.Half, n))
			b := kerneltest.Guarded(t, q, make([]engine.BFloat16, n))
			e4 := kerneltest.Guarded(t, q, make([]engine.Float8E4M3, n))
			launch(kernel("to_storage"), n, x, h, b, e4)
			gh, gb := kerneltest.Download(t, q, "prism_to_half", h, n), kerneltest.Download(t, q, "prism_to_bfloat16", b, n)
			ge4 := kerneltest.Download(t, q, "prism_to_e4m3", e4, n)
			var bad []string
			for i, u := range inputs {
				f := math.Float32frombits(u)
				if w := engine.HalfFromFloat32(f); gh[i] != w {
					bad = append(bad, fmt.Sprintf("prism_to_half(%#08x = %g) = %#04x, want %#04x", u, f, uint16(gh[i]), uint16(w)))
				}
				if w := engine.BFloat16FromFloat32(f); gb[i] != w {
					bad = append(bad, fmt.Sprintf("prism_to_bfloat16(%#08x = %g) = %#04x, want %#04x", u, f, uint16(gb[i]), uint16(w)))
				}
				if w := engine.Float8E4M3FromFloat32(f); ge4[i] != w {
					bad = append(bad, fmt.Sprintf("prism_to_e4m3(%#08x = %g) = %#02x, want %#02x", u, f, uint8(ge4[i]), uint8(w)))
				}
			}
			report(t, bad, 3*n)
			t.Logf("%d float32 inputs", n)
		})
	})
}

// report fails the test with the first mismatches of bad, out of n conversions.
func report(t *testing.T, bad []string, n int) {
	t.Helper()
	if len(bad) > 0 {
		t.Errorf("%d of %d conversions differ from engine's:\n%s", len(bad), n, strings.Join(bad[:min(len(bad), 20)], "\n"))
	}
}

// convertInputs returns float32 bit patterns that test rounding to float16, bfloat16 and
// float8 E4M3, of both signs: every value of each format, its neighbours one float32 ulp
// away, the midpoint to the next value up (a tie) and its neighbours (the next up from the
// largest finite value is 2^16 for float16, 2^128 for bfloat16, 480 for E4M3: overflow
// edges); float32
// subnormals, infinities, NaNs (quiet and signaling, payloads kept or lost), and random
// patterns (2^20; 2^12 under Oclgrind, which also takes every 37th edge).
func convertInputs() []uint32 {
	var pos []uint32
	add := func(u ...uint32) { pos = append(pos, u...) }
	around := func(u uint32) {
		add(u, u+1)
		if u > 0 {
			add(u - 1)
		}
	}
	// Each finite value of a format with n of them and its midpoint to the next up (a tie;
	// exact in float32), the next up of the largest being over.
	values := func(n int, value func(i int) float64, over float64) {
		for i := range n {
			v, next := value(i), over
			if i < n-1 {
				next = value(i + 1)
			}
			around(math.Float32bits(float32(v)))
			around(math.Float32bits(float32((v + next) / 2)))
		}
	}
	// float16: finite values 0 to 0x7bff, the next up of 0x7bff being 2^16.
	values(0x7c00, func(i int) float64 { return engine.Half(i).Float64() }, 65536)
	// bfloat16: finite values 0 to 0x7f7f, the upper halves of float32 patterns; the
	// midpoint sets the highest of the lower 16 bits.
	for b := range uint32(0x7f80) {
		around(b << 16)
		around(b<<16 | 0x8000)
	}
	// float8 E4M3: finite values 0 to 0x7e (448), the next up of 448 being 480; below
	// 2^-9, the zero's rounding boundary 2^-10.
	values(0x7f, func(i int) float64 { return engine.Float8E4M3(i).Float64() }, 480)
	around(math.Float32bits(0x1p-10))
	stride := 1
	random := 1 << 20
	if kerneltest.Small() {
		stride, random = 37, 1<<12
	}
	var out []uint32
	for i := 0; i < len(pos); i += stride {
		out = append(out, pos[i], pos[i]|0x80000000)
	}
	// float32 subnormals and the smallest normals; the largest finite float32; Inf; NaNs.
	for _, u := range []uint32{1, 2, 3, 0x1000, 0x1fff, 0x2000, 0x400000, 0x7ffffe, 0x7fffff, 0x800000, 0x800001,
		0x7f7fffff, 0x7f800000, 0x7f800001, 0x7f801fff, 0x7f802000, 0x7f80e000, 0x7f810000, 0x7fa00000,
		0x7fbfffff, 0x7fc00000, 0x7fc00001, 0x7fd55555, 0x7fffe000, 0x7fffffff} {
		out = append(out, u, u|0x80000000)
	}
	rng := kernels.NewRand(1, 0xc0417)
	for range random {
		out = append(out, rng.Uint32())
	}
	return out
}

// TestRoundWidenFloats checks RoundFloats and WidenFloats against engine's conversions of
// one value at a time in every storage type: values exact in each, halfway cases, the
// subnormal range, overflow, infinities and NaN.
func TestRoundWidenFloats(t *testing.T) {
	x := []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1 + 0x1p-8, 1 + 0x1p-11, 3.0e-5, 1e-7, 0x1p-9, 65520, 1e6, 449, 57345,
		math.Inf(1), math.Inf(-1), math.NaN()}
	check := func(name string, got []float64, want func(float64) float64) {
		for i, v := range x {
			w := want(v)
			if got[i] != w && !(math.IsNaN(got[i]) && math.IsNaN(w)) || math.Signbit(got[i]) != math.Signbit(w) && !math.IsNaN(w) {
				t.Errorf("%s: %v rounded and widened = %v, want %v", name, v, got[i], w)
			}
		}
	}
	check("float32", roundWiden[float32](x), func(v float64) float64 { return float64(float32(v)) })
	check("float64", roundWiden[float64](x), func(v float64) float64 { return v })
	check("float16", roundWiden[engine.Half](x), func(v float64) float64 { return engine.HalfFromFloat64(v).Float64() })
	check("bfloat16", roundWiden[engine.BFloat16](x), func(v float64) float64 { return engine.BFloat16FromFloat64(v).Float64() })
	check("float8e4m3", roundWiden[engine.Float8E4M3](x), func(v float64) float64 { return engine.Float8E4M3FromFloat64(v).Float64() })
	check("float8e5m2", roundWiden[engine.Float8E5M2](x), func(v float64) float64 { return engine.Float8E5M2FromFloat64(v).Float64() })
}

// roundWiden returns x rounded to T by RoundFloats and read back by WidenFloats.
func roundWiden[T kernels.Storage](x []float64) []float64 {
	r := make([]T, len(x))
	kernels.RoundFloats(r, x)
	out := make([]float64, len(x))
	kernels.WidenFloats(out, r)
	return out
}
