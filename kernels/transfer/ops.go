package transfer

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed transfer.cl
var source string

// Direction is the direction of a copy: host to device or device to host.
type Direction string

// The directions.
const (
	H2D Direction = "h2d"
	D2H Direction = "d2h"
)

// Memory is the host memory a copy reads or writes.
type Memory string

// The host memories: a pinned host buffer (engine.NewHostBuffer, copied with
// Buffer.WriteAsync and ReadAsync, device-timed), or an ordinary Go slice (copied with the
// blocking Buffer.Write and Read, host-timed: a driver stages pageable memory through
// pinned buffers of its own).
const (
	Pinned   Memory = "pinned"
	Pageable Memory = "pageable"
)

// Family returns the transfer family: its OpenCL C source (transfer.cl, the kernels that
// make and check the data) and its operations, in the order listings show them: pinned
// copies to and from the device, then pageable ones.
func Family() kernels.Family {
	var ops []kernels.Op
	for _, m := range []Memory{Pinned, Pageable} {
		for _, d := range []Direction{H2D, D2H} {
			ops = append(ops, transferOp(d, m))
		}
	}
	return kernels.Family{Name: "transfer", Source: source, Ops: ops}
}

// OpName returns the name of the copy within the family: "h2d-pinned", ...
func OpName(d Direction, m Memory) string { return string(d) + "-" + string(m) }

var transferDocs = map[Memory]map[Direction]string{
	Pinned: {
		H2D: "host-to-device copy from a pinned host buffer (Buffer.WriteAsync), timed by its device event",
		D2H: "device-to-host copy into a pinned host buffer (Buffer.ReadAsync), timed by its device event",
	},
	Pageable: {
		H2D: "host-to-device copy from a Go slice (Buffer.Write, blocking), timed by the host clock",
		D2H: "device-to-host copy into a Go slice (Buffer.Read, blocking), timed by the host clock",
	},
}

func transferOp(d Direction, m Memory) kernels.Op {
	name := "transfer/" + OpName(d, m) + "/uint8"
	return kernels.Op{
		Name: name, Family: "transfer", Type: "uint8", Doc: transferDocs[m][d],
		SizeDoc: "n bytes copied (4K: a latency; 256M and up: the link's bandwidth)", DefaultSize: 256 << 20, QuickSize: 1 << 20,
		Variants: []kernels.Variant{{
			Name: kernels.PortableName, Doc: "engine's copies, on every backend (the OpenCL C kernels only make and check the data)",
			Dialect: engine.DialectOpenCL,
			Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
				return setupTransfer(ctx, q, name, d, m, p)
			},
		}},
	}
}

// transferInstance copies n bytes of the pattern of seed between dev and host memory:
// pinned (a host buffer) or pageable (a Go slice). The destination, device or host, holds
// Guard sentinel bytes after the n the copy writes; Setup fills it with the complement of
// the pattern, so that a copy that moves nothing, or the wrong bytes, fails Verify. Inputs
// are not rotated: a copy reads the same host or device memory each run.
type transferInstance struct {
	t        *Transfer
	dir      Direction
	mem      Memory
	n        int
	seed     uint64
	dev      *engine.Buffer[uint8]     // h2d: n + Guard bytes; d2h: n
	pinned   *engine.HostBuffer[uint8] // pinned: h2d n bytes, d2h n + Guard
	pageable []byte                    // pageable: h2d n bytes, d2h n + Guard
	what     string                    // "transfer h2d-pinned", for errors
}

