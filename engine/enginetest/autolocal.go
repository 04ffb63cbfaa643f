package enginetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// autoShapes are the global ranges testAutoLocal launches with Auto local sizes: prime
// and awkward sizes, which leave few divisors, beside sizes with many. A zero local size
// is Auto; a positive one is given.
var autoShapes = []engine.Range{
	engine.Range1D(1, engine.Auto),
	engine.Range1D(7, engine.Auto),
	engine.Range1D(256, engine.Auto),
	engine.Range1D(257, engine.Auto),
	engine.Range1D(4096, engine.Auto),
	engine.Range1D(4097, engine.Auto),
	engine.Range1D(65537, engine.Auto),
	engine.Range1D(1<<20, engine.Auto),
	engine.Range2D(1, 1, engine.Auto, engine.Auto),
	engine.Range2D(7, 3, engine.Auto, engine.Auto),
	engine.Range2D(257, 5, engine.Auto, engine.Auto),
	engine.Range2D(13, 257, engine.Auto, engine.Auto),
	engine.Range2D(64, 64, engine.Auto, engine.Auto),
	engine.Range2D(1024, 3, engine.Auto, engine.Auto),
	engine.Range2D(256, 6, engine.Auto, 2),
	engine.Range3D(1, 1, 1, engine.Auto, engine.Auto, engine.Auto),
	engine.Range3D(7, 5, 3, engine.Auto, engine.Auto, engine.Auto),
	engine.Range3D(17, 13, 11, engine.Auto, engine.Auto, engine.Auto),
	engine.Range3D(16, 16, 16, engine.Auto, engine.Auto, engine.Auto),
	engine.Range3D(3, 5, 257, engine.Auto, engine.Auto, engine.Auto),
	engine.Range3D(8, 9, 10, 1, engine.Auto, engine.Auto),
}

// testAutoLocal launches kernel Count over autoShapes, through Launch, LaunchEvent and a
// timed Launch in turn: every work-item of the global range runs exactly once and none
// outside it, the kernel sees the global size asked and the local size that
// Kernel.Resolve reports, which divides the global size, keeps a local size given, and
// fits the kernel's and the device's limits. Then a kernel that requires its work-group
// size gets it (where the backend reports it), and a global size it does not divide is
// refused with ErrInvalidArg before the driver.
func (s *suite) testAutoLocal(t *testing.T) {
	k := s.kernel(t, suitekernels.Count)
	q := s.queue(t)
	items := s.dev.Info().MaxWorkItemSizes
	for i, r := range autoShapes {
		w, h, d := r.Global[0], r.Global[1], r.Global[2]
		n := w * h * d
		if n > s.maxElems() {
			continue
		}
		t.Run(fmt.Sprintf("%dD/%dx%dx%d", r.Dims, w, h, d), func(t *testing.T) {
			got, err := k.Resolve(r)
			if err != nil {
				t.Fatalf("Resolve(%+v): %v", r, err)
			}
			size := 1
			for j := range r.Dims {
				l := got.Local[j]
				switch {
				case l <= 0 || r.Global[j]%l != 0:
					t.Errorf("dimension %d: local size %d does not divide the global size %d", j, l, r.Global[j])
				case r.Local[j] != engine.Auto && l != r.Local[j]:
					t.Errorf("dimension %d: local size %d given, Resolve chose %d", j, r.Local[j], l)
				case items[j] > 0 && l > items[j]:
					t.Errorf("dimension %d: local size %d above the device's %d", j, l, items[j])
				}
				size *= max(l, 1)
			}
			if got.Global != r.Global || got.Dims != r.Dims {
				t.Errorf("Resolve changed the global range: %+v, asked %+v", got, r)
			}
			if m := k.MaxWorkGroupSize(); m > 0 && size > m {
				t.Errorf("a work-group of %v (%d items) exceeds the kernel's limit of %d", got.Local, size, m)
			}
			t.Logf("global %v: local %v", r.Global, got.Local)
			counts := upload(t, q, guarded(make([]uint32, n+1)))
			sizes := upload(t, q, guarded(make([]uint32, 6)))
			args := []any{int32(w), int32(h), int32(d), int32(guard), counts, sizes}
			switch i % 3 {
			case 0:
				err = q.Launch(k, r, args...)
			case 1:
				var ev *engine.Event
				if ev, err = q.LaunchEvent(k, r, args...); err == nil {
					err = ev.Close()
				}
			case 2:
				_, err = q.Timed(t.Context(), func() error { return q.Launch(k, r, args...) })
				if notes := q.TimedLaunches(); err == nil && (len(notes) != 1 || notes[0].Range != got) {
					t.Errorf("TimedLaunches = %+v, want the range Resolve gave: %+v", notes, got)
				}
			}
			if err != nil {
				t.Fatalf("launch over %+v: %v", r, err)
			}
			want := make([]uint32, n+1)
			for j := range n {
				want[j] = 1
			}
			checkBits(t, "counts (1 per work-item of the range, then the work-items outside it)", download(t, q, counts), guarded(want), guard)
			checkBits(t, "global and local sizes seen by the kernel", download(t, q, sizes),
				guarded([]uint32{uint32(w), uint32(h), uint32(d), uint32(got.Local[0]), uint32(got.Local[1]), uint32(got.Local[2])}), guard)
		})
	}
	t.Run("Required", func(t *testing.T) { s.testAutoRequired(t, q) })
}

