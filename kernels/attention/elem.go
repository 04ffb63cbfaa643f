package attention

import (
	"math/rand/v2"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Elem is the set of element types of the attention tensors Q, K, V and O as stored:
// float32 and float64, computed in their own type, and the storage types engine.Half
// (float16), engine.BFloat16 (bfloat16) and engine.Float8E4M3 (float8e4m3), computed in
// float32: the kernel converts Q, K and V exactly as it loads them and rounds O to nearest
// even as it stores it, so that no fp16 or fp8 arithmetic is needed.
type Elem interface {
	kernels.Float | engine.Half | engine.BFloat16 | engine.Float8E4M3
}

// elemTypes returns the descriptors of S as stored and of the arithmetic on it (float32
// for the storage types).
func elemTypes[S Elem]() (stored, compute kernels.Type) {
	var z S
	switch any(z).(type) {
	case float64:
		t := kernels.TypeOf[float64]()
		return t, t
	case engine.Half:
		t, _ := kernels.TypeByName("float16")
		return t, kernels.TypeOf[float32]()
	case engine.BFloat16:
		t, _ := kernels.TypeByName("bfloat16")
		return t, kernels.TypeOf[float32]()
	case engine.Float8E4M3:
		t, _ := kernels.TypeByName("float8e4m3")
		return t, kernels.TypeOf[float32]()
	}
	t := kernels.TypeOf[float32]()
	return t, t
}

// storageConv holds attention.cl's CONV and STORE for each storage type: the functions of
// kernels/convert.cl that load and store it.
var storageConv = map[string]struct{ load, store string }{
	"float16":    {"prism_half", "prism_to_half"},
	"bfloat16":   {"prism_bfloat16", "prism_to_bfloat16"},
	"float8e4m3": {"prism_e4m3", "prism_to_e4m3"},
}

// widen sets dst[i] to the value of src[i], exactly, for i < len(src).
func widen[S Elem](dst []float64, src []S) { kernels.WidenFloats(dst, src) }

// roundTo returns x rounded to S, to nearest even, in one rounding (kernels.RoundFloats).
func roundTo[S Elem](x float64) S {
	var out [1]S
	kernels.RoundFloats(out[:], []float64{x})
	return out[0]
}

// randElems returns n uniform values of [lo, hi) rounded to S, drawn and rounded as
// kernels.RandRounded does: for float32 and float64 the values kernels.RandFloats gives
// for the same generator.
func randElems[S Elem](rng *rand.Rand, n int, lo, hi float64) []S {
	return kernels.RandRounded(rng, n, lo, hi, kernels.RoundFloats[S])
}
