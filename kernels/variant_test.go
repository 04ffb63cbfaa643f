package kernels_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// fakeInstance is an Instance that only remembers which variant built it.
type fakeInstance struct{ variant string }

func (f fakeInstance) Run(context.Context, *engine.Queue) error    { return nil }
func (f fakeInstance) Verify(context.Context, *engine.Queue) error { return nil }
func (f fakeInstance) Model() kernels.Model                        { return kernels.Model{Bytes: 1} }
func (f fakeInstance) Shape() string                               { return f.variant }
func (f fakeInstance) Close() error                                { return nil }

func setupAs(name string) func(context.Context, *engine.Queue, kernels.Params) (kernels.Instance, error) {
	return func(context.Context, *engine.Queue, kernels.Params) (kernels.Instance, error) {
		return fakeInstance{name}, nil
	}
}

// TestPick checks variant selection on every device found: the first variant that fits in
// priority order, never a vendor baseline unless named, a forced name, Portable, and the
// errors that name what is wrong.
func TestPick(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		op := kernels.Op{Name: "f/op/float32", Variants: []kernels.Variant{
			{Name: "elsewhere", Dialect: engine.DialectCUDA, Backend: "nope", Setup: setupAs("elsewhere")},
			{Name: "vendor", Vendor: true, Setup: setupAs("vendor")},
			{Name: "sm990", MinCompute: 990, Setup: setupAs("sm990")},
			{Name: "cuda", Dialect: engine.DialectCUDA, Setup: setupAs("cuda")},
			{Name: "never", Needs: func(engine.DeviceInfo) error { return errors.New("needs a unicorn") }, Setup: setupAs("never")},
			kernels.PortableVariant(setupAs("portable")),
		}}
		want := "portable"
		if dev.Builds(engine.DialectCUDA) {
			want = "cuda"
		}
		for _, c := range []struct {
			p    kernels.Params
			want string // the variant picked, or a substring of the error
			err  error
		}{
			{kernels.Params{}, want, nil},
			{kernels.Params{Portable: true}, "portable", nil},
			{kernels.Params{Variant: "vendor"}, "vendor", nil},
			{kernels.Params{Variant: "PORTABLE", Portable: true}, "portable", nil},
			{kernels.Params{Variant: "never"}, "needs a unicorn", engine.ErrUnsupported},
			{kernels.Params{Variant: "sm990"}, "sm_990", engine.ErrUnsupported},
			{kernels.Params{Variant: "elsewhere"}, "runs on the nope backend", engine.ErrUnsupported},
			{kernels.Params{Variant: "nosuch"}, "it has elsewhere, vendor, sm990, cuda, never, portable", engine.ErrNotFound},
			{kernels.Params{Variant: "cuda", Portable: true}, "exclude each other", engine.ErrInvalidArg},
		} {
			v, err := op.Pick(dev, c.p)
			switch {
			case c.err == nil && (err != nil || v.Name != c.want):
				t.Errorf("%+v: picked %q, %v; want %q", c.p, v.Name, err, c.want)
			case c.err != nil && (!errors.Is(err, c.err) || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%+v: %v; want an error wrapping %v that says %q", c.p, err, c.err, c.want)
			}
		}
		if !dev.Builds(engine.DialectCUDA) {
			if err := op.Variants[3].Fits(dev); !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "does not build") {
				t.Errorf("a CUDA C++ variant on %s: Fits = %v, want ErrUnsupported saying the device does not build it", dev.ID(), err)
			}
		}
		// Setup runs the variant Pick chooses.
		in, err := op.Setup(t.Context(), q, kernels.Params{Size: 1})
		if err != nil || in.Shape() != want {
			t.Errorf("Setup ran %v, %v; want the %s variant", in, err, want)
		}
	})
}

// TestPickGivesWay checks that Pick passes over a variant whose GivesWay says so at the
// size asked for, takes it where it does not, runs it when named, and says why in the error
// when no variant is left.
func TestPickGivesWay(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		small := kernels.Variant{Name: "small", Setup: setupAs("small"), GivesWay: func(_ *engine.Device, p kernels.Params) string {
			if p.Size > 1000 {
				return "gives way above 1000"
			}
			return ""
		}}
		op := kernels.Op{Name: "f/op/float32", Variants: []kernels.Variant{small, kernels.PortableVariant(setupAs("portable"))}}
		alone := kernels.Op{Name: "f/alone/float32", Variants: []kernels.Variant{small}}
		for _, c := range []struct {
			op   kernels.Op
			p    kernels.Params
			want string // the variant picked, or a substring of the error
		}{
			{op, kernels.Params{Size: 1000}, "small"},
			{op, kernels.Params{}, "small"},
			{op, kernels.Params{Size: 1001}, "portable"},
			{op, kernels.Params{Size: 1001, Variant: "small"}, "small"},
			{alone, kernels.Params{Size: 1001}, "small gives way above 1000"},
		} {
			v, err := c.op.Pick(dev, c.p)
			switch {
			case c.op.Name == alone.Name && (!errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s %+v: %v; want ErrUnsupported saying %q", c.op.Name, c.p, err, c.want)
			case c.op.Name != alone.Name && (err != nil || v.Name != c.want):
				t.Errorf("%s %+v: picked %q, %v; want %q", c.op.Name, c.p, v.Name, err, c.want)
			}
		}
	})
}
