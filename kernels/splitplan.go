package kernels

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prism-compute/prism/engine"
)

// Probe times one run of a part of units units of an operation on dev, as the part
// costs inside a split run (the kernels and whatever the combine reads back from the
// device), setup excluded.
type Probe func(ctx context.Context, dev *engine.Device, units int) (time.Duration, error)

// probeTarget is the time a device's largest probe should take: long enough that the
// rate it gives is not its launch latency, short enough that a slow device (a CPU given
// a row of a large GEMM) is probed in a fraction of a second.
const probeTarget = 20 * time.Millisecond

// maxRateGain bounds the fitted rate of a device against the plain rate of its largest
// probe: a latency of up to seven eighths of that probe's time.
const maxRateGain = 8

// splitMargin is what a split must gain, as a fraction of the best single device's
// predicted time, for a second device to be given a share: concurrent parts contend for
// the host (a CPU device's threads, the GPU drivers' own) in ways the probes do not see.
const splitMargin = 0.05

// PlanShares divides total units of work (in multiples of granule, the last device with a
// share taking the remainder) among devs. Where o.Fractions is nil it measures the
// devices with probe. First each alone, at growing sizes, starting from one granule and
// four times larger each time until a run takes 20 ms or reaches total/len(devs); a
// latency and a rate are fitted to the last two. Then all at once, each repeating its
// largest probe while the others run theirs: devices that share hardware (two CPU
// devices on one host's cores, the host's memory and links) slow each other down, and
// this rate is the one a split gets. The shares make every device with a share finish at
// the same predicted time under that contention (a device whose latency alone exceeds
// that time gets none), and a device is used at all only where the split is predicted 5%
// faster than the fastest device alone: the shares say when a device is not worth it.
// Devices keep their order; a device left out has a share of zero units. The same
// *engine.Device may not be given twice (open a device again for a second share of it).
//
// It also measures the fixed cost of running parts at all: a split of the smallest size
// (one granule on every device) run end to end, the parts concurrently and their
// goroutines started and awaited as a split run does, against the slowest device's
// granule alone. That cost (the launches, the synchronisation, whatever the probes of a
// placement read back) is added to the split's predicted time, so that where it
// dominates (a small reduction on two GPUs) one device is used. Each share says the time
// predicted for the whole op on its device alone (Alone) and for the split (Predicted);
// PlanSummary says which won and by how much.
func PlanShares(ctx context.Context, devs []*engine.Device, total, granule int, o SplitOptions, probe Probe) ([]Share, error) {
	return PlanSharesSplit(ctx, devs, total, granule, o, probe, nil)
}

// SplitProbe times one split run end to end with units[i] units on device i (zero: the
// device takes no part), the parts concurrently.
type SplitProbe func(ctx context.Context, units []int) (time.Duration, error)

// PlanSharesSplit is PlanShares with whole timing the split of the smallest size end to
// end; nil runs probe on every device at once, each in its own goroutine, and times the
// whole by the host clock. Where the data lives (o.Placement) is the probes' to reflect:
// on the host they include the upload and read-back a part pays; on sharded data they
// read nothing back, and a device alone is timed with the data resident on it, as a split
// lays the data out from its plan.
func PlanSharesSplit(ctx context.Context, devs []*engine.Device, total, granule int, o SplitOptions, probe Probe, whole SplitProbe) ([]Share, error) {
	if len(devs) == 0 {
		return nil, fmt.Errorf("kernels: split across no device: %w", engine.ErrInvalidArg)
	}
	if total < 1 || granule < 1 {
		return nil, fmt.Errorf("kernels: split of %d units in granules of %d: both must be at least 1: %w", total, granule, engine.ErrInvalidArg)
	}
	shares := make([]Share, len(devs))
	for i, d := range devs {
		if d != nil && slices.Index(devs, d) != i {
			return nil, fmt.Errorf("kernels: split: device %s is given twice (open it again for a second share): %w", d.ID(), engine.ErrInvalidArg)
		}
		shares[i].Device = d.ID()
	}
	if o.Fractions != nil {
		if err := checkFractions(o.Fractions, len(devs)); err != nil {
			return nil, err
		}
		assign(shares, o.Fractions, total, granule)
		return shares, nil
	}
	limit := probeLimit(total, granule, len(devs))
	largest := make([]point, len(devs))
	var smallest time.Duration // the slowest device's one granule alone
	for i, d := range devs {
		lat, rate, first, last, err := measure(ctx, d, granule, limit, probe)
		if err != nil {
			return nil, err
		}
		shares[i].Rate, shares[i].Latency, largest[i] = rate, lat, last
		smallest = max(smallest, first.t)
	}
	var fixed time.Duration
	if len(devs) > 1 {
		if err := measureTogether(ctx, devs, shares, largest, probe); err != nil {
			return nil, err
		}
		if whole == nil {
			whole = concurrentProbe(devs, probe)
		}
		var err error
		if fixed, err = measureFixed(ctx, len(devs), granule, smallest, whole); err != nil {
			return nil, err
		}
	}
	assign(shares, balance(shares, float64(total), fixed), total, granule)
	return shares, nil
}

