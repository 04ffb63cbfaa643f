package kernels_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// recPart is a SplitPart that records what it is asked: the units of its probes' loads,
// the units of its probes, its share, its runs and closes. It runs nothing on its device.
type recPart struct {
	dev          *engine.Device
	probeLoads   []int
	probes       []int
	off, units   int
	runs, closes int
	fail         error // returned by Run
	out          []int // the op's result, where Run writes its device's index
	index        int
	// probeCost and runCost, where set, are how long a probe and a run of units units
	// take (slept): a device whose parts cost more in a real run than its probes said.
	probeCost, runCost func(units int) time.Duration
	// most, where positive, is the most units Load takes: a device whose memory holds a
	// share, not the whole op.
	most int
}

func (p *recPart) LoadProbe(_ context.Context, units int) error {
	p.probeLoads = append(p.probeLoads, units)
	return nil
}

func (p *recPart) RunProbe(_ context.Context, units int) error {
	if len(p.probeLoads) == 0 || units > p.probeLoads[len(p.probeLoads)-1] {
		return fmt.Errorf("probe of %d units beyond the %v loaded", units, p.probeLoads)
	}
	p.probes = append(p.probes, units)
	if p.probeCost != nil {
		time.Sleep(p.probeCost(units))
	}
	return nil
}

func (p *recPart) Load(_ context.Context, off, units int) error {
	if p.most > 0 && units > p.most {
		return fmt.Errorf("%d units do not fit the device's %d: %w", units, p.most, engine.ErrUnsupported)
	}
	p.off, p.units = off, units
	return nil
}

func (p *recPart) Run(context.Context) error {
	p.runs++
	if p.fail != nil {
		return p.fail
	}
	if p.runCost != nil {
		time.Sleep(p.runCost(p.units))
	}
	for i := p.off; i < p.off+p.units; i++ {
		p.out[i] = p.index
	}
	return nil
}

func (p *recPart) Close() error {
	p.closes++
	return nil
}

// recSplit is a split op of recParts: its result says which device ran each unit.
type recSplit struct {
	*kernels.SplitRun[*recPart]
	devs     []*engine.Device
	built    []*recPart // every part built, in order
	out      []int
	combined int
	openErr  error // returned by the open of the second device
	// cost, where set, gives each part built its probe and run costs by device index.
	cost func(i int) (probe, run func(units int) time.Duration)
}

func newRecSplit(devs []*engine.Device, o kernels.SplitOptions, total int) *recSplit {
	s := &recSplit{devs: devs, out: make([]int, total)}
	s.SplitRun = kernels.NewSplitRun("test/op", devs, o, func(_ context.Context, d *engine.Device) (*recPart, error) {
		i := slices.Index(devs, d)
		if i == 1 && s.openErr != nil {
			return nil, s.openErr
		}
		pt := &recPart{dev: d, out: s.out, index: i}
		if s.cost != nil {
			pt.probeCost, pt.runCost = s.cost(i)
		}
		s.built = append(s.built, pt)
		return pt, nil
	}, func() { s.combined++ })
	return s
}

// TestSplitRunMeasured checks a split with measured shares: every part opened once before
// the probes, each part's probe work loaded once at the plan's largest probe, the shares
// loaded end to end, every unit run by the part of its share, the result combined once
// per run once the plan is checked, and Close closing every part once.
func TestSplitRunMeasured(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	const total, granule = 1000, 10
	s := newRecSplit(devs, kernels.SplitOptions{}, total)
	if err := s.OpenAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(s.built) != len(devs) {
		t.Fatalf("OpenAll built %d parts for %d devices", len(s.built), len(devs))
	}
	if _, err := s.Plan(t.Context(), total, granule); err != nil {
		t.Fatal(err)
	}
	limit := total / len(devs) / granule * granule
	for i, pt := range s.built {
		if !slices.Equal(pt.probeLoads, []int{limit}) || len(pt.probes) == 0 || slices.Max(pt.probes) != limit {
			t.Errorf("device %d: probe loads %v, probes %v; want one load of %d units, probes up to it", i, pt.probeLoads, pt.probes, limit)
		}
	}
	if err := s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckRan(); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("CheckRan before Run: %v, want ErrInvalidArg", err)
	}
	for range 2 {
		if err := s.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CheckRan(); err != nil {
		t.Errorf("CheckRan after Run: %v", err)
	}
	// The second run checks the plan (CheckedRun: a split, or one device with others
	// predicted near it), running the op more than once; every run after it combines once.
	if s.combined < 2 {
		t.Errorf("combined %d times in 2 runs", s.combined)
	}
	before := s.combined
	if err := s.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s.combined != before+1 {
		t.Errorf("a third run combined %d times", s.combined-before)
	}
	checkRecShares(t, s, total)
	for i, pt := range s.Parts() {
		if pt == nil && s.Shares()[i].Units > 0 {
			t.Errorf("device %d has a share and no part", i)
		}
	}
	if err := errors.Join(s.Close(), s.Close()); err != nil {
		t.Fatal(err)
	}
	for i, pt := range s.built {
		if pt.closes != 1 {
			t.Errorf("part %d closed %d times", i, pt.closes)
		}
	}
	if err := s.Run(t.Context()); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Run after Close: %v, want ErrClosed", err)
	}
	if err := s.CheckRan(); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("CheckRan after Close: %v, want ErrClosed", err)
	}
}

