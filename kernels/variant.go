package kernels

import (
	"context"
	"fmt"
	"strings"

	"github.com/prism-compute/prism/engine"
)

// PortableName is the name of every op's portable OpenCL C variant.
const PortableName = "portable"

// Variant is one implementation of an Op: the portable OpenCL C kernel every backend runs,
// a backend-specific kernel (CUDA C++ with warp shuffles, tensor cores, ...), or a vendor
// library's routine run on the same inputs as a baseline (cuBLAS, CLBlast, ...). Its
// requirements are data, so that `prism kernels --device ID` can say which variant runs
// where, and why the others do not.
type Variant struct {
	// Name identifies the variant within its op: "portable", or the backend and what the
	// variant uses ("cuda-shfl", "cuda-sm80"), or the library ("cuBLAS", "CLBlast").
	Name string
	// Doc is one line: how this implementation differs.
	Doc string
	// Dialect is the language of its kernel source; the device must build it.
	Dialect engine.Dialect
	// Backend is the backend it runs on ("cuda", "opencl"); empty for every backend.
	Backend string
	// MinCompute is the lowest NVIDIA compute capability it needs, as major*10+minor (80
	// for sm_80); 0 for none.
	MinCompute int
	// Needs checks further requirements on the device (fp64, fp16, local memory, ...):
	// nil, or an error that says what is missing. Nil Needs means none.
	Needs func(engine.DeviceInfo) error
	// Vendor marks a vendor library's implementation: a baseline to compare with, never
	// chosen by Pick unless named.
	Vendor bool
	// GivesWay, when set, says why Pick passes the variant over for the next one that fits
	// at p (a size at which a later variant is measured faster), "" where it takes it. A
	// variant named in Params.Variant runs regardless.
	GivesWay func(dev *engine.Device, p Params) string
	// Tunables lists the variant's tunables with their defaults, as listings show them.
	Tunables string
	// Candidates, when set, lists the tunable sets `prism tune` measures on dev (each
	// passed to Setup as Params.Tunables); nil for a variant that takes no tunables.
	Candidates func(dev *engine.Device) []string
	// Setup builds the variant on q's device with the op's seeded random inputs. ctx bounds
	// the setup's waits (uploading the inputs, a calibration run); when it ends, Setup
	// returns its error. It returns an error wrapping engine.ErrUnsupported when the
	// device cannot run it.
	Setup func(ctx context.Context, q *engine.Queue, p Params) (Instance, error)
}

// LibraryReporter is implemented by the instances of vendor variants: Library names the
// library that ran and its version ("cuBLAS 13.0.2"), for reports.
type LibraryReporter interface {
	Library() string
}

// Portable returns the variant list of an op that has only its portable OpenCL C kernel.
func Portable(setup func(ctx context.Context, q *engine.Queue, p Params) (Instance, error)) []Variant {
	return []Variant{PortableVariant(setup)}
}

// PortableVariant returns the portable OpenCL C variant built by setup, for the end of a
// variant list.
func PortableVariant(setup func(ctx context.Context, q *engine.Queue, p Params) (Instance, error)) Variant {
	return Variant{Name: PortableName, Doc: "the OpenCL C kernel every backend runs", Dialect: engine.DialectOpenCL, Setup: setup}
}

// Fits reports whether dev can run v: nil, or an error wrapping engine.ErrUnsupported that
// says what the device lacks.
func (v Variant) Fits(dev *engine.Device) error {
	if why := v.misfit(dev); why != "" {
		return fmt.Errorf("kernels: variant %s %s: %w", v.Name, why, engine.ErrUnsupported)
	}
	return nil
}

