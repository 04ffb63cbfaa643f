package engine_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// The reference and the tests over every format (TestDecodeAll, TestRoundTripAll,
// TestConvertEdges, TestConvertRandom) are in float16_test.go; these spell out the 8-bit
// formats' own rules.

// TestSpecialValues8 spells out results that Float8E4M3's and Float8E5M2's documentation
// promises: the overflow thresholds of both modes, infinities, NaNs, subnormals, signed
// zeros.
func TestSpecialValues8(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		name string
		got  uint64
		want uint64
	}{
		{"E4M3(448)", uint64(engine.Float8E4M3FromFloat32(448)), 0x7E},
		{"E4M3(464)", uint64(engine.Float8E4M3FromFloat32(464)), 0x7E},
		{"E4M3(465)", uint64(engine.Float8E4M3FromFloat32(465)), 0x7F},
		{"E4M3(-1e6)", uint64(engine.Float8E4M3FromFloat64(-1e6)), 0xFF},
		{"E4M3(+Inf)", uint64(engine.Float8E4M3FromFloat32(float32(inf))), 0x7F},
		{"E4M3Sat(465)", uint64(engine.Float8E4M3FromFloat32Sat(465)), 0x7E},
		{"E4M3Sat(-Inf)", uint64(engine.Float8E4M3FromFloat64Sat(-inf)), 0xFE},
		{"E4M3Sat(NaN)", uint64(engine.Float8E4M3FromFloat32Sat(float32(nan))), 0x7F},
		{"E4M3(2^-9)", uint64(engine.Float8E4M3FromFloat32(0x1p-9)), 0x01},
		{"E4M3(2^-10)", uint64(engine.Float8E4M3FromFloat32(0x1p-10)), 0x00},
		{"E4M3(-0)", uint64(engine.Float8E4M3FromFloat32(float32(math.Copysign(0, -1)))), 0x80},
		{"E5M2(57344)", uint64(engine.Float8E5M2FromFloat32(57344)), 0x7B},
		{"E5M2(61439)", uint64(engine.Float8E5M2FromFloat32(61439)), 0x7B},
		{"E5M2(61440)", uint64(engine.Float8E5M2FromFloat32(61440)), 0x7C},
		{"E5M2(-Inf)", uint64(engine.Float8E5M2FromFloat64(-inf)), 0xFC},
		{"E5M2Sat(61440)", uint64(engine.Float8E5M2FromFloat32Sat(61440)), 0x7B},
		{"E5M2Sat(Inf)", uint64(engine.Float8E5M2FromFloat32Sat(float32(inf))), 0x7B},
		{"E5M2(-NaN)", uint64(engine.Float8E5M2FromFloat64(math.Copysign(nan, -1))), 0xFE},
		{"E5M2(2^-16)", uint64(engine.Float8E5M2FromFloat64(0x1p-16)), 0x01},
		{"E5M2(3*2^-17)", uint64(engine.Float8E5M2FromFloat64(3 * 0x1p-17)), 0x02},
		{"E4M3(-0.0009765625)", uint64(engine.Float8E4M3FromFloat64(-0x1p-10)), 0x80},
		{"E4M3(0.0029296875)", uint64(engine.Float8E4M3FromFloat64(3 * 0x1p-10)), 0x02},
		{"E4M3(240)", uint64(engine.Float8E4M3FromFloat64(240)), 0x77},
		{"E4M3(256)", uint64(engine.Float8E4M3FromFloat64(256)), 0x78},
		{"E4M3Sat(1e30)", uint64(engine.Float8E4M3FromFloat32Sat(1e30)), 0x7E},
		{"E4M3Sat(-464)", uint64(engine.Float8E4M3FromFloat64Sat(-464)), 0xFE},
		{"E5M2(NaN)", uint64(engine.Float8E5M2FromFloat32(float32(nan))), 0x7E},
		{"E5M2Sat(-NaN)", uint64(engine.Float8E5M2FromFloat64Sat(math.Copysign(nan, -1))), 0xFE},
		{"E5M2(1e-8)", uint64(engine.Float8E5M2FromFloat64(1e-8)), 0x00},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct {
		got  float64
		want float64
	}{
		{engine.Float8E4M3(0x7E).Float64(), 448},
		{engine.Float8E4M3(0x08).Float64(), 0x1p-6},
		{engine.Float8E4M3(0x07).Float64(), 7 * 0x1p-9},
		{engine.Float8E4M3(0xF8).Float64(), -256},
		{engine.Float8E5M2(0x7B).Float64(), 57344},
		{engine.Float8E5M2(0x04).Float64(), 0x1p-14},
		{engine.Float8E5M2(0x83).Float64(), -3 * 0x1p-16},
	} {
		if c.got != c.want {
			t.Errorf("value %v, want %v", c.got, c.want)
		}
	}
	if v := engine.Float8E4M3(0x7F).Float32(); !math.IsNaN(float64(v)) {
		t.Errorf("Float8E4M3(0x7F).Float32() = %v, want NaN", v)
	}
	if v := engine.Float8E5M2(0xFC).Float64(); !math.IsInf(v, -1) {
		t.Errorf("Float8E5M2(0xFC).Float64() = %v, want -Inf", v)
	}
}

