package ceiling

import (
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestHeader checks that ceiling.cl opens with the header every kernel file of the suite
// has.
func TestHeader(t *testing.T) {
	for _, section := range []string{"Purpose", "Arguments", "Tunables", "Variants", "Launch"} {
		if kernels.HeaderSection(Source(), section) == "" {
			t.Errorf("ceiling.cl: header lacks a %q section", section)
		}
	}
	if h := kernels.Header(Source()); !strings.HasPrefix(h, "ceiling.cl: ") {
		t.Errorf("header starts %q", strings.SplitN(h, "\n", 2)[0])
	}
}

func TestPeak(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		widths := []int{1}
		if dev.Backend() == "opencl" {
			widths = append(widths, 8)
		}
		for _, vec := range widths {
			t.Run("float32/vec="+string(rune('0'+vec)), func(t *testing.T) { testPeak[float32](t, q, vec) })
		}
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				if _, err := NewPeak[float64](t.Context(), q, 1); !errors.Is(err, engine.ErrUnsupported) {
					t.Errorf("NewPeak[float64] without fp64: %v, want ErrUnsupported", err)
				}
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testPeak[float64](t, q, 1)
		})
	})
}

// testPeak runs the peak kernel over 300 work-items (every gid&255 and a wrap; one item
// under Oclgrind, which simulates its 16384 multiply-adds an item slowly), checks the
// output and that Check catches a wrong element.
func testPeak[T kernels.Float](t *testing.T, q *engine.Queue, vec int) {
	p, err := NewPeak[T](t.Context(), q, vec)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	items, wg := 320, 64
	if kerneltest.Small() {
		items, wg = 1, 1
	}
	if wg = min(wg, max(p.MaxWorkGroupSize(), 1)); items%wg != 0 {
		t.Skipf("kernel allows work-groups of %d items", wg)
	}
	out := kerneltest.Guarded(t, q, make([]T, items*vec))
	if err := p.Run(q, out, items, wg); err != nil {
		t.Fatal(err)
	}
	got := kerneltest.Download(t, q, "peak out", out, items*vec)
	if err := p.Check(got); err != nil {
		t.Fatal(err)
	}
	if p.Flops(items) != float64(items*vec)*2*PeakChains*PeakSteps {
		t.Errorf("Flops(%d) = %v", items, p.Flops(items))
	}
	got[len(got)-1] *= 1.001
	if err := p.Check(got); !errors.Is(err, kernels.ErrVerify) {
		t.Errorf("Check of a wrong element: %v, want ErrVerify", err)
	}
	short := kerneltest.NewBuffer[T](t, q.Device(), items*vec-1+vec)
	if err := p.Run(q, short, items+wg, wg); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Run into a short output: %v, want ErrInvalidArg", err)
	}
}

func TestCopy(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		c, err := NewCopy(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		rng := kernels.NewRand(1, 0xc0)
		for _, n := range kerneltest.EdgeSizes(256) {
			x := kernels.RandFloats[float32](rng, n, -1, 1)
			src := kerneltest.NewBuffer[float32](t, dev, n)
			if err := src.Write(t.Context(), q, 0, x); err != nil {
				t.Fatal(err)
			}
			dst := kerneltest.NewBuffer[float32](t, dev, n)
			if err := c.Run(q, dst, src); err != nil {
				t.Fatal(err)
			}
			got, err := dst.Download(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if err := kernels.CheckEqual("copy", got, x); err != nil {
				t.Fatalf("n=%d: %v", n, err)
			}
		}
		a, b := kerneltest.NewBuffer[float32](t, dev, 10), kerneltest.NewBuffer[float32](t, dev, 11)
		if err := c.Run(q, a, b); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("copy of unequal lengths: %v, want ErrInvalidArg", err)
		}
		if err := c.Run(q, nil, b); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("copy to nil: %v, want ErrInvalidArg", err)
		}
	})
}
