package kernels

import (
	"math"
	"testing"
)

// TestTypes checks the element-type table against Go's own types: names, sizes, unit
// roundoff, normal and subnormal limits, and that the descriptors' conversions agree with
// Go's conversions.
func TestTypes(t *testing.T) {
	check := func(got Type, name string, size int, float bool) {
		t.Helper()
		if got.Name != name || got.Size != size || got.Float != float || got.OpenCL == "" || got.CUDA == "" {
			t.Errorf("%s: descriptor %+v", name, got)
		}
	}
	check(TypeOf[float32](), "float32", 4, true)
	check(TypeOf[float64](), "float64", 8, true)
	check(TypeOf[int32](), "int32", 4, false)
	check(TypeOf[uint32](), "uint32", 4, false)
	type named float32
	check(TypeOf[named](), "float32", 4, true)
	if len(Types()) != 4 {
		t.Errorf("Types() = %d entries, want 4", len(Types()))
	}

	f32, f64 := TypeOf[float32](), TypeOf[float64]()
	if 2*f32.Unit != float64(math.Nextafter32(1, 2))-1 || f32.MinNormal != float64(math.Float32frombits(0x00800000)) ||
		f32.MinSubnormal != math.SmallestNonzeroFloat32 {
		t.Errorf("float32 limits %+v", f32)
	}
	if 1+f64.Unit != 1 || 1+2*f64.Unit == 1 || f64.MinNormal != math.Float64frombits(0x0010000000000000) ||
		f64.MinSubnormal != math.SmallestNonzeroFloat64 {
		t.Errorf("float64 limits %+v", f64)
	}
	if f64.FP64 == false || f32.FP64 || TypeOf[int32]().Unit != 0 || Gamma[int32](10) != 0 {
		t.Error("fp64 requirement or integer rounding wrong")
	}
	for _, x := range []float64{0, 1, -1.5, 0.1, 3e38, 1e-40, 123456789.9, -2147483648, 4294967295} {
		if got, want := f32.ToFloat64(f32.FromFloat64(x)), float64(float32(x)); got != want {
			t.Errorf("float32 round trip of %v = %v, want %v", x, got, want)
		}
		if got := f64.ToFloat64(f64.FromFloat64(x)); got != x {
			t.Errorf("float64 round trip of %v = %v", x, got)
		}
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			i := TypeOf[int32]()
			if got, want := i.ToFloat64(i.FromFloat64(x)), float64(int32(x)); got != want {
				t.Errorf("int32 round trip of %v = %v, want %v", x, got, want)
			}
		}
		if x >= 0 && x <= math.MaxUint32 {
			u := TypeOf[uint32]()
			if got, want := u.ToFloat64(u.FromFloat64(x)), float64(uint32(x)); got != want {
				t.Errorf("uint32 round trip of %v = %v, want %v", x, got, want)
			}
		}
	}
	for _, c := range []struct {
		t       Type
		x, want float64
	}{
		{f32, 1, 0x1p-23}, {f32, 1.5, 0x1p-23}, {f32, 2, 0x1p-22}, {f32, 0, 0x1p-149}, {f32, 1e-44, 0x1p-149},
		{f64, 1, 0x1p-52}, {f64, -3, 0x1p-51}, {f64, 0, 0x1p-1074},
	} {
		if got := c.t.ULP(c.x); got != c.want {
			t.Errorf("%s ULP(%v) = %v, want %v", c.t.Name, c.x, got, c.want)
		}
	}
}

// TestSumBound: the deterministic bound where it is the smaller, the probabilistic one
// where gamma_k is vacuous, and never infinite or negative.
func TestSumBound(t *testing.T) {
	if got, want := SumBound[float32](100, 1), Gamma[float32](100); got != want {
		t.Errorf("SumBound(100) = %v, want gamma_100 = %v", got, want)
	}
	for _, k := range []int{1 << 20, 1 << 24, 1 << 25, 1 << 30} {
		b := SumBound[float32](k, 1)
		if !(b > 0) || math.IsInf(b, 0) || b > 16*math.Sqrt(float64(k))*0x1p-24 {
			t.Errorf("SumBound[float32](%d) = %v: want finite, positive, at most 16 sqrt(k) u", k, b)
		}
	}
}
