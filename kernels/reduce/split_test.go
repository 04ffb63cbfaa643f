package reduce

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/group"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// opNamed returns the family's op of that name.
func opNamed(t *testing.T, name string) kernels.Op {
	t.Helper()
	for _, op := range Family().Ops {
		if op.Name == name {
			return op
		}
	}
	t.Fatalf("no op %s in the reduce family", name)
	return kernels.Op{}
}

// splitCase is one split of TestSplitReduce: a size and the shares (nil: measured; for
// two devices, else evenly).
type splitCase struct {
	size int
	frac []float64
}

// splitCases are the splits of a whole-array op: sizes about the granule and not
// multiples of it, shares that leave a device out, uneven and measured ones; with all, one
// element and larger sizes (reduce/sum/float32's).
func splitCases(all bool) []splitCase {
	if kerneltest.Small() {
		// Under Oclgrind: two parts of about a granule each.
		return []splitCase{{smallSplit, []float64{0.5, 0.5}}}
	}
	c := []splitCase{{splitGranule + 1, []float64{0, 1}}, {3*splitGranule + 5, []float64{0.3, 0.7}}, {2*splitGranule - 1, nil}}
	if all {
		c = append(c, splitCase{1, []float64{0.5, 0.5}}, splitCase{100003, []float64{0.3, 0.7}}, splitCase{50001, nil})
	}
	return c
}

// smallSplit is the size of the tests' whole-array splits that need only two parts: a
// granule each and a few elements more.
const smallSplit = 2*splitGranule + 3

// TestSplitReduce splits every op of the family across the OpenCL devices found (one
// opened twice where there is one) and checks the combined result against the reference,
// the shares against the fractions asked for, and the model and shape against the
// one-device instance's.
func TestSplitReduce(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	fp64 := !slices.ContainsFunc(devs, func(d *engine.Device) bool { return !d.Info().FP64 })
	for _, op := range Family().Ops {
		cases := splitCases(op.Name == "reduce/sum/float32")
		if strings.HasPrefix(op.Name, "reduce/row") {
			// Rows of reduceCols: 3 and 7 rows.
			cases = []splitCase{{3 * reduceCols, []float64{0.3, 0.7}}, {7 * reduceCols, nil}}
			if kerneltest.Small() {
				cases = cases[:1]
			}
		}
		t.Run(strings.ReplaceAll(op.Name, "/", "_"), func(t *testing.T) {
			if op.Type == "float64" && !fp64 {
				t.Skip("a device reports no fp64")
			}
			for k, c := range cases {
				frac := c.frac
				if frac != nil && len(devs) != 2 {
					frac = kerneltest.Evenly(len(devs))
				}
				p := kernels.Params{Size: c.size, Seed: uint64(k + 1)}
				in, err := op.Split(t.Context(), devs, p, kernels.SplitOptions{Fractions: frac})
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				checkShares(t, in.Shares(), devs, unitsOf(in), frac)
				for range 2 {
					if err := in.Run(t.Context()); err != nil {
						t.Fatal(err)
					}
					if err := in.Verify(t.Context()); err != nil {
						t.Fatalf("size %d, shares %+v: %v", c.size, in.Shares(), err)
					}
				}
				if frac != nil {
					kerneltest.CheckRecheck(t, in) // the parts' results combined over the shares the check tries
				}
				if k > 0 {
					continue
				}
				q, err := devs[0].NewQueue()
				if err != nil {
					t.Fatal(err)
				}
				defer q.Close()
				one, err := op.Setup(t.Context(), q, p)
				if err != nil {
					t.Fatal(err)
				}
				defer one.Close()
				if in.Model() != one.Model() || in.Shape() != one.Shape() {
					t.Errorf("model %+v, shape %q; the one-device instance has %+v, %q", in.Model(), in.Shape(), one.Model(), one.Shape())
				}
			}
		})
	}
}

