package cuda

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// buffer is device memory from cuMemAlloc_v2. It is safe for concurrent use.
type buffer struct {
	ptr    devptr
	size   int64
	d      *device
	closed atomic.Bool
}

var _ driver.Buffer = (*buffer)(nil)

// Size returns the size in bytes.
func (b *buffer) Size() int64 { return b.size }

// Close frees the memory (cuMemFree_v2). Commands of any queue may still use it, so Close
// first waits for the context's outstanding work (cuCtxSynchronize), as OpenCL keeps a
// released buffer alive until its commands complete. Idempotent.
func (b *buffer) Close() error {
	if !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	b.d.th.do(func() {
		errs = append(errs, check("cuCtxSynchronize", cuCtxSynchronize()))
		errs = append(errs, check(fmt.Sprintf("cuMemFree_v2(%d bytes)", b.size), cuMemFree(b.ptr)))
	})
	return errors.Join(errs...)
}

func asBuffer(b driver.Buffer) (*buffer, error) {
	cb, ok := b.(*buffer)
	if !ok || cb == nil {
		return nil, fmt.Errorf("cuda: buffer %T is not a CUDA buffer: %w", b, engine.ErrInvalidArg)
	}
	if cb.closed.Load() {
		return nil, errClosed("buffer")
	}
	return cb, nil
}

// HostBuffer is page-locked (pinned) host memory from cuMemHostAlloc, portable to every
// context. Copies between it and the device run at the full speed of the bus and need no
// staging: pass a slice over it (HostSlice) to engine's Buffer.Write and Buffer.Read. It is
// safe for concurrent use; the memory stays valid until Close.
type HostBuffer struct {
	p      unsafe.Pointer
	size   int64
	d      *device
	closed atomic.Bool
}

// AllocHost allocates size bytes (size > 0) of page-locked host memory (cuMemHostAlloc
// with CU_MEMHOSTALLOC_PORTABLE).
func (d *device) AllocHost(size int64) (*HostBuffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("cuda: AllocHost(%d bytes): size must be positive: %w", size, engine.ErrInvalidArg)
	}
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	var p unsafe.Pointer
	err := d.th.call(func() error {
		var r Result
		p, r = cuMemHostAllocPortable(size)
		return check(fmt.Sprintf("cuMemHostAlloc(%d bytes, CU_MEMHOSTALLOC_PORTABLE)", size), r)
	})
	if err != nil {
		return nil, err
	}
	return &HostBuffer{p: p, size: size, d: d}, nil
}

// Len returns the size in bytes.
func (h *HostBuffer) Len() int64 { return h.size }

// Bytes returns the memory as a byte slice, valid until Close.
func (h *HostBuffer) Bytes() []byte {
	if h.closed.Load() {
		return nil
	}
	return unsafe.Slice((*byte)(h.p), h.size)
}

// HostSlice returns the memory of h as a slice of T (as many whole elements as fit), valid
// until h is closed.
func HostSlice[T engine.Scalar](h *HostBuffer) []T {
	if h == nil || h.closed.Load() {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(h.p), h.size/int64(unsafe.Sizeof(z)))
}

// Close frees the memory (cuMemFreeHost). No copy from or to it may be in progress.
// Idempotent.
func (h *HostBuffer) Close() error {
	if h == nil || !h.closed.CompareAndSwap(false, true) {
		return nil
	}
	return h.d.th.call(func() error {
		return check("cuMemFreeHost", cuMemFreeHost(h.p))
	})
}
