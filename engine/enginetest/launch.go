package enginetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

func (s *suite) testLaunch(t *testing.T) {
	t.Run("Axpy", s.testAxpy)
	t.Run("Iota", s.testIota)
	t.Run("Index2D", s.testIndex2D)
	t.Run("Index3D", s.testIndex3D)
	t.Run("AutoLocal", s.testAutoLocal)
	t.Run("ProgramClosed", s.testKernelOutlivesProgram)
	t.Run("Untimed", s.testUntimed)
}

// testUntimed launches many times back to back outside Timed, which a backend with
// driver.UntimedLauncher does without events: every launch lands, in order, and (its
// arguments boxed once) a launch allocates nothing, with a local size given or Auto; at
// small sizes (Small: a simulator, whose thread policy hands each call to a thread) only
// that every launch lands.
func (s *suite) testUntimed(t *testing.T) {
	dq, err := s.dev.Driver().NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	_, untimed := dq.(driver.UntimedLauncher)
	dq.Close()
	k := s.kernel(t, suitekernels.Axpy)
	q := s.queue(t)
	l := s.locals(k)[0]
	n := s.fit([]int{4097})[0]
	launches := 64
	if Small() {
		launches = 4
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%9 - 4) // small integers: every sum is exact
	}
	xb, yb := upload(t, q, x), upload(t, q, guarded(make([]float32, n)))
	args := []any{int32(n), int32(guard), float32(1), xb, yb}
	r := engine.Range1D(engine.RoundUp(n, l), l)
	for range launches {
		if err := q.Launch(k, r, args...); err != nil {
			t.Fatalf("Launch: %v", err)
		}
	}
	got := download(t, q, yb)
	want := make([]float32, n)
	for i := range want {
		want[i] = float32(launches) * x[i]
	}
	checkBits(t, "y after the launches", got, guarded(want), 0)
	if !untimed {
		t.Skipf("the backend launches through events only (no driver.UntimedLauncher)")
	}
	if Small() {
		// A simulator's thread policy hands each call to a thread, so the allocations are
		// not checked there, and 400 more launches would only cost its time.
		return
	}
	args[2] = float32(0)
	allocs := testing.AllocsPerRun(200, func() {
		if err := q.Launch(k, r, args...); err != nil {
			t.Fatalf("Launch: %v", err)
		}
	})
	if err := q.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("%.2f allocations per untimed launch", allocs)
	if allocs > 0 && s.opts.LaunchAllocates == "" {
		t.Errorf("an untimed launch allocates %.2f times; want none", allocs)
	}
	auto := engine.Range1D(n, engine.Auto) // the choice is made once for a shape
	allocs = testing.AllocsPerRun(200, func() {
		if err := q.Launch(k, auto, args...); err != nil {
			t.Fatalf("Launch: %v", err)
		}
	})
	if err := q.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("%.2f allocations per untimed launch with an Auto local size", allocs)
	if allocs > 0 && s.opts.LaunchAllocates == "" {
		t.Errorf("an untimed launch with an Auto local size allocates %.2f times; want none", allocs)
	}
}

// launchSizes returns the 1D problem sizes for work-group size l: around l and around
// other edges.
func (s *suite) launchSizes(l int) []int {
	return s.fit([]int{1, 7, l - 1, l, l + 1, 4097, 1 << 20})
}

// testAxpy launches y = a*x + y on a guarded y at every size and work-group size.
func (s *suite) testAxpy(t *testing.T) {
	k := s.kernel(t, suitekernels.Axpy)
	q := s.queue(t)
	for _, l := range s.locals(k) {
		for _, n := range s.launchSizes(l) {
			t.Run(fmt.Sprintf("local=%d/n=%d", l, n), func(t *testing.T) {
				r := rng(t)
				a := float32(r.Float64()*4 - 2)
				x, y0 := random[float32](r, n), random[float32](r, n)
				xb, yb := upload(t, q, x), upload(t, q, guarded(y0))
				if err := q.Launch(k, engine.Range1D(engine.RoundUp(n, l), l), int32(n), int32(guard), a, xb, yb); err != nil {
					t.Fatalf("Launch: %v", err)
				}
				checkAxpy(t, download(t, q, yb), a, x, y0)
			})
		}
	}
}