// TestFloat8Strings checks String of the 8-bit formats.
func TestFloat8Strings(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{engine.Float8E4M3(0x7E).String(), "448"},
		{engine.Float8E4M3(0xFF).String(), "NaN"},
		{engine.Float8E4M3(0x80).String(), "-0"},
		{engine.Float8E4M3(0x01).String(), "0.001953125"},
		{engine.Float8E4M3FromFloat32(0.1).String(), "0.1015625"},
		{engine.Float8E5M2(0x7B).String(), "57344"},
		{engine.Float8E5M2(0xFC).String(), "-Inf"},
		{engine.Float8E5M2(0x01).String(), "1.5258789e-05"},
	} {
		if c.got != c.want {
			t.Errorf("String() = %q, want %q", c.got, c.want)
		}
	}
}

// ExampleFloat8E4M3FromFloat32 shows E4M3's overflow: 464, halfway between its largest
// value 448 and 480, rounds to even, 448; beyond it the non-saturating conversion gives
// NaN (E4M3 has no infinity) and the saturating one 448.
func ExampleFloat8E4M3FromFloat32() {
	for _, x := range []float32{0.1, 300, 464, 465, float32(math.Inf(-1))} {
		v, s := engine.Float8E4M3FromFloat32(x), engine.Float8E4M3FromFloat32Sat(x)
		fmt.Printf("%v -> %#02x = %v, saturating %#02x = %v\n", x, uint8(v), v, uint8(s), s)
	}
	// Output:
	// 0.1 -> 0x1d = 0.1015625, saturating 0x1d = 0.1015625
	// 300 -> 0x79 = 288, saturating 0x79 = 288
	// 464 -> 0x7e = 448, saturating 0x7e = 448
	// 465 -> 0x7f = NaN, saturating 0x7e = 448
	// -Inf -> 0xff = NaN, saturating 0xfe = -448
}

// ExampleFloat8E5M2FromFloat32 shows E5M2's overflow, as IEEE 754's: from 61440, halfway
// between its largest value 57344 and 65536, values become infinities, unless saturated.
func ExampleFloat8E5M2FromFloat32() {
	for _, x := range []float32{0.1, 50000, 61439, 61440, float32(math.Inf(1))} {
		v, s := engine.Float8E5M2FromFloat32(x), engine.Float8E5M2FromFloat32Sat(x)
		fmt.Printf("%v -> %#02x = %v, saturating %#02x = %v\n", x, uint8(v), v, uint8(s), s)
	}
	// Output:
	// 0.1 -> 0x2e = 0.09375, saturating 0x2e = 0.09375
	// 50000 -> 0x7a = 49152, saturating 0x7a = 49152
	// 61439 -> 0x7b = 57344, saturating 0x7b = 57344
	// 61440 -> 0x7c = +Inf, saturating 0x7b = 57344
	// +Inf -> 0x7c = +Inf, saturating 0x7b = 57344
}
