package gemm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestWGMMALayouts checks the reading of the matrix descriptors NewWGMMA uses
// (wgmmaDefault: the leading byte offset steps along K for K-major operands and along N for
// the MN-major B) on the nn and nt layouts at both widths. The other three readings were
// run on an H100 (2026-11-25, docs/PERFORMANCE.md): each computed a wrong product in at
// least one layout with 128 columns, and with 256 columns one read past the block's shared
// memory (CUDA_ERROR_ILLEGAL_ADDRESS, which ends the context): they are not run again.
func TestWGMMALayouts(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		p, _ := LookupPrecision("float16")
		if _, err := NewWGMMA[engine.Half](dev, p); errors.Is(err, engine.ErrUnsupported) {
			if dev.Backend() == "cuda" && dev.Info().ComputeCapability == 90 {
				t.Fatalf("%s should run wgmma: %v", dev.ID(), err)
			}
			t.Skip(err)
		}
		rng := rand.New(rand.NewPCG(3, 3))
		for _, bn := range []int{128, 256} {
			for _, tb := range []bool{false, true} {
				w, err := newWGMMA[engine.Half](dev, p, wgmmaDefault, bn)
				if err != nil {
					t.Fatal(err)
				}
				err = wgmmaProduct(t, q, w, GEMMShape{M: 256, N: 2 * bn, K: 192, TransB: tb}, rng)
				w.Close()
				if err != nil {
					t.Errorf("BN=%d transB=%v: %v", bn, tb, err)
				}
			}
		}
	})
}

// wgmmaProduct runs D = A*B of shape s through w on random float16 inputs and returns an
// error naming the first element beyond the tolerance.
func wgmmaProduct(t *testing.T, q *engine.Queue, w *WGMMA[engine.Half], s GEMMShape, rng *rand.Rand) error {
	s = s.WithDefaults()
	la, lb, lc := s.Lens()
	a, b := randIn[engine.Half](rng, la, -1, 1), randIn[engine.Half](rng, lb, -1, 1)
	ba, err := engine.Upload(t.Context(), q, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ba.Close()
	bb, err := engine.Upload(t.Context(), q, b)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	dc := kerneltest.Guarded(t, q, make([]float32, lc))
	if err := w.RunInto(q, s, 1, ba, bb, 0, dc, dc); err != nil {
		return err
	}
	got := kerneltest.Download(t, q, "D", dc, lc)
	want, mag := GEMMRef(s, 1, widen(a), widen(b), 0, make([]float64, lc))
	for o := range lc {
		if d := math.Abs(float64(got[o]) - want[o]); !(d <= w.p.Tolerance(s.K, 1, mag[o])) {
			return fmt.Errorf("%w: D[%d][%d] = %v, want %v", kernels.ErrVerify, o/s.LDC, o%s.LDC, got[o], want[o])
		}
	}
	return nil
}