// checkAxpy checks got (guarded) against a*x + y0. The device may contract a*x + y into
// an FMA (OpenCL C allows it by default) or not; either result lies within one rounding
// of the exact a*x (at most 2^-24 |a*x|) plus one of the sum (at most 2^-24 |a*x + y|) of
// the exact value, so the tolerance is 2^-23 (|a*x| + |y|), computed in float64, where a*x
// is exact.
func checkAxpy(t testing.TB, got []float32, a float32, x, y0 []float32) {
	t.Helper()
	n := len(x)
	want := guarded(make([]float32, n))
	checkBits(t, "guard bands", append(got[:guard:guard], got[guard+n:]...), append(want[:guard:guard], want[guard+n:]...), 0)
	bad := 0
	for i := range n {
		ax := float64(a) * float64(x[i])
		exact := ax + float64(y0[i])
		tol := ulp32 * (math.Abs(ax) + math.Abs(float64(y0[i])))
		if g := float64(got[guard+i]); !(math.Abs(g-exact) <= tol) {
			if bad < 5 {
				t.Errorf("y[%d] = %v, want %v ± %.3g (a=%v x=%v y=%v)", i, got[guard+i], exact, tol, a, x[i], y0[i])
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%d of %d elements wrong", bad, n)
	}
}

// testIota launches an index writer into a guarded buffer: exact results.
func (s *suite) testIota(t *testing.T) {
	k := s.kernel(t, suitekernels.Iota)
	q := s.queue(t)
	for _, l := range s.locals(k) {
		for _, n := range s.launchSizes(l) {
			t.Run(fmt.Sprintf("local=%d/n=%d", l, n), func(t *testing.T) {
				want := make([]uint32, n)
				for i := range want {
					want[i] = uint32(i)
				}
				want = guarded(want)
				b := upload(t, q, sentinels[uint32](n+2*guard))
				if err := q.Launch(k, engine.Range1D(engine.RoundUp(n, l), l), int32(n), int32(guard), b); err != nil {
					t.Fatalf("Launch: %v", err)
				}
				checkBits(t, "out", download(t, q, b), want, guard)
			})
		}
	}
}

// fitLocal caps a work-group shape to the kernel's and the device's limits, halving the
// largest dimension until it fits.
func (s *suite) fitLocal(k *engine.Kernel, l [3]int) [3]int {
	items := s.dev.Info().MaxWorkItemSizes
	for i := range l {
		if items[i] > 0 {
			l[i] = min(l[i], items[i])
		}
	}
	for max := k.MaxWorkGroupSize(); max > 0 && l[0]*l[1]*l[2] > max; {
		j := 0
		for i := range l {
			if l[i] > l[j] {
				j = i
			}
		}
		l[j] /= 2
	}
	return l
}

// testIndex2D launches a 2D index writer: out[off + y*w + x] = y<<16 | x.
func (s *suite) testIndex2D(t *testing.T) {
	k := s.kernel(t, suitekernels.Index2D)
	q := s.queue(t)
	shapes := [][2]int{{1, 1}, {7, 3}, {37, 13}, {257, 5}, {3, 300}}
	locals := [][3]int{{1, 1, 1}, {8, 8, 1}, {16, 16, 1}, {32, 4, 1}, {1, 64, 1}}
	for _, sh := range shapes {
		w, h := sh[0], sh[1]
		if w*h > s.maxElems() {
			continue
		}
		var seen [][3]int
		for _, l := range locals {
			l = s.fitLocal(k, l)
			if slices.Contains(seen, l) {
				continue
			}
			seen = append(seen, l)
			t.Run(fmt.Sprintf("%dx%d/local=%dx%d", w, h, l[0], l[1]), func(t *testing.T) {
				want := make([]uint32, w*h)
				for y := range h {
					for x := range w {
						want[y*w+x] = uint32(y)<<16 | uint32(x)
					}
				}
				want = guarded(want)
				b := upload(t, q, sentinels[uint32](w*h+2*guard))
				r := engine.Range2D(engine.RoundUp(w, l[0]), engine.RoundUp(h, l[1]), l[0], l[1])
				if err := q.Launch(k, r, int32(w), int32(h), int32(guard), b); err != nil {
					t.Fatalf("Launch %+v: %v", r, err)
				}
				checkBits(t, "out", download(t, q, b), want, guard)
			})
		}
	}
}

// testIndex3D launches a 3D index writer: out[off + (z*h + y)*w + x] = z<<20 | y<<10 | x.
func (s *suite) testIndex3D(t *testing.T) {
	k := s.kernel(t, suitekernels.Index3D)
	q := s.queue(t)
	shapes := [][3]int{{1, 1, 1}, {7, 5, 3}, {33, 9, 4}, {2, 3, 70}}
	locals := [][3]int{{1, 1, 1}, {4, 4, 4}, {8, 4, 2}, {1, 1, 16}}
	for _, sh := range shapes {
		w, h, d := sh[0], sh[1], sh[2]
		if w*h*d > s.maxElems() {
			continue
		}
		var seen [][3]int
		for _, l := range locals {
			l = s.fitLocal(k, l)
			if slices.Contains(seen, l) {
				continue
			}
			seen = append(seen, l)
			t.Run(fmt.Sprintf("%dx%dx%d/local=%dx%dx%d", w, h, d, l[0], l[1], l[2]), func(t *testing.T) {
				want := make([]uint32, w*h*d)
				for z := range d {
					for y := range h {
						for x := range w {
							want[(z*h+y)*w+x] = uint32(z)<<20 | uint32(y)<<10 | uint32(x)
						}
					}
				}
				want = guarded(want)
				b := upload(t, q, sentinels[uint32](w*h*d+2*guard))
				r := engine.Range3D(engine.RoundUp(w, l[0]), engine.RoundUp(h, l[1]), engine.RoundUp(d, l[2]), l[0], l[1], l[2])
				if err := q.Launch(k, r, int32(w), int32(h), int32(d), int32(guard), b); err != nil {
					t.Fatalf("Launch %+v: %v", r, err)
				}
				checkBits(t, "out", download(t, q, b), want, guard)
			})
		}
	}
}

// testKernelOutlivesProgram checks that a kernel stays usable after its program is closed.
func (s *suite) testKernelOutlivesProgram(t *testing.T) {
	p, err := s.dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	k, err := p.Kernel(suitekernels.Iota)
	if err != nil {
		p.Close()
		t.Fatalf("Kernel: %v", err)
	}
	defer k.Close()
	if err := p.Close(); err != nil {
		t.Fatalf("Program.Close: %v", err)
	}
	q := s.queue(t)
	b := upload(t, q, sentinels[uint32](3+2*guard))
	if err := q.Launch(k, engine.Range1D(3, 1), int32(3), int32(guard), b); err != nil {
		t.Fatalf("Launch after Program.Close: %v", err)
	}
	checkBits(t, "out", download(t, q, b), guarded([]uint32{0, 1, 2}), guard)
}

// testBuildOptions checks that -D options reach the compiler.
func (s *suite) testBuildOptions(t *testing.T) {
	q := s.queue(t)
	run := func(t *testing.T, p *engine.Program, want int32) {
		k, err := p.Kernel(suitekernels.Define)
		if err != nil {
			t.Fatalf("Kernel: %v", err)
		}
		defer k.Close()
		b := upload(t, q, []int32{-1})
		if err := q.Launch(k, engine.Range1D(1, 1), b); err != nil {
			t.Fatalf("Launch: %v", err)
		}
		if got := download(t, q, b)[0]; got != want {
			t.Errorf("%s = %d, want %d", suitekernels.DefineMacro, got, want)
		}
	}
	t.Run("default", func(t *testing.T) { run(t, s.prog, suitekernels.DefineDefault) })
	t.Run("-D", func(t *testing.T) {
		p, err := s.dev.Build(suitekernels.Source, "-D"+suitekernels.DefineMacro+"=42")
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		defer p.Close()
		run(t, p, 42)
	})
}

// testElapsed times launches with device events.
func (s *suite) testElapsed(t *testing.T) {
	ctx := context.Background()
	k := s.kernel(t, suitekernels.Axpy)
	q := s.queue(t)
	l := s.locals(k)[len(s.locals(k))-1]
	for _, n := range s.fit([]int{1, s.maxElems()}) {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			r := rng(t)
			x, y := random[float32](r, n), random[float32](r, n)
			xb, yb := upload(t, q, x), upload(t, q, guarded(y))
			ev, err := q.LaunchEvent(k, engine.Range1D(engine.RoundUp(n, l), l), int32(n), int32(guard), float32(2), xb, yb)
			if err != nil {
				t.Fatalf("LaunchEvent: %v", err)
			}
			if err := ev.Wait(ctx); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			d, err := ev.Elapsed(ctx)
			if errors.Is(err, engine.ErrUnsupported) {
				// A device without usable timestamps: Timed must measure host time instead.
				hd, terr := q.Timed(ctx, func() error {
					return q.Launch(k, engine.Range1D(engine.RoundUp(n, l), l), int32(n), int32(guard), float32(2), xb, yb)
				})
				if terr != nil || hd <= 0 || s.dev.EventTiming() {
					t.Errorf("Elapsed: %v; then Timed = %v, %v with EventTiming %v, want a positive host time and EventTiming false", err, hd, terr, s.dev.EventTiming())
				}
				ev.Close()
				t.Skipf("the device reports no event timestamps (%v); Timed measured %v of host time", err, hd)
			}
			if err != nil {
				t.Fatalf("Elapsed: %v", err)
			}
			// A timer's resolution may give 0 for one work-item; the large launch must show.
			t.Logf("%d work-items: %v", n, d)
			switch {
			case d < 0:
				t.Errorf("Elapsed = %v, negative", d)
			case d > time.Minute:
				t.Errorf("Elapsed = %v, implausibly long", d)
			case d == 0 && n == s.maxElems() && n > 1 && !s.opts.ZeroElapsedOK:
				t.Errorf("Elapsed = 0 for %d work-items (set Options.ZeroElapsedOK if the timer is that coarse)", n)
			}
			if err := ev.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := ev.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if err := ev.Wait(ctx); !errors.Is(err, engine.ErrClosed) {
				t.Errorf("Wait after Close = %v, want ErrClosed", err)
			}
			if _, err := ev.Elapsed(ctx); !errors.Is(err, engine.ErrClosed) {
				t.Errorf("Elapsed after Close = %v, want ErrClosed", err)
			}
			if err := q.Finish(ctx); err != nil {
				t.Errorf("Finish: %v", err)
			}
			checkAxpy(t, download(t, q, yb), 2, x, y)
		})
	}
}