// fixedRuns is how many end-to-end splits of the smallest size measureFixed times.
const fixedRuns = 5

// measureFixed returns the fixed cost of a split: the median time of fixedRuns splits of
// one granule per device, end to end, less alone (the slowest device's granule alone),
// not below zero.
func measureFixed(ctx context.Context, n, granule int, alone time.Duration, whole SplitProbe) (time.Duration, error) {
	units := make([]int, n)
	for i := range units {
		units[i] = granule
	}
	ts := make([]time.Duration, fixedRuns)
	for r := range ts {
		t, err := whole(ctx, units)
		if err != nil {
			return 0, &measureError{fmt.Sprintf("measuring a split of %d units on each of %d devices end to end", granule, n), err}
		}
		ts[r] = t
	}
	slices.Sort(ts)
	return max(0, ts[len(ts)/2]-alone), nil
}

// concurrentProbe is the SplitProbe of probe: every device with units runs its probe in
// its own goroutine, timed from the first start to the last end.
func concurrentProbe(devs []*engine.Device, probe Probe) SplitProbe {
	return func(ctx context.Context, units []int) (time.Duration, error) {
		errs := make([]error, len(devs))
		var wg sync.WaitGroup
		start := time.Now()
		for i, d := range devs {
			if units[i] == 0 {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = probe(ctx, d, units[i])
			}()
		}
		wg.Wait()
		return time.Since(start), errors.Join(errs...)
	}
}

// PlanSummary says in a line what a plan chose: the shares given; one device, and how
// much slower (or how little faster) a split was predicted; or the devices split over
// and how much faster than the best device alone; and which devices cannot run the op,
// and why.
func PlanSummary(s []Share) string {
	var unable []string
	able := 0
	for _, sh := range s {
		if sh.Unable != "" {
			unable = append(unable, sh.Device+" cannot run it: "+sh.Unable)
		} else {
			able++
		}
	}
	if len(unable) == 0 {
		return planSummary(s)
	}
	if able == 1 {
		for _, sh := range s {
			if sh.Unable == "" {
				return "one device: " + sh.Device + " (" + strings.Join(unable, "; ") + ")"
			}
		}
	}
	return planSummary(s) + "; " + strings.Join(unable, "; ")
}

// planSummary is PlanSummary of a plan over devices that can all run the op.
func planSummary(s []Share) string {
	used, best := 0, -1
	for i, sh := range s {
		if sh.Units > 0 {
			used++
		}
		if sh.Alone > 0 && (best < 0 || sh.Alone < s[best].Alone) {
			best = i
		}
	}
	if best < 0 {
		largest := 0
		for i, sh := range s {
			if sh.Units > s[largest].Units {
				largest = i
			}
		}
		note := "shares given"
		if c := checkText(s[largest], used, "their"); c != "" {
			note += "; " + c
		}
		if used == 1 {
			return "one device: " + s[largest].Device + " (" + note + ")"
		}
		return fmt.Sprintf("split over %d devices (%s)", used, note)
	}
	pred, alone := s[best].Predicted.Seconds(), s[best].Alone.Seconds()
	if c := checkText(s[best], used, "the planned"); c != "" && s[best].Planned == "" {
		if used <= 1 {
			return fmt.Sprintf("one device: %s (%s)", s[best].Device, c)
		}
		return fmt.Sprintf("split over %d devices (predicted %.0f%% faster than %s alone; %s)", used, 100*(1-pred/alone), s[best].Device, c)
	}
	if used <= 1 {
		one := s[best].Device
		for _, sh := range s {
			if sh.Units > 0 {
				one = sh.Device
			}
		}
		why := fmt.Sprintf("a split is predicted %.0f%% slower", 100*(pred/alone-1))
		if pred < alone {
			why = fmt.Sprintf("a split is predicted only %.0f%% faster, under the %.0f%% margin", 100*(1-pred/alone), 100*splitMargin)
		}
		switch p := s[best].Planned; {
		case p == "" || s[best].Ran <= 0 || s[best].RanOne <= 0:
		case p == one:
			why += fmt.Sprintf("; checked: it ran %s, the next device alone %s", fmtDur(s[best].Ran), fmtDur(s[best].RanOne))
		default:
			why += fmt.Sprintf("; the probes favoured %s, which ran %s against %s here", p, fmtDur(s[best].Ran), fmtDur(s[best].RanOne))
		}
		return fmt.Sprintf("one device: %s (%s)", one, why)
	}
	return fmt.Sprintf("split over %d devices (predicted %.0f%% faster than %s alone)", used, 100*(1-pred/alone), s[best].Device)
}

