package transfer

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Guard is the number of sentinel bytes after the data a copy writes, in the device buffer
// of a host-to-device copy and in the host memory of a device-to-host one: a copy must
// leave them as they are.
const Guard = 64

// Sentinel is the byte of the guard bands (the SENTINEL tunable of transfer.cl).
const Sentinel byte = 0xa5

// MaxBytes is the most bytes one copy of the family moves: the kernels index bytes with
// ints, the guard band included.
const MaxBytes = math.MaxInt32 - Guard

// Transfer runs the transfer family's kernels (transfer.cl) on one device: the pattern
// written on the device (Fill) and checked there (Check). It is safe for concurrent use by
// goroutines that each use their own Queue.
type Transfer struct {
	prog        *engine.Program
	fill, check *engine.Kernel
	wg          int
}

// NewTransfer compiles the family for dev, with work-groups of 256 items, fewer where the
// device or the compiled kernels allow fewer.
func NewTransfer(dev *engine.Device) (*Transfer, error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: transfer: nil device: %w", engine.ErrInvalidArg)
	}
	return kernels.Fit(dev, "transfer", func(lim kernels.Limits) (*Transfer, kernels.Shape, error) {
		wg := lim.Group(256)
		prog, err := dev.Build(source, fmt.Sprintf("-DSENTINEL=%#x", Sentinel))
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		t := &Transfer{prog: prog, wg: wg}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &t.fill, Name: "transfer_fill"}, kernels.Ref{Dst: &t.check, Name: "transfer_check"})
		if err != nil {
			t.Close()
			return nil, kernels.Shape{}, err
		}
		return t, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
}

// Close releases the compiled kernels. Idempotent.
func (t *Transfer) Close() error {
	if t == nil {
		return nil
	}
	return errors.Join(t.fill.Close(), t.check.Close(), t.prog.Close())
}

// WorkGroup returns the work-group size the family launches with on this device.
func (t *Transfer) WorkGroup() int { return t.wg }

func (t *Transfer) grid(n int) engine.Range {
	return engine.Range1D(engine.RoundUp(n, t.wg), t.wg)
}

// checkSpan validates a span of n bytes (and guard more) of buf.
func checkSpan(what string, buf *engine.Buffer[uint8], n, guard int) error {
	switch {
	case buf == nil:
		return fmt.Errorf("kernels: transfer %s: nil buffer: %w", what, engine.ErrInvalidArg)
	case n < 1 || guard < 0:
		return fmt.Errorf("kernels: transfer %s: %d bytes and a guard band of %d; want at least 1 and 0: %w", what, n, guard, engine.ErrInvalidArg)
	case n > math.MaxInt32-guard:
		return fmt.Errorf("kernels: transfer %s: %d bytes and a guard band of %d exceed the family's limit of 2^31-1: %w", what, n, guard, engine.ErrInvalidArg)
	case buf.Len() < n+guard:
		return fmt.Errorf("kernels: transfer %s: %d bytes and a guard band of %d; the buffer has %d: %w", what, n, guard, buf.Len(), engine.ErrInvalidArg)
	}
	return nil
}

// Fill sets the first n bytes of buf to the pattern of seed, each XORed with mask (0 for
// the pattern, the source of a device-to-host copy; 0xff for its complement, which a
// host-to-device copy must overwrite entirely), and the guard bytes after them to
// Sentinel. (The guard band by the kernel too, rather than Buffer.Fill: Oclgrind 21.10
// marks a whole buffer uninitialized after a clEnqueueFillBuffer into part of it.)
func (t *Transfer) Fill(q *engine.Queue, buf *engine.Buffer[uint8], n, guard int, seed uint64, mask uint8) error {
	if err := checkSpan("fill", buf, n, guard); err != nil {
		return err
	}
	s0, s1 := seedHalves(seed)
	return q.Launch(t.fill, t.grid(n+guard), buf, int32(n), int32(guard), s0, s1, uint32(mask))
}

// Mismatch is what Check found: the bytes that differ from the pattern (or, in the guard
// band, from Sentinel), and the first of them (-1 when none does).
type Mismatch struct {
	Count, First int
}

// Check compares the first n bytes of buf with the pattern of seed and the guard bytes
// after them with Sentinel, on the device, and returns what differs. It waits for the
// answer, until ctx is done.
func (t *Transfer) Check(ctx context.Context, q *engine.Queue, buf *engine.Buffer[uint8], n, guard int, seed uint64) (Mismatch, error) {
	if err := checkSpan("check", buf, n, guard); err != nil {
		return Mismatch{}, err
	}
	bad, err := engine.Upload(ctx, q, []int32{0, math.MaxInt32})
	if err != nil {
		return Mismatch{}, err
	}
	defer bad.Close()
	s0, s1 := seedHalves(seed)
	if err := q.Launch(t.check, t.grid(n+guard), bad, buf, int32(n), int32(guard), s0, s1); err != nil {
		return Mismatch{}, err
	}
	var got [2]int32
	if err := bad.Read(ctx, q, 0, got[:]); err != nil {
		return Mismatch{}, err
	}
	m := Mismatch{Count: int(got[0]), First: int(got[1])}
	if m.Count == 0 {
		m.First = -1
	}
	return m, nil
}
