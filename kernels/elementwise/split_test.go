package elementwise

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/prism-compute/prism/engine"
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
	for _, c := range []struct {
		name string
		devs []*engine.Device
		p    kernels.Params
		f    []float64
		want error
	}{
		{"size 0", devs, kernels.Params{}, nil, engine.ErrInvalidArg},
		{"size too large", devs, kernels.Params{Size: MapMax + 1}, nil, engine.ErrInvalidArg},
		{"no device", nil, ok, nil, engine.ErrInvalidArg},
		{"nil device", []*engine.Device{nil, devs[0]}, ok, nil, engine.ErrInvalidArg},
		{"fractions long", devs, ok, append(make([]float64, len(devs)), 1), engine.ErrInvalidArg},
		{"fraction infinite", devs, ok, append([]float64{math.Inf(1), 0}, make([]float64, len(devs)-2)...), engine.ErrInvalidArg},
		{"tunables", devs, kernels.Params{Size: 1000, Tunables: "VEC=2"}, nil, engine.ErrInvalidArg},
		{"vendor variant", devs, kernels.Params{Size: 1000, Variant: "CLBlast"}, nil, engine.ErrUnsupported},
	} {
		in, err := op.Split(t.Context(), c.devs, c.p, kernels.SplitOptions{Fractions: c.f})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if in != nil {
			in.Close()
		}
	}
	in, err := op.Split(t.Context(), devs, ok, kernels.SplitOptions{Fractions: kerneltest.SplitFractions(len(devs))[0]})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Verify(t.Context()); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Verify before Run: %v, want ErrInvalidArg", err)
	}
	if err := in.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	in.(*mapSplitInstance[float32]).out[999] += 0.5
	if err := in.Verify(t.Context()); !errors.Is(err, kernels.ErrVerify) {
		t.Errorf("Verify after a wrong element: %v, want ErrVerify", err)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if err := in.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := in.Run(context.Background()); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Run after Close: %v, want ErrClosed", err)
	}
}
