package engine_test

import (
	"errors"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/fake"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// TestResolve checks Kernel.Resolve on the fake device (256 items a work-group, 64 in
// dimension 2): Auto sizes chosen, given ones kept, invalid ranges and kernels refused,
// shapes resolved without allocating or calling the driver, and a graph capture launched
// with the resolved range.
func TestResolve(t *testing.T) {
	dev, q := open(t, "fake:0")
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel(suitekernels.Iota)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		r    engine.Range
		want [3]int
	}{
		{engine.Range1D(4096, engine.Auto), [3]int{256, 1, 1}},
		{engine.Range1D(1000, engine.Auto), [3]int{250, 1, 1}},
		{engine.Range2D(64, 64, engine.Auto, engine.Auto), [3]int{16, 16, 1}},
		{engine.Range3D(256, 256, 256, engine.Auto, engine.Auto, engine.Auto), [3]int{8, 8, 4}},
		{engine.Range3D(4, 4, 256, 1, 1, engine.Auto), [3]int{1, 1, 64}}, // the device's 64 in z
		{engine.Range1D(1024, 128), [3]int{128, 1, 1}},
	} {
		got, err := k.Resolve(c.r)
		if err != nil || got.Local != c.want || got.Global != c.r.Global {
			t.Errorf("Resolve(%+v) = %+v, %v; want local %v", c.r, got, err, c.want)
		}
	}
	for _, r := range []engine.Range{
		engine.Range1D(0, engine.Auto),
		engine.Range1D(100, 64),
		engine.Range2D(4, 512, engine.Auto, 512),
	} {
		if _, err := k.Resolve(r); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("Resolve(%+v) = %v, want ErrInvalidArg", r, err)
		}
	}
	if _, err := (*engine.Kernel)(nil).Resolve(engine.Range1D(1, engine.Auto)); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Resolve on a nil kernel: %v, want ErrInvalidArg", err)
	}

	r := engine.Range1D(4097, engine.Auto)
	if _, err := k.Resolve(r); err != nil {
		t.Fatal(err)
	}
	before := fake.DeviceCalls(dev.Driver(), "")
	if allocs := testing.AllocsPerRun(100, func() { k.Resolve(r) }); allocs != 0 {
		t.Errorf("Resolve of a shape resolved before allocates %.1f times, want 0", allocs)
	}
	r2 := engine.Range2D(1000, 7, engine.Auto, engine.Auto)
	if allocs := testing.AllocsPerRun(100, func() { k.Resolve(r); k.Resolve(r2) }); allocs != 0 {
		t.Errorf("Resolve of two shapes in turn allocates %.1f times, want 0", allocs)
	}
	if calls := fake.DeviceCalls(dev.Driver(), "") - before; calls != 0 {
		t.Errorf("Resolve made %d driver calls, want 0", calls)
	}

	// A captured launch replays with the range chosen at capture.
	out, err := engine.NewBuffer[uint32](dev, 4097)
	if err != nil {
		t.Fatal(err)
	}
	g, err := q.Capture(func() error { return q.Launch(k, r, int32(4097), int32(0), out) })
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	defer g.Close()
	if err := g.Launch(q); err != nil {
		t.Fatalf("graph Launch: %v", err)
	}
	got, err := out.Download(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != uint32(i) {
			t.Fatalf("out[%d] = %d after the graph's launch, want %d", i, v, i)
		}
	}

	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Resolve(r); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Resolve on a closed kernel: %v, want ErrClosed", err)
	}
}