// misfit returns why dev cannot run v ("needs compute capability sm_80 or newer; ..."), or
// "" when it can.
func (v Variant) misfit(dev *engine.Device) string {
	info := dev.Info()
	var why string
	switch {
	case v.Backend != "" && v.Backend != dev.Backend():
		why = fmt.Sprintf("runs on the %s backend; %s is %s", v.Backend, dev.ID(), dev.Backend())
	case !dev.Builds(v.Dialect):
		why = fmt.Sprintf("is %s, which %s does not build", v.Dialect, dev.ID())
	case v.MinCompute > 0 && info.ComputeCapability < v.MinCompute:
		have := "none"
		if info.ComputeCapability > 0 {
			have = fmt.Sprintf("sm_%d", info.ComputeCapability)
		}
		why = fmt.Sprintf("needs compute capability sm_%d or newer; %s has %s", v.MinCompute, dev.ID(), have)
	case v.Needs != nil:
		if err := v.Needs(info); err != nil {
			why = err.Error()
		}
	}
	return why
}

// VariantNames returns the names of op's variants in priority order.
func (op Op) VariantNames() []string {
	names := make([]string, len(op.Variants))
	for i, v := range op.Variants {
		names[i] = v.Name
	}
	return names
}

// Variant returns op's variant named name, or an error wrapping engine.ErrNotFound that
// lists the ones it has.
func (op Op) Variant(name string) (Variant, error) {
	for _, v := range op.Variants {
		if strings.EqualFold(v.Name, name) {
			return v, nil
		}
	}
	return Variant{}, fmt.Errorf("kernels: %s has no variant %q (it has %s): %w", op.Name, name, strings.Join(op.VariantNames(), ", "), engine.ErrNotFound)
}

// Pick returns the variant of op that runs on dev with p: the one p.Variant names (an
// error wrapping engine.ErrUnsupported with the reason when dev cannot run it), the
// portable one when p.Portable, else the first variant in priority order that fits dev and
// does not give way at p (Variant.GivesWay), vendor baselines excepted.
func (op Op) Pick(dev *engine.Device, p Params) (Variant, error) {
	name := p.Variant
	if p.Portable {
		if name != "" && !strings.EqualFold(name, PortableName) {
			return Variant{}, fmt.Errorf("kernels: %s: variant %q and portable exclude each other: %w", op.Name, name, engine.ErrInvalidArg)
		}
		name = PortableName
	}
	if name != "" {
		v, err := op.Variant(name)
		if err != nil {
			return Variant{}, err
		}
		if why := v.misfit(dev); why != "" {
			return Variant{}, fmt.Errorf("kernels: %s: variant %s %s: %w", op.Name, v.Name, why, engine.ErrUnsupported)
		}
		if p.Tunables != "" && v.Candidates == nil {
			return Variant{}, fmt.Errorf("kernels: %s: variant %s takes no tunables (asked for %q): %w", op.Name, v.Name, p.Tunables, engine.ErrInvalidArg)
		}
		return v, nil
	}
	if p.Tunables != "" {
		return Variant{}, fmt.Errorf("kernels: %s: tunables %q need a variant named: %w", op.Name, p.Tunables, engine.ErrInvalidArg)
	}
	var why []string
	for _, v := range op.Variants {
		if v.Vendor {
			continue
		}
		w := v.misfit(dev)
		if w == "" && v.GivesWay != nil {
			w = v.GivesWay(dev, p)
		}
		if w == "" {
			return v, nil
		}
		why = append(why, v.Name+" "+w)
	}
	return Variant{}, fmt.Errorf("kernels: no variant of %s runs on %s (%s): %w", op.Name, dev.ID(), strings.Join(why, "; "), engine.ErrUnsupported)
}

// Setup builds op on q's device with seeded random inputs, through the variant Pick
// chooses; ctx bounds its waits, as for Variant.Setup. It returns an error wrapping
// engine.ErrUnsupported when the device cannot run it (no fp64, a forced variant that
// does not fit, ...).
func (op Op) Setup(ctx context.Context, q *engine.Queue, p Params) (Instance, error) {
	// A bad size is the caller's whatever the variant: checked before a variant loads a
	// library that may be missing. A shape is checked by the family that takes it.
	if err := CheckSize(op.Name, p); err != nil && p.Shape == "" {
		return nil, err
	}
	v, err := op.Pick(q.Device(), p)
	if err != nil {
		return nil, err
	}
	return v.Setup(ctx, q, p)
}
