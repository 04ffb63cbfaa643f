package kernels

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prism-compute/prism/engine"
)

// SplitPart is one device's part of a split operation, as its family builds it: what runs
// the op on the device (its kernels, its queue), the range of the work it holds and how it
// runs that range. A SplitRun calls the methods of one part from one goroutine at a time;
// the parts of different devices run concurrently.
type SplitPart interface {
	// LoadProbe gives the part the work it times probes on: the first units units of the
	// op (the family caps them at the op's work, or repeats its input past the end),
	// replacing an earlier probe's.
	LoadProbe(ctx context.Context, units int) error
	// RunProbe runs the first units units of the probe's work as Run runs a share, its
	// result read back to the host apart from the op's result.
	RunProbe(ctx context.Context, units int) error
	// Load gives the part its share: units units from off. The probe's work is released,
	// and so is an earlier share's: a plan's check may load a part more than once.
	Load(ctx context.Context, off, units int) error
	// Run runs the share and reads its result back into its place in the op's result.
	Run(ctx context.Context) error
	// Close releases what the part holds.
	Close() error
}

// SplitStarter is a SplitPart whose Run is Start, then Finish: Start enqueues the share's
// work on the part's queue and returns without waiting for it, Finish waits for that work
// and reads its result back. Where every part with a share is one, a run starts them all
// from the calling goroutine, in device order, before anything waits, then finishes them
// in the same order and goroutine: no device's work waits for a goroutine to be
// scheduled. It is for parts whose results are small (a reduction's value, a row's):
// large reads back to the host go faster side by side, each part run in its own
// goroutine. (Each part in a goroutine of its own, the second device's launch came 10 to
// 80 us after the first on two H200, 2026-11-30: a cgo call that blocks in the driver
// keeps its P, and the idle thread that takes the other goroutine is that slow to wake.
// A 32M rowmax split of two parts of 80 us then took 86 to 185 us a run; started
// together and finished in order, 87 to 123.)
type SplitStarter interface {
	ProbeStarter
	Start(ctx context.Context) error
	Finish(ctx context.Context) error
}

// ProbeStarter is a SplitPart whose probe runs in two halves, as a SplitStarter's run
// does: StartProbe enqueues what RunProbe runs and returns without waiting, FinishProbe
// waits for it and reads back what RunProbe reads. The planner then times a split's fixed
// cost on probes started in device order from one goroutine and finished in order, as
// the parts run: a SplitStarter's always, another family's on sharded data, whose run
// enqueues each part in turn and then waits (its probes read nothing back). Timed a
// goroutine a device instead, the second device's probe can start tens of microseconds
// late, and the fixed cost reads that much too high.
type ProbeStarter interface {
	SplitPart
	StartProbe(ctx context.Context, units int) error
	FinishProbe(ctx context.Context) error
}

// SplitRun is what every split operation does around its parts: one part per device,
// opened once and only where needed; the shares planned (PlanShares) with probes of each
// part, whose work is loaded once, at the largest size the plan asks for; every share
// loaded onto its part; the parts run concurrently, their errors joined in device order,
// and their results combined. A family embeds a *SplitRun in its SplitInstance and keeps
// how it divides the work (its SplitPart) and how it combines the parts' results. Not
// safe for concurrent use.
type SplitRun[P SplitPart] struct {
	name    string
	devs    []*engine.Device
	o       SplitOptions
	open    func(ctx context.Context, dev *engine.Device) (P, error)
	combine func()
	parts   []P // the zero P where none is open
	opened  []bool
	unable  []error // per device: why it cannot run the op (OpenAll), nil where it can
	shares  []Share
	ran     bool
	closed  bool
	runs    int // Run (or CheckedRun) calls begun: the plan is checked on the second
	sharded *Sharded
}

