package overlap

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestCompute runs the kernel on chunks at the edge sizes, at offsets into a longer
// buffer, for a few step counts: every element within Tolerance of Ref, and the elements
// before the chunk and the guard band after it untouched.
func TestCompute(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		o, err := NewOverlap(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range kerneltest.EdgeSizes(o.WorkGroup()) {
			for _, iters := range []int{0, 1, 37} {
				t.Run(fmt.Sprintf("n=%d/iters=%d", n, iters), func(t *testing.T) {
					off := 5
					x := kernels.RandFloats[float32](rng, off+n, -1, 1)
					buf := kerneltest.Guarded(t, q, x)
					if err := o.Compute(q, buf, off, n, iters, A); err != nil {
						t.Fatal(err)
					}
					got := kerneltest.Download(t, q, "x", buf, off+n)
					for i := range off {
						if got[i] != x[i] {
							t.Fatalf("element %d before the chunk = %v, was %v", i, got[i], x[i])
						}
					}
					for i := off; i < off+n; i++ {
						v := float64(x[i])
						if want, tol := Ref(v, iters, A), Tolerance(v, A); !(math.Abs(float64(got[i])-want) <= tol) {
							t.Fatalf("element %d = %v, want %v (tolerance %.3g)", i, got[i], want, tol)
						}
					}
				})
			}
		}
		buf := kerneltest.NewBuffer[float32](t, dev, 10)
		for _, c := range []struct {
			name         string
			off, n, iter int
		}{{"past the end", 5, 6, 1}, {"no elements", 0, 0, 1}, {"negative offset", -1, 2, 1}, {"negative steps", 0, 2, -1}} {
			if err := o.Compute(q, buf, c.off, c.n, c.iter, A); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, err)
			}
		}
	})
}

// TestPipeline runs pipelines whose chunks do not divide n, with more chunks than elements
// and more queues than chunks: outputs verified after each of two runs, and Verify failing
// before any run (the outputs hold the sentinel), on a wrong output and on a spoiled guard
// element; the figures are there and finite.
func TestPipeline(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		cases := []struct{ n, queues, chunks, iters int }{
			{1, 1, Chunks, 64},
			{1, 4, Chunks, 64}, // one chunk, three idle queues
			{3, 2, Chunks, 64}, // more chunks asked than elements
			{1000, 3, 7, 64},   // 7 chunks of 143, the last of 142
			{4097, 4, Chunks, Iters},
			{64<<10 + 5, 2, Chunks, 64},
		}
		if !kerneltest.Small() {
			cases = append(cases, struct{ n, queues, chunks, iters int }{1<<20 + 3, 3, Chunks, 16})
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("n=%d/queues=%d/chunks=%d", c.n, c.queues, c.chunks), func(t *testing.T) {
				p, err := newPipeline(t.Context(), q, "overlap test", c.n, c.queues, c.chunks, c.iters, 17)
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := p.Close(); err != nil {
						t.Error(err)
					}
				}()
				if err := p.Verify(t.Context(), q); !errors.Is(err, kernels.ErrVerify) {
					t.Fatalf("Verify before any Run: %v, want ErrVerify", err)
				}
				for run := range 2 {
					if err := p.Run(t.Context(), q); err != nil {
						t.Fatal(err)
					}
					if err := p.Verify(t.Context(), q); err != nil {
						t.Fatalf("run %d (%s): %v", run, p.Shape(), err)
					}
				}
				if want := (c.n + p.chunk - 1) / p.chunk; p.chunks != want || p.chunks > c.chunks || (p.chunks-1)*p.chunk >= c.n {
					t.Errorf("%d chunks of %d for n=%d, %d asked", p.chunks, p.chunk, c.n, c.chunks)
				}
				f := p.Figures(time.Millisecond)
				for _, k := range []string{"serial_ns", "copy_in_ns", "compute_ns", "copy_out_ns", "hidden_fraction", "speedup"} {
					if _, na := p.Inapplicable()[k]; na {
						if v, ok := f[k]; ok {
							t.Errorf("figure %s = %v on %s, which says it means nothing there", k, v, dev.ID())
						}
						continue
					}
					if v, ok := f[k]; !ok || math.IsNaN(v) || math.IsInf(v, 0) {
						t.Errorf("figure %s = %v (present %v)", k, v, ok)
					}
				}
				if cpu := dev.Info().Kind == engine.KindCPU; cpu != (p.Inapplicable()["hidden_fraction"] != "") {
					t.Errorf("%s (cpu %v): hidden_fraction inapplicable %q", dev.ID(), cpu, p.Inapplicable()["hidden_fraction"])
				}
				if f["serial_ns"] <= 0 {
					t.Errorf("serial time %v", f["serial_ns"])
				}
				out := p.out.Slice()
				last := out[c.n-1]
				out[c.n-1] = -last - 1
				if err := p.Verify(t.Context(), q); !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), fmt.Sprintf("element %d ", c.n-1)) {
					t.Errorf("last output spoiled: %v; want ErrVerify naming element %d", err, c.n-1)
				}
				out[c.n-1] = last
				out[c.n+guard-1] = 0
				if err := p.Verify(t.Context(), q); !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), "guard element 63") {
					t.Errorf("guard spoiled: %v; want ErrVerify naming guard element 63", err)
				}
			})
		}
	})
}

