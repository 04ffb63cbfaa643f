package elementwise

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// fracName names fixed fractions in a subtest's name, or "measured" for nil.
func fracName(f []float64) string {
	if f == nil {
		return "measured"
	}
	return fmt.Sprint(f)
}

// fp64Devices returns the devices of devs with fp64, the one there is opened twice (closed
// when the test ends); none when there is none.
func fp64Devices(t *testing.T, devs []*engine.Device) []*engine.Device {
	t.Helper()
	var out []*engine.Device
	for _, d := range devs {
		if d.Info().FP64 {
			out = append(out, d)
		}
	}
	if len(out) == 1 {
		d, err := engine.Open(context.Background(), out[0].ID())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		out = append(out, d)
	}
	return out
}

// TestMapSplit splits every map op across the devices found, with fixed and measured
// shares, at sizes around the work-group's elements, and checks the output against the
// reference.
func TestMapSplit(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	m, err := NewMap[float32](devs[0])
	if err != nil {
		t.Fatal(err)
	}
	group := m.WorkGroup() * m.Vec()
	m.Close()
	f64 := fp64Devices(t, devs)
	// Every setup builds the family on each device (about 100 ms on PoCL): per op two
	// shares at 3 groups and 5 elements, one at 7 or group+1, the shares in turn across
	// the ops (fixed ones, then measured).
	for oi, op := range Family().Ops {
		devs := devs
		if op.Type == "float64" {
			devs = f64
		}
		fractions := append(kerneltest.SplitFractions(len(devs)), nil)
		type tc struct{ n, fi int }
		cases := []tc{{3*group + 5, oi}, {3*group + 5, oi + 1}}
		if !kerneltest.Small() { // Oclgrind: the main size only
			cases = append(cases, tc{[]int{7, group + 1}[oi%2], oi + 2})
		}
		for _, c := range cases {
			n, f := c.n, fractions[c.fi%len(fractions)]
			t.Run(fmt.Sprintf("%s/n=%d/f=%s", op.Name, n, fracName(f)), func(t *testing.T) {
				if len(devs) == 0 {
					t.Skip("no device reports fp64")
				}
				in, err := op.Split(t.Context(), devs, kernels.Params{Size: n, Seed: uint64(n)}, kernels.SplitOptions{Fractions: f})
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				kerneltest.CheckShares(t, in.Shares(), n, f)
				for range 2 {
					if err := in.Run(t.Context()); err != nil {
						t.Fatal(err)
					}
				}
				if err := in.Verify(t.Context()); err != nil {
					t.Fatal(err)
				}
				if f != nil {
					kerneltest.CheckRecheck(t, in) // the host data laid out for one device and back
				}
				if in.Shape() != fmt.Sprintf("n=%d", n) {
					t.Errorf("Shape %q", in.Shape())
				}
			})
		}
	}
}