// checkText says what a plan's check found (SplitRun.CheckPlan), from the share of the
// device it tried alone: "" where no check ran; why that device could not take the work;
// with used (the devices with a share after the check) at one, that whose split lost
// ("the planned split ran 69.5 ms against 18.4 ms alone: 0.26x, under 1.03"); else the
// split's time and the device's.
func checkText(sh Share, used int, whose string) string {
	switch {
	case sh.Ran <= 0:
		return ""
	case sh.RanOneErr != "":
		return fmt.Sprintf("ran %s, and %s alone could not take the work: %s", fmtDur(sh.Ran), sh.Device, sh.RanOneErr)
	case sh.RanOne <= 0:
		return ""
	case used <= 1:
		return fmt.Sprintf("%s split ran %s against %s alone: %.2fx, under %.2f", whose, fmtDur(sh.Ran), fmtDur(sh.RanOne),
			sh.RanOne.Seconds()/sh.Ran.Seconds(), planCheckGain)
	}
	return fmt.Sprintf("ran %s, %s alone %s: %.2fx", fmtDur(sh.Ran), sh.Device, fmtDur(sh.RanOne), sh.RanOne.Seconds()/sh.Ran.Seconds())
}

// fmtDur writes d to three significant digits, as the plan's summary gives times.
func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3g s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3g µs", float64(d)/float64(time.Microsecond))
}

// probeLimit is the most units PlanShares probes a device with: an even share of total
// among n devices, in granules, at least one granule.
func probeLimit(total, granule, n int) int {
	return max(granule, total/n/granule*granule)
}

// point is one probe: units and the time they took.
type point struct {
	u int
	t time.Duration
}

// togetherRuns is the least number of runs of each device's probe while all run at once;
// each goes on until the slowest device's first three runs would have ended.
const togetherRuns = 3

// measureTogether runs every device's largest probe at once, each repeated for as long
// as the slowest takes three times, and sets each share's Concurrent rate from the median
// time against the probe's time alone (togetherRate).
func measureTogether(ctx context.Context, devs []*engine.Device, shares []Share, largest []point, probe Probe) error {
	var window time.Duration
	for _, p := range largest {
		window = max(window, togetherRuns*p.t)
	}
	errs := make([]error, len(devs))
	times := make([][]time.Duration, len(devs))
	var wg sync.WaitGroup
	start := time.Now()
	for i, d := range devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for len(times[i]) < togetherRuns || time.Since(start) < window {
				t, err := probe(ctx, d, largest[i].u)
				if err != nil {
					errs[i] = &measureError{fmt.Sprintf("measuring %s beside the other devices (%d units)", d.ID(), largest[i].u), err}
					return
				}
				times[i] = append(times[i], t)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i := range shares {
		ts := times[i]
		slices.Sort(ts)
		shares[i].Concurrent = togetherRate(shares[i].Rate, largest[i].t, ts[len(ts)/2])
	}
	return nil
}

// togetherRate is the rate of a device whose probe took alone while it ran alone and
// together (the median) while every device ran its own: its rate alone slowed by the ratio
// of the two times, never above it. The ratio of two times of the same probe does not
// depend on how the fit of the probes alone divided them between a fixed cost and a rate,
// which noise divides differently on equal devices: two H200 sorting sharded keys were
// given 75% and 25% after one device's fit had put 1.2 ms into its fixed cost and the
// other's none, and the fixed cost was taken off only the first's time together.
func togetherRate(rate float64, alone, together time.Duration) float64 {
	if alone <= 0 || together <= alone {
		return rate
	}
	return rate * alone.Seconds() / together.Seconds()
}

// checkFractions accepts n non-negative fractions, not all zero, summing to 1 within 1e-6.
func checkFractions(f []float64, n int) error {
	if len(f) != n {
		return fmt.Errorf("kernels: %d fractions for %d devices: %w", len(f), n, engine.ErrInvalidArg)
	}
	sum := 0.0
	for _, x := range f {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("kernels: fraction %v: must be a number from 0 to 1: %w", x, engine.ErrInvalidArg)
		}
		sum += x
	}
	if math.Abs(sum-1) > 1e-6 {
		return fmt.Errorf("kernels: fractions %v sum to %g, not 1: %w", f, sum, engine.ErrInvalidArg)
	}
	return nil
}

