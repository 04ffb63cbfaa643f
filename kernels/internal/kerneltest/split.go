package kerneltest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/platform"
)

// SplitDevices returns the devices the split tests run on, closed when the test ends:
// every OpenCL device found, or with twins only those of the first one's name, platform
// and compute units (which compute alike); the first device opened twice where that
// leaves one (two openings are two devices to the engine).
func SplitDevices(t *testing.T, twins bool) []*engine.Device {
	t.Helper()
	dis, err := platform.Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var first engine.DeviceInfo
	for _, d := range dis.Devices {
		if d.Backend != "opencl" {
			continue
		}
		if len(ids) == 0 {
			first = d.DeviceInfo
		} else if twins && (d.Name != first.Name || d.Platform != first.Platform || d.ComputeUnits != first.ComputeUnits) {
			continue
		}
		ids = append(ids, d.ID)
	}
	if len(ids) == 0 {
		t.Skipf("no OpenCL device found: %v", dis.Unavailable())
	}
	if len(ids) == 1 {
		ids = append(ids, ids[0])
	}
	devs := make([]*engine.Device, len(ids))
	for i, id := range ids {
		d, err := engine.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		devs[i] = d
	}
	return devs
}

// Queues opens one queue on each device of devs, closed when the test ends (before the
// devices SplitDevices opened).
func Queues(t *testing.T, devs []*engine.Device) []*engine.Queue {
	t.Helper()
	qs := make([]*engine.Queue, len(devs))
	for i, d := range devs {
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		qs[i] = q
	}
	return qs
}

// Evenly returns n equal fractions, the shares of a split evenly divided.
func Evenly(n int) []float64 {
	f := make([]float64, n)
	for i := range f {
		f[i] = 1 / float64(n)
	}
	return f
}

// SplitFractions returns the fixed shares the tests use for n devices: halves, 13/87 and
// all on the first, given to the first two devices (the others get none), and an even
// split where there are more than two.
func SplitFractions(n int) [][]float64 {
	pair := func(a, b float64) []float64 {
		f := make([]float64, n)
		f[0], f[1] = a, b
		return f
	}
	fs := [][]float64{pair(0.5, 0.5), pair(0.13, 0.87), pair(1, 0)}
	if n > 2 {
		even := make([]float64, n)
		for i := range even {
			even[i] = 1 / float64(n)
		}
		fs = append(fs, even)
	}
	return fs
}

// CheckShares checks that the shares cover the n units once, with their fractions, and
// give nothing to a device of a zero fraction in f (nil: measured shares).
func CheckShares(t *testing.T, sh []kernels.Share, n int, f []float64) {
	t.Helper()
	sum := 0
	for i, s := range sh {
		if s.Units < 0 || math.Abs(s.Fraction-float64(s.Units)/float64(n)) > 1e-12 || f != nil && f[i] == 0 && s.Units != 0 {
			t.Fatalf("share %+v of %d units (fractions %v)", s, n, f)
		}
		sum += s.Units
	}
	if sum != n {
		t.Fatalf("shares %+v cover %d units, want %d", sh, sum, n)
	}
}

// ShardedCase is an op of a family, a size and given shares (nil: measured) that
// CheckSplitSharded sets up on sharded data.
type ShardedCase struct {
	Op   string
	Size int
	Frac []float64
}

