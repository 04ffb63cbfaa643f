package kernels

import (
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
)

// CheckGroups refuses a launch of groups work-groups of wg items when it would exceed 2^32-1
// work-items in all, with an error naming op and wrapping engine.ErrInvalidArg.
func CheckGroups(op string, groups, wg int) error {
	if groups > math.MaxUint32/wg {
		return fmt.Errorf("kernels: %s: %d work-groups of %d items exceed 2^32-1 work-items: %w", op, groups, wg, engine.ErrInvalidArg)
	}
	return nil
}

// LenOf returns b.Len(), or 0 for a nil buffer (for the error that says a scratch buffer is
// missing or short).
func LenOf[T engine.Scalar](b *engine.Buffer[T]) int {
	if b == nil {
		return 0
	}
	return b.Len()
}

// BuildCUDA compiles the CUDA C++ source src (named file in build errors) for dev with opts
// and returns it with its kernel name: an error wrapping engine.ErrUnsupported on a device
// that builds no CUDA C++, or where the compiled kernel takes fewer than threads threads per
// block (its registers allow fewer).
func BuildCUDA(dev *engine.Device, src, file, name string, threads int, opts []string) (*engine.Program, *engine.Kernel, error) {
	prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: src, Name: file}, opts...)
	if err != nil {
		return nil, nil, err
	}
	k, err := prog.Kernel(name)
	if err != nil {
		prog.Close()
		return nil, nil, err
	}
	if most := k.MaxWorkGroupSize(); most < threads {
		k.Close()
		prog.Close()
		return nil, nil, fmt.Errorf("kernels: %s takes %d threads per block on %s, needs %d: %w", name, most, dev.ID(), threads, engine.ErrUnsupported)
	}
	return prog, k, nil
}