// measure probes dev from one granule up, four times larger each time, until a run takes
// probeTarget or reaches limit units, and fits t = latency + units/rate to the last two
// runs (each the best of three). It returns the first and the last point too.
func measure(ctx context.Context, dev *engine.Device, granule, limit int, probe Probe) (lat time.Duration, rate float64, first, last point, err error) {
	var pts []point
	for u := granule; ; u = min(limit, u*4) {
		best := time.Duration(math.MaxInt64)
		for range 3 {
			t, err := probe(ctx, dev, u)
			if err != nil {
				return 0, 0, point{}, point{}, &measureError{fmt.Sprintf("measuring %s for a split (%d units)", dev.ID(), u), err}
			}
			best = min(best, t)
		}
		pts = append(pts, point{u, max(best, time.Nanosecond)})
		if best >= probeTarget || u >= limit {
			break
		}
	}
	first, last = pts[0], pts[len(pts)-1]
	if len(pts) == 1 {
		return 0, float64(last.u) / last.t.Seconds(), first, last, nil
	}
	prev := pts[len(pts)-2]
	dt := (last.t - prev.t).Seconds()
	if dt <= 0 {
		return 0, float64(last.u) / last.t.Seconds(), first, last, nil
	}
	// The slope is the rate; noise between two short runs can make it absurd, so it is
	// kept within maxRateGain of the plain rate of the last run (units over its time).
	rate = min(float64(last.u-prev.u)/dt, maxRateGain*float64(last.u)/last.t.Seconds())
	lat = max(0, last.t-time.Duration(float64(last.u)/rate*1e9))
	return lat, rate, first, last, nil
}

// measureError is a probe's error with what was being measured. Its message says the
// package's prefix once, also when the probe's error is itself one of this package's.
type measureError struct {
	context string
	err     error
}

func (e *measureError) Error() string {
	return "kernels: " + e.context + ": " + strings.TrimPrefix(e.err.Error(), "kernels: ")
}

func (e *measureError) Unwrap() error { return e.err }

// balance returns each device's fraction of total so that all devices given work finish
// together (latency + units/rate equal, at the rates measured with every device running),
// or the fastest device alone (at its rate alone) where the split, its fixed cost fixed
// added, is not predicted splitMargin faster. It sets each share's Alone and Predicted.
func balance(s []Share, total float64, fixed time.Duration) []float64 {
	single := func(i int) float64 { return s[i].Latency.Seconds() + total/s[i].Rate }
	rate := func(i int) float64 {
		if s[i].Concurrent > 0 {
			return s[i].Concurrent
		}
		return s[i].Rate
	}
	best := 0
	for i := range s {
		if single(i) < single(best) {
			best = i
		}
	}
	// Water-filling: with the devices of the k smallest latencies, the common time T
	// solves sum (T - lat_i) * rate_i = total; a device joins while its latency is below T.
	order := make([]int, len(s))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(s[a].Latency - s[b].Latency) })
	var sumR, sumLR, T float64
	k := 0
	for k < len(order) {
		i := order[k]
		if k > 0 && s[i].Latency.Seconds() >= T {
			break
		}
		sumR += rate(i)
		sumLR += s[i].Latency.Seconds() * rate(i)
		T = (total + sumLR) / sumR
		k++
	}
	f := make([]float64, len(s))
	for i := range s {
		s[i].Alone = time.Duration(single(i) * 1e9)
		s[i].Predicted = time.Duration((T + fixed.Seconds()) * 1e9)
		s[i].Fixed = fixed
	}
	if k < 2 || T+fixed.Seconds() > (1-splitMargin)*single(best) {
		f[best] = 1
		return f
	}
	for _, i := range order[:k] {
		f[i] = (T - s[i].Latency.Seconds()) * rate(i) / total
	}
	return f
}

// assign turns fractions into units in whole granules by largest remainders (each
// device the floor of its quota, the granules left to the largest fractions of a
// granule); the units short of a granule go to the last device with a share, so that
// every share starts on a granule.
func assign(s []Share, f []float64, total, granule int) {
	g := total / granule
	rest := make([]float64, len(s))
	left := g
	for i := range s {
		q := f[i] * float64(g)
		n := int(math.Floor(q))
		s[i].Units, rest[i] = n, q-float64(n)
		left -= n
	}
	for ; left > 0; left-- {
		j := 0
		for i := range rest {
			if rest[i] > rest[j] {
				j = i
			}
		}
		s[j].Units++
		rest[j] = -1
	}
	last := -1
	for i := range s {
		s[i].Units *= granule
		if s[i].Units > 0 {
			last = i
		}
	}
	if last < 0 { // fewer units than a granule: all to the largest share
		for i := range s {
			if last < 0 || f[i] > f[last] {
				last = i
			}
		}
	}
	s[last].Units += total - g*granule
	for i := range s {
		s[i].Fraction = float64(s[i].Units) / float64(total)
	}
}