// Sharded is how a family's split runs on sharded data (SplitOptions.Placement
// PlaceSharded), given to SplitRun.SetSharded: the runner then lays the data out (Place),
// runs the op and checks its plan (Run, Recheck) and releases the data (Close) through it.
type Sharded struct {
	// Scatter lays the op's data out over the devices with a share (SplitRun.Sharing), as
	// the shares are now, releasing the probes' work.
	Scatter func(ctx context.Context) error
	// Run runs the op where its data lies, leaves the result there and waits for it.
	Run func(ctx context.Context) error
	// Release releases what Scatter and Run made. It is called before each new Scatter of a
	// plan's check and by Close, and must be safe to repeat.
	Release func() error
}

// NewSplitRun returns the runner of the op name (as errors say it) across devs, checked
// by the caller (at least one, none nil), with o's fractions. open builds a part on a
// device (releasing what it built when it fails), ctx bounding its waits; combine, when
// not nil, combines the parts' results after every part has run.
func NewSplitRun[P SplitPart](name string, devs []*engine.Device, o SplitOptions, open func(ctx context.Context, dev *engine.Device) (P, error), combine func()) *SplitRun[P] {
	return &SplitRun[P]{name: name, devs: devs, o: o, open: open, combine: combine,
		parts: make([]P, len(devs)), opened: make([]bool, len(devs)), unable: make([]error, len(devs))}
}

// Open returns the part of device i, built on the first call (ctx bounding the build).
func (r *SplitRun[P]) Open(ctx context.Context, i int) (P, error) {
	if !r.opened[i] {
		pt, err := r.open(ctx, r.devs[i])
		if err != nil {
			return pt, err
		}
		r.parts[i], r.opened[i] = pt, true
	}
	return r.parts[i], nil
}

// Sharing opens, in device order, the part of every device with a share, and returns
// them with their shares' units: the devices a split on sharded data scatters over.
func (r *SplitRun[P]) Sharing(ctx context.Context) ([]P, []int, error) {
	var parts []P
	var units []int
	for i, sh := range r.shares {
		if sh.Units == 0 {
			continue
		}
		pt, err := r.Open(ctx, i)
		if err != nil {
			return nil, nil, err
		}
		parts, units = append(parts, pt), append(units, sh.Units)
	}
	return parts, units, nil
}

// OpenAll opens, in device order, the part of every device that may get a share: all of
// them when the shares are measured, those of a positive fraction when they are given (as
// checked fractions, one per device), ctx bounding each build. When the shares are
// measured, a device that cannot run the op (an error wrapping engine.ErrUnsupported: a
// device without fp64 given a float64 op) is left out of the plan, which gives it no share
// and says why (Share.Unable), as long as one device can run it; given fractions, or
// where none can, such a device is an error before any is timed.
func (r *SplitRun[P]) OpenAll(ctx context.Context) error {
	var unable []error
	for i := range r.devs {
		if r.o.Fractions != nil && r.o.Fractions[i] == 0 {
			continue
		}
		if _, err := r.Open(ctx, i); err != nil {
			if r.o.Fractions != nil || !errors.Is(err, engine.ErrUnsupported) {
				return err
			}
			r.unable[i] = err
			unable = append(unable, err)
		}
	}
	if len(unable) == len(r.devs) {
		return unable[0] // none can: the first device's reason, as with given fractions
	}
	return nil
}

// able returns the devices that can run the op (all but those OpenAll left out) and, for
// each, its index in r.devs.
func (r *SplitRun[P]) able() ([]*engine.Device, []int) {
	var devs []*engine.Device
	var at []int
	for i, d := range r.devs {
		if r.unable[i] == nil {
			devs, at = append(devs, d), append(at, i)
		}
	}
	return devs, at
}

