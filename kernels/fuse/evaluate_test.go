package fuse_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/fuse"
)

// TestTolerance checks that the reference's bound is a few roundings, not more: for
// y = a*x + exp(-z) in float32 at most 16u (|a x| + exp(-z)), against the 8u or so the
// operations' bounds add up to; and that integer results get none.
func TestTolerance(t *testing.T) {
	e, err := fuse.Parse("y = a*x + exp(-z)", axpyExpTypes)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	u := kernels.Epsilon[float32]()
	in, out, tol := make([]float64, 3), make([]float64, 1), make([]float64, 1)
	for range 1000 {
		a, x, z := rng.Float64()*4-2, rng.Float64()*2-1, rng.Float64()*2-1
		for k, p := range e.Inputs() {
			in[k] = map[string]float64{"a": a, "x": x, "z": z}[p.Name]
		}
		e.Ref(in, out, tol)
		if want := a*x + math.Exp(-z); out[0] != want {
			t.Fatalf("Ref(a=%v x=%v z=%v) = %v, want %v", a, x, z, out[0], want)
		}
		mag := math.Abs(a*x) + math.Exp(-z)
		if tol[0] <= 0 || tol[0] > 16*u*mag+1e-30 {
			t.Fatalf("tolerance %g at a=%v x=%v z=%v: above 16u * %g", tol[0], a, x, z, mag)
		}
	}
	e, err = fuse.Parse("k = 3*i - i/2", fuse.Types{"i": "int32", "k": "int32"})
	if err != nil {
		t.Fatal(err)
	}
	e.Ref([]float64{-2147483647}, out, tol)
	i := int32(-2147483647)
	if out[0] != float64(3*i-i/2) || tol[0] != 0 {
		t.Errorf("int32 wrap: %v within %v", out[0], tol[0])
	}
}