// checkRecShares checks that every unit of the result was run by the device whose share
// holds it, and that each part with a share ran it as many times as the op ran.
func checkRecShares(t *testing.T, s *recSplit, total int) {
	t.Helper()
	off := 0
	for i, sh := range s.Shares() {
		for u := off; u < off+sh.Units; u++ {
			if s.out[u] != i {
				t.Fatalf("unit %d ran on device %d, in device %d's share (shares %+v)", u, s.out[u], i, s.Shares())
			}
		}
		off += sh.Units
	}
	if off != total {
		t.Errorf("shares %+v cover %d units of %d", s.Shares(), off, total)
	}
}

// TestSplitRunGiven checks a split with given shares: no probe; without OpenAll only the
// devices with a share are opened, at Load; with it every device of a positive fraction,
// those left without a share closed at Load.
func TestSplitRunGiven(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	f := make([]float64, len(devs))
	f[1] = 1
	const total = 100
	for _, openAll := range []bool{false, true} {
		s := newRecSplit(devs, kernels.SplitOptions{Fractions: f}, total)
		if openAll {
			if err := s.OpenAll(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Plan(t.Context(), total, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.Load(t.Context()); err != nil {
			t.Fatal(err)
		}
		if len(s.built) != 1 || s.built[0].dev != devs[1] || len(s.built[0].probes) != 0 {
			t.Fatalf("OpenAll %v: built %d parts (%+v), want one, the second device's, not probed", openAll, len(s.built), s.built)
		}
		if err := s.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		checkRecShares(t, s, total)
		if s.Parts()[0] != nil {
			t.Errorf("OpenAll %v: the device without a share has a part", openAll)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// A device of a positive fraction left without a share is opened by OpenAll and
	// closed by Load.
	f = kerneltest.Evenly(len(devs))
	s := newRecSplit(devs, kernels.SplitOptions{Fractions: f}, 1)
	if err := s.OpenAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Plan(t.Context(), 1, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	left := 0
	for i, pt := range s.built {
		if s.Shares()[i].Units == 0 {
			left++
			if s.Parts()[i] != nil || pt.closes != 1 {
				t.Errorf("device %d without a share: part %v, closed %d times", i, s.Parts()[i], pt.closes)
			}
		}
	}
	if left == 0 {
		t.Fatalf("shares %+v leave no device out", s.Shares())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for i, pt := range s.built {
		if pt.closes != 1 {
			t.Errorf("part %d closed %d times", i, pt.closes)
		}
	}
}

// TestSplitRunErrors checks that a part that fails to run fails the run with its error,
// its device named and the op's prefix once, leaving nothing to verify; and that a device
// that cannot be opened fails OpenAll, no part recorded for it.
func TestSplitRunErrors(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	s := newRecSplit(devs, kernels.SplitOptions{Fractions: kerneltest.Evenly(len(devs))}, 10)
	defer s.Close()
	if _, err := s.Plan(t.Context(), 10, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	last := s.Parts()[len(devs)-1]
	last.fail = fmt.Errorf("device lost: %w", engine.ErrUnavailable)
	err := s.Run(t.Context())
	if !errors.Is(err, engine.ErrUnavailable) || !strings.HasPrefix(err.Error(), "kernels: test/op: "+devs[len(devs)-1].ID()+": device lost") {
		t.Errorf("Run with a failing part: %v; want its error, prefixed by the op and the device", err)
	}
	if err := s.CheckRan(); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("CheckRan after a failed run: %v, want ErrInvalidArg", err)
	}
	if s.combined != 1 {
		t.Errorf("combined %d times, want once (the failed run combines nothing)", s.combined)
	}

	// Given fractions, a device with a share that cannot run the op fails OpenAll.
	s2 := newRecSplit(devs, kernels.SplitOptions{Fractions: kerneltest.Evenly(len(devs))}, 10)
	s2.openErr = fmt.Errorf("no fp64: %w", engine.ErrUnsupported)
	if err := s2.OpenAll(t.Context()); !errors.Is(err, engine.ErrUnsupported) {
		t.Errorf("OpenAll with a device given a share that cannot run the op: %v", err)
	}
	if len(s2.built) != 1 {
		t.Errorf("%d parts built, want the first device's only", len(s2.built))
	}
	if err := s2.Close(); err != nil || s2.built[0].closes != 1 {
		t.Errorf("Close: %v, the first part closed %d times", err, s2.built[0].closes)
	}
	// Another error than unsupported fails OpenAll with measured shares too.
	s3 := newRecSplit(devs, kernels.SplitOptions{}, 10)
	s3.openErr = fmt.Errorf("out of memory: %w", engine.ErrOutOfMemory)
	if err := s3.OpenAll(t.Context()); !errors.Is(err, engine.ErrOutOfMemory) {
		t.Errorf("OpenAll with a device that fails to build: %v", err)
	}
	s3.Close()
	var none *kernels.SplitRun[*recPart]
	if err := none.Close(); err != nil {
		t.Errorf("Close of a nil runner: %v", err)
	}
}

// TestSplitRunUnable checks that, with measured shares, a device that cannot run the op
// (ErrUnsupported at its part's build) is left out: OpenAll succeeds, the plan gives it no
// share and says why, every unit runs on the others, and the plan's summary names it.
func TestSplitRunUnable(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	const total = 1000
	s := newRecSplit(devs, kernels.SplitOptions{}, total)
	defer s.Close()
	s.openErr = fmt.Errorf("kernels: test/op: %s has no fp64: %w", devs[1].ID(), engine.ErrUnsupported)
	if err := s.OpenAll(t.Context()); err != nil {
		t.Fatalf("OpenAll with one device that cannot run the op: %v", err)
	}
	shares, err := s.Plan(t.Context(), total, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(shares) != len(devs) || shares[1].Units != 0 || !strings.Contains(shares[1].Unable, "has no fp64") || shares[1].Device != devs[1].ID() {
		t.Fatalf("shares %+v; want device 1 without a share, saying why", shares)
	}
	for i, sh := range shares {
		if i != 1 && sh.Unable != "" {
			t.Errorf("device %d: Unable %q", i, sh.Unable)
		}
	}
	if sum := kernels.PlanSummary(shares); !strings.Contains(sum, devs[1].ID()+" cannot run it: ") || !strings.Contains(sum, "has no fp64") {
		t.Errorf("PlanSummary: %q; want device 1 named with its reason", sum)
	}
	if err := s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkRecShares(t, s, total)
	if len(devs) == 2 {
		if sum := kernels.PlanSummary(shares); !strings.HasPrefix(sum, "one device: "+devs[0].ID()+" (") {
			t.Errorf("PlanSummary of two devices, one able: %q", sum)
		}
	}
}

// TestSplitRunChecked checks the plan's check on the second Run: parts whose probes say a
// split of two devices pays (both fast, the first a little faster) and whose real runs
// say otherwise (the second device's part costs 60 ms more in a run than its probes
// said) end on the first device alone, the second's part closed, both times in the
// shares and the summary; parts whose runs cost what their probes did keep the split, its
// layout restored. Times are slept, a factor of three or more apart.
func TestSplitRunChecked(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)[:2]
	const total, granule = 1000, 10
	perUnit := func(d time.Duration) func(int) time.Duration {
		return func(units int) time.Duration { return time.Duration(units) * d }
	}
	// A run of the second device's part costs more than its probes said: "slow" 60 ms more,
	// which makes the split far slower than the first device alone (18 ms); "even" as much
	// more as makes its part take 18.6 ms whatever its share (the parts run at once, so the
	// split takes about that), a loss within the check's noise that does not keep the split
	// (planCheckGain; a fixed 8.8 ms more made the split of a 600/400 plan 1.05x the device
	// alone, and kept it); "fast" nothing more, which leaves the split about twice as fast.
	for _, c := range []struct {
		name string
		part time.Duration // the second device's part's time in a run, 0: its probes'
		slow bool
	}{{"slow", 0, true}, {"even", 18600 * time.Microsecond, true}, {"fast", 0, false}} {
		slow := c.slow
		t.Run(c.name, func(t *testing.T) {
			var extra time.Duration // set once the plan is known
			s := newRecSplit(devs, kernels.SplitOptions{}, total)
			s.cost = func(i int) (probe, run func(int) time.Duration) {
				d := 20 * time.Microsecond
				if i == 0 {
					d = 18 * time.Microsecond
				}
				run = perUnit(d)
				if i == 1 && slow {
					run = func(units int) time.Duration { return time.Duration(units)*d + extra }
				}
				return perUnit(d), run
			}
			defer s.Close()
			if err := s.OpenAll(t.Context()); err != nil {
				t.Fatal(err)
			}
			planned, err := s.Plan(t.Context(), total, granule)
			if err != nil {
				t.Fatal(err)
			}
			if planned[0].Units == 0 || planned[1].Units == 0 {
				t.Fatalf("the probes should make the plan split: %+v (%s)", planned, kernels.PlanSummary(planned))
			}
			switch {
			case c.part > 0:
				extra = max(0, c.part-time.Duration(planned[1].Units)*20*time.Microsecond)
			case slow:
				extra = 60 * time.Millisecond
			}
			if err := s.Load(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := s.Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := s.Shares(); got[0].Ran != 0 {
				t.Errorf("the first run checked the plan: %+v", got)
			}
			if err := s.Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			sh := s.Shares()
			sum := kernels.PlanSummary(sh)
			t.Logf("%s", sum)
			if sh[0].Ran <= 0 || sh[0].RanOne <= 0 || sh[1].Ran != sh[0].Ran || sh[1].RanOne != sh[0].RanOne {
				t.Fatalf("the second run left no check in the shares: %+v", sh)
			}
			checkRecShares(t, s, total)
			runs0, runs1 := s.built[0].runs, s.built[1].runs
			if err := s.Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			checkRecShares(t, s, total)
			if slow {
				if sh[0].Units != total || sh[1].Units != 0 || sh[0].Fraction != 1 {
					t.Errorf("a split measured %v against %v alone kept: %+v", sh[0].Ran, sh[0].RanOne, sh)
				}
				if !strings.HasPrefix(sum, "one device: "+devs[0].ID()+" (the planned split ran") {
					t.Errorf("summary %q; want one device, saying what the split ran", sum)
				}
				if s.built[1].closes != 1 || s.Parts()[1] != nil {
					t.Errorf("the second device's part: %d closes, part %v; want it closed", s.built[1].closes, s.Parts()[1])
				}
				if s.built[0].runs != runs0+1 {
					t.Errorf("a third run ran the first device's part %d times", s.built[0].runs-runs0)
				}
				return
			}
			if sh[0].Units != planned[0].Units || sh[1].Units != planned[1].Units {
				t.Errorf("a split measured %v against %v alone was not kept: %+v, planned %+v", sh[0].Ran, sh[0].RanOne, sh, planned)
			}
			if !strings.HasPrefix(sum, "split over 2 devices") || !strings.Contains(sum, "; ran ") {
				t.Errorf("summary %q; want the split, with what it ran", sum)
			}
			if s.built[0].runs != runs0+1 || s.built[1].runs != runs1+1 {
				t.Errorf("a third run ran the parts %d and %d times", s.built[0].runs-runs0, s.built[1].runs-runs1)
			}
		})
	}
}

// TestSplitRunCheckedTooBig checks the plan's check where the device alone cannot hold
// the whole op (its Load refuses more than its share): the split stands, verified, and
// the shares and summary say why the device alone was not timed.
func TestSplitRunCheckedTooBig(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)[:2]
	const total, granule = 1000, 10
	s := newRecSplit(devs, kernels.SplitOptions{}, total)
	s.cost = func(i int) (probe, run func(int) time.Duration) {
		d := func(units int) time.Duration { return time.Duration(units) * 20 * time.Microsecond }
		return d, func(units int) time.Duration { return d(units) + 60*time.Millisecond } // a split that loses
	}
	defer s.Close()
	if err := s.OpenAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, pt := range s.built {
		pt.most = total - 1
	}
	planned := planSplit(t, s, total, granule)
	for range 3 {
		if err := s.Run(t.Context()); err != nil {
			t.Fatalf("a split whose device alone cannot hold the op: %v", err)
		}
	}
	sh := s.Shares()
	checkRecShares(t, s, total)
	if sh[0].Units != planned[0].Units || sh[0].Ran <= 0 || sh[0].RanOne != 0 || !strings.Contains(sh[0].RanOneErr, "do not fit") {
		t.Errorf("shares %+v; want the planned split, its time, and why the device alone was not timed", sh)
	}
	if sum := kernels.PlanSummary(sh); !strings.Contains(sum, "alone could not take the work: ") {
		t.Errorf("summary %q; want why the device alone was not timed", sum)
	}
}

// TestSplitRunCheckedSpike: one slow run of a part during the plan's check (60 ms once,
// as a preempted thread or a page fault storm gives) does not decide it: the check keeps
// the fastest of its timed runs, and the split that is faster stands.
func TestSplitRunCheckedSpike(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)[:2]
	const total, granule = 1000, 10
	s := newRecSplit(devs, kernels.SplitOptions{}, total)
	s.cost = func(i int) (probe, run func(int) time.Duration) {
		d := 20 * time.Microsecond
		if i == 0 {
			d = 18 * time.Microsecond
		}
		probe = func(units int) time.Duration { return time.Duration(units) * d }
		calls := 0
		run = func(units int) time.Duration {
			calls++
			if i == 1 && calls == 2 { // the split's first timed run in the check
				return time.Duration(units)*d + 60*time.Millisecond
			}
			return time.Duration(units) * d
		}
		return probe, run
	}
	defer s.Close()
	if err := s.OpenAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	planned := planSplit(t, s, total, granule)
	for range 2 {
		if err := s.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	sh := s.Shares()
	t.Logf("%s", kernels.PlanSummary(sh))
	if sh[0].Units != planned[0].Units || sh[1].Units != planned[1].Units {
		t.Errorf("one slow run decided the check: split %v against %v alone: %+v", sh[0].Ran, sh[0].RanOne, sh)
	}
	if sh[0].Ran >= 60*time.Millisecond {
		t.Errorf("the check kept the slow run's %v, not the fastest", sh[0].Ran)
	}
	checkRecShares(t, s, total)
}

// planSplit plans the split of total units in granules, which the probes must make a
// split over the first two devices, and loads the shares.
func planSplit(t *testing.T, s *recSplit, total, granule int) []kernels.Share {
	t.Helper()
	planned, err := s.Plan(t.Context(), total, granule)
	if err != nil {
		t.Fatal(err)
	}
	if planned[0].Units == 0 || planned[1].Units == 0 {
		t.Fatalf("the probes should make the plan split: %+v", planned)
	}
	if err := s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	return planned
}

// TestSplitRunCheckedEveryDevice: the probes rank the devices wrongly (device 0 probes
// twice as fast as device 1 but runs the op two and a half times slower), so that the
// split they plan beats device 0 alone and loses to device 1 alone: the check times both
// devices alone and gives the op to device 1.
func TestSplitRunCheckedEveryDevice(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)[:2]
	const total, granule = 1000, 10
	s := newRecSplit(devs, kernels.SplitOptions{}, total)
	s.cost = func(i int) (probe, run func(int) time.Duration) {
		p, r := 10*time.Microsecond, 30*time.Microsecond
		if i == 1 {
			p, r = 20*time.Microsecond, 12*time.Microsecond
		}
		return func(units int) time.Duration { return time.Duration(units) * p },
			func(units int) time.Duration { return time.Duration(units) * r }
	}
	defer s.Close()
	if err := s.OpenAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	planned := planSplit(t, s, total, granule)
	if planned[0].Alone >= planned[1].Alone {
		t.Fatalf("the probes should predict device 0 the faster alone: %+v", planned)
	}
	for range 2 {
		if err := s.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	sh := s.Shares()
	t.Logf("%s", kernels.PlanSummary(sh))
	if sh[1].Units != total || sh[0].Units != 0 {
		t.Errorf("shares %+v: want the whole op on device 1, the faster alone", sh)
	}
	checkRecShares(t, s, total)
}

// TestSplitRunCheckedOneDevice: a plan that gives the op to one device (the two devices
// share one engine, so that a split is predicted no faster) is checked against the other
// device where that was predicted within oneCheckMargin of it alone: the op goes to the
// device that runs it faster, and the summary says what the check found; a device
// predicted further off is not timed.
func TestSplitRunCheckedOneDevice(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)[:2]
	const total, granule = 1000, 10
	for _, c := range []struct {
		name    string
		probe1  time.Duration    // per unit: device 1's probes (device 0's take 18 us)
		runs    [2]time.Duration // per unit: the planned device's runs, the other's
		other   bool             // the op goes to the other device
		checked bool
	}{
		{"other faster", 18 * time.Microsecond, [2]time.Duration{25 * time.Microsecond, 18 * time.Microsecond}, true, true},
		{"planned faster", 18 * time.Microsecond, [2]time.Duration{18 * time.Microsecond, 25 * time.Microsecond}, false, true},
		{"other far", 40 * time.Microsecond, [2]time.Duration{25 * time.Microsecond, 18 * time.Microsecond}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A probe that starts while the other device's runs costs 30 ms more (two
			// devices that contend for one host), so that the planner sees a split's
			// fixed cost outweigh its gain.
			var active atomic.Int32
			probeOf := func(per time.Duration) func(int) time.Duration {
				return func(units int) time.Duration { // sleeps itself, so that active spans the probe
					defer active.Add(-1)
					d := time.Duration(units) * per
					if active.Add(1) > 1 {
						d += 30 * time.Millisecond
					}
					time.Sleep(d)
					return 0
				}
			}
			var runPer [2]time.Duration // each device's cost a unit in a run, set once planned
			runOf := func(i int) func(int) time.Duration {
				return func(units int) time.Duration { return time.Duration(units) * runPer[i] }
			}
			s := newRecSplit(devs, kernels.SplitOptions{}, total)
			s.cost = func(i int) (probe, run func(int) time.Duration) {
				if i == 0 {
					return probeOf(18 * time.Microsecond), runOf(0)
				}
				return probeOf(c.probe1), runOf(1)
			}
			defer s.Close()
			if err := s.OpenAll(t.Context()); err != nil {
				t.Fatal(err)
			}
			planned, err := s.Plan(t.Context(), total, granule)
			if err != nil {
				t.Fatal(err)
			}
			p := slices.IndexFunc(planned, func(sh kernels.Share) bool { return sh.Units == total })
			if p < 0 || !c.checked && p != 0 {
				t.Fatalf("the probes should give the op to one device (device 0 where device 1 probes slower): %+v (%s)", planned, kernels.PlanSummary(planned))
			}
			o := 1 - p
			if near := float64(planned[o].Alone) <= 1.10*float64(planned[p].Alone); near != c.checked {
				t.Fatalf("device %d predicted %v alone against %v: near %v, want %v (oneCheckMargin 1.10)", o, planned[o].Alone, planned[p].Alone, near, c.checked)
			}
			runPer[p], runPer[o] = c.runs[0], c.runs[1]
			want := p
			if c.other {
				want = o
			}
			if err := s.Load(t.Context()); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if err := s.Run(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			sh := s.Shares()
			sum := kernels.PlanSummary(sh)
			t.Logf("%s", sum)
			checkRecShares(t, s, total)
			if sh[want].Units != total {
				t.Errorf("shares %+v: want the whole op on device %d", sh, want)
			}
			built := func(i int) *recPart {
				for _, pt := range s.built {
					if pt.index == i {
						return pt
					}
				}
				t.Fatalf("no part of device %d built", i)
				return nil
			}
			if !c.checked {
				if sh[0].Ran != 0 || sh[0].Planned != "" || built(o).runs != 0 {
					t.Errorf("a device predicted %v alone against %v was timed alone: shares %+v, its part ran %d times", planned[o].Alone, planned[p].Alone, sh, built(o).runs)
				}
				return
			}
			if sh[0].Planned != devs[p].ID() || sh[1].Planned != devs[p].ID() || sh[0].Ran <= 0 || sh[0].RanOne <= 0 || sh[1].Ran != sh[0].Ran {
				t.Errorf("shares %+v: want the planned device and both times on every share", sh)
			}
			if w := "one device: " + devs[want].ID() + " ("; !strings.HasPrefix(sum, w) {
				t.Errorf("summary %q; want it to start %q", sum, w)
			}
			words := "; checked: it ran "
			if c.other {
				words = "; the probes favoured " + devs[p].ID() + ", which ran "
			}
			if !strings.Contains(sum, words) {
				t.Errorf("summary %q; want %q", sum, words)
			}
			if c.other && (built(p).closes != 1 || s.Parts()[p] != nil) {
				t.Errorf("the planned device's part: %d closes; want it closed", built(p).closes)
			}
		})
	}
}

// startPart is a recPart that is also a SplitStarter: Start and Finish append to a log
// the run's order, and Finish writes the share's units as Run does.
type startPart struct {
	*recPart
	log        *[]string
	mu         *sync.Mutex
	startFail  error
	probeUnits int
}

func (p *startPart) note(what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	*p.log = append(*p.log, fmt.Sprintf("%s %d", what, p.index))
}

func (p *startPart) Start(context.Context) error {
	p.note("start")
	return p.startFail
}

func (p *startPart) StartProbe(ctx context.Context, units int) error {
	p.note("start probe")
	p.probeUnits = units
	return p.startFail
}

func (p *startPart) FinishProbe(ctx context.Context) error {
	p.note("finish probe")
	return p.RunProbe(ctx, p.probeUnits)
}

func (p *startPart) Finish(context.Context) error {
	p.note("finish")
	for i := p.off; i < p.off+p.units; i++ {
		p.out[i] = p.index
	}
	return nil
}

// TestSplitRunStarted checks a split whose parts are SplitStarters: every part with a
// share started, in device order, before any is finished; each finished once, in device
// order; Run never called; every unit written by its part. A start that fails stops the starts after it,
// the parts started before it are still finished, the error names its device, and the
// parts never started are not finished.
func TestSplitRunStarted(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	var log []string
	var mu sync.Mutex
	out := make([]int, 12)
	var built []*startPart
	s := kernels.NewSplitRun("test/op", devs, kernels.SplitOptions{Fractions: kerneltest.Evenly(len(devs))}, func(_ context.Context, d *engine.Device) (*startPart, error) {
		pt := &startPart{recPart: &recPart{dev: d, out: out, index: slices.Index(devs, d)}, log: &log, mu: &mu}
		built = append(built, pt)
		return pt, nil
	}, nil)
	defer s.Close()
	if _, err := s.Plan(t.Context(), len(out), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	n := len(devs)
	for i, e := range log[:n] {
		if want := fmt.Sprintf("start %d", i); e != want {
			t.Fatalf("log %q: entry %d is %q, want %q (every start first, in device order)", log, i, e, want)
		}
	}
	for i, e := range log[n:] {
		if want := fmt.Sprintf("finish %d", i); e != want {
			t.Fatalf("log %q: entry %d is %q, want %q (each finished once, in device order)", log, n+i, e, want)
		}
	}
	for i, pt := range built {
		if pt.runs != 0 {
			t.Errorf("part %d: Run called %d times; a starter is started and finished", i, pt.runs)
		}
		for u := pt.off; u < pt.off+pt.units; u++ {
			if out[u] != i {
				t.Fatalf("unit %d written by part %d, want %d", u, out[u], i)
			}
		}
	}

	log = nil
	built[1].startFail = fmt.Errorf("launch refused: %w", engine.ErrInvalidArg)
	err := s.Run(t.Context())
	if !errors.Is(err, engine.ErrInvalidArg) || !strings.HasPrefix(err.Error(), "kernels: test/op: "+devs[1].ID()+": launch refused") {
		t.Errorf("Run with a failing start: %v; want its error, prefixed by the op and the device", err)
	}
	want := []string{"start 0", "start 1", "finish 0"}
	if !slices.Equal(log, want) {
		t.Errorf("log of a run whose second start fails: %q, want %q (the first part finished, none after started)", log, want)
	}
}

// TestSplitRunStartedProbes checks that the planner times a split of SplitStarters' probes
// as a run runs the parts: the fixed cost's splits start every device's probe in device
// order, then finish each in order, and the probes run so are the ones loaded.
func TestSplitRunStartedProbes(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	var log []string
	var mu sync.Mutex
	out := make([]int, 1<<12)
	s := kernels.NewSplitRun("test/op", devs, kernels.SplitOptions{}, func(_ context.Context, d *engine.Device) (*startPart, error) {
		return &startPart{recPart: &recPart{dev: d, out: out, index: slices.Index(devs, d)}, log: &log, mu: &mu}, nil
	}, nil)
	defer s.Close()
	if _, err := s.Plan(t.Context(), len(out), 16); err != nil {
		t.Fatal(err)
	}
	n := len(devs)
	var want []string
	for _, what := range []string{"start probe", "finish probe"} {
		for i := range n {
			want = append(want, fmt.Sprintf("%s %d", what, i))
		}
	}
	runs := 0
	for at := 0; at+len(want) <= len(log); at++ {
		if slices.Equal(log[at:at+len(want)], want) {
			runs++
			at += len(want) - 1
		}
	}
	if runs == 0 {
		t.Fatalf("log %q: no split of probes started in device order and then finished in order (want %q)", log, want)
	}
	for _, e := range log {
		if e == "start 0" || e == "finish 0" {
			t.Errorf("log %q: planning ran a share (%q); it runs probes only", log, e)
		}
	}
}

// TestSplitRunPlacementGuard: a runner set up for sharded data says so only once its family
// has said how it runs there (SetSharded); before, it says host, as it would run, and
// Place refuses to lay sharded data out without the family's Sharded.
func TestSplitRunPlacementGuard(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	out := make([]int, 8)
	s := kernels.NewSplitRun("test/op", devs, kernels.SplitOptions{Fractions: kerneltest.Evenly(len(devs)), Placement: kernels.PlaceSharded}, func(_ context.Context, d *engine.Device) (*recPart, error) {
		return &recPart{dev: d, out: out, index: slices.Index(devs, d)}, nil
	}, nil)
	defer s.Close()
	if p := s.Placement(); p != kernels.PlaceHost {
		t.Errorf("placement without the family's Sharded: %v, want host", p)
	}
	if _, err := s.Plan(t.Context(), len(out), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Place(t.Context()); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Place of sharded data without the family's Sharded: %v, want invalid argument", err)
	}
	s.SetSharded(kernels.Sharded{Scatter: func(context.Context) error { return nil }, Run: func(context.Context) error { return nil }, Release: func() error { return nil }})
	if p := s.Placement(); p != kernels.PlaceSharded {
		t.Errorf("placement with the family's Sharded: %v, want sharded", p)
	}
}

// probePart is a recPart whose probe starts and finishes in two halves
// (kernels.ProbeStarter) but whose run does not (no SplitStarter).
type probePart struct {
	*recPart
	log        *[]string
	probeUnits int
}

func (p *probePart) StartProbe(_ context.Context, units int) error {
	*p.log = append(*p.log, fmt.Sprintf("start probe %d", p.index))
	p.probeUnits = units
	return nil
}

func (p *probePart) FinishProbe(ctx context.Context) error {
	*p.log = append(*p.log, fmt.Sprintf("finish probe %d", p.index))
	return p.RunProbe(ctx, p.probeUnits)
}

// TestSplitRunProbeStarters: a family whose probes start in two halves but whose runs do
// not is timed so on sharded data (its sharded run enqueues each part in turn, then
// waits), and a goroutine a device on host data, as its parts run there.
func TestSplitRunProbeStarters(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	for _, place := range []kernels.Placement{kernels.PlaceHost, kernels.PlaceSharded} {
		var log []string
		out := make([]int, 1<<12)
		s := kernels.NewSplitRun("test/op", devs, kernels.SplitOptions{Placement: place}, func(_ context.Context, d *engine.Device) (*probePart, error) {
			return &probePart{recPart: &recPart{dev: d, out: out, index: slices.Index(devs, d)}, log: &log}, nil
		}, nil)
		if place == kernels.PlaceSharded {
			s.SetSharded(kernels.Sharded{Scatter: func(context.Context) error { return nil }, Run: func(context.Context) error { return nil }, Release: func() error { return nil }})
		}
		if _, err := s.Plan(t.Context(), len(out), 16); err != nil {
			t.Fatal(err)
		}
		s.Close()
		started := slices.Contains(log, "start probe 0")
		if want := place == kernels.PlaceSharded; started != want {
			t.Errorf("%s data: probes started in two halves: %v, want %v (log %q)", place, started, want, log)
		}
		if started && !slices.Contains(log, fmt.Sprintf("finish probe %d", len(devs)-1)) {
			t.Errorf("%s data: log %q: every started probe is finished", place, log)
		}
	}
}