// testTimed checks Queue.Timed, which sums the device times of the events of the
// launches, fills and copies a function enqueues.
func (s *suite) testTimed(t *testing.T) {
	ctx := context.Background()
	k := s.kernel(t, suitekernels.Axpy)
	q := s.queue(t)
	n := s.maxElems()
	l := s.locals(k)[len(s.locals(k))-1]
	r := rng(t)
	x, y := random[float32](r, n), random[float32](r, n)
	xb, yb := upload(t, q, x), upload(t, q, guarded(y))
	tmp := newBuffer[float32](t, s, n)
	d, err := q.Timed(ctx, func() error {
		if err := tmp.Fill(q, 0, n, 1); err != nil {
			return err
		}
		if err := tmp.CopyFrom(q, 0, xb, 0, n); err != nil {
			return err
		}
		if _, err := q.Timed(ctx, func() error { return nil }); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("nested Timed: %v, want ErrInvalidArg", err)
		}
		return q.Launch(k, engine.Range1D(engine.RoundUp(n, l), l), int32(n), int32(guard), float32(2), tmp, yb)
	})
	if err != nil {
		t.Fatalf("Timed: %v", err)
	}
	t.Logf("fill, copy and launch of %d elements: %v", n, d)
	if d < 0 || d > time.Minute || (d == 0 && !s.opts.ZeroElapsedOK) {
		t.Errorf("Timed = %v, want a positive device time", d)
	}
	checkAxpy(t, download(t, q, yb), 2, x, y)
}