// unitsOf returns the units a split instance divides: elements, or rows.
func unitsOf(in kernels.SplitInstance) int {
	switch sp := in.(type) {
	case *reduceSplit[float32]:
		return sp.units()
	case *reduceSplit[float64]:
		return sp.units()
	case *reduceSplit[int32]:
		return sp.units()
	}
	return -1
}

func (sp *reduceSplit[T]) units() int {
	if sp.shape.rows > 0 {
		return sp.shape.rows
	}
	return len(sp.x)
}

// checkShares checks that shares name devs in order and add up to total, that each but
// the remainder is a multiple of the granule, and that fixed fractions gave each device
// its rounded share and none to a device given zero.
func checkShares(t *testing.T, shares []kernels.Share, devs []*engine.Device, total int, frac []float64) {
	t.Helper()
	if len(shares) != len(devs) {
		t.Fatalf("%d shares for %d devices", len(shares), len(devs))
	}
	sum := 0
	for i, s := range shares {
		if s.Device != devs[i].ID() {
			t.Errorf("share %d is %s's, want %s's", i, s.Device, devs[i].ID())
		}
		if s.Units < 0 {
			t.Errorf("share %d: %d units", i, s.Units)
		}
		if frac != nil && frac[i] == 0 && s.Units != 0 {
			t.Errorf("share %d: %d units for a fraction of 0", i, s.Units)
		}
		if frac == nil && s.Rate <= 0 {
			t.Errorf("share %d: measured rate %v", i, s.Rate)
		}
		sum += s.Units
	}
	if sum != total {
		t.Errorf("shares add up to %d units, want %d", sum, total)
	}
}

