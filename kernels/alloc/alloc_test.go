package alloc

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestAlloc runs both ops at sizes around the pool's smallest class (512 bytes) and the
// ends Verify reads back, and one past a MiB: set up, run, verified, twice.
func TestAlloc(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, op := range Family().Ops {
			for _, n := range []int{1, 511, 513, 2*ends + 1, 1<<20 + 3} {
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
				})
			}
		}
	})
}

// TestAllocPath checks that Verify notices a run that did not take the op's path: a miss
// of the pool in a pooled op, an allocation through the pool in a raw one.
func TestAllocPath(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		pool, err := Family().Ops[0].Setup(t.Context(), q, kernels.Params{Size: 4096, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		in := pool.(*allocInstance)
		in.n = 5 << 20 // a size class the pool has no block of: a miss
		if err := in.Run(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		if err := in.Verify(t.Context(), q); !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), "missed the pool") {
			t.Errorf("a pooled run that missed: %v; want ErrVerify saying it missed the pool", err)
		}
		raw, err := Family().Ops[1].Setup(t.Context(), q, kernels.Params{Size: 4096, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		b, err := engine.NewBuffer[uint8](dev, 4096) // through the pool, between raw runs
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		if err := raw.Run(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		if err := raw.Verify(t.Context(), q); !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), "bypass") {
			t.Errorf("a pool allocation among raw runs: %v; want ErrVerify saying they must bypass the pool", err)
		}
		if _, err := Family().Ops[0].Setup(t.Context(), q, kernels.Params{Size: 0}); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("size 0: %v, want ErrInvalidArg", err)
		}
	})
}

// TestAllocPoolOff checks that the pooled op refuses a device whose pool is off, saying
// so, and that the raw op runs there.
func TestAllocPoolOff(t *testing.T) {
	t.Setenv("PRISM_POOL", "off")
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		_, err := Family().Ops[0].Setup(t.Context(), q, kernels.Params{Size: 4096})
		if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "PRISM_POOL=off") {
			t.Errorf("pooled op with the pool off: %v; want ErrUnsupported naming PRISM_POOL=off", err)
		}
		in, err := Family().Ops[1].Setup(t.Context(), q, kernels.Params{Size: 4096, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		if err := in.Run(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		if err := in.Verify(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFill checks alloc_fill against PatternByte over a whole buffer, and its refusals.
func TestFill(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		a, err := NewAlloc(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		n := a.WorkGroup() + 3
		b, err := engine.NewBuffer[uint8](dev, n+7)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		sentinels := make([]byte, n+7)
		for i := range sentinels {
			sentinels[i] = 0xa5
		}
		if err := b.Write(t.Context(), q, 0, sentinels); err != nil {
			t.Fatal(err)
		}
		if err := a.Fill(q, b, n, 12345); err != nil {
			t.Fatal(err)
		}
		got, err := b.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if err := check("fill", got[:n], 0, 12345); err != nil {
			t.Fatal(err)
		}
		for i := n; i < n+7; i++ {
			if got[i] != 0xa5 {
				t.Fatalf("byte %d past the %d filled = %#x, want the sentinel 0xa5", i, n, got[i])
			}
		}
		for _, c := range []struct {
			name string
			n    int
		}{{"past the end", n + 8}, {"no bytes", 0}} {
			if err := a.Fill(q, b, c.n, 1); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, err)
			}
		}
		seen := map[byte]bool{}
		for i := range 256 {
			seen[PatternByte(i, 7)] = true
		}
		if len(seen) != 256 {
			t.Errorf("256 consecutive pattern bytes take %d values, want 256", len(seen))
		}
	})
}

// TestHeader checks that alloc.cl opens with the header of the suite's files.
func TestHeader(t *testing.T) {
	src := Family().Source
	if h := kernels.Header(src); !strings.HasPrefix(h, "alloc.cl: ") {
		t.Errorf("header starts %q", strings.SplitN(h, "\n", 2)[0])
	}
	for _, section := range []string{"Purpose", "Arguments", "Tunables", "Variants", "Launch", "Boundaries"} {
		if kernels.HeaderSection(src, section) == "" {
			t.Errorf("alloc.cl's header has no %s section", section)
		}
	}
}
