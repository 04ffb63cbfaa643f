package userkernel

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// TestCompare checks the comparison of outputs: ulp distances across zero, NaNs,
// the worst element, integers exactly.
func TestCompare(t *testing.T) {
	f32 := func(v ...float32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}
	up := func(x float32, k int) float32 { return math.Float32frombits(math.Float32bits(x) + uint32(k)) }
	nan := float32(math.NaN())
	a := &Arg{Name: "y", Index: 2, Type: float32Type, Len: 5}
	want := f32(1, 2, 0, float32(math.Copysign(0, -1)), nan)
	got := f32(up(1, 3), 2, math.SmallestNonzeroFloat32, 0, nan)
	c := Compare(a, want, got, 4)
	if !c.Within || c.MaxULP != 3 || c.Worst != 0 || c.Differing != 2 || c.NaNs != 0 || c.WorstValue != "1.0000004" {
		t.Errorf("within: %+v", c)
	}
	if c := Compare(a, want, got, 2); c.Within || !strings.Contains(c.Describe(), "3 ulp at index 0") || !strings.Contains(c.Describe(), "tolerance of 2 ulp") {
		t.Errorf("beyond: %+v: %s", c, c.Describe())
	}
	if c := Compare(a, f32(-1, 1, 0, 0, 0), f32(up(-1, 1), 1, 0, 0, nan), 100); c.Within || c.NaNs != 1 || c.Worst != 4 || c.MaxULP != 1 {
		t.Errorf("NaN: %+v", c)
	}
	if d := ulpDistance(uint64(math.Float32bits(-math.SmallestNonzeroFloat32)), uint64(math.Float32bits(math.SmallestNonzeroFloat32)), 4); d != 2 {
		t.Errorf("ulps across zero: %d", d)
	}
	int16Type, _ := LookupType("int16")
	i16 := &Arg{Name: "k", Type: int16Type, Len: 3}
	c = Compare(i16, []byte{1, 0, 0xff, 0xff, 5, 0}, []byte{1, 0, 2, 0, 5, 0}, 1000)
	if c.Within || !c.Exact || c.Differing != 1 || c.Worst != 1 || c.MaxAbs != 3 || c.WorstBaseline != "-1" {
		t.Errorf("integers: %+v", c)
	}
}