// TestSplitReduceInputs checks that a split reduces the one-device op's input.
func TestSplitReduceInputs(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	q, err := devs[0].NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for _, name := range []string{"reduce/sum/float32", "reduce/argmax/int32", "reduce/rowsum/float32"} {
		op := opNamed(t, name)
		p := kernels.Params{Size: 5000, Seed: 9}
		in, err := op.Split(t.Context(), devs, p, kernels.SplitOptions{Fractions: kerneltest.Evenly(len(devs))})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		one, err := op.Setup(t.Context(), q, p)
		if err != nil {
			t.Fatal(err)
		}
		defer one.Close()
		var same bool
		switch sp := in.(type) {
		case *reduceSplit[float32]:
			x, err := one.(*reduceInstance[float32]).x.Last(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			same = slices.Equal(sp.x, x[0])
		case *reduceSplit[int32]:
			x, err := one.(*reduceInstance[int32]).x.Last(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			same = slices.Equal(sp.x, x[0])
		}
		if !same {
			t.Errorf("%s: the split's input differs from the one-device op's", name)
		}
	}
}

// TestSplitReduceCombine checks the host's combination of parts' results: the first
// occurrence of an extreme across parts, parts that found none (all NaN), int32 sums that
// wrap, and float sums in float64.
func TestSplitReduceCombine(t *testing.T) {
	type part struct {
		units int
		val   float64
		idx   int32
	}
	for _, c := range []struct {
		op      ReduceOp
		isInt   bool
		parts   []part
		val     float64
		wantIdx int
	}{
		{ReduceArgMax, false, []part{{10, 3, 4}, {0, 9, 0}, {5, 3, 1}, {7, 5, 6}}, 5, 21},
		{ReduceArgMax, false, []part{{10, 3, 4}, {5, 3, 0}}, 3, 4},
		{ReduceArgMin, false, []part{{10, math.Inf(1), -1}, {5, 2, 3}}, 2, 13},
		{ReduceArgMin, false, []part{{10, math.Inf(1), -1}, {5, math.Inf(1), -1}}, math.Inf(1), -1},
		{ReduceMax, false, []part{{10, -2, 0}, {5, -1, 0}}, -1, -1},
		{ReduceSum, true, []part{{10, math.MaxInt32, 0}, {5, 2, 0}}, math.MinInt32 + 1, -1},
		{ReduceSum, false, []part{{10, 1e8, 0}, {5, 1, 0}, {3, -1e8, 0}}, 1, -1},
	} {
		var shares []kernels.Share
		var parts []*reducePart[float64]
		var partsI []*reducePart[int32]
		var off int
		for _, p := range c.parts {
			shares = append(shares, kernels.Share{Units: p.units})
			parts = append(parts, &reducePart[float64]{blk: reduceBlock[float64]{off: off, units: p.units}, val: []float64{p.val}, idx: []int32{p.idx}})
			partsI = append(partsI, &reducePart[int32]{blk: reduceBlock[int32]{off: off, units: p.units}, val: []int32{int32(p.val)}, idx: []int32{p.idx}})
			off += p.units
		}
		var val float64
		var idx int
		if c.isInt {
			val, idx = combineParts(c.op, shares, partsI)
		} else {
			val, idx = combineParts(c.op, shares, parts)
		}
		if val != c.val || idx != c.wantIdx {
			t.Errorf("%s of %+v: %v at %d, want %v at %d", c.op, c.parts, val, idx, c.val, c.wantIdx)
		}
	}
}

// TestSplitReduceVerify checks that the split's Verify finds a wrong result: the value,
// the index of an arg op, a row.
func TestSplitReduceVerify(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	frac := kernels.SplitOptions{Fractions: kerneltest.Evenly(len(devs))}
	run := func(name string, size int) kernels.SplitInstance {
		in, err := opNamed(t, name).Split(t.Context(), devs, kernels.Params{Size: size, Seed: 3}, frac)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.Close() })
		if err := in.Verify(t.Context()); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%s: Verify before Run: %v, want an error wrapping ErrInvalidArg", name, err)
		}
		if err := in.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := in.Verify(t.Context()); err != nil {
			t.Fatal(err)
		}
		return in
	}
	wrong := func(name string, in kernels.SplitInstance) {
		t.Helper()
		if err := in.Verify(t.Context()); !errors.Is(err, kernels.ErrVerify) {
			t.Errorf("%s: a wrong result passes: %v", name, err)
		}
	}
	sum := run("reduce/sum/float32", smallSplit).(*reduceSplit[float32])
	sum.val += 1
	wrong("sum", sum)
	arg := run("reduce/argmin/float32", smallSplit).(*reduceSplit[float32])
	arg.idx++
	wrong("argmin", arg)
	rows := run("reduce/rowmax/float32", 3*reduceCols).(*reduceSplit[float32])
	rows.got[len(rows.got)-1]++
	wrong("rowmax", rows)
}

// TestSplitReduceVariants checks that a named variant runs on every device (portable, and
// the vendor BLAS's sum where it is installed) and that a variant a device cannot run
// fails the setup with the reason, as Setup does.
func TestSplitReduceVariants(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	op := opNamed(t, "reduce/sum/float32")
	for _, v := range []string{"portable", "CLBlast"} {
		in, err := op.Split(t.Context(), devs, kernels.Params{Size: smallSplit, Seed: 4, Variant: v}, kernels.SplitOptions{Fractions: kerneltest.Evenly(len(devs))})
		if v == "CLBlast" && (errors.Is(err, engine.ErrUnsupported) || errors.Is(err, engine.ErrUnavailable)) {
			t.Logf("CLBlast: %v", err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		for i, got := range in.(*reduceSplit[float32]).Variants() {
			if in.Shares()[i].Units > 0 && got != v {
				t.Errorf("%s: device %d runs %q", v, i, got)
			}
		}
		if err := in.Run(t.Context()); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if err := in.Verify(t.Context()); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if err := errors.Join(in.Close(), in.Close()); err != nil {
			t.Errorf("Close twice: %v", err)
		}
		if err := in.Run(t.Context()); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("Run after Close: %v, want an error wrapping ErrClosed", err)
		}
	}
	for _, frac := range [][]float64{nil, kerneltest.Evenly(len(devs))} {
		_, err := op.Split(t.Context(), devs, kernels.Params{Size: 1000, Variant: "cuda-shfl"}, kernels.SplitOptions{Fractions: frac})
		if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "cuda-shfl") || strings.Count(err.Error(), "kernels: ") != 1 {
			t.Errorf("cuda-shfl on OpenCL devices: %v, want an error wrapping ErrUnsupported naming the variant, prefixed once", err)
		}
	}
}

