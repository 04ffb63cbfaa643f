package enginetest

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/prism-compute/prism/engine"
)

// isFloat reports whether T is a floating-point type.
func isFloat[T engine.Scalar]() bool {
	var z T
	z = 1
	z /= 2
	return z != 0
}

// bitsOf returns the bit pattern of v, so that NaNs compare equal to themselves.
func bitsOf[T engine.Scalar](v T) uint64 {
	var u uint64
	*(*T)(unsafe.Pointer(&u)) = v
	return u
}

// fromBits returns the T whose bit pattern is the low bytes of u.
func fromBits[T engine.Scalar](u uint64) T {
	return *(*T)(unsafe.Pointer(&u))
}

// sentinel is the value guard bands hold: a quiet NaN with a payload for floats (the only
// positive NaN for Float8E4M3), the bytes of 0xDEADBEEF... for integers. No kernel or copy
// of the suite writes it.
func sentinel[T engine.Scalar]() T {
	var z T
	switch any(z).(type) {
	case engine.Half:
		return fromBits[T](0x7EAD)
	case engine.BFloat16:
		return fromBits[T](0x7FDE) // the upper half of float32's sentinel
	case engine.Float8E4M3, engine.Float8E5M2:
		return fromBits[T](0x7F)
	}
	size := engine.SizeOf[T]()
	switch {
	case isFloat[T]() && size == 4:
		return fromBits[T](0x7FDE_ADBE)
	case isFloat[T]() && size == 8:
		return fromBits[T](0x7FFD_EADB_EEFD_EADB)
	}
	return fromBits[T](0xDEAD_BEEF_DEAD_BEEF >> (64 - 8*size))
}

// random returns n seeded random values: float32 and float64 values in [-1, 1), integers
// and the bits of the 16- and 8-bit floating-point types (engine.Half, ...) over their
// whole range, never the sentinel.
func random[T engine.Scalar](r *rand.Rand, n int) []T {
	out := make([]T, n)
	s := bitsOf(sentinel[T]())
	float, size := isFloat[T](), engine.SizeOf[T]()
	for i := range out {
		for {
			switch {
			case float && size == 4:
				out[i] = T(r.Float32()*2 - 1)
			case float:
				out[i] = T(r.Float64()*2 - 1)
			default:
				out[i] = fromBits[T](r.Uint64())
			}
			if bitsOf(out[i]) != s {
				break
			}
		}
	}
	return out
}

// sentinels returns n sentinels.
func sentinels[T engine.Scalar](n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = sentinel[T]()
	}
	return out
}

// guarded returns interior with guard sentinels on each side.
func guarded[T engine.Scalar](interior []T) []T {
	out := sentinels[T](len(interior) + 2*guard)
	copy(out[guard:], interior)
	return out
}

// where names index i of a buffer with guard bands of g elements and n interior ones.
func where(i, g, n int) string {
	switch {
	case g > 0 && i < g:
		return fmt.Sprintf("%d (front guard)", i)
	case g > 0 && i >= g+n:
		return fmt.Sprintf("%d (back guard)", i)
	}
	return fmt.Sprint(i)
}

// checkBits reports the elements of got whose bits differ from want's. g is the width of
// the guard bands at each end of both (0 for none), for the messages.
func checkBits[T engine.Scalar](t testing.TB, what string, got, want []T, g int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
		return
	}
	if bytes.Equal(asBytes(got), asBytes(want)) {
		return
	}
	bad := 0
	for i := range got {
		if bitsOf(got[i]) != bitsOf(want[i]) {
			if bad < 5 {
				t.Errorf("%s: element %s = %v (%#x), want %v (%#x)", what, where(i, g, len(got)-2*g), got[i], bitsOf(got[i]), want[i], bitsOf(want[i]))
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d elements wrong", what, bad, len(got))
	}
}

// asBytes returns the memory of s.
func asBytes[T engine.Scalar](s []T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*engine.SizeOf[T]())
}

// ulp32 is the spacing of float32 numbers of magnitude in [1, 2): 2^-23.
var ulp32 = math.Ldexp(1, -23)
