package kernels

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/prism-compute/prism/engine"
)

// NewRand returns the generator of an op's inputs: PCG seeded with seed and a stream
// constant, so that equal seeds give equal inputs on every device.
func NewRand(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15^stream))
}

// RandFloats returns n uniform values in [lo, hi).
func RandFloats[T Float](rng *rand.Rand, n int, lo, hi float64) []T {
	out := make([]T, n)
	FillRand(rng, out, lo, hi)
	return out
}

// FillRand sets dst to uniform values in [lo, hi), drawn as RandFloats draws them: filling
// the chunks of an array in order gives the values RandFloats gives for the whole array.
func FillRand[T Float](rng *rand.Rand, dst []T, lo, hi float64) {
	for i := range dst {
		dst[i] = T(lo + (hi-lo)*rng.Float64())
	}
}

// RandRounded returns n uniform values of [lo, hi) drawn from rng in order, as FillRand
// draws them, each rounded to T by round (which sets dst[i] to x[i] rounded): the values
// are drawn a chunk at a time and each chunk is rounded on GOMAXPROCS goroutines, in
// pieces of at least 64 Ki values. For the 16- and 8-bit types, whose conversions take
// about 12 ns a value (drawing one, 5), this is what keeps the inputs of a large case from
// taking most of its time: a float8 GEMM of 8192 x 64 x 8192 draws four rotating sets of
// 64 Mi values, which a loop rounding each value as it drew it, at about 32 ns a value,
// took 8 s to make, twice a case with the vendor's baseline.
func RandRounded[T any](rng *rand.Rand, n int, lo, hi float64, round func(dst []T, x []float64)) []T {
	out := make([]T, n)
	xs := make([]float64, min(n, randChunk))
	for base := 0; base < n; base += len(xs) {
		x := xs[:min(len(xs), n-base)]
		for i := range x {
			x[i] = lo + (hi-lo)*rng.Float64()
		}
		dst := out[base : base+len(x)]
		ParallelRanges(len(x), 1<<16, func(a, b int) { round(dst[a:b], x[a:b]) })
	}
	return out
}

// randChunk is how many values RandRounded draws before rounding them.
const randChunk = 1 << 20

// chunkLen is the number of elements that NewInputsChunked generates and uploads, and
// LastChunks and CheckElementwise read, at a time: 4 MiB of float32 per array, so that
// the host holds a few chunks instead of whole arrays, in a few hundred driver copies at
// the largest sizes. A variable so that tests can make it small.
var chunkLen = 1 << 20

// CheckClose compares got with the float64 reference want element by element and returns an
// error wrapping ErrVerify for the first element i with |got[i] - want[i]| > tol(i) (a NaN
// never passes). what names the output ("gemm C").
func CheckClose[T Number](what string, got []T, want []float64, tol func(i int) float64) error {
	if len(got) < len(want) {
		return fmt.Errorf("%w: %s: %d elements, want %d", ErrVerify, what, len(got), len(want))
	}
	return checkCloseFrom(what, 0, got, want, tol)
}

// checkCloseFrom is CheckClose for a part of an output: got and want hold its elements lo
// to lo+len(want)-1 (got at least as long as want), and tol and the error take the
// elements' indices in the whole output.
func checkCloseFrom[T Number](what string, lo int, got []T, want []float64, tol func(i int) float64) error {
	for j, w := range want {
		i := lo + j
		g := float64(got[j])
		if d := math.Abs(g - w); !(d <= tol(i)) {
			return fmt.Errorf("%w: %s: element %d = %v, want %v (|diff| %.3g > tolerance %.3g)", ErrVerify, what, i, got[j], w, d, tol(i))
		}
	}
	return nil
}

// CheckElementwise is CheckClose for an element-wise op on the device: it compares out
// with the float64 reference on the last input set of in (Inputs.LastChunks), whose arrays
// have one length n, element i of out with element i of the inputs, reading out and the
// inputs in chunks, so that the host holds a chunk of each instead of the whole output,
// its inputs and its reference. For each chunk, ref fills want[j] and tol[j] for element
// lo+j from x[a][j], element lo+j of input array a. The error is CheckClose's, naming
// elements by their index in out: the first i < n with |out[i] - want[i]| > tol[i] (a NaN
// never passes), or an out shorter than n; an input changed on the device takes
// precedence, as with Last.
func CheckElementwise[T Number](ctx context.Context, q *engine.Queue, what string, out *engine.Buffer[T], in *Inputs[T], ref func(lo int, x [][]T, want, tol []float64)) error {
	n, err := in.lastLen()
	if err != nil {
		return err
	}
	if out.Len() < n {
		return fmt.Errorf("%w: %s: %d elements, want %d", ErrVerify, what, out.Len(), n)
	}
	c := min(n, chunkLen)
	got, want, tol := make([]T, c), make([]float64, c), make([]float64, c)
	return in.LastChunks(ctx, func(lo int, x [][]T) error {
		m := len(x[0])
		if err := out.Read(ctx, q, lo, got[:m]); err != nil {
			return err
		}
		ref(lo, x, want[:m], tol[:m])
		return checkCloseFrom(what, lo, got[:m], want[:m], func(i int) float64 { return tol[i-lo] })
	})
}

// CheckEqual compares got with want exactly and returns an error wrapping ErrVerify for the
// first difference (integer results, permutations, bit-exact streams).
func CheckEqual[T comparable](what string, got, want []T) error {
	if len(got) < len(want) {
		return fmt.Errorf("%w: %s: %d elements, want %d", ErrVerify, what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			return fmt.Errorf("%w: %s: element %d = %v, want %v", ErrVerify, what, i, got[i], want[i])
		}
	}
	return nil
}

// SampleIndices returns indices into an output of n elements for a Verify that checks a
// sample: the first, the last and 4096 drawn from rng (with repeats).
func SampleIndices(n int, rng *rand.Rand) []int {
	idx := []int{0, n - 1}
	for range 4096 {
		idx = append(idx, rng.IntN(n))
	}
	return idx
}

// VerifyIndices returns the indices of an output of n elements that a Verify checks: all
// of them when full, else SampleIndices drawn with a generator seeded by seed (the op's
// Params.Seed), so that a mismatch reproduces.
func VerifyIndices(n int, full bool, seed uint64) []int {
	if full {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	return SampleIndices(n, rand.New(rand.NewPCG(seed, 0x53616d70)))
}

// MaxAbs returns the largest |x[i]| (0 for an empty slice).
func MaxAbs[T Number](x []T) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, math.Abs(float64(v)))
	}
	return m
}

// Log2Ceil returns the smallest e with 2^e >= n (0 for n <= 1).
func Log2Ceil(n int) int {
	e := 0
	for 1<<e < n {
		e++
	}
	return e
}

// SumBound returns a bound on the error of a sum of k terms whose absolute values add up to
// mag, accumulated in T in an order that is not known (a vendor library's): the smaller of
// the deterministic gamma_k * mag (Higham, 3.1), which says nothing once k*u nears 1 (k
// near 2^24 in float32), and the probabilistic 16 * sqrt(k) * u * mag of Higham and Mary
// ("A new approach to probabilistic rounding error analysis", SIAM J. Sci. Comput. 41,
// 2019), which holds for independent rounding errors with probability at least
// 1 - 2k*exp(-128): a verification that can still fail at any size.
func SumBound[T Float](k int, mag float64) float64 {
	prob := 16 * math.Sqrt(float64(k)) * Epsilon[T]() * mag
	if det := Gamma[T](k) * mag; det >= 0 && det < prob {
		return det
	}
	return prob
}