// testTimedHeld checks Queue.Timed's hold: where the queue was held (TimingHeld), the
// host's time between two launches is not counted, and a blocking call inside the timed
// function (Finish, a blocking Read, an event's Wait) lets the held commands go instead
// of waiting for the hold's limit, with every result right.
func (s *suite) testTimedHeld(t *testing.T) {
	ctx := context.Background()
	k := s.kernel(t, suitekernels.Axpy)
	q := s.queue(t)
	n := min(s.maxElems(), 4096) // kernels far shorter than the gap
	l := s.locals(k)[len(s.locals(k))-1]
	rg := engine.Range1D(engine.RoundUp(n, l), l)
	r := rng(t)
	x, y := random[float32](r, n), random[float32](r, n)
	xb, yb := upload(t, q, x), upload(t, q, guarded(y))
	const gap = 5 * time.Millisecond // under the hold's 10 ms limit
	// Up to three tries: a backend that times by the host's clock (the fake) may see its
	// thread descheduled inside a command once, not three times in a row.
	var d time.Duration
	var held bool
	adds := 0 // the times x was added to y
	for try := 0; try < 3; try++ {
		var err error
		d, err = q.Timed(ctx, func() error {
			if err := q.Launch(k, rg, int32(n), int32(guard), float32(1), xb, yb); err != nil {
				return err
			}
			time.Sleep(gap)
			return q.Launch(k, rg, int32(n), int32(guard), float32(1), xb, yb)
		})
		if err != nil {
			t.Fatalf("Timed: %v", err)
		}
		adds += 2
		held = q.TimingHeld()
		t.Logf("two launches %v apart on the host: %v of device time (held: %v)", gap, d, held)
		if !held || d < gap {
			break
		}
	}
	if held && d >= gap {
		t.Errorf("Timed = %v with the queue held, want less than the %v the host slept between the launches", d, gap)
	}
	checkNear(t, fmt.Sprintf("y + %dx", adds), download(t, q, yb)[guard:guard+n], x, y, float64(adds), float64(adds))

	// Blocking calls inside f: each must let the held commands run first.
	out := make([]float32, n)
	start := time.Now()
	d, err := q.Timed(ctx, func() error {
		if err := q.Launch(k, rg, int32(n), int32(guard), float32(-adds), xb, yb); err != nil {
			return err
		}
		if err := q.Finish(ctx); err != nil {
			return err
		}
		ev, err := q.LaunchEvent(k, rg, int32(n), int32(guard), float32(1), xb, yb)
		if err != nil {
			return err
		}
		defer ev.Close()
		if err := ev.Wait(ctx); err != nil {
			return err
		}
		if err := q.Launch(k, rg, int32(n), int32(guard), float32(-1), xb, yb); err != nil {
			return err
		}
		return yb.Read(ctx, q, guard, out)
	})
	host := time.Since(start)
	if err != nil {
		t.Fatalf("Timed with Finish, Wait and Read inside: %v", err)
	}
	t.Logf("three launches with blocking calls between them: %v of device time, %v on the host", d, host)
	if q.TimingHeld() && host >= 3*holdLimitFloor {
		t.Errorf("Timed with three blocking calls took %v on the host: the hold was not opened before them", host)
	}
	checkNear(t, fmt.Sprintf("y + %dx - %dx + x - x", adds, adds), out, x, y, 0, float64(2*adds+2))
}

