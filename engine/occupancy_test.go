package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/fake"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// TestOccupancy checks Kernel.Occupancy on the fake GPU, whose multiprocessor holds 1024
// work-items in 8 work-groups with 128 KiB of local memory taken in 1 KiB granules: each
// limiter, the fraction, and the warps.
func TestOccupancy(t *testing.T) {
	dev, _ := open(t, "fake:0")
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	iota, err := prog.Kernel(suitekernels.Iota)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := prog.Kernel(suitekernels.GroupReverse) // 256 bytes of static local memory
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		k        *engine.Kernel
		block    int
		dynamic  int64
		blocks   int
		fraction float64
		limiter  engine.Limiter
	}{
		{iota, 256, 0, 4, 1, engine.LimitThreads},
		{iota, 64, 0, 8, 0.5, engine.LimitBlocks},
		{iota, 128, 0, 8, 1, engine.LimitThreads}, // threads and blocks alike: threads first
		{rev, 64, 0, 8, 0.5, engine.LimitBlocks},
		{rev, 64, 32 << 10, 3, 3 * 64 / 1024.0, engine.LimitSharedMemory}, // 33 KiB each
		{iota, 1, 96 << 10, 1, 1 / 1024.0, engine.LimitSharedMemory},
	} {
		o, err := c.k.Occupancy(c.block, c.dynamic)
		if err != nil {
			t.Errorf("%s(%d, %d): %v", c.k.Name(), c.block, c.dynamic, err)
			continue
		}
		want := engine.Occupancy{BlockSize: c.block, DynamicSharedBytes: c.dynamic, ActiveBlocks: c.blocks,
			ActiveWarps: c.blocks * c.block, MaxWarps: 1024, WarpSize: 1, Fraction: c.fraction, Limiter: c.limiter}
		if o != want {
			t.Errorf("%s(%d, %d) = %+v; want %+v", c.k.Name(), c.block, c.dynamic, o, want)
		}
	}
}

// TestOccupancyRefused checks that arguments engine refuses never reach the driver and
// that the errors name the problem, and that a backend without occupancy (the fake CPU,
// as OpenCL) answers ErrUnsupported.
func TestOccupancyRefused(t *testing.T) {
	dev, _ := open(t, "fake:0")
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel(suitekernels.GroupReverse)
	if err != nil {
		t.Fatal(err)
	}
	closed, err := prog.Kernel(suitekernels.Iota)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	before := fake.DeviceCalls(dev.Driver(), "Kernel.Occupancy")
	for _, c := range []struct {
		k       *engine.Kernel
		block   int
		dynamic int64
		want    error
		says    string
	}{
		{k, 0, 0, engine.ErrInvalidArg, "a block of 0 work-items (the size must be positive)"},
		{k, -32, 0, engine.ErrInvalidArg, "a block of -32 work-items"},
		{k, 257, 0, engine.ErrInvalidArg, "a block of 257 work-items exceeds the kernel's limit of 256 on fake:0"},
		{k, 64, -1, engine.ErrInvalidArg, "-1 bytes of dynamic shared memory (the size must not be negative)"},
		{k, 64, 96 << 10, engine.ErrInvalidArg, "98304 bytes of dynamic shared memory and the kernel's 256 static bytes exceed the 98304 bytes"},
		{closed, 64, 0, engine.ErrClosed, "is closed"},
		{nil, 64, 0, engine.ErrInvalidArg, "nil kernel"},
	} {
		_, err := c.k.Occupancy(c.block, c.dynamic)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Occupancy(%d, %d) = %v; want %v saying %q", c.block, c.dynamic, err, c.want, c.says)
		}
	}
	if n := fake.DeviceCalls(dev.Driver(), "Kernel.Occupancy") - before; n != 0 {
		t.Errorf("%d refused calls reached the driver", n)
	}

	cpu, _ := open(t, "fake:1")
	prog, err = cpu.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	if k, err = prog.Kernel(suitekernels.Iota); err != nil {
		t.Fatal(err)
	}
	_, err = k.Occupancy(64, 0)
	if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "engine: occupancy of prism_iota on fake:1: fake: ") {
		t.Errorf("occupancy on the fake CPU: %v; want ErrUnsupported from the driver", err)
	}
}

// TestTimedLaunches checks that Timed records each kernel and range once, in the order of
// their first launch, that the next Timed call starts afresh, and that a note gives its
// block size and occupancy.
func TestTimedLaunches(t *testing.T) {
	ctx := context.Background()
	dev, q := open(t, "fake:0")
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	iota, err := prog.Kernel(suitekernels.Iota)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := prog.Kernel(suitekernels.Index2D)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.NewBuffer[uint32](dev, 256)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Launch(iota, engine.Range1D(64, 64), int32(64), int32(0), out); err != nil { // untimed: not recorded
		t.Fatal(err)
	}
	if got := q.TimedLaunches(); len(got) != 0 {
		t.Errorf("before any Timed call: %d launches", len(got))
	}
	_, err = q.Timed(ctx, func() error {
		for range 3 {
			if err := q.Launch(iota, engine.Range1D(64, 32), int32(64), int32(0), out); err != nil {
				return err
			}
			if err := q.Launch(idx, engine.Range2D(16, 16, 8, 4), int32(16), int32(16), int32(0), out); err != nil {
				return err
			}
		}
		return q.Launch(iota, engine.Range1D(128, 64), int32(128), int32(0), out)
	})
	if err != nil {
		t.Fatal(err)
	}
	notes := q.TimedLaunches()
	if len(notes) != 3 || notes[0].Kernel != iota || notes[1].Kernel != idx || notes[2].Kernel != iota {
		t.Fatalf("TimedLaunches = %+v; want iota, index2d, iota", notes)
	}
	for i, want := range []int{32, 32, 64} {
		if b := notes[i].BlockSize(); b != want {
			t.Errorf("launch %d: block size %d; want %d", i, b, want)
		}
	}
	o, err := notes[1].Occupancy()
	if err != nil || o.BlockSize != 32 || o.ActiveBlocks != 8 || o.Limiter != engine.LimitBlocks {
		t.Errorf("occupancy of the 8x4 launch: %+v, %v", o, err)
	}
	if _, err := q.Timed(ctx, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := q.TimedLaunches(); len(got) != 0 {
		t.Errorf("after an empty Timed call: %d launches", len(got))
	}
	var nilQ *engine.Queue
	if got := nilQ.TimedLaunches(); got != nil {
		t.Errorf("nil queue: %v", got)
	}
}