// TestFigures checks the figures' arithmetic on given stage times.
func TestFigures(t *testing.T) {
	p := &pipeline{stages: stageTimes{serial: 30, copyIn: 10, compute: 10, copyOut: 10}}
	f := p.Figures(15)
	if f["hidden_fraction"] != 0.75 || f["speedup"] != 2 || f["serial_ns"] != 30 {
		t.Errorf("figures %v; want hidden_fraction 0.75, speedup 2, serial_ns 30", f)
	}
	p.hostMemory = true
	f = p.Figures(15)
	if _, ok := f["hidden_fraction"]; ok || f["speedup"] != 2 {
		t.Errorf("on a CPU device: figures %v; want no hidden_fraction, speedup 2", f)
	}
	if why := p.Inapplicable()["hidden_fraction"]; !strings.Contains(why, "CPU") {
		t.Errorf("on a CPU device: Inapplicable says %q for hidden_fraction, want why", why)
	}
	if na := (&pipeline{}).Inapplicable(); na != nil {
		t.Errorf("on a GPU: Inapplicable %v, want none", na)
	}
	f = (&pipeline{}).Figures(0)
	if _, ok := f["hidden_fraction"]; ok {
		t.Errorf("no copy time: hidden_fraction %v, want none", f["hidden_fraction"])
	}
	if _, ok := f["speedup"]; ok {
		t.Errorf("no median: speedup %v, want none", f["speedup"])
	}
}

// TestTolerance checks the bound on the host: the chain in float32, each step rounded
// twice as an unfused compiler would, stays within Tolerance of Ref for inputs of every
// magnitude, while leaving the chain out (y = v) or stopping it at half its steps does
// not.
func TestTolerance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		v := float32((rng.Float64()*2 - 1) * math.Pow(2, float64(rng.IntN(60)-30)))
		y := v
		for range Iters {
			y = float32(float32(A)*y) + v
		}
		want, tol := Ref(float64(v), Iters, A), Tolerance(float64(v), A)
		if d := math.Abs(float64(y) - want); !(d <= tol) {
			t.Fatalf("v=%v: float32 chain %v, reference %v: |diff| %.3g > %.3g", v, y, want, d, tol)
		}
		if v != 0 {
			if d := math.Abs(float64(v) - want); d <= tol {
				t.Fatalf("v=%v: no computation passes (|diff| %.3g <= %.3g)", v, d, tol)
			}
			if d := math.Abs(Ref(float64(v), 8, A) - want); d <= tol {
				t.Fatalf("v=%v: 8 steps pass (|diff| %.3g <= %.3g)", v, d, tol)
			}
		}
	}
}

// TestHeader checks that overlap.cl opens with the header of the suite's files.
func TestHeader(t *testing.T) {
	src := Family().Source
	if h := kernels.Header(src); !strings.HasPrefix(h, "overlap.cl: ") {
		t.Errorf("header starts %q", strings.SplitN(h, "\n", 2)[0])
	}
	for _, section := range []string{"Purpose", "Arguments", "Tunables", "Variants", "Launch", "Boundaries"} {
		if kernels.HeaderSection(src, section) == "" {
			t.Errorf("overlap.cl's header has no %s section", section)
		}
	}
}

// TestComputeLoopLimit checks Compute against the device's loop limit (kernels.LoopLimit):
// where it has one (Mesa's llvmpipe), 60,000 steps a work-item are refused naming the limit
// before anything is launched, and 2,048 (the suite's) run.
func TestComputeLoopLimit(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		limit := kernels.LoopLimit(dev)
		if limit == 0 {
			t.Skipf("%s ends no loops early", dev.ID())
		}
		o, err := NewOverlap(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		x := kerneltest.NewBuffer[float32](t, dev, 64)
		err = o.Compute(q, x, 0, 64, 60000, 0.5)
		if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "llvmpipe") || !strings.Contains(err.Error(), fmt.Sprint(limit)) {
			t.Errorf("Compute with 60000 steps: %v; want ErrUnsupported naming llvmpipe's limit %d", err, limit)
		}
		if err := o.Compute(q, x, 0, 64, 2048, 0.5); err != nil {
			t.Errorf("Compute with 2048 steps: %v", err)
		}
	})
}
