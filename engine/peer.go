package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine/driver"
)

// Copies between devices: CopyPeer moves elements from a buffer of one device into a
// buffer of another, directly where the two devices' driver copies between them
// (driver.PeerCopier: CUDA's peer copies over NVLink or PCIe), else through host memory.
// On the direct path Buffer.CopyFrom also takes another device's buffer, for code that
// orders the source's commands itself and overlaps the copies of many devices.

// peerStageBytes bounds the host staging of a CopyPeer without a direct path: at most
// peerStageBytes a chunk, read from the source and written to the destination in turn. A
// variable so that tests can make it small.
var peerStageBytes = 64 << 20

// PeerPath reports how CopyPeer copies from sq's device to dq's: "device" within one
// device, "peer" where the driver copies between the two directly, "host" where the
// elements pass through host memory. It does not check the queues.
func PeerPath(dq, sq *Queue) string {
	switch {
	case dq == nil || sq == nil:
		return "host"
	case dq.dev == sq.dev:
		return "device"
	case copiesFrom(dq, sq.dev):
		return "peer"
	}
	return "host"
}

// copiesFrom reports whether q's driver copies from dev's memory directly: dev is of q's
// backend, whose queues implement driver.PeerCopier.
func copiesFrom(q *Queue, dev *Device) bool {
	_, ok := q.drv.(driver.PeerCopier)
	return ok && dev.backend == q.dev.backend
}

// CopyPeer copies count elements of src, a buffer of sq's device, from srcOffset into
// dst, a buffer of dq's device, at offset, and returns when they are there (PeerPath says
// how). The commands enqueued on sq before it complete first, so that the source is
// ready; the copy runs on dq after dq's earlier commands. Within one device, and between
// devices whose driver copies between them, it is Buffer.CopyFrom (which refuses
// overlapping regions of one buffer) and a wait for dq. Neither queue may be capturing a
// graph: the copy waits for the host. Errors name the side at fault; with ctx done the
// copy stops between chunks of host staging and the error wraps ctx.Err().
func CopyPeer[T Scalar](ctx context.Context, dq *Queue, dst *Buffer[T], offset int, sq *Queue, src *Buffer[T], srcOffset, count int) error {
	if ctx == nil {
		return fmt.Errorf("engine: copy between devices: nil context: %w", ErrInvalidArg)
	}
	if dst == nil || src == nil {
		return fmt.Errorf("engine: copy between devices: nil buffer (destination %v, source %v): %w", dst != nil, src != nil, ErrInvalidArg)
	}
	if err := dst.onQueue(dq); err != nil {
		return fmt.Errorf("engine: copy between devices, destination: %w", err)
	}
	if err := src.onQueue(sq); err != nil {
		return fmt.Errorf("engine: copy between devices, source: %w", err)
	}
	if err := dst.span("copy", offset, count); err != nil {
		return err
	}
	if err := src.span("copy", srcOffset, count); err != nil {
		return err
	}
	for _, q := range []*Queue{dq, sq} {
		if err := q.capturing("a copy between devices"); err != nil {
			return err
		}
	}
	if count == 0 {
		return nil
	}
	if err := sq.Finish(ctx); err != nil {
		return fmt.Errorf("engine: copy between devices: the source's queue on %s: %w", sq.dev.id, err)
	}
	if path := PeerPath(dq, sq); path != "host" {
		err := dst.CopyFrom(dq, offset, src, srcOffset, count)
		if err == nil {
			return dq.Finish(ctx)
		}
		if path == "device" || !errors.Is(err, ErrUnsupported) {
			return err
		}
	}
	// Through host memory, a chunk at a time.
	step := max(peerStageBytes/SizeOf[T](), 1)
	stage := make([]T, min(step, count))
	for from := 0; from < count; from += step {
		n := min(step, count-from)
		if err := src.Read(ctx, sq, srcOffset+from, stage[:n]); err != nil {
			return err
		}
		if err := dst.Write(ctx, dq, offset+from, stage[:n]); err != nil {
			return err
		}
	}
	return nil
}

// Remote is a buffer of one device passed to the kernels of another, whose driver lets
// them read and write its memory directly (Buffer.Reach). It is a Launch argument of the
// queues of the device it was reached for, and of no other.
type Remote struct {
	h   *handle
	db  driver.Buffer
	dev *Device // the device whose kernels reach it
}

// Reach returns b as a Launch argument of kernels on q's device: where b is of that
// device, b itself; where it is another device's, a Remote through which those kernels
// read and write b's memory directly (CUDA GPUs of one process with peer access, over
// NVLink or PCIe: the device's kernels then load across the link, at its bandwidth, with
// no copy first). It fails with an error wrapping ErrUnsupported where the devices cannot
// reach each other's memory (other backends, GPUs without peer access): copy the elements
// instead (CopyPeer). Ordering is the caller's, as for Buffer.CopyFrom between devices:
// the commands that write b on its own queues must have completed (a Finish or an event)
// before a kernel that reads it through the Remote is enqueued, and b must stay open while
// such a kernel runs.
func (b *Buffer[T]) Reach(q *Queue) (any, error) {
	if b == nil {
		return nil, fmt.Errorf("engine: reach a nil buffer: %w", ErrInvalidArg)
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	if err := q.check(); err != nil {
		return nil, err
	}
	if b.dev == q.dev {
		return b, nil
	}
	pa, ok := q.drv.(driver.PeerAccessor)
	if !ok || b.dev.backend != q.dev.backend {
		return nil, fmt.Errorf("engine: the kernels of %s cannot reach the memory of %s (%s and %s): %w", q.dev.id, b.dev.id, q.dev.backend, b.dev.backend, ErrUnsupported)
	}
	if err := pa.ReachPeer(b.drv); err != nil {
		return nil, fmt.Errorf("engine: the kernels of %s reach the memory of %s: %w", q.dev.id, b.dev.id, err)
	}
	return Remote{h: &b.handle, db: b.drv, dev: q.dev}, nil
}