// Plan divides total units of work in granules among the devices (PlanShares). Where it
// measures, it probes each device's part, opened where it was not: the part loads the
// work of the plan's largest probe on its first probe and every probe runs on it. Plan
// returns the shares, the runner's own: a family that plans in one unit and loads in
// another rewrites them before Load.
func (r *SplitRun[P]) Plan(ctx context.Context, total, granule int) ([]Share, error) {
	limit := probeLimit(total, granule, len(r.devs))
	loaded := make([]int, len(r.devs))
	// ready returns dev's part with a probe of at least units units loaded.
	ready := func(ctx context.Context, dev *engine.Device, units int) (P, error) {
		var zero P
		i := slices.Index(r.devs, dev)
		if i < 0 || units < 1 {
			return zero, fmt.Errorf("kernels: %s: probe of %d units on %s: %w", r.name, units, dev.ID(), engine.ErrInvalidArg)
		}
		pt, err := r.Open(ctx, i)
		if err != nil {
			return zero, err
		}
		if loaded[i] < units {
			most := max(limit, units)
			if err := pt.LoadProbe(ctx, most); err != nil {
				return zero, err
			}
			loaded[i] = most
		}
		return pt, nil
	}
	probe := func(ctx context.Context, dev *engine.Device, units int) (time.Duration, error) {
		pt, err := ready(ctx, dev, units)
		if err != nil {
			return 0, err
		}
		start := time.Now()
		if err := pt.RunProbe(ctx, units); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	devs, at := r.able()
	whole := startedProbe(devs, ready, r.sharded != nil && r.o.Placement == PlaceSharded)
	if len(devs) == len(r.devs) {
		var err error
		r.shares, err = PlanSharesSplit(ctx, r.devs, total, granule, r.o, probe, whole)
		return r.shares, err
	}
	// The devices that cannot run the op get no share and are not probed.
	some, err := PlanSharesSplit(ctx, devs, total, granule, r.o, probe, whole)
	if err != nil {
		return nil, err
	}
	r.shares = make([]Share, len(r.devs))
	for i, d := range r.devs {
		r.shares[i] = Share{Device: d.ID()}
		if r.unable[i] != nil {
			r.shares[i].Unable = r.unable[i].Error()
		}
	}
	for j, i := range at {
		r.shares[i] = some[j]
	}
	return r.shares, nil
}

// Load closes the parts of the devices without a share and gives every other device's
// part (opened where it was not) its share, the shares laid end to end in device order.
func (r *SplitRun[P]) Load(ctx context.Context) error {
	if err := r.closeIdle(); err != nil {
		return err
	}
	return r.relayout(ctx)
}

// closeIdle closes the open parts of the devices without a share.
func (r *SplitRun[P]) closeIdle() error {
	for i, sh := range r.shares {
		if sh.Units == 0 && r.opened[i] {
			pt := r.parts[i]
			var zero P
			r.parts[i], r.opened[i] = zero, false
			if err := pt.Close(); err != nil {
				return err
			}
		}
	}
	return nil
}

// SetSharded tells the runner how the family runs on sharded data; a split set up with
// PlaceSharded must be given it before Place.
func (r *SplitRun[P]) SetSharded(s Sharded) { r.sharded = &s }

// Place lays the op's data out for the planned shares: scattered over the devices with a
// share (Sharded.Scatter) where the split is on sharded data, else loaded onto the parts
// (Load).
func (r *SplitRun[P]) Place(ctx context.Context) error {
	if r.o.Placement != PlaceSharded {
		return r.Load(ctx)
	}
	if r.sharded == nil {
		return fmt.Errorf("kernels: %s: a split on sharded data without its family's Sharded: %w", r.name, engine.ErrInvalidArg)
	}
	return r.sharded.Scatter(ctx)
}

// Run runs the op: on sharded data where it lies (Sharded.Run); else every part with a
// share, each in its own goroutine, then their results combined. It returns once all have
// returned: nil, or the parts' errors joined in device order, each naming its device. The
// second Run of a measured plan that split also checks the plan against one device
// (CheckedRun).
func (r *SplitRun[P]) Run(ctx context.Context) error {
	return r.runChecked(ctx, r.CheckedRun)
}

// runChecked runs the op through check (CheckedRun or CheckPlan) with the run and layout
// of its placement, and says whether a result stands (CheckRan).
func (r *SplitRun[P]) runChecked(ctx context.Context, check func(ctx context.Context, run, relayout func(ctx context.Context) error) error) error {
	if r.closed {
		return fmt.Errorf("kernels: %s: split instance closed: %w", r.name, engine.ErrClosed)
	}
	r.ran = false
	run, relayout := r.runShares, r.relayout
	if r.sharded != nil {
		run, relayout = r.sharded.Run, r.rescatter
	}
	if err := check(ctx, run, relayout); err != nil {
		return err
	}
	r.ran = true
	return nil
}

// rescatter releases the sharded data and scatters it again over the shares as they are.
func (r *SplitRun[P]) rescatter(ctx context.Context) error {
	if err := r.sharded.Release(); err != nil {
		return err
	}
	return r.sharded.Scatter(ctx)
}

// runShares runs the parts with a share and combines their results: started together
// and then finished where the family's parts are SplitStarters (startParts), else each
// run in a goroutine (runParts).
func (r *SplitRun[P]) runShares(ctx context.Context) error {
	var err error
	if _, ok := any(*new(P)).(SplitStarter); ok { // a property of the family's part type
		part := func(i int) SplitStarter { return any(r.parts[i]).(SplitStarter) }
		err = startParts(r.shares, func(i int) error { return part(i).Start(ctx) }, func(i int) error { return part(i).Finish(ctx) })
	} else {
		err = runParts(r.shares, func(i int) error { return r.parts[i].Run(ctx) })
	}
	if err != nil {
		return fmt.Errorf("kernels: %s: %w", r.name, err)
	}
	if r.combine != nil {
		r.combine()
	}
	return nil
}

// relayout gives the parts the current shares, as Load does, but keeps the parts of the
// devices without a share open: the plan's check may give them their shares back.
func (r *SplitRun[P]) relayout(ctx context.Context) error {
	off := offsets(r.shares)
	for i, sh := range r.shares {
		if sh.Units == 0 {
			continue
		}
		pt, err := r.Open(ctx, i)
		if err != nil {
			return err
		}
		if err := pt.Load(ctx, off[i], sh.Units); err != nil {
			return err
		}
	}
	return nil
}

// planCheckGain is how much faster than one device a split must run in the plan's check to
// be kept: at least 1.03 times the device alone's speed, else the op goes to that device.
// The check is a few host-timed runs of each, whose noise is several percent at 100 us; a
// split kept where it was up to 3% slower (before) sits at the edge of the never-lose
// target (0.97 of the best device) before any noise. A split whose gain is within the
// noise is not worth its second device.
const planCheckGain = 1.03

// checkMinRuns, checkMaxRuns and checkBudget bound the runs a plan's check times of the
// split and of the device alone: each at least checkMinRuns times, more while their time
// stays under checkBudget, at most checkMaxRuns; the median is kept. The fastest of up to
// three (before) favoured the split, whose runs spread more (two devices, the later part
// decides): two H200 kept a 32M float64 sum split that its check timed at 79 us against
// 92 us alone, and that then ran at 102 us against 94, the two timed run for run.
const (
	checkMinRuns = 3
	checkMaxRuns = 7
	checkBudget  = 100 * time.Millisecond
)

// oneCheckMargin is how near the devices predicted for a plan that gives the op to one
// device must come for its check to time them alone too: within this factor of its
// predicted time alone. Probes rank devices of one model by their noise, and host data
// reaches them unequally: on two H200 (2026-11-30) a host-data 32M max went to the GPU
// its probe favoured, which ran 3.5% slower than the other, timed run for run. Devices
// predicted further apart are not timed: a CPU beside a GPU costs its check nothing.
const oneCheckMargin = 1.10

// checkDevices is the most devices a plan's check times alone, fastest predicted first:
// the probes can rank devices of one model wrongly (on two H200 the host-data sort of 16M
// float32 keys took 37.9 ms alone on one and 51.5 on the other, the host's memory nearer
// one of them), and a check against the slower kept a split at 0.86 of the faster.
const checkDevices = 4

// timeRuns times run checkMinRuns to checkMaxRuns times (more only while the runs take
// less than checkBudget together) and returns the median, the lower of the two middle
// runs for an even count: one stall does not decide.
func timeRuns(ctx context.Context, run func(ctx context.Context) error) (time.Duration, error) {
	var runs []time.Duration
	var spent time.Duration
	for len(runs) < checkMinRuns || (len(runs) < checkMaxRuns && spent < checkBudget) {
		start := time.Now()
		if err := run(ctx); err != nil {
			return 0, err
		}
		d := time.Since(start)
		spent += d
		runs = append(runs, d)
	}
	slices.Sort(runs)
	return runs[(len(runs)-1)/2], nil
}

// CheckedRun runs the op with run, and on its second call (the first may pay one-time
// costs: builds, first touches, caches) checks a measured plan that split, or that gave
// the op to one device where others were predicted near it alone (CheckPlan, checkOne):
// it times run (the split; the median of three to seven runs, timeRuns), then gives all
// the work to each device the plan timed alone in turn, fastest predicted first, at most
// checkDevices (relayout lays the data out for the shares as they are now; run then runs
// them), runs it once to warm it and then timed as the split was, and keeps whichever was
// fastest, the split only where it ran at least planCheckGain times the fastest device
// alone's speed; on sharded data the device alone holds all of it (relayout lays it
// out so). Both times are kept in every share (Ran, RanOne) and
// PlanSummary reports them. Where the device alone cannot take the work (its memory: the
// split may be what fits), the split stands and the shares say why (RanOneErr); only a
// cancelled ctx ends the check with an error. Where the split is kept its layout is
// restored and run again, so that the op's result is the split's. SplitRun.Run calls it
// with the run and layout of the split's placement.
func (r *SplitRun[P]) CheckedRun(ctx context.Context, run, relayout func(ctx context.Context) error) error {
	if r.closed {
		return fmt.Errorf("kernels: %s: split instance closed: %w", r.name, engine.ErrClosed)
	}
	r.runs++
	if r.runs != 2 || !r.checkable() {
		return run(ctx)
	}
	return r.CheckPlan(ctx, run, relayout)
}

// CheckPlan checks the shares now, as CheckedRun does on its second call, whether they
// were measured or given, as long as more than one device has a share, or one device has
// the op and others were predicted near it (checkOne; else it runs the op once): the
// devices tried alone are those the plan timed (fastest predicted first, at most
// checkDevices), or with given shares the one with the largest. It leaves the op's result in place, as a run does.
func (r *SplitRun[P]) CheckPlan(ctx context.Context, run, relayout func(ctx context.Context) error) error {
	if r.closed {
		return fmt.Errorf("kernels: %s: split instance closed: %w", r.name, engine.ErrClosed)
	}
	used := 0
	for _, sh := range r.shares {
		if sh.Units > 0 {
			used++
		}
	}
	if used < 2 {
		if near := r.nearOne(); len(near) > 1 {
			return r.checkOne(ctx, run, relayout, near)
		}
		return run(ctx)
	}
	split, err := timeRuns(ctx, run)
	if err != nil {
		return err
	}
	// The devices tried alone: those the plan timed, fastest predicted first, at most
	// checkDevices; with given shares, the one with the most work.
	var cands []int
	for i, sh := range r.shares {
		if sh.Unable == "" && sh.Alone > 0 {
			cands = append(cands, i)
		}
	}
	slices.SortStableFunc(cands, func(a, b int) int { return cmp.Compare(r.shares[a].Alone, r.shares[b].Alone) })
	cands = cands[:min(len(cands), checkDevices)]
	if len(cands) == 0 {
		best := 0
		for i, sh := range r.shares {
			if sh.Units > r.shares[best].Units {
				best = i
			}
		}
		cands = []int{best}
	}
	planned := slices.Clone(r.shares)
	best, alone, last, err := r.fastestAlone(ctx, planned, cands, run, relayout)
	if err != nil && ctx.Err() != nil {
		return err
	}
	if best < 0 {
		best = cands[0]
	}
	one := onlyOn(planned, best)
	for i := range planned {
		planned[i].Ran = split
		if err != nil {
			// The device alone could not take the work (its memory, a limit the parts
			// stay under): the split stands, and says why.
			planned[i].RanOneErr = err.Error()
			continue
		}
		planned[i].RanOne = alone
		one[i].Ran, one[i].RanOne = split, alone
	}
	if err == nil && float64(alone) < planCheckGain*float64(split) {
		return r.keepOne(ctx, one, best, last, run, relayout)
	}
	r.shares = planned
	if rerr := relayout(ctx); rerr != nil {
		return fmt.Errorf("kernels: %s: restoring the split after its check: %w", r.name, errors.Join(rerr, err))
	}
	return run(ctx)
}

// onlyOn returns shares, a copy, with the whole of their units given to device d.
func onlyOn(shares []Share, d int) []Share {
	total := 0
	for _, sh := range shares {
		total += sh.Units
	}
	one := slices.Clone(shares)
	for i := range one {
		one[i].Units, one[i].Fraction = 0, 0
	}
	one[d].Units, one[d].Fraction = total, 1
	return one
}

// timeOn gives the whole of the planned shares' work to device d (relayout), runs it once
// to warm it and returns the median of its timed runs (timeRuns), as a plan's check times
// a device alone. The shares are left giving all of it to d.
func (r *SplitRun[P]) timeOn(ctx context.Context, planned []Share, d int, run, relayout func(ctx context.Context) error) (time.Duration, error) {
	r.shares = onlyOn(planned, d)
	if err := relayout(ctx); err != nil {
		return 0, err
	}
	if err := run(ctx); err != nil {
		return 0, err
	}
	return timeRuns(ctx, run)
}

// fastestAlone times each device of cands in turn with the whole of planned's work
// (timeOn) and returns the fastest, its time and the last device tried. A device that
// cannot take the work is passed over; best is -1 where none could, err then the first
// one's reason (nil otherwise). Where ctx ends, err says so and the check stops.
func (r *SplitRun[P]) fastestAlone(ctx context.Context, planned []Share, cands []int, run, relayout func(ctx context.Context) error) (best int, alone time.Duration, last int, err error) {
	best, last = -1, -1
	for _, d := range cands {
		last = d
		t, derr := r.timeOn(ctx, planned, d, run, relayout)
		if derr != nil {
			if ctx.Err() != nil {
				return -1, 0, last, fmt.Errorf("kernels: %s: checking the plan against %s alone: %w", r.name, planned[d].Device, derr)
			}
			if err == nil {
				err = derr
			}
			continue
		}
		if best < 0 || t < alone {
			best, alone = d, t
		}
	}
	if best >= 0 {
		err = nil
	}
	return best, alone, last, err
}

// nearOne returns, for a measured plan that gives the whole op to one device, that device
// and then the others predicted within oneCheckMargin of its time alone (fastest
// predicted first, checkDevices in all at most), which its check times alone too; only
// the device where no other is near.
func (r *SplitRun[P]) nearOne() []int {
	if r.o.Fractions != nil {
		return nil
	}
	chosen := slices.IndexFunc(r.shares, func(sh Share) bool { return sh.Units > 0 })
	if chosen < 0 || r.shares[chosen].Alone <= 0 {
		return nil
	}
	var others []int
	for i, sh := range r.shares {
		if i != chosen && sh.Unable == "" && sh.Alone > 0 && float64(sh.Alone) <= oneCheckMargin*float64(r.shares[chosen].Alone) {
			others = append(others, i)
		}
	}
	slices.SortStableFunc(others, func(a, b int) int { return cmp.Compare(r.shares[a].Alone, r.shares[b].Alone) })
	return append([]int{chosen}, others[:min(len(others), checkDevices-1)]...)
}

// checkOne is CheckPlan's check of a plan that gives the op to one device, near[0], with
// other devices predicted near it alone (nearOne): it times that device (the median of
// three to seven runs, timeRuns), then each other in turn with the whole op (relayout,
// one run to warm it, then timed alike), and gives the op to the fastest, the plan's
// device where none ran faster. A device that cannot take the work is passed over. Every
// share keeps the plan's device (Planned), its time (Ran) and the fastest other's
// (RanOne), which PlanSummary reports.
func (r *SplitRun[P]) checkOne(ctx context.Context, run, relayout func(ctx context.Context) error, near []int) error {
	planned := slices.Clone(r.shares)
	mine, err := timeRuns(ctx, run)
	if err != nil {
		return err
	}
	fastest, other, last, err := r.fastestAlone(ctx, planned, near[1:], run, relayout)
	if err != nil && ctx.Err() != nil {
		return err
	}
	best := near[0]
	if fastest >= 0 && other < mine {
		best = fastest
	}
	one := onlyOn(planned, best)
	for i := range one {
		one[i].Planned, one[i].Ran, one[i].RanOne = planned[near[0]].Device, mine, other
	}
	return r.keepOne(ctx, one, best, last, run, relayout)
}

// keepOne ends a plan's check on device best alone, with shares one: where the last
// device the check timed was another, the op is laid out for best and run again, so that
// its result is best's; the other devices' parts are released.
func (r *SplitRun[P]) keepOne(ctx context.Context, one []Share, best, last int, run, relayout func(ctx context.Context) error) error {
	r.shares = one
	if best != last {
		if err := relayout(ctx); err != nil {
			return fmt.Errorf("kernels: %s: laying the op out for %s alone: %w", r.name, one[best].Device, err)
		}
		if err := run(ctx); err != nil {
			return err
		}
	}
	return r.closeIdle()
}

// Recheck checks the plan now (CheckPlan): on the host, the parts given the shares tried
// (Load, the idle parts kept open); on sharded data, the data scattered again.
func (r *SplitRun[P]) Recheck(ctx context.Context) error {
	return r.runChecked(ctx, r.CheckPlan)
}

// checkable reports whether the plan is one CheckedRun checks: measured (not given
// fractions), over more than one device, or on one device with others predicted near it
// alone (nearOne).
func (r *SplitRun[P]) checkable() bool {
	if r.o.Fractions != nil {
		return false
	}
	used, timed := 0, false
	for _, sh := range r.shares {
		if sh.Units > 0 {
			used++
		}
		timed = timed || sh.Alone > 0
	}
	return timed && (used > 1 || len(r.nearOne()) > 1)
}

// CheckRan says whether there is a result to verify: an error wrapping ErrClosed after
// Close, ErrInvalidArg before a Run completes.
func (r *SplitRun[P]) CheckRan() error {
	if r.closed {
		return fmt.Errorf("kernels: %s: split instance closed: %w", r.name, engine.ErrClosed)
	}
	if !r.ran {
		return fmt.Errorf("kernels: %s: verify before a complete run: %w", r.name, engine.ErrInvalidArg)
	}
	return nil
}

// Placement says where the split's data lives: the placement it was set up for
// (SplitOptions.Placement), once the family has said how it runs on sharded data
// (SetSharded), else host. It makes every family's split a Placed.
func (r *SplitRun[P]) Placement() Placement {
	if r.sharded == nil {
		return PlaceHost // a family that has not said how it runs on sharded data runs on host data
	}
	return r.o.Placement
}

// Shares says how the work was divided (a copy).
func (r *SplitRun[P]) Shares() []Share { return slices.Clone(r.shares) }

// Parts returns the part of each device, the zero P where the device has none open (after
// Load: where it has no share). While a plan is checked (CheckPlan), the parts of devices
// without a share stay open: a combine goes by Shares, not by which parts are open. The
// slice is the runner's: read it only.
func (r *SplitRun[P]) Parts() []P { return r.parts }

// Close releases the sharded data (Sharded.Release), then every open part. Idempotent; a
// nil runner has nothing to release.
func (r *SplitRun[P]) Close() error {
	if r == nil || r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	if r.sharded != nil {
		errs = append(errs, r.sharded.Release())
	}
	for i, pt := range r.parts {
		if r.opened[i] {
			errs = append(errs, pt.Close())
		}
	}
	return errors.Join(errs...)
}

// offsets returns where each share's units start: the prefix sums of their Units.
func offsets(s []Share) []int {
	off := make([]int, len(s))
	at := 0
	for i := range s {
		off[i] = at
		at += s[i].Units
	}
	return off
}

// startParts calls start(i) for every share with units from the calling goroutine, in
// order, until one fails; then finish(i) for every part started, in the same order and
// goroutine (a part's work on its queue is waited for even after another's start
// failed). The waits overlap the devices' work: each finish waits for the part's own
// work, which ran beside the others', and the parts after it have mostly ended by then.
// It returns nil, or the errors joined in device order, each naming its device.
func startParts(s []Share, start, finish func(i int) error) error {
	errs := make([]error, len(s))
	started := make([]bool, len(s))
	t0 := time.Now()
	for i := range s {
		if s[i].Units == 0 {
			continue
		}
		if err := start(i); err != nil {
			errs[i] = fmt.Errorf("%s: %w", s[i].Device, err)
			break
		}
		started[i] = true
	}
	t1 := time.Since(t0)
	tracing := engine.Tracing()
	line := ""
	for i := range s {
		if !started[i] {
			continue
		}
		if err := finish(i); err != nil {
			errs[i] = fmt.Errorf("%s: %w", s[i].Device, err)
		}
		if tracing {
			line += fmt.Sprintf(" %s at %v;", s[i].Device, time.Since(t0).Round(time.Microsecond))
		}
	}
	if tracing {
		engine.Tracef("split parts started in %v, finished:%s", t1.Round(time.Microsecond), strings.TrimSuffix(line, ";"))
	}
	return errors.Join(errs...)
}

// startedProbe is the SplitProbe of a family whose parts are SplitStarters, or
// ProbeStarters on sharded data: the probes of the devices with units started in device
// order from the calling goroutine, then finished in order, timed from the first start to
// the last finish, as startParts runs a split (their loads untimed, done first). Nil for
// any other family: the planner then runs each probe in a goroutine of its own, as
// runParts runs the parts.
func startedProbe[P SplitPart](devs []*engine.Device, ready func(ctx context.Context, dev *engine.Device, units int) (P, error), sharded bool) SplitProbe {
	_, starter := any(*new(P)).(SplitStarter)
	_, probes := any(*new(P)).(ProbeStarter)
	if !starter && !(sharded && probes) {
		return nil
	}
	return func(ctx context.Context, units []int) (time.Duration, error) {
		s := make([]Share, len(devs))
		ps := make([]ProbeStarter, len(devs))
		for i, d := range devs {
			s[i] = Share{Device: d.ID(), Units: units[i]}
			if units[i] == 0 {
				continue
			}
			pt, err := ready(ctx, d, units[i])
			if err != nil {
				return 0, err
			}
			ps[i] = any(pt).(ProbeStarter)
		}
		start := time.Now()
		err := startParts(s, func(i int) error { return ps[i].StartProbe(ctx, units[i]) }, func(i int) error { return ps[i].FinishProbe(ctx) })
		return time.Since(start), err
	}
}

// runParts calls part(i) for every share with units, each in its own goroutine (the only
// one in the caller's, as a device alone runs it), and returns once all have returned:
// nil, or the errors joined in device order.
func runParts(s []Share, part func(i int) error) error {
	used, last := 0, 0
	for i := range s {
		if s[i].Units > 0 {
			used, last = used+1, i
		}
	}
	if used == 1 {
		if err := part(last); err != nil {
			return fmt.Errorf("%s: %w", s[last].Device, err)
		}
		return nil
	}
	errs := make([]error, len(s))
	tracing := engine.Tracing()
	var t0 time.Time
	var spans [][2]time.Duration // each part's start and end, when tracing
	if tracing {
		t0, spans = time.Now(), make([][2]time.Duration, len(s))
	}
	var wg sync.WaitGroup
	for i := range s {
		if s[i].Units == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if tracing {
				spans[i][0] = time.Since(t0)
				defer func() { spans[i][1] = time.Since(t0) }()
			}
			if err := part(i); err != nil {
				errs[i] = fmt.Errorf("%s: %w", s[i].Device, err)
			}
		}()
	}
	wg.Wait()
	if tracing {
		line := fmt.Sprintf("split parts in %v:", time.Since(t0).Round(time.Microsecond))
		for i, sp := range spans {
			if s[i].Units > 0 {
				line += fmt.Sprintf(" %s from %v to %v;", s[i].Device, sp[0].Round(time.Microsecond), sp[1].Round(time.Microsecond))
			}
		}
		engine.Tracef("%s", strings.TrimSuffix(line, ";"))
	}
	return errors.Join(errs...)
}
