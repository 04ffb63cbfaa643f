package kernels

import (
	_ "embed"

	"github.com/prism-compute/prism/engine"
)

// ConvertSource is the OpenCL C text of the conversions between float and the storage
// types (convert.cl): prism_half, prism_bfloat16, prism_e4m3 and prism_e5m2 (storage to
// float, exactly), prism_to_half and prism_to_bfloat16 (float to storage, to nearest
// even, with IEEE overflow to Inf and subnormal results), and prism_tf32 (float rounded
// to tf32). Each gives the bits engine's Go conversions give (engine.Half,
// engine.BFloat16, ...). A family whose kernels load or store a storage type builds
// ConvertSource + its source and names the functions in its -D options (gemm.cl's CONV,
// attention.cl's CONV and STORE); the text ends with a #line directive, so that build
// logs number the family's lines from 1.
//
//go:embed convert.cl
var ConvertSource string

// Storage is the element types whose host values RoundFloats and WidenFloats convert from
// and to float64: float32, float64, and engine's 16- and 8-bit floats.
type Storage interface {
	float32 | float64 | engine.Half | engine.BFloat16 | engine.Float8E4M3 | engine.Float8E5M2
}

// RoundFloats sets dst[i] to x[i] rounded to T, for i < len(x): Go's conversion for
// float32, the value itself for float64, and for the others engine's one rounding to
// nearest even (HalfFromFloat64 and the like).
func RoundFloats[T Storage](dst []T, x []float64) {
	switch d := any(dst).(type) {
	case []float32:
		convertEach(d, x, func(v float64) float32 { return float32(v) })
	case []float64:
		copy(d, x)
	case []engine.Half:
		convertEach(d, x, engine.HalfFromFloat64)
	case []engine.BFloat16:
		convertEach(d, x, engine.BFloat16FromFloat64)
	case []engine.Float8E4M3:
		convertEach(d, x, engine.Float8E4M3FromFloat64)
	case []engine.Float8E5M2:
		convertEach(d, x, engine.Float8E5M2FromFloat64)
	}
}

// WidenFloats sets dst[i] to the value of src[i], exactly, for i < len(src).
func WidenFloats[T Storage](dst []float64, src []T) {
	switch s := any(src).(type) {
	case []float32:
		convertEach(dst, s, func(v float32) float64 { return float64(v) })
	case []float64:
		copy(dst, s)
	case []engine.Half:
		convertEach(dst, s, engine.Half.Float64)
	case []engine.BFloat16:
		convertEach(dst, s, engine.BFloat16.Float64)
	case []engine.Float8E4M3:
		convertEach(dst, s, engine.Float8E4M3.Float64)
	case []engine.Float8E5M2:
		convertEach(dst, s, engine.Float8E5M2.Float64)
	}
}

// convertEach sets dst[i] = f(src[i]) for i < len(src).
func convertEach[D, S any](dst []D, src []S, f func(S) D) {
	for i, v := range src {
		dst[i] = f(v)
	}
}
