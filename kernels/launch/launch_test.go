package launch

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestLaunch runs every op at a few launch counts: set up, run, verified, twice, with a
// zero model and its figure per launch.
func TestLaunch(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, op := range Family().Ops {
			for _, n := range []int{1, 2, 37} {
				t.Run(fmt.Sprintf("%s/n=%d", op.Name, n), func(t *testing.T) {
					in, err := op.Setup(t.Context(), q, kernels.Params{Size: n, Seed: 99})
					if err != nil {
						t.Fatal(err)
					}
					defer func() {
						if err := in.Close(); err != nil {
							t.Error(err)
						}
					}()
					for run := range 2 {
						for range 3 {
							if err := in.Run(t.Context(), q); err != nil {
								t.Fatal(err)
							}
						}
						if err := in.Verify(t.Context(), q); err != nil {
							t.Fatalf("run %d (%s): %v", run, in.Shape(), err)
						}
					}
					if m := in.Model(); m != (kernels.Model{}) {
						t.Errorf("model %+v, want zero (a latency)", m)
					}
					want := n
					if op.Name == OpName(RoundTrip) {
						want = 1
					}
					if s, w := in.Shape(), fmt.Sprintf("launches=%d ", want); !strings.HasPrefix(s, w) {
						t.Errorf("shape %q, want it to start %q", s, w)
					}
					figs := in.(kernels.FigureReporter).Figures(time.Duration(want) * time.Microsecond)
					name := "per_launch_ns"
					if op.Name == OpName(Graph) {
						name = "per_kernel_ns"
					}
					if len(figs) != 1 || figs[name] != 1000 {
						t.Errorf("figures of %d µs for %d launches: %v, want %s = 1000", want, want, figs, name)
					}
					if figs := in.(kernels.FigureReporter).Figures(0); len(figs) != 0 {
						t.Errorf("figures of a zero time: %v, want none", figs)
					}
				})
			}
		}
	})
}

// TestLaunchVerify checks that Verify notices launches that did not run (or ran twice),
// and that Setup refuses a size of 0.
func TestLaunchVerify(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, op := range Family().Ops {
			in, err := op.Setup(t.Context(), q, kernels.Params{Size: 5, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if err := in.Run(t.Context(), q); err != nil {
				t.Fatal(err)
			}
			li := in.(*launchInstance)
			if li.mode == Graph {
				// A graph whose last launch is missing leaves its mark unset.
				short, err := li.q.Capture(func() error {
					for i := range li.n - 1 {
						if err := li.l.Mark(li.q, li.marks, i); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				full := li.g
				li.g = short
				if err := in.Verify(t.Context(), q); !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), "launch 4 of the graph's 5 left its mark 0") {
					t.Errorf("%s: a launch missing: %v; want ErrVerify naming launch 4", op.Name, err)
				}
				li.g = full
				short.Close()
				if err := in.Verify(t.Context(), q); err != nil {
					t.Errorf("%s: the whole graph: %v", op.Name, err)
				}
				if _, err := op.Setup(t.Context(), q, kernels.Params{Size: maxGraph + 1}); !errors.Is(err, engine.ErrInvalidArg) {
					t.Errorf("%s: size %d: %v, want ErrInvalidArg", op.Name, maxGraph+1, err)
				}
				continue
			}
			li.launches++ // a launch the counter did not see
			if err := in.Verify(t.Context(), q); !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), "counted") {
				t.Errorf("%s: a launch missing: %v; want ErrVerify saying what the kernel counted", op.Name, err)
			}
			li.launches -= 2 // one too few
			if err := in.Verify(t.Context(), q); !errors.Is(err, kernels.ErrVerify) {
				t.Errorf("%s: a launch too many: %v; want ErrVerify", op.Name, err)
			}
			if _, err := op.Setup(t.Context(), q, kernels.Params{Size: 0}); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: size 0: %v, want ErrInvalidArg", op.Name, err)
			}
		}
	})
}

// TestEmpty checks launch_empty alone: each launch adds one to the counter, and nothing
// past it is written.
func TestEmpty(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		l, err := NewLaunch(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if wg := l.WorkGroup(); wg < 1 || wg > 32 {
			t.Errorf("work-group of %d items, want 1 to 32", wg)
		}
		b, err := engine.NewBuffer[uint32](dev, 2)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if err := b.Write(t.Context(), q, 0, []uint32{1<<32 - 2, 0xa5a5a5a5}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := l.Empty(q, b); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 1 || got[1] != 0xa5a5a5a5 {
			t.Errorf("after 3 launches from 2^32-2: %#x, want [0x1 0xa5a5a5a5] (the count wraps, the next word untouched)", got)
		}
		if err := l.Empty(q, nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("nil counter: %v, want ErrInvalidArg", err)
		}
	})
}

// TestHeader checks that launch.cl opens with the header of the suite's files.
func TestHeader(t *testing.T) {
	src := Family().Source
	if h := kernels.Header(src); !strings.HasPrefix(h, "launch.cl: ") {
		t.Errorf("header starts %q", strings.SplitN(h, "\n", 2)[0])
	}
	for _, section := range []string{"Purpose", "Arguments", "Tunables", "Variants", "Launch", "Boundaries"} {
		if kernels.HeaderSection(src, section) == "" {
			t.Errorf("launch.cl's header has no %s section", section)
		}
	}
}