// TestMapSplitSameAsOneDevice checks that a split draws the one-device op's inputs and
// scalars and reports its shape and model, and that on devices that compute alike its
// output is the one-device op's bit for bit.
func TestMapSplitSameAsOneDevice(t *testing.T) {
	devs := kerneltest.SplitDevices(t, true)
	q, err := devs[0].NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	n := 3001
	for _, op := range Family().Ops {
		if op.Type != "float32" {
			continue
		}
		t.Run(op.Name, func(t *testing.T) {
			one, err := op.Setup(t.Context(), q, kernels.Params{Size: n, Seed: 8, Variant: kernels.PortableName})
			if err != nil {
				t.Fatal(err)
			}
			defer one.Close()
			if err := one.Run(t.Context(), q); err != nil {
				t.Fatal(err)
			}
			want := one.(*mapInstance[float32])
			wantOut, err := want.out.Download(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			wantX, err := want.x.Last(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			in, err := op.Split(t.Context(), devs, kernels.Params{Size: n, Seed: 8}, kernels.SplitOptions{Fractions: kerneltest.SplitFractions(len(devs))[1]})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if err := in.Run(t.Context()); err != nil {
				t.Fatal(err)
			}
			got := in.(*mapSplitInstance[float32])
			if in.Shape() != one.Shape() || in.Model() != one.Model() {
				t.Errorf("shape %q, model %+v; one device %q, %+v", in.Shape(), in.Model(), one.Shape(), one.Model())
			}
			if got.a != want.a || got.b != want.b {
				t.Fatalf("scalars %v, %v; one device %v, %v", got.a, got.b, want.a, want.b)
			}
			for i := range wantX {
				if err := kernels.CheckEqual(fmt.Sprintf("input %d", i), got.x[i], wantX[i]); err != nil {
					t.Fatal(err)
				}
			}
			bits := func(x []float32) []uint32 {
				b := make([]uint32, len(x))
				for i, v := range x {
					b[i] = math.Float32bits(v)
				}
				return b
			}
			if err := kernels.CheckEqual("output bits", bits(got.out), bits(wantOut)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestMapSplitInvalid(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	op := Family().Ops[0] // axpy float32
	ok := kernels.Params{Size: 1000, Seed: 1}
	kerneltest.CheckSplitRefusals(t, op, append(kerneltest.PlacementRefusals(devs, ok), []kerneltest.SplitRefusal{
		{Name: "size 0", Devs: devs, P: kernels.Params{}, Want: engine.ErrInvalidArg},
		{Name: "size too large", Devs: devs, P: kernels.Params{Size: MapMax + 1}, Want: engine.ErrInvalidArg},
		{Name: "tunables", Devs: devs, P: kernels.Params{Size: 1000, Tunables: "VEC=2"}, Want: engine.ErrInvalidArg},
		{Name: "vendor variant", Devs: devs, P: kernels.Params{Size: 1000, Variant: "CLBlast"}, Want: engine.ErrUnsupported},
	}...))
	in, err := op.Split(t.Context(), devs, ok, kernels.SplitOptions{Fractions: kerneltest.SplitFractions(len(devs))[0]})
	if err != nil {
		t.Fatal(err)
	}
	kerneltest.CheckSplitLifecycle(t, in, "a wrong element", func() { in.(*mapSplitInstance[float32]).out[999] += 0.5 })
}

// TestShardedMap maps sharded data on every split device (PoCL and Rusticl, or two PoCL
// devices) at edge sizes and layouts (parts of no element, sizes the device count does
// not divide, blocks), chains a second op on the first's result with no host round trip,
// and checks every element bit for bit against the one-device op on the device that holds
// it, and against the float64 reference within MapTolerance; the inputs stay unchanged.
func TestShardedMap(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	k := len(devs)
	qs := kerneltest.Queues(t, devs)
	sm, err := NewShardedMap[float32](devs)
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	for _, n := range []int{1, 7, 257, 4097} {
		for _, l := range []struct {
			name   string
			lay    shard.Layout
			counts []int
		}{
			{"even", shard.ByRows(1), shard.Even(n, k)},
			{"all on last", shard.ByRows(1), append(make([]int, k-1), n)},
			{"blocks of 100", shard.ByBlocks(100), nil},
		} {
			for _, op := range []MapOp{MapAxpy, MapFma, MapExp} {
				name := fmt.Sprintf("%s n=%d %s", op, n, l.name)
				rng := kernels.NewRand(uint64(n), 2)
				lo, hi := mapRange(op)
				var host [][]float32
				var in []*shard.Buffer[float32]
				for range mapInputs(op) {
					x := kernels.RandFloats[float32](rng, n, lo, hi)
					b, err := shard.Scatter(t.Context(), qs, x, l.lay, l.counts)
					if err != nil {
						t.Fatal(err)
					}
					defer b.Close()
					host, in = append(host, x), append(in, b)
				}
				const a, c = float32(0.75), float32(-1.25)
				out, err := sm.Apply(op, a, c, in...)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				defer out.Close()
				// Chained on the devices: relu of the first result.
				chained, err := sm.Apply(MapRelu, 0, 0, out)
				if err != nil {
					t.Fatalf("%s then relu: %v", name, err)
				}
				defer chained.Close()
				got, err := out.Gather(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				gotChain, err := chained.Gather(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				want := MapRef(op, float64(a), float64(c), host...)
				tol := MapTolerance(op, float64(a), float64(c), host...)
				for j := range got {
					if d := math.Abs(float64(got[j]) - want[j]); !(d <= tol[j]) {
						t.Fatalf("%s: element %d = %v, want %v within %.3g", name, j, got[j], want[j], tol[j])
					}
					if r := max(got[j], 0); math.Float32bits(gotChain[j]) != math.Float32bits(r) {
						t.Fatalf("%s then relu: element %d = %v, want %v", name, j, gotChain[j], r)
					}
				}
				// Bit for bit the one-device op on the device holding each element.
				owner := make([]int, n)
				for i, p := range out.Parts() {
					for at := p.Off; l.lay.Kind == shard.Rows && at < p.Off+p.Len; at++ {
						owner[at] = i
					}
				}
				if l.lay.Kind == shard.Blocks {
					for j := range owner {
						owner[j] = j / l.lay.Block % k
					}
				}
				for i := range devs {
					one := oneDevice(t, sm.maps[i], qs[i], op, a, c, host)
					for j := range got {
						if owner[j] == i && math.Float32bits(got[j]) != math.Float32bits(one[j]) {
							t.Fatalf("%s: element %d on %s = %v, the one-device op there %v", name, j, devs[i].ID(), got[j], one[j])
						}
					}
				}
				for x, b := range in {
					if back, err := b.Gather(t.Context()); err != nil || !slices.Equal(back, host[x]) {
						t.Fatalf("%s: input %d changed (%v)", name, x, err)
					}
				}
			}
		}
	}
	// Inputs of other layouts are refused.
	x, _ := shard.Scatter(t.Context(), qs, make([]float32, 10), shard.ByRows(1), shard.Even(10, k))
	y, _ := shard.Scatter(t.Context(), qs, make([]float32, 10), shard.ByBlocks(3), nil)
	defer x.Close()
	defer y.Close()
	if _, err := sm.Apply(MapAxpy, 1, 0, x, y); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("axpy of rows and blocks: %v, want ErrInvalidArg", err)
	}
}

// oneDevice runs op on the whole of host on one device and reads the output back.
func oneDevice(t *testing.T, m *Map[float32], q *engine.Queue, op MapOp, a, b float32, host [][]float32) []float32 {
	t.Helper()
	out, err := engine.NewBuffer[float32](q.Device(), len(host[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	bufs := []*engine.Buffer[float32]{out}
	for _, x := range host {
		b, err := engine.Upload(t.Context(), q, x)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		bufs = append(bufs, b)
	}
	if err := m.Run(q, op, a, b, bufs...); err != nil {
		t.Fatal(err)
	}
	got, err := out.Download(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
