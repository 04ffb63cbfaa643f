package userkernel

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/kernels"
)

// Types returns the element types of arguments, in the order help lists them: the integers
// by size, signed first, then float16, float32 and float64. They are kernels' descriptors
// of the types NumPy has (bfloat16 and the fp8 types are not among them).
func Types() []kernels.Type {
	var out []kernels.Type
	for _, t := range kernels.AllTypes() {
		if _, ok := descr(t); ok {
			out = append(out, t)
		}
	}
	// rank orders integers before floats, by size, signed before unsigned.
	rank := func(t kernels.Type) int {
		r := 2 * t.Size
		if t.Float {
			r += 100
		}
		if !t.Signed {
			r++
		}
		return r
	}
	slices.SortStableFunc(out, func(a, b kernels.Type) int { return cmp.Compare(rank(a), rank(b)) })
	return out
}

// LookupType returns the element type named s: a name of Types (float32, uint8) or its
// OpenCL C name (float, uchar, half), in any case.
func LookupType(s string) (kernels.Type, bool) {
	s = strings.ToLower(s)
	for _, t := range Types() {
		// float16's OpenCL spelling is its storage type, ushort: half names it in OpenCL C.
		if t.Name == s || !t.Storage && t.OpenCL == s || t.Storage && s == "half" {
			return t, true
		}
	}
	return kernels.Type{}, false
}

// TypeNames lists the names of Types, comma-separated.
func TypeNames() string {
	var names []string
	for _, t := range Types() {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

// putBits stores the low t.Size bytes of v as element i of data.
func putBits(t kernels.Type, data []byte, i int, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	copy(data[i*t.Size:(i+1)*t.Size], b[:t.Size])
}

// putFloat stores f, rounded to t (a float type), as element i of data.
func putFloat(t kernels.Type, data []byte, i int, f float64) {
	putBits(t, data, i, t.FromFloat64(f))
}

// elemBits returns element i of data, zero-extended.
func elemBits(t kernels.Type, data []byte, i int) uint64 {
	var b [8]byte
	copy(b[:], data[i*t.Size:(i+1)*t.Size])
	return binary.LittleEndian.Uint64(b[:])
}

// ElemFloat returns element i of data, little-endian elements of t, as a float64 (integers
// rounded where they must be).
func ElemFloat(t kernels.Type, data []byte, i int) float64 {
	u := elemBits(t, data, i)
	switch {
	case t.Float:
		return t.ToFloat64(u)
	case t.Signed:
		return float64(signExtend(u, t.Size))
	}
	return float64(u)
}

// signExtend returns the signed value of the low size bytes of u.
func signExtend(u uint64, size int) int64 {
	shift := 64 - 8*size
	return int64(u<<shift) >> shift
}

// ElemString formats element i of data, little-endian elements of t: floats in the
// shortest form that reads back as the same value of their type.
func ElemString(t kernels.Type, data []byte, i int) string {
	u := elemBits(t, data, i)
	switch {
	case t.Float:
		return strconv.FormatFloat(ElemFloat(t, data, i), 'g', -1, 8*max(t.Size, 4))
	case t.Signed:
		return strconv.FormatInt(signExtend(u, t.Size), 10)
	}
	return strconv.FormatUint(u, 10)
}

// floatLimit returns the largest finite value of the float type t.
func floatLimit(t kernels.Type) float64 {
	return map[int]float64{2: 65504, 4: math.MaxFloat32, 8: math.MaxFloat64}[t.Size]
}
