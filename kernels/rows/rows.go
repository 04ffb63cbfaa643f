package rows

import (
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// rowCache is the CACHE tunable of softmax.cl and layernorm.cl: rows of at most
// WG*rowCache elements are read once into registers.
const rowCache = 8

// buildRows compiles a one-work-group-per-row source (softmax.cl, layernorm.cl) with WG and
// CACHE and returns its kernel, which must allow work-groups of WG items.
func buildRows[T kernels.Float](dev *engine.Device, src, kernel string) (*engine.Program, *engine.Kernel, int, error) {
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, nil, 0, err
	}
	b, err := kernels.Fit(dev, kernel, func(lim kernels.Limits) (*rowsBuild, kernels.Shape, error) {
		wg := lim.Group(256)
		prog, err := dev.Build(src, append(opts, fmt.Sprintf("-DWG=%d", wg), fmt.Sprintf("-DCACHE=%d", rowCache))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		b := &rowsBuild{prog: prog, wg: wg}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &b.k, Name: kernel})
		if err != nil {
			b.Close()
			return nil, kernels.Shape{}, err
		}
		return b, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
	if err != nil {
		return nil, nil, 0, err
	}
	return b.prog, b.k, b.wg, nil
}

// rowsBuild is one build of a row source, for kernels.Fit.
type rowsBuild struct {
	prog *engine.Program
	k    *engine.Kernel
	wg   int
}

func (b *rowsBuild) Close() error { return errors.Join(b.k.Close(), b.prog.Close()) }

// rowBuf is one buffer argument of a row operation: a [rows, cols] matrix, or a vector of
// cols elements (gamma, beta).
type rowBuf[T kernels.Float] struct {
	name string
	b    *engine.Buffer[T]
	vec  bool
}

// checkRows validates a [rows, cols] row operation: positive dims, rows*cols within int32,
// no nil buffer, matrices at least rows*cols long and vectors at least cols long. Errors
// wrap engine.ErrInvalidArg.
func checkRows[T kernels.Float](op string, rows, cols int, bufs ...rowBuf[T]) error {
	if rows < 1 || cols < 1 {
		return fmt.Errorf("kernels: %s: shape [%d, %d]; rows and cols must be at least 1: %w", op, rows, cols, engine.ErrInvalidArg)
	}
	if rows > math.MaxInt32/cols {
		return fmt.Errorf("kernels: %s: shape [%d, %d] has more than 2^31-1 elements: %w", op, rows, cols, engine.ErrInvalidArg)
	}
	for _, a := range bufs {
		n := rows * cols
		if a.vec {
			n = cols
		}
		if a.b == nil {
			return fmt.Errorf("kernels: %s: nil buffer %s: %w", op, a.name, engine.ErrInvalidArg)
		}
		if a.b.Len() < n {
			return fmt.Errorf("kernels: %s: buffer %s holds %d elements, shape [%d, %d] needs %d: %w", op, a.name, a.b.Len(), rows, cols, n, engine.ErrInvalidArg)
		}
	}
	return nil
}