func setupTransfer(ctx context.Context, q *engine.Queue, name string, d Direction, m Memory, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	if p.Size > MaxBytes {
		return nil, fmt.Errorf("kernels: %s: size %d exceeds the family's limit of %d bytes (2^31-1 with the guard band): %w", name, p.Size, MaxBytes, engine.ErrInvalidArg)
	}
	dev := q.Device()
	n := p.Size
	in := &transferInstance{dir: d, mem: m, n: n, seed: p.Seed, what: "transfer " + OpName(d, m)}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	if in.t, err = NewTransfer(dev); err != nil {
		return nil, err
	}
	// The device side: the pattern a device-to-host copy reads, or the complement a
	// host-to-device copy overwrites, with its guard band after it.
	guard, mask := 0, uint8(0)
	if d == H2D {
		guard, mask = Guard, 0xff
	}
	if in.dev, err = engine.NewBuffer[uint8](dev, n+guard); err != nil {
		return nil, err
	}
	if err := in.t.Fill(q, in.dev, n, guard, p.Seed, mask); err != nil {
		return nil, err
	}
	// The host side: the pattern a host-to-device copy reads, or the complement and the
	// guard band a device-to-host copy writes into.
	hostLen, hostMask := n, byte(0)
	if d == D2H {
		hostLen, hostMask = n+Guard, 0xff
	}
	var host []byte
	if m == Pinned {
		if in.pinned, err = engine.NewHostBuffer[uint8](dev, hostLen); err != nil {
			return nil, err
		}
		host = in.pinned.Slice()
	} else {
		in.pageable = make([]byte, hostLen)
		host = in.pageable
	}
	PatternInto(host[:n], 0, p.Seed, hostMask)
	for i := n; i < hostLen; i++ {
		host[i] = Sentinel
	}
	if err := q.Finish(ctx); err != nil {
		return nil, err
	}
	return in, nil
}

// Run copies the n bytes once: enqueued without waiting from and to pinned memory (the
// copy's event times it), blocking from and to a Go slice (no event: Queue.Timed measures
// the host time of the call).
func (in *transferInstance) Run(ctx context.Context, q *engine.Queue) error {
	var ev *engine.Event
	var err error
	switch {
	case in.mem == Pinned && in.dir == H2D:
		ev, err = in.dev.WriteAsync(q, 0, in.pinned, 0, in.n)
	case in.mem == Pinned:
		ev, err = in.dev.ReadAsync(q, 0, in.pinned, 0, in.n)
	case in.dir == H2D:
		return in.dev.Write(ctx, q, 0, in.pageable)
	default:
		return in.dev.Read(ctx, q, 0, in.pageable[:in.n])
	}
	if err != nil {
		return err
	}
	return ev.Close() // the host buffer keeps the copy until it completes
}

// Verify checks the copy of the last Run where it landed: a host-to-device copy on the
// device (transfer_check: every byte the pattern's, the guard band untouched), without a
// copy back through the path measured; a device-to-host copy in host memory, its guard
// band included.
func (in *transferInstance) Verify(ctx context.Context, q *engine.Queue) error {
	if err := q.Finish(ctx); err != nil { // an asynchronous copy's data is there once done
		return err
	}
	if in.dir == D2H {
		host := in.pageable
		if in.mem == Pinned {
			host = in.pinned.Slice()
		}
		if err := CheckPattern(in.what, host[:in.n], 0, in.seed); err != nil {
			return err
		}
		return CheckGuard(in.what, host[in.n:], in.n)
	}
	bad, err := in.t.Check(ctx, q, in.dev, in.n, Guard, in.seed)
	if err != nil || bad.Count == 0 {
		return err
	}
	var got [1]uint8
	if err := in.dev.Read(ctx, q, bad.First, got[:]); err != nil {
		return err
	}
	if bad.First >= in.n {
		return guardError(in.what+" on the device", bad.First-in.n, in.n, got[0])
	}
	return fmt.Errorf("%w: %s: %d of %d bytes (and %d guard bytes) differ on the device; the first is byte %d = %#02x, want %#02x",
		kernels.ErrVerify, in.what, bad.Count, in.n, Guard, bad.First, got[0], Pattern(bad.First, in.seed))
}

// Model is the bytes one copy moves across the link; no FLOPs.
func (in *transferInstance) Model() kernels.Model {
	return kernels.Model{Bytes: float64(in.n), Link: true}
}

// Shape gives the bytes and the host memory: pinned, a host buffer the device does not
// page-lock (a CPU device's), or a Go slice.
func (in *transferInstance) Shape() string {
	host := "Go-slice"
	if in.mem == Pinned {
		host = "pinned"
		if !in.pinned.Pinned() {
			host = "unpinned-host-buffer"
		}
	}
	return fmt.Sprintf("n=%d host=%s", in.n, host)
}

func (in *transferInstance) Close() error {
	return errors.Join(in.pinned.Close(), in.dev.Close(), in.t.Close())
}
