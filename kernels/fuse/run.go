package fuse

import (
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Kernel is a fused expression compiled for one device (Compile): the checked Expr (whose
// Kernel method names the kernel function in Source) and the device's kernel. It is safe
// for concurrent use by goroutines that each use their own Queue.
type Kernel struct {
	*Expr
	dev  *engine.Device
	prog *engine.Program
	k    *engine.Kernel
	wg   int
}

// Compile compiles expr (the language of Parse) into one kernel for dev. Kernels are
// cached per device by the normalized expression and its types (Expr.Normal) and the
// device's work-group limit: a second Compile of the same expression, however spaced, builds
// nothing (Builds counts the builds). The kernels close with the device; the cache of
// a closed device is dropped when Compile next meets a device it has no cache for.
// Errors wrap engine.ErrInvalidArg for a bad expression (with its column), and
// engine.ErrUnsupported for float64 on a device without fp64.
func Compile(dev *engine.Device, expr string, types Types) (*Kernel, error) {
	if dev == nil {
		return nil, fmt.Errorf("fuse: nil device: %w", engine.ErrInvalidArg)
	}
	e, err := Parse(expr, types)
	if err != nil {
		return nil, err
	}
	if e.fp64 && !dev.Info().FP64 {
		return nil, fmt.Errorf("fuse %q: float64 on %s, which has no fp64: %w", expr, dev.ID(), engine.ErrUnsupported)
	}
	c := cacheOf(dev)
	c.mu.Lock()
	defer c.mu.Unlock()
	// The work-group size follows the device's limits, which PRISM_MAX_WORK_GROUP lowers.
	key := fmt.Sprintf("%s; limit %d", e.norm, kernels.DeviceLimits(dev).WorkGroup)
	if f, ok := c.byKey[key]; ok {
		return &Kernel{Expr: e, dev: dev, prog: f.prog, k: f.k, wg: f.wg}, nil
	}
	b, err := kernels.Fit(dev, "fused", func(lim kernels.Limits) (*build, kernels.Shape, error) {
		wg := lim.Group(256)
		prog, err := dev.Build(e.code)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		c.builds++
		k, err := prog.Kernel(e.kernel)
		if err != nil {
			return nil, kernels.Shape{}, errors.Join(err, prog.Close())
		}
		f := &Kernel{Expr: e, dev: dev, prog: prog, k: k, wg: wg}
		return &build{f}, kernels.Shape{Items: wg, Kernels: []*engine.Kernel{k}}, nil
	})
	if err != nil {
		return nil, err
	}
	f := b.f
	c.byKey[key] = f
	return f, nil
}

// build is one build of a Kernel, which kernels.Fit closes when the kernel refuses its
// work-group size. A Kernel has no Close: its kernel is the device cache's, closed with
// the device.
type build struct{ f *Kernel }

func (b *build) Close() error { return errors.Join(b.f.k.Close(), b.f.prog.Close()) }

// WorkGroup returns the work-group size of the launches.
func (f *Kernel) WorkGroup() int { return f.wg }

// Run launches the kernel over the first n elements: args holds every argument of Params
// by name: a buffer as *engine.Buffer of its element type with at least n elements, a
// scalar as a Go number (converted to the scalar's type).
func (f *Kernel) Run(q *engine.Queue, n int, args map[string]any) error {
	list := make([]any, len(f.params))
	for k, p := range f.params {
		a, ok := args[p.Name]
		if !ok {
			return fmt.Errorf("fuse %q: no argument %s: %w", f.src, p.Name, engine.ErrInvalidArg)
		}
		list[k] = a
	}
	if len(args) != len(f.params) {
		for name := range args {
			if _, ok := f.pidx[name]; !ok {
				return fmt.Errorf("fuse %q: argument %s is not in the expression: %w", f.src, name, engine.ErrInvalidArg)
			}
		}
	}
	return f.Launch(q, n, list...)
}

// Launch is Run with the arguments in the order of Params.
func (f *Kernel) Launch(q *engine.Queue, n int, args ...any) error {
	if len(args) != len(f.params) {
		return fmt.Errorf("fuse %q: %d arguments, want %d: %w", f.src, len(args), len(f.params), engine.ErrInvalidArg)
	}
	if n < 1 || n > math.MaxInt32 {
		return fmt.Errorf("fuse %q: n = %d; must be in [1, %d]: %w", f.src, n, math.MaxInt32, engine.ErrInvalidArg)
	}
	list := make([]any, 0, len(args)+1)
	for k, p := range f.params {
		a, err := checkArg(p, args[k], n)
		if err != nil {
			return fmt.Errorf("fuse %q: %w", f.src, err)
		}
		list = append(list, a)
	}
	list = append(list, int32(n))
	return q.Launch(f.k, engine.Range1D(engine.RoundUp(n, f.wg), f.wg), list...)
}

// checkArg checks one argument and converts a scalar to its type.
func checkArg(p Param, a any, n int) (any, error) {
	if p.Scalar {
		v, ok := toFloat(a)
		if !ok {
			return nil, fmt.Errorf("scalar %s is %T, not a number: %w", p.Name, a, engine.ErrInvalidArg)
		}
		switch p.Type {
		case "float32":
			return float32(v), nil
		case "float64":
			return v, nil
		case "int32":
			return int32(v), nil
		}
		return uint32(v), nil
	}
	var l int
	ok := false
	switch b := a.(type) {
	case *engine.Buffer[float32]:
		ok = p.Type == "float32" && b != nil
		if ok {
			l = b.Len()
		}
	case *engine.Buffer[float64]:
		ok = p.Type == "float64" && b != nil
		if ok {
			l = b.Len()
		}
	case *engine.Buffer[int32]:
		ok = p.Type == "int32" && b != nil
		if ok {
			l = b.Len()
		}
	case *engine.Buffer[uint32]:
		ok = p.Type == "uint32" && b != nil
		if ok {
			l = b.Len()
		}
	}
	if !ok {
		return nil, fmt.Errorf("buffer %s is %T, want a non-nil *engine.Buffer[%s]: %w", p.Name, a, p.Type, engine.ErrInvalidArg)
	}
	if l < n {
		return nil, fmt.Errorf("buffer %s has %d elements, need %d: %w", p.Name, l, n, engine.ErrInvalidArg)
	}
	return a, nil
}
