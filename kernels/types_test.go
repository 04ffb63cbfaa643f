package kernels

import (
	"math"
	"testing"

	"github.com/prism-compute/prism/engine"
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

// TestStorageTypes checks the storage-only types: listed by StorageTypes and TypeByName but
// not by Types, their spellings, limits against the values their conversions give, and that
// the conversions are engine's.
func TestStorageTypes(t *testing.T) {
	want := []struct {
		name         string
		size         int
		openCL, cuda string
		unit         float64
		// maxBits is the pattern of the largest finite value, to check the limits against.
		maxBits uint64
		max     float64
	}{
		{"float16", 2, "ushort", "unsigned short", 0x1p-11, 0x7BFF, 65504},
		{"bfloat16", 2, "ushort", "unsigned short", 0x1p-8, 0x7F7F, 0x1.FEp127},
		{"float8e4m3", 1, "uchar", "unsigned char", 0x1p-4, 0x7E, 448},
		{"float8e5m2", 1, "uchar", "unsigned char", 0x1p-3, 0x7B, 57344},
	}
	st := StorageTypes()
	if len(st) != len(want) {
		t.Fatalf("StorageTypes() = %d entries, want %d", len(st), len(want))
	}
	for i, w := range want {
		typ := st[i]
		if typ.Name != w.name || typ.Size != w.size || typ.OpenCL != w.openCL || typ.CUDA != w.cuda || !typ.Float ||
			!typ.Storage || typ.FP16 || typ.FP64 || typ.Unit != w.unit {
			t.Errorf("StorageTypes()[%d] = %+v, want %s of %d bytes (%s, %s), unit %v, storage only", i, typ, w.name, w.size, w.openCL, w.cuda, w.unit)
		}
		if got, ok := TypeByName(w.name); !ok || got.Name != w.name || !got.Storage {
			t.Errorf("TypeByName(%q) = %+v, %v", w.name, got, ok)
		}
		for _, c := range Types() {
			if c.Name == w.name || c.Storage {
				t.Errorf("Types() lists %s", c.Name)
			}
		}
		// Limits from the conversions: the smallest subnormal is pattern 1, the smallest
		// normal the pattern with only the lowest exponent bit set (1 << fraction bits,
		// where 2u = 2^-fraction bits).
		fracBits := uint(-math.Log2(2 * w.unit))
		if got := typ.ToFloat64(1); got != typ.MinSubnormal {
			t.Errorf("%s: smallest subnormal %v, MinSubnormal %v", w.name, got, typ.MinSubnormal)
		}
		if got := typ.ToFloat64(1 << fracBits); got != typ.MinNormal {
			t.Errorf("%s: smallest normal %v, MinNormal %v", w.name, got, typ.MinNormal)
		}
		if got := typ.ToFloat64(w.maxBits); got != w.max {
			t.Errorf("%s: largest finite value %v, want %v", w.name, got, w.max)
		}
		// One rounding costs at most u relative, and 1+u is a tie that rounds to 1, 1+2u
		// exact.
		if typ.ToFloat64(typ.FromFloat64(1+typ.Unit)) != 1 || typ.ToFloat64(typ.FromFloat64(1+2*typ.Unit)) != 1+2*typ.Unit {
			t.Errorf("%s: unit roundoff %v does not match the conversions", w.name, typ.Unit)
		}
		for _, x := range []float64{0, 1, -1.5, 0.1, 3, -100, 1e-3, w.max, typ.MinSubnormal, -typ.MinNormal} {
			got := typ.ToFloat64(typ.FromFloat64(x))
			if math.Abs(got-x) > max(typ.Unit*math.Abs(x), typ.MinSubnormal/2) {
				t.Errorf("%s round trip of %v = %v, beyond one rounding", w.name, x, got)
			}
			if typ.FromFloat64(got) != typ.FromFloat64(x) {
				t.Errorf("%s: %v converts to %#x, its value %v back to %#x", w.name, x, typ.FromFloat64(x), got, typ.FromFloat64(got))
			}
		}
		if typ.ULP(1) != 2*typ.Unit || typ.ULP(0) != typ.MinSubnormal {
			t.Errorf("%s: ULP(1) = %v, ULP(0) = %v", w.name, typ.ULP(1), typ.ULP(0))
		}
	}
	// The conversions are engine's, bit for bit.
	for _, x := range []float64{0.1, -65519, 1e-7, 3e38, 470, 61440, math.Inf(-1)} {
		f16, _ := TypeByName("float16")
		bf16, _ := TypeByName("bfloat16")
		e4m3, _ := TypeByName("float8e4m3")
		e5m2, _ := TypeByName("float8e5m2")
		if f16.FromFloat64(x) != uint64(engine.HalfFromFloat64(x)) || bf16.FromFloat64(x) != uint64(engine.BFloat16FromFloat64(x)) ||
			e4m3.FromFloat64(x) != uint64(engine.Float8E4M3FromFloat64(x)) || e5m2.FromFloat64(x) != uint64(engine.Float8E5M2FromFloat64(x)) {
			t.Errorf("conversions of %v differ from engine's", x)
		}
	}
	for _, name := range []string{"float32", "float64", "int32", "uint32"} {
		if got, ok := TypeByName(name); !ok || got.Name != name || got.Storage {
			t.Errorf("TypeByName(%q) = %+v, %v", name, got, ok)
		}
	}
	if got, ok := TypeByName("float128"); ok {
		t.Errorf("TypeByName(float128) = %+v, true", got)
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

// TestOtherTypes checks the integer types the suite does not compute in: listed by
// OtherTypes, AllTypes and TypeByName but not by Types, their signedness against int32's
// and uint32's, and their conversions against Go's, wrapping modulo 2^(8*Size).
func TestOtherTypes(t *testing.T) {
	want := []struct {
		name   string
		size   int
		signed bool
		openCL string
	}{
		{"int8", 1, true, "char"}, {"uint8", 1, false, "uchar"}, {"int16", 2, true, "short"},
		{"uint16", 2, false, "ushort"}, {"int64", 8, true, "long"}, {"uint64", 8, false, "ulong"},
	}
	other := OtherTypes()
	if len(other) != len(want) {
		t.Fatalf("OtherTypes() = %d entries, want %d", len(other), len(want))
	}
	for i, w := range want {
		typ := other[i]
		if typ.Name != w.name || typ.Size != w.size || typ.Signed != w.signed || typ.OpenCL != w.openCL || typ.Float || typ.Storage {
			t.Errorf("OtherTypes()[%d] = %+v, want %s of %d bytes, signed %v, %s", i, typ, w.name, w.size, w.signed, w.openCL)
		}
		if got, ok := TypeByName(w.name); !ok || got.Name != w.name {
			t.Errorf("TypeByName(%s) = %v, %v", w.name, got.Name, ok)
		}
		for _, c := range Types() {
			if c.Name == w.name {
				t.Errorf("Types() lists %s", c.Name)
			}
		}
		// -1 in a signed type and the largest value of an unsigned one: all ones in the low
		// 8*Size bits, nothing above.
		top := float64(uint64(1)<<(8*w.size-1)) * 2
		x := top - 1
		if w.signed {
			x = -1
		}
		if w.size < 8 {
			if bits := typ.FromFloat64(x); bits != uint64(1)<<(8*w.size)-1 {
				t.Errorf("%s: %v has bits %#x", w.name, x, bits)
			}
			if got := typ.ToFloat64(uint64(1)<<(8*w.size) - 1); got != x {
				t.Errorf("%s: all ones read as %v, want %v", w.name, got, x)
			}
		}
		if got := typ.ToFloat64(typ.FromFloat64(100)); got != 100 {
			t.Errorf("%s: 100 round trip gives %v", w.name, got)
		}
	}
	if !TypeOf[int32]().Signed || TypeOf[uint32]().Signed || TypeOf[float32]().Signed {
		t.Error("Signed: int32 is signed, uint32 and float32 are not")
	}
	if n := len(AllTypes()); n != len(Types())+len(StorageTypes())+len(OtherTypes()) {
		t.Errorf("AllTypes() = %d entries", n)
	}
}
