package engine

import (
	"fmt"

	"github.com/prism-compute/prism/engine/driver"
)

// blas1 validates a level-1 call of the vendor BLAS b on q with the named buffers of at
// least need elements each, and returns the library's level-1 interface.
func blas1[T float32 | float64](b *BLAS, q *Queue, what string, n int, bufs map[string]*Buffer[T], need map[string]int) (driver.BLAS1, error) {
	if b == nil {
		return nil, fmt.Errorf("engine: %s: nil BLAS: %w", what, ErrInvalidArg)
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	if err := q.check(); err != nil {
		return nil, err
	}
	if err := b.sameDevice(q.dev); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("engine: %s: n = %d; must be at least 1: %w", what, n, ErrInvalidArg)
	}
	for name, buf := range bufs {
		if buf == nil {
			return nil, fmt.Errorf("engine: %s: nil buffer for %s: %w", what, name, ErrInvalidArg)
		}
		if err := buf.onQueue(q); err != nil {
			return nil, fmt.Errorf("engine: %s: %s: %w", what, name, err)
		}
		if buf.Len() < need[name] {
			return nil, fmt.Errorf("engine: %s of %d elements: buffer %s holds %d, needs %d: %w", what, n, name, buf.Len(), need[name], ErrInvalidArg)
		}
	}
	if elemType[T]() == driver.Float64 && !q.dev.info.FP64 {
		return nil, fmt.Errorf("engine: %s: %s has no fp64: %w", what, q.dev, ErrUnsupported)
	}
	l1, ok := b.drv.(driver.BLAS1)
	if !ok {
		return nil, fmt.Errorf("engine: %s: %s offers no level-1 routines: %w", what, b.lib.Name, ErrUnsupported)
	}
	return l1, nil
}

// Axpy enqueues y = alpha*x + y over the first n elements on q with the device's vendor
// BLAS (cuBLAS cublasSaxpy/Daxpy, CLBlast CLBlastSaxpy/Daxpy). Validated like Gemm; timed
// by Queue.Timed like a kernel.
func Axpy[T float32 | float64](b *BLAS, q *Queue, n int, alpha T, x, y *Buffer[T]) error {
	l1, err := blas1(b, q, "axpy", n, map[string]*Buffer[T]{"x": x, "y": y}, map[string]int{"x": n, "y": n})
	if err != nil {
		return err
	}
	if x == y {
		return fmt.Errorf("engine: axpy: x and y are one buffer: %w", ErrInvalidArg)
	}
	if err := q.vendorCall(); err != nil {
		return err
	}
	ev, err := l1.Axpy(q.drv, driver.AxpyArgs{Type: elemType[T](), N: n, Alpha: float64(alpha), X: x.drv, Y: y.drv})
	if err != nil {
		return fmt.Errorf("engine: %s axpy of %d on %s: %w", b.lib.Name, n, q.dev.id, err)
	}
	return q.keep(ev).Close()
}

// Dot enqueues out[0] = the sum of x[i]*y[i] over the first n elements on q with the
// device's vendor BLAS (cuBLAS cublasSdot/Ddot with the result in device memory, CLBlast
// CLBlastSdot/Ddot). Validated like Gemm; timed by Queue.Timed like a kernel.
func Dot[T float32 | float64](b *BLAS, q *Queue, n int, x, y, out *Buffer[T]) error {
	l1, err := blas1(b, q, "dot", n, map[string]*Buffer[T]{"x": x, "y": y, "out": out}, map[string]int{"x": n, "y": n, "out": 1})
	if err != nil {
		return err
	}
	if out == x || out == y {
		return fmt.Errorf("engine: dot: the output is also an input: %w", ErrInvalidArg)
	}
	if err := q.vendorCall(); err != nil {
		return err
	}
	ev, err := l1.Dot(q.drv, driver.DotArgs{Type: elemType[T](), N: n, X: x.drv, Y: y.drv, Out: out.drv})
	if err != nil {
		return fmt.Errorf("engine: %s dot of %d on %s: %w", b.lib.Name, n, q.dev.id, err)
	}
	return q.keep(ev).Close()
}

// Sum enqueues out[0] = the sum of x[i] (the plain sum, not the absolute one) over the
// first n elements on q with the device's vendor BLAS: CLBlast's CLBlastSsum/Dsum; cuBLAS
// has no plain sum (ErrUnsupported). Validated like Gemm; timed by Queue.Timed.
func Sum[T float32 | float64](b *BLAS, q *Queue, n int, x, out *Buffer[T]) error {
	l1, err := blas1(b, q, "sum", n, map[string]*Buffer[T]{"x": x, "out": out}, map[string]int{"x": n, "out": 1})
	if err != nil {
		return err
	}
	if out == x {
		return fmt.Errorf("engine: sum: the output is also the input: %w", ErrInvalidArg)
	}
	if err := q.vendorCall(); err != nil {
		return err
	}
	ev, err := l1.Sum(q.drv, driver.DotArgs{Type: elemType[T](), N: n, X: x.drv, Out: out.drv})
	if err != nil {
		return fmt.Errorf("engine: %s sum of %d on %s: %w", b.lib.Name, n, q.dev.id, err)
	}
	return q.keep(ev).Close()
}
