package engine

import "github.com/prism-compute/prism/engine/driver"

// What packages that extend engine use: engine/group enqueues collectives on the backend's
// queues itself (through NCCL on CUDA), with the same checks and bookkeeping as the
// commands of this package. Users need none of it.

// Err returns nil while d is open, else why it cannot be used: an error wrapping
// ErrInvalidArg for a nil Device or one not made by Open, ErrClosed once it is closed.
func (d *Device) Err() error { return d.check() }

// DriverQueue returns q's backend queue for a command that a package extending engine
// enqueues on it directly, after checking that q is open and not inside Queue.Capture (a
// graph cannot hold such a command; what names it in that error). Once the command is
// enqueued, the caller calls Submitted.
func (q *Queue) DriverQueue(what string) (driver.Queue, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	if err := q.capturing(what); err != nil {
		return nil, err
	}
	return q.drv, nil
}

// Submitted counts one command enqueued on q through DriverQueue, so that memory freed
// after it is reused only once the command has completed, as for q's own commands.
func (q *Queue) Submitted() { q.enqueued() }

// DriverBuffer returns b's backend buffer, after checking that b is open and lives on dev
// (the same opening: each Open is a device of its own).
func (b *Buffer[T]) DriverBuffer(dev *Device) (driver.Buffer, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	if err := b.sameDevice(dev); err != nil {
		return nil, err
	}
	return b.drv, nil
}