// CheckSplitSharded sets each case's op of fam up on sharded data (kernels.PlaceSharded:
// the inputs scattered over devs once, each run leaving its result there) and checks that
// the instance says so, refuses to verify before a run, and verifies after each of two runs
// (Verify gathers the result); measured shares carry each device's predicted time alone
// and the split's.
// Given shares that split are then checked against one device (the instance's Recheck,
// CheckRecheck).
// Given shares of two devices are made even where devs holds another number. Each op of
// unsupported, which has no split on sharded data, must be refused as unsupported.
func CheckSplitSharded(t *testing.T, fam kernels.Family, devs []*engine.Device, cases []ShardedCase, unsupported ...string) {
	t.Helper()
	byName := func(name string) kernels.Op {
		for _, op := range fam.Ops {
			if op.Name == name {
				return op
			}
		}
		t.Fatalf("no op %s", name)
		return kernels.Op{}
	}
	for _, c := range cases {
		frac := c.Frac
		if frac != nil && len(devs) != 2 {
			frac = Evenly(len(devs))
		}
		t.Run(fmt.Sprintf("%s/%d/%v", c.Op, c.Size, frac), func(t *testing.T) {
			o := kernels.SplitOptions{Fractions: frac, Placement: kernels.PlaceSharded}
			si, err := byName(c.Op).Split(t.Context(), devs, kernels.Params{Size: c.Size, Seed: 3}, o)
			if err != nil {
				t.Fatal(err)
			}
			defer si.Close()
			if p := kernels.PlacementOf(si); p != kernels.PlaceSharded {
				t.Fatalf("placement %v, want sharded", p)
			}
			if err := si.Verify(t.Context()); !errors.Is(err, engine.ErrInvalidArg) {
				t.Fatalf("verify before a run: %v, want invalid argument", err)
			}
			for range 2 {
				if err := si.Run(t.Context()); err != nil {
					t.Fatal(err)
				}
				if err := si.Verify(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if frac != nil {
				CheckRecheck(t, si)
			}
			if frac == nil && len(devs) > 1 {
				for _, sh := range si.Shares() {
					if sh.Unable == "" && (sh.Alone <= 0 || sh.Predicted <= 0) {
						t.Errorf("%s: alone %v, predicted %v: want both measured", sh.Device, sh.Alone, sh.Predicted)
					}
				}
			}
			t.Logf("%s", kernels.PlanSummary(si.Shares()))
		})
	}
	for _, name := range unsupported {
		_, err := byName(name).Split(t.Context(), devs, kernels.Params{Size: 64, Seed: 3}, kernels.SplitOptions{Placement: kernels.PlaceSharded})
		if !errors.Is(err, engine.ErrUnsupported) {
			t.Errorf("%s on sharded data: %v, want unsupported", name, err)
		}
	}
}

// splits reports whether more than one share has work (given fractions may round to
// one device at small sizes).
func splits(s []kernels.Share) bool {
	n := 0
	for _, sh := range s {
		if sh.Units > 0 {
			n++
		}
	}
	return n > 1
}

// CheckRecheck checks the plan's check of a split instance whose shares split (its
// Recheck, which
// lays the data out for the device of the largest share alone and, where the split was
// faster, back again): the output verifies after it and after two later runs, and the
// shares cover the planned shares' units, either still split as planned or all on one
// device, each holding both measured times.
// A split on one device, or an instance without Recheck, is left alone, as is every
// instance under Oclgrind (Small).
func CheckRecheck(t *testing.T, si kernels.SplitInstance) {
	t.Helper()
	rc, ok := si.(interface{ Recheck(context.Context) error })
	if !ok || !splits(si.Shares()) || Small() { // Small: Oclgrind, where each run is slow
		return
	}
	before := si.Shares()
	total := 0
	for _, sh := range before {
		total += sh.Units
	}
	if err := rc.Recheck(t.Context()); err != nil {
		t.Fatalf("checking the plan: %v", err)
	}
	if err := si.Verify(t.Context()); err != nil {
		t.Fatalf("after checking the plan: %v", err)
	}
	after := si.Shares()
	used, sum := 0, 0
	for _, sh := range after {
		sum += sh.Units
		if sh.Units > 0 {
			used++
		}
		if sh.Ran <= 0 || sh.RanOne <= 0 {
			t.Errorf("share %+v holds no check", sh)
		}
	}
	if sum != total || (used != 1 && !slices.EqualFunc(before, after, func(a, b kernels.Share) bool { return a.Units == b.Units })) {
		t.Errorf("shares after the check %+v: want those planned (%+v) or all %d units on one device", after, before, total)
	}
	t.Logf("checked: %s", kernels.PlanSummary(after))
	for range 2 {
		if err := si.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := si.Verify(t.Context()); err != nil {
			t.Fatalf("a run after checking the plan: %v", err)
		}
	}
}

// SplitRefusal is a split set-up that must fail: its devices, parameters and given
// fractions (nil: measured), and the error it must wrap.
type SplitRefusal struct {
	Name string
	Devs []*engine.Device
	P    kernels.Params
	F    []float64
	Want error
}

// PlacementRefusals are the refusals every split shares, whatever its op, with ok a
// valid set-up's parameters over devs (two at least): no device (nil or empty), a nil device, and given
// fractions that are too few, too many, not summing to 1, negative, NaN, infinite or all
// zero. Each wraps engine.ErrInvalidArg.
func PlacementRefusals(devs []*engine.Device, ok kernels.Params) []SplitRefusal {
	rest := make([]float64, len(devs)-2)
	with := func(a, b float64) []float64 { return append([]float64{a, b}, rest...) }
	bad := engine.ErrInvalidArg
	return []SplitRefusal{
		{Name: "no device", Devs: nil, P: ok, Want: bad},
		{Name: "no device (empty)", Devs: []*engine.Device{}, P: ok, Want: bad},
		{Name: "nil device", Devs: []*engine.Device{devs[0], nil}, P: ok, Want: bad},
		{Name: "fractions short", Devs: devs, P: ok, F: []float64{1}, Want: bad},
		{Name: "fractions long", Devs: devs, P: ok, F: append(make([]float64, len(devs)), 1), Want: bad},
		{Name: "fractions sum", Devs: devs, P: ok, F: with(0.5, 0.6), Want: bad},
		{Name: "fraction negative", Devs: devs, P: ok, F: with(-0.5, 1.5), Want: bad},
		{Name: "fraction NaN", Devs: devs, P: ok, F: with(math.NaN(), 1), Want: bad},
		{Name: "fraction infinite", Devs: devs, P: ok, F: with(math.Inf(1), 0), Want: bad},
		{Name: "fractions all zero", Devs: devs, P: ok, F: make([]float64, len(devs)), Want: bad},
	}
}

// CheckSplitRefusals sets each refusal up with op.Split and checks that it fails wrapping
// its error, closing whatever a set-up returned.
func CheckSplitRefusals(t *testing.T, op kernels.Op, cases []SplitRefusal) {
	t.Helper()
	for _, c := range cases {
		in, err := op.Split(t.Context(), c.Devs, c.P, kernels.SplitOptions{Fractions: c.F})
		if !errors.Is(err, c.Want) {
			t.Errorf("%s: %v, want %v", c.Name, err, c.Want)
		}
		if in != nil {
			in.Close()
		}
	}
}

// CheckSplitLifecycle checks what a split instance does around its runs: Verify before a
// Run wraps engine.ErrInvalidArg; after a Run and corrupt (which makes one element of the
// result wrong, as what it says), Verify wraps kernels.ErrVerify; Close twice is nil, and
// Run after Close wraps engine.ErrClosed. It closes si.
func CheckSplitLifecycle(t *testing.T, si kernels.SplitInstance, what string, corrupt func()) {
	t.Helper()
	if err := si.Verify(t.Context()); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Verify before Run: %v, want ErrInvalidArg", err)
	}
	if err := si.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	corrupt()
	if err := si.Verify(t.Context()); !errors.Is(err, kernels.ErrVerify) {
		t.Errorf("Verify after %s: %v, want ErrVerify", what, err)
	}
	CheckSplitClose(t, si)
}

// CheckSplitClose closes si twice, both nil, and checks that Run after Close wraps
// engine.ErrClosed.
func CheckSplitClose(t *testing.T, si kernels.SplitInstance) {
	t.Helper()
	if err := si.Close(); err != nil {
		t.Fatal(err)
	}
	if err := si.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := si.Run(context.Background()); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Run after Close: %v, want ErrClosed", err)
	}
}
