package engine_test

import (
	"fmt"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/fake"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// TestProgramCache checks engine's program cache on a fake device whose builds go through
// it: a build of the same source and options as an open or recently closed Program reuses
// its compile (no call reaches the driver), other options or BuildUncached compile anew, a
// failed build is not kept, each Program closes on its own, the least recently released
// compile past the cache's bound is closed, and Device.Close closes the ones kept (the fake
// driver reports any object left open).
func TestProgramCache(t *testing.T) {
	defer engine.CacheBuilds(fake.Name)()
	dev, q := open(t, "fake:0")
	builds := func() int64 {
		return fake.DeviceCalls(dev.Driver(), "Device.BuildSource") + fake.DeviceCalls(dev.Driver(), "Device.Build")
	}
	closes := func() int64 { return fake.DeviceCalls(dev.Driver(), "Program.Close") }
	build := func(options ...string) *engine.Program {
		t.Helper()
		p, err := dev.Build(suitekernels.Source, options...)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	n0 := builds()
	a := build("-DX=1")
	b := build("-DX=1")
	if got := builds() - n0; got != 1 {
		t.Fatalf("two builds of one source and options reached the driver %d times, want 1", got)
	}
	c := build("-DX=2")
	if got := builds() - n0; got != 2 {
		t.Fatalf("a build with other options: %d driver builds in all, want 2", got)
	}
	// Each Program closes on its own; its kernels are its own.
	ka, err := a.Kernel(suitekernels.Axpy)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if closes() != 0 {
		t.Fatalf("closing one of two Programs of a compile closed it")
	}
	if _, err := b.Kernel(suitekernels.Axpy); err != nil {
		t.Fatalf("the other Program's Kernel after the first closed: %v", err)
	}
	x, err := engine.NewBuffer[float32](dev, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Launch(ka, engine.Range1D(64, 64), int32(64), int32(0), float32(2), x, x); err != nil {
		t.Fatalf("a kernel of a closed Program's compile, still held by another: %v", err)
	}
	if err := q.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Kernel(suitekernels.Axpy); err == nil {
		t.Errorf("Kernel of a closed Program succeeded")
	}
	// Released, a compile is kept: the same build again reaches no driver.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	d := build("-DX=1")
	if got := builds() - n0; got != 2 {
		t.Fatalf("a build of a released compile: %d driver builds in all, want 2", got)
	}
	// BuildUncached compiles anew and keeps nothing.
	u, err := dev.BuildUncached(engine.Source{Text: suitekernels.Source}, "-DX=1")
	if err != nil {
		t.Fatal(err)
	}
	if got := builds() - n0; got != 3 {
		t.Fatalf("BuildUncached: %d driver builds in all, want 3", got)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if closes() != 1 {
		t.Fatalf("closing BuildUncached's Program: %d driver closes, want 1", closes())
	}
	// A failed build is not kept: it reaches the driver each time.
	nb := builds()
	for range 2 {
		if _, err := dev.Build("__kernel void prism_no_such_kernel(int n) {}"); err == nil {
			t.Fatal("a source the fake backend cannot build built")
		}
	}
	if got := builds() - nb; got != 2 {
		t.Errorf("two failed builds reached the driver %d times, want 2", got)
	}
	// Past the bound, the least recently released compile is closed.
	for _, p := range []*engine.Program{c, d} {
		p.Close()
	}
	before := closes()
	for i := range engine.IdleProgramsMax {
		build(fmt.Sprintf("-DY=%d", i)).Close()
	}
	if got := closes() - before; got != 2 {
		t.Fatalf("%d more released compiles than the cache keeps: %d driver closes, want 2", engine.IdleProgramsMax, got)
	}
	n1 := builds()
	build("-DX=2").Close() // released before -DX=1's: closed first
	if builds() != n1+1 {
		t.Errorf("a compile pushed out of the cache was reused")
	}
	build(fmt.Sprintf("-DY=%d", engine.IdleProgramsMax-1)).Close()
	if builds() != n1+1 {
		t.Errorf("the most recently released compile was not reused")
	}
	// Device.Close closes the kept compiles: the fake driver reports any left open.
	kept := build("-DZ=1")
	kept.Close()
	// A compile released after the cache was drained (a build the device's Close did not
	// wait for) is closed at once, and a build then is not kept.
	held := build("-DW=1")
	if err := engine.DrainPrograms(dev); err != nil {
		t.Fatal(err)
	}
	before, nd := closes(), builds()
	held.Close()
	if got := closes() - before; got != 1 {
		t.Errorf("a compile released after the drain: %d driver closes, want 1", got)
	}
	build("-DW=1").Close()
	if got, gotB := closes()-before, builds()-nd; got != 2 || gotB != 1 {
		t.Errorf("a build after the drain: %d driver builds and %d closes in all, want 1 and 2", gotB, got)
	}
	if err := dev.Close(); err != nil {
		t.Fatalf("Device.Close with compiles kept: %v", err)
	}
}