// testAutoRequired launches kernel CountFixed, whose source requires work-groups of
// suitekernels.FixedLocal, with Auto local sizes.
func (s *suite) testAutoRequired(t *testing.T, q *engine.Queue) {
	k := s.kernel(t, suitekernels.CountFixed)
	fixed := suitekernels.FixedLocal
	req := k.Attributes().RequiredWorkGroupSize
	if req == [3]int{} {
		t.Skipf("the backend reports no required work-group size (KernelAttributes.RequiredWorkGroupSize): Auto chooses within the kernel's limit of %d", k.MaxWorkGroupSize())
	}
	if req != fixed {
		t.Fatalf("RequiredWorkGroupSize = %v, the source requires %v", req, fixed)
	}
	w, h, d := 3*fixed[0], 5*fixed[1], 2*fixed[2]
	r := engine.Range3D(w, h, d, engine.Auto, engine.Auto, engine.Auto)
	got, err := k.Resolve(r)
	if err != nil || got.Local != fixed {
		t.Fatalf("Resolve(%+v) = %+v, %v; want local %v", r, got, err, fixed)
	}
	n := w * h * d
	counts := upload(t, q, guarded(make([]uint32, n+1)))
	sizes := upload(t, q, guarded(make([]uint32, 6)))
	if err := q.Launch(k, r, int32(w), int32(h), int32(d), int32(guard), counts, sizes); err != nil {
		t.Fatalf("Launch: %v", err)
	}
	want := make([]uint32, n+1)
	for j := range n {
		want[j] = 1
	}
	checkBits(t, "counts", download(t, q, counts), guarded(want), guard)
	checkBits(t, "sizes", download(t, q, sizes), guarded([]uint32{uint32(w), uint32(h), uint32(d), uint32(fixed[0]), uint32(fixed[1]), uint32(fixed[2])}), guard)

	bad := engine.Range2D(fixed[0]+1, fixed[1], engine.Auto, engine.Auto)
	if _, err := k.Resolve(bad); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Resolve(%+v) = %v; want ErrInvalidArg: the global size is not a multiple of the required %v", bad, err, fixed)
	}
	if err := q.Launch(k, bad, int32(1), int32(1), int32(1), int32(guard), counts, sizes); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Launch over %+v = %v; want ErrInvalidArg", bad, err)
	}
}
