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

// TestWGMMALayouts runs wgmma.cu with each reading of the matrix descriptors' strides
// (which of a layout's two strides the leading byte offset holds, for K-major and for
// MN-major operands) on the nn and nt layouts, logs which compute the product, and fails
// unless the reading NewWGMMA uses (wgmmaDefault) does on both.
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
		ok := map[[3]int]bool{}
		for _, l := range []wgmmaLayout{{1, 0}, {0, 1}, {1, 1}, {0, 0}} {
			for _, tb := range []bool{false, true} {
				w, err := newWGMMA[engine.Half](dev, p, l, wgmmaBN)
				if err != nil {
					t.Fatal(err)
				}
				err = wgmmaProduct(t, q, w, GEMMShape{M: 256, N: 128, K: 192, TransB: tb}, rng)
				w.Close()
				ok[[3]int{l.lboK, l.lboMN, b2i(tb)}] = err == nil
				t.Logf("LBO_K=%d LBO_MN=%d transB=%v: %v", l.lboK, l.lboMN, tb, errOrOK(err))
			}
		}
		d := wgmmaDefault
		if !ok[[3]int{d.lboK, d.lboMN, 0}] || !ok[[3]int{d.lboK, d.lboMN, 1}] {
			t.Errorf("the default layout (LBO_K=%d LBO_MN=%d) does not compute the product in both layouts", d.lboK, d.lboMN)
		}
	})
}

func errOrOK(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
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
