package driver

import "testing"

// TestTensorMapEnums checks the names, sizes and spans of the tensor map enums, whose
// values are CUDA's.
func TestTensorMapEnums(t *testing.T) {
	for _, c := range []struct {
		s    TensorMapSwizzle
		name string
		span int
	}{{SwizzleNone, "none", 0}, {Swizzle32B, "32B", 32}, {Swizzle64B, "64B", 64}, {Swizzle128B, "128B", 128}, {4, "TensorMapSwizzle(4)", 0}, {-1, "TensorMapSwizzle(-1)", 0}} {
		if c.s.String() != c.name || c.s.Span() != c.span || c.s.Known() != (c.s >= 0 && c.s <= 3) {
			t.Errorf("%d: %q, span %d, known %v", int(c.s), c.s, c.s.Span(), c.s.Known())
		}
	}
	for _, c := range []struct {
		t    TensorDataType
		v    int // CUtensorMapDataType
		name string
		size int
	}{
		{TensorUint8, 0, "uint8", 1}, {TensorUint16, 1, "uint16", 2}, {TensorUint32, 2, "uint32", 4}, {TensorInt32, 3, "int32", 4},
		{TensorUint64, 4, "uint64", 8}, {TensorInt64, 5, "int64", 8}, {TensorFloat16, 6, "float16", 2}, {TensorFloat32, 7, "float32", 4},
		{TensorFloat64, 8, "float64", 8}, {TensorBFloat16, 9, "bfloat16", 2}, {10, 10, "TensorDataType(10)", 0}, {-1, -1, "TensorDataType(-1)", 0},
	} {
		if int(c.t) != c.v || c.t.String() != c.name || c.t.Size() != c.size {
			t.Errorf("%d: %q of %d bytes, want %d: %q of %d", int(c.t), c.t, c.t.Size(), c.v, c.name, c.size)
		}
	}
}
