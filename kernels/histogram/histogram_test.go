package histogram

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

func TestHistogram(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		h, err := NewHistogram(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		rng := rand.New(rand.NewPCG(4, 5))
		sizes := kerneltest.EdgeSizes(h.WorkGroup())
		// uint32: a power-of-two width (shift), widths that are not (division), values past
		// bins*width (clamped into the last bin), bin edges, one bin, the local limit and one past.
		for _, c := range []struct {
			bins  int
			width uint32
		}{{1, 1}, {7, 1000}, {256, 1 << 24}, {h.LocalBins(), 3}, {h.LocalBins() + 1, 1 << 12}} {
			for _, n := range sizes {
				for _, pat := range []string{"random", "edges", "skewed"} {
					if kerneltest.Small() && n > 4097 || n > 4097 && pat == "edges" {
						continue
					}
					x := make([]uint32, n)
					span := uint64(c.bins) * uint64(c.width)
					for i := range x {
						switch pat {
						case "random": // about 1/8 past the last bin
							x[i] = uint32(min(rng.Uint64N(span+span/8+1), math.MaxUint32))
						case "edges": // k*width - 1, k*width, k*width + 1, and the extremes
							k := uint32(rng.IntN(c.bins + 2))
							x[i] = []uint32{k*c.width - 1, k * c.width, k*c.width + 1, 0, math.MaxUint32}[rng.IntN(5)]
						case "skewed": // nine in ten in one bin: contention
							x[i] = uint32(min(rng.Uint64N(span+1), math.MaxUint32))
							if rng.IntN(10) != 0 {
								x[i] = uint32(c.bins/2) * c.width
							}
						}
					}
					t.Run(fmt.Sprintf("uint32/bins=%d/width=%d/n=%d/%s", c.bins, c.width, n, pat), func(t *testing.T) {
						counts := kerneltest.Guarded(t, q, garbage(c.bins))
						if err := h.Uint32(q, counts, kerneltest.Guarded(t, q, x), n, c.bins, c.width); err != nil {
							t.Fatal(err)
						}
						got := kerneltest.Download(t, q, "counts", counts, c.bins)
						if err := kernels.CheckEqual("counts", got, HistogramUint32Ref(x, c.bins, c.width)); err != nil {
							t.Fatal(err)
						}
					})
				}
			}
		}
		// float32: values at and around every bin edge, at lo and hi, outside, NaN, infinities.
		for _, c := range []struct {
			bins   int
			lo, hi float32
		}{{1, 0, 1}, {7, -1, 1}, {256, -3.5, 100}, {h.LocalBins() + 1, 0.1, 0.7}} {
			for _, n := range sizes {
				for _, pat := range []string{"random", "edges", "skewed"} {
					if kerneltest.Small() && n > 4097 || n > 4097 && pat == "edges" {
						continue
					}
					x := make([]float32, n)
					w := float64(c.hi - c.lo)
					for i := range x {
						switch pat {
						case "random":
							x[i] = float32(float64(c.lo) - 0.1*w + 1.2*w*rng.Float64())
						case "edges":
							e := c.lo + float32(rng.IntN(c.bins+1))*(c.hi-c.lo)/float32(c.bins)
							specials := []float32{e, math.Nextafter32(e, -math.MaxFloat32), math.Nextafter32(e, math.MaxFloat32),
								c.lo, c.hi, math.Nextafter32(c.hi, -math.MaxFloat32), math.Nextafter32(c.lo, -math.MaxFloat32),
								float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1))}
							x[i] = specials[rng.IntN(len(specials))]
						case "skewed":
							x[i] = c.lo + (c.hi-c.lo)/3
							if rng.IntN(10) == 0 {
								x[i] = float32(float64(c.lo) + w*rng.Float64())
							}
						}
					}
					t.Run(fmt.Sprintf("float32/bins=%d/range=[%v,%v)/n=%d/%s", c.bins, c.lo, c.hi, n, pat), func(t *testing.T) {
						counts := kerneltest.Guarded(t, q, garbage(c.bins))
						if err := h.Float32(q, counts, kerneltest.Guarded(t, q, x), n, c.bins, c.lo, c.hi); err != nil {
							t.Fatal(err)
						}
						got := kerneltest.Download(t, q, "counts", counts, c.bins)
						if err := kernels.CheckEqual("counts", got, HistogramFloat32Ref(x, c.bins, c.lo, c.hi)); err != nil {
							t.Fatal(err)
						}
					})
				}
			}
		}
	})
}

// garbage returns n non-zero counts: the histogram must overwrite them.
func garbage(n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = 0x5eed + uint32(i)
	}
	return out
}

func TestHistogramRef(t *testing.T) {
	got := HistogramFloat32Ref([]float32{0, 0.25, 0.5, 0.75, 1, -0.01, float32(math.NaN()), 0.9999999, float32(math.Copysign(0, -1))}, 4, 0, 1)
	if err := kernels.CheckEqual("float ref", got, []uint32{2, 1, 1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := kernels.CheckEqual("uint ref", HistogramUint32Ref([]uint32{0, 9, 10, 29, 30, math.MaxUint32}, 3, 10), []uint32{2, 1, 3}); err != nil {
		t.Fatal(err)
	}
}

// TestHistogramInvalid checks the validation of the exported launchers.
func TestHistogramInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		h, err := NewHistogram(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		const n = 100
		u, _ := engine.NewBuffer[uint32](dev, n)
		f, _ := engine.NewBuffer[float32](dev, n)
		counts, _ := engine.NewBuffer[uint32](dev, 16)
		defer u.Close()
		defer f.Close()
		defer counts.Close()
		inf := float32(math.Inf(1))
		for _, c := range []struct {
			name string
			err  error
		}{
			{"nil counts", h.Uint32(q, nil, u, n, 16, 1)},
			{"nil input", h.Uint32(q, counts, nil, n, 16, 1)},
			{"negative n", h.Uint32(q, counts, u, -1, 16, 1)},
			{"n over input", h.Uint32(q, counts, u, n+1, 16, 1)},
			{"zero bins", h.Uint32(q, counts, u, n, 0, 1)},
			{"bins over counts", h.Uint32(q, counts, u, n, 17, 1)},
			{"zero width", h.Uint32(q, counts, u, n, 16, 0)},
			{"float nil counts", h.Float32(q, nil, f, n, 16, 0, 1)},
			{"float nil input", h.Float32(q, counts, nil, n, 16, 0, 1)},
			{"float n over input", h.Float32(q, counts, f, n+1, 16, 0, 1)},
			{"float bins over max", h.Float32(q, counts, f, n, MaxFloatBins+1, 0, 1)},
			{"lo == hi", h.Float32(q, counts, f, n, 16, 1, 1)},
			{"lo > hi", h.Float32(q, counts, f, n, 16, 2, 1)},
			{"infinite hi", h.Float32(q, counts, f, n, 16, 0, inf)},
			{"NaN lo", h.Float32(q, counts, f, n, 16, float32(math.NaN()), 1)},
			{"span overflows", h.Float32(q, counts, f, n, 16, -math.MaxFloat32, math.MaxFloat32)},
			{"scale overflows", h.Float32(q, counts, f, n, 16, 0, 1e-44)},
		} {
			if !errors.Is(c.err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, c.err)
			}
		}
		if err := h.Uint32(q, counts, u, 0, 16, 1); err != nil {
			t.Errorf("n = 0: %v, want nil", err)
		}
		got, err := counts.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if err := kernels.CheckEqual("counts of no input", got, make([]uint32, 16)); err != nil {
			t.Error(err)
		}
		if err := q.Finish(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