// checkNear checks got against y + a x in float64, each element within a few roundings of
// the magnitudes summed (mag |x| + |y|, mag the sum of the multiples of x added).
func checkNear(t *testing.T, what string, got, x, y []float32, a, mag float64) {
	t.Helper()
	bad := 0
	for i := range x {
		exact := float64(y[i]) + a*float64(x[i])
		tol := 4 * ulp32 * (mag*math.Abs(float64(x[i])) + math.Abs(float64(y[i])))
		if g := float64(got[i]); !(math.Abs(g-exact) <= tol) {
			if bad < 5 {
				t.Errorf("%s: element %d = %v, want %v ± %.3g", what, i, got[i], exact, tol)
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d elements wrong", what, bad, len(x))
	}
}

// holdLimitFloor is the hold's limit (engine's holdLimit, 10 ms): a blocking call inside a
// held Timed call that waited it out would take at least that long.
const holdLimitFloor = 10 * time.Millisecond

// testBuildError checks that a source that does not compile gives ErrBuild and the log.
func (s *suite) testBuildError(t *testing.T) {
	p, err := s.dev.Build(suitekernels.BadSource)
	if err == nil {
		p.Close()
		t.Fatal("Build of a source with an undeclared identifier succeeded")
	}
	if !errors.Is(err, engine.ErrBuild) {
		t.Errorf("errors.Is(%v, ErrBuild) = false", err)
	}
	var be *engine.BuildError
	if !errors.As(err, &be) {
		t.Fatalf("errors.As(%v, *BuildError) = false", err)
	}
	if !strings.Contains(be.Log, suitekernels.BadIdent) {
		t.Errorf("build log does not mention %s:\n%s", suitekernels.BadIdent, be.Log)
	}
	t.Logf("build error: %v", err)
}

// testUnknownKernel checks that asking for a kernel the program lacks is an error.
func (s *suite) testUnknownKernel(t *testing.T) {
	k, err := s.prog.Kernel("prism_no_such_kernel")
	if err == nil {
		k.Close()
		t.Fatal("Kernel(\"prism_no_such_kernel\") succeeded")
	}
	t.Logf("unknown kernel: %v", err)
}