// TestSplitReduceInvalid checks the arguments a split refuses with ErrInvalidArg.
func TestSplitReduceInvalid(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	op := opNamed(t, "reduce/max/float32")
	bad := kerneltest.Evenly(len(devs))
	bad[0], bad[1] = bad[0]-1, bad[1]+1
	for _, c := range []struct {
		name string
		devs []*engine.Device
		size int
		frac []float64
	}{
		{"no devices", nil, 64, nil},
		{"nil device", []*engine.Device{devs[0], nil}, 64, nil},
		{"size 0", devs, 0, nil},
		{"fractions too many", devs, 64, append(kerneltest.Evenly(len(devs)), 0)},
		{"fractions sum", devs, 64, append(kerneltest.Evenly(len(devs)-1), 0.5)},
		{"fraction negative", devs, 64, bad},
	} {
		in, err := op.Split(t.Context(), c.devs, kernels.Params{Size: c.size}, kernels.SplitOptions{Fractions: c.frac})
		if !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%s: %v, want an error wrapping ErrInvalidArg", c.name, err)
		}
		if in != nil {
			t.Errorf("%s: an instance with the error", c.name)
			in.Close()
		}
	}
}

// TestSplitReducePoCLDevices splits across two distinct PoCL devices where
// POCL_DEVICES="pthread pthread" makes PoCL expose two.
func TestSplitReducePoCLDevices(t *testing.T) {
	if len(strings.Fields(os.Getenv("POCL_DEVICES"))) < 2 {
		t.Skip(`POCL_DEVICES does not name two PoCL devices (POCL_DEVICES="pthread pthread")`)
	}
	var pocl []*engine.Device
	for _, d := range kerneltest.SplitDevices(t, false) {
		if strings.Contains(d.Info().Platform, "Portable Computing Language") {
			pocl = append(pocl, d)
		}
	}
	if len(pocl) < 2 || pocl[0].ID() == pocl[1].ID() {
		var ids []string
		for _, d := range pocl {
			ids = append(ids, d.ID())
		}
		t.Fatalf("POCL_DEVICES=%q gives PoCL devices %v; want two distinct", os.Getenv("POCL_DEVICES"), ids)
	}
	pocl = pocl[:2]
	for _, name := range []string{"reduce/sum/float32", "reduce/argmax/int32"} {
		for _, frac := range [][]float64{{0.3, 0.7}, nil} {
			in, err := opNamed(t, name).Split(t.Context(), pocl, kernels.Params{Size: 1 << 18, Seed: 8}, kernels.SplitOptions{Fractions: frac})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			checkShares(t, in.Shares(), pocl, 1<<18, frac)
			if err := in.Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := in.Verify(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: shares %s", name, fmt.Sprint(in.Shares()))
		}
	}
}

// TestShardedReduce reduces sharded data on the split devices at edge sizes and layouts
// (a part of no element, sizes the device count does not divide, blocks), finishing
// through a group's all-reduce and through the host: the result is on every device, the
// same bits on each and on both paths; min, max and the int32 sum are exact, a float32
// sum within ShardedTolerance of the float64 reference; with every element on one device
// it is the one-device op's, bit for bit.
func TestShardedReduce(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	qs := kerneltest.Queues(t, devs)
	g, err := group.New(t.Context(), devs, group.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	t.Run("float32", func(t *testing.T) { shardedReduceCase[float32](t, devs, qs, g) })
	t.Run("int32", func(t *testing.T) { shardedReduceCase[int32](t, devs, qs, g) })
}

func shardedReduceCase[T ReduceElem](t *testing.T, devs []*engine.Device, qs []*engine.Queue, g *group.Group) {
	k := len(devs)
	sr, err := NewShardedReduce[T](devs)
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Close()
	sizes := []int{1, 7, 257, 4097, 100003}
	if kerneltest.Small() {
		sizes = sizes[:4] // under Oclgrind the 100003 case took most of a minute
	}
	for _, n := range sizes {
		x := reduceInputs[T](kernels.NewRand(uint64(n), 3), ReduceSum, n)
		for li, l := range []struct {
			name   string
			lay    shard.Layout
			counts []int
		}{
			{"even", shard.ByRows(1), shard.Even(n, k)},
			{"all on last", shard.ByRows(1), append(make([]int, k-1), n)},
			{"blocks of 1000", shard.ByBlocks(1000), nil},
		} {
			xs, err := shard.Scatter(t.Context(), qs, x, l.lay, l.counts)
			if err != nil {
				t.Fatal(err)
			}
			defer xs.Close()
			for oi, op := range []ReduceOp{ReduceSum, ReduceMin, ReduceMax} {
				if kerneltest.Small() && n > 257 && oi != li {
					// Under Oclgrind the many-block size takes one op a layout: sum even, min
					// all on the last device, max in blocks (TestShardedReduce took 22 s there
					// beside another package, most of it at 4097; 9 s so). Every op runs every
					// layout at the smaller sizes, and TestReduce every op's kernels at 4097.
					continue
				}
				name := fmt.Sprintf("%s n=%d %s", op, n, l.name)
				want, _ := ReduceRef(op, x)
				chains := make([]int, k)
				for i, c := range xs.Counts() {
					if c > 0 {
						chains[i] = sr.rs[i].Chain(c)
					}
				}
				sumAbs := 0.0
				for _, v := range x {
					sumAbs += math.Abs(float64(v))
				}
				tol := ShardedTolerance[T](op, chains, sumAbs)
				var first []T
				for _, gr := range []*group.Group{g, nil} {
					r, err := sr.Reduce(t.Context(), gr, op, xs)
					if err != nil {
						t.Fatalf("%s via %s: %v", name, shard.Via(gr), err)
					}
					for i, p := range r.Parts() {
						got, err := p.Buf.Download(t.Context(), p.Queue)
						if err != nil {
							t.Fatal(err)
						}
						if first == nil {
							first = got
						}
						if len(got) != 1 || got[0] != first[0] {
							t.Errorf("%s via %s: device %d holds %v, device 0 %v", name, shard.Via(gr), i, got, first)
						}
					}
					r.Close()
				}
				got := float64(first[0])
				if kernels.TypeOf[T]().Float || op != ReduceSum {
					if d := math.Abs(got - want); !(d <= tol) {
						t.Errorf("%s: %v, want %v within %.3g", name, got, want, tol)
					}
				} else if int32(first[0]) != int32(int64(want)) {
					t.Errorf("%s: %v, want %v modulo 2^32", name, first[0], int32(int64(want)))
				}
				if l.name == "all on last" {
					one, err := sr.rs[k-1].Reduce(t.Context(), qs[k-1], op, xs.Parts()[k-1].Buf)
					if err != nil {
						t.Fatal(err)
					}
					if one != first[0] {
						t.Errorf("%s: %v, the one-device op %v", name, first[0], one)
					}
				}
			}
		}
	}
	xs, err := shard.Scatter(t.Context(), qs, make([]T, 10), shard.Replicate(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer xs.Close()
	if _, err := sr.Reduce(t.Context(), g, ReduceSum, xs); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("reduce of a replicated buffer: %v, want ErrInvalidArg", err)
	}
}
