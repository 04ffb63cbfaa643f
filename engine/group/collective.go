package group

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// Collectives across a Group, as NCCL defines them. Each takes one queue and one pair of
// buffers per device of this process (in the group's order); every process of the group
// makes the same call with the same counts. Through a collective library (Group.Library)
// a collective is enqueued on the queues, after what they hold, and the call returns
// without waiting; the results are there once each queue's commands complete. Staged
// through the host, the call waits for the queues, moves the data through host memory
// (and TCP between processes), and returns once every Recv is written; ctx bounds that
// wait. The sum of floating-point values may associate differently on the two paths.

// ReduceOp is the element-wise reduction of AllReduce and ReduceScatter.
type ReduceOp = driver.ReduceOp

// Reductions.
const (
	ReduceSum  = driver.ReduceSum
	ReduceProd = driver.ReduceProd
	ReduceMax  = driver.ReduceMax
	ReduceMin  = driver.ReduceMin
)

// CollectiveScalar is the set of element types collectives move.
type CollectiveScalar interface {
	float32 | float64 | int32 | uint32 | int64 | uint64
}

// AllReduce leaves in every recv[i] the element-wise reduction of every rank's send.
// All buffers have one length; send[i] may be recv[i] (in place).
func AllReduce[T CollectiveScalar](ctx context.Context, g *Group, qs []*engine.Queue, send, recv []*engine.Buffer[T], op ReduceOp) error {
	return collective(ctx, g, driver.AllReduce, qs, send, recv, op, 0)
}

// AllGather leaves in every recv[i] the ranks' send buffers one after the other in rank
// order: recv holds Size() times as many elements as send.
func AllGather[T CollectiveScalar](ctx context.Context, g *Group, qs []*engine.Queue, send, recv []*engine.Buffer[T]) error {
	return collective(ctx, g, driver.AllGather, qs, send, recv, 0, 0)
}

// ReduceScatter reduces every rank's send element-wise and leaves block r of the result
// in rank r's recv: send holds Size() times as many elements as recv.
func ReduceScatter[T CollectiveScalar](ctx context.Context, g *Group, qs []*engine.Queue, send, recv []*engine.Buffer[T], op ReduceOp) error {
	return collective(ctx, g, driver.ReduceScatter, qs, send, recv, op, 0)
}

// Broadcast copies the send buffer of global rank root into every recv[i]. Only the
// root's send is read: the others may be nil. send[i] may be recv[i].
func Broadcast[T CollectiveScalar](ctx context.Context, g *Group, qs []*engine.Queue, send, recv []*engine.Buffer[T], root int) error {
	return collective(ctx, g, driver.Broadcast, qs, send, recv, 0, root)
}

// collType returns the collective element type of T.
func collType[T CollectiveScalar]() driver.CollectiveType {
	var z T
	switch any(z).(type) {
	case float32:
		return driver.CollFloat32
	case float64:
		return driver.CollFloat64
	case int32:
		return driver.CollInt32
	case uint32:
		return driver.CollUint32
	case int64:
		return driver.CollInt64
	default:
		return driver.CollUint64
	}
}

// collective checks a call and runs it through the library or the host.
func collective[T CollectiveScalar](ctx context.Context, g *Group, kind driver.CollectiveKind, qs []*engine.Queue, send, recv []*engine.Buffer[T], op ReduceOp, root int) error {
	if g == nil {
		return fmt.Errorf("group: %s on a nil group: %w", kind, engine.ErrInvalidArg)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return fmt.Errorf("group: %s: group: %w", kind, engine.ErrClosed)
	}
	count, drv, err := checkCollective(g, kind, qs, send, recv, op, root)
	if err != nil {
		return err
	}
	if g.comm != nil {
		calls := make([]driver.CollectiveCall, len(g.devs))
		for i := range g.devs {
			s := drv.recv[i] // a non-root's send for Broadcast is not read
			if drv.send[i] != nil {
				s = drv.send[i]
			}
			calls[i] = driver.CollectiveCall{Kind: kind, Queue: drv.queues[i], Send: s, Recv: drv.recv[i],
				Count: int64(count), Type: collType[T](), Op: op, Root: root}
		}
		if err := g.comm.Run(calls); err != nil {
			return fmt.Errorf("group: %s of %d %s on %s: %w", kind, count, collType[T](), g.ids(), err)
		}
		for _, q := range qs {
			q.Submitted()
		}
		return nil
	}
	if g.mpi != nil {
		if ok, err := stagedShared(ctx, g, kind, qs, send, recv, op, root, count); ok {
			return err
		}
		return stagedMPI(ctx, g, kind, qs, send, recv, op, root, count)
	}
	return staged(ctx, g, kind, qs, send, recv, op, root, count)
}

// handles are the backend's queues and buffers of a collective, one of each per device
// of this process (send[i] nil where a Broadcast does not read it).
type handles struct {
	queues     []driver.Queue
	send, recv []driver.Buffer
}

// checkCollective validates a collective's arguments and returns its count (the elements
// of each send for AllReduce, AllGather and Broadcast, of each recv for ReduceScatter)
// and the backend's queues and buffers.
func checkCollective[T CollectiveScalar](g *Group, kind driver.CollectiveKind, qs []*engine.Queue, send, recv []*engine.Buffer[T], op ReduceOp, root int) (int, handles, error) {
	n := len(g.devs)
	h := handles{queues: make([]driver.Queue, n), send: make([]driver.Buffer, n), recv: make([]driver.Buffer, n)}
	if len(qs) != n || len(send) != n || len(recv) != n {
		return 0, h, fmt.Errorf("group: %s: %d queues, %d send and %d recv buffers for the group's %d devices of this process: %w", kind, len(qs), len(send), len(recv), n, engine.ErrInvalidArg)
	}
	switch kind {
	case driver.AllReduce, driver.ReduceScatter:
		if op < ReduceSum || op > ReduceMin {
			return 0, h, fmt.Errorf("group: %s: unknown reduction %v: %w", kind, op, engine.ErrInvalidArg)
		}
	case driver.Broadcast:
		if root < 0 || root >= g.size {
			return 0, h, fmt.Errorf("group: broadcast from rank %d: the group has ranks 0 to %d: %w", root, g.size-1, engine.ErrInvalidArg)
		}
	}
	count := -1
	for i, d := range g.devs {
		dq, err := qs[i].DriverQueue(kind.String())
		if err != nil {
			return 0, h, err
		}
		if qs[i].Device() != d {
			return 0, h, fmt.Errorf("group: %s: queue %d is on %s, not on the group's device %s: %w", kind, i, qs[i].Device().ID(), d.ID(), engine.ErrInvalidArg)
		}
		h.queues[i] = dq
		local := kind == driver.Broadcast && g.first+i != root
		if send[i] == nil && !local {
			return 0, h, fmt.Errorf("group: %s: send buffer %d is nil: %w", kind, i, engine.ErrInvalidArg)
		}
		if recv[i] == nil {
			return 0, h, fmt.Errorf("group: %s: recv buffer %d is nil: %w", kind, i, engine.ErrInvalidArg)
		}
		if send[i] != nil {
			if h.send[i], err = send[i].DriverBuffer(d); err != nil {
				return 0, h, err
			}
		}
		if h.recv[i], err = recv[i].DriverBuffer(d); err != nil {
			return 0, h, err
		}
		s, r := recv[i].Len(), recv[i].Len()
		if send[i] != nil {
			s = send[i].Len()
		}
		var c int
		switch kind {
		case driver.AllReduce, driver.Broadcast:
			if s != r {
				return 0, h, fmt.Errorf("group: %s on %s: send holds %d elements, recv %d; they must be equal: %w", kind, d.ID(), s, r, engine.ErrInvalidArg)
			}
			c = s
		case driver.AllGather:
			if r != s*g.size {
				return 0, h, fmt.Errorf("group: all-gather on %s: recv holds %d elements; it must hold the group's %d ranks times send's %d: %w", d.ID(), r, g.size, s, engine.ErrInvalidArg)
			}
			c = s
		case driver.ReduceScatter:
			if s != r*g.size {
				return 0, h, fmt.Errorf("group: reduce-scatter on %s: send holds %d elements; it must hold the group's %d ranks times recv's %d: %w", d.ID(), s, g.size, r, engine.ErrInvalidArg)
			}
			c = r
		}
		if send[i] == recv[i] && (kind == driver.AllGather || kind == driver.ReduceScatter) {
			return 0, h, fmt.Errorf("group: %s on %s: send and recv are one buffer; only all-reduce and broadcast run in place: %w", kind, d.ID(), engine.ErrInvalidArg)
		}
		if count >= 0 && c != count {
			return 0, h, fmt.Errorf("group: %s: %d elements on %s, %d on %s; every rank moves the same count: %w", kind, count, g.devs[0].ID(), c, d.ID(), engine.ErrInvalidArg)
		}
		count = c
	}
	return count, h, nil
}

// staged runs a collective through host memory: each device's send is read after what
// its queue holds, the parts are combined here (or by process 0 across processes) in
// rank order, and each recv is written. The parts, and within one process the results,
// lie in host buffers of the devices kept from one collective to the next (stage): a
// collective allocates nothing once the sizes repeat.
func staged[T CollectiveScalar](ctx context.Context, g *Group, kind driver.CollectiveKind, qs []*engine.Queue, send, recv []*engine.Buffer[T], op ReduceOp, root, count int) error {
	fail := func(err error) error {
		return fmt.Errorf("group: %s staged through the host: %w", kind, g.panics.keep(err))
	}
	parts, _, err := readStaged(ctx, g, kind, qs, send, root)
	if err != nil {
		return fail(err)
	}
	var results [][]T
	if g.net != nil {
		if results, err = exchange(ctx, g, kind, parts, op, root, count); err != nil {
			return err
		}
	} else if results, err = combineStaged(g, kind, parts, op, root, count); err != nil {
		return fail(err)
	}
	err = eachDevice(len(g.devs), fmt.Sprintf("writing the %s results", kind), func(i int) error { return recv[i].Write(ctx, qs[i], 0, results[i]) })
	if err != nil {
		return fail(err)
	}
	return nil
}

// readStaged reads each device's send, after what its queue holds, into that device's
// host buffer kept from one collective to the next (stage), and returns the parts as
// slices of those buffers (nil where a Broadcast does not read the device's send).
func readStaged[T CollectiveScalar](ctx context.Context, g *Group, kind driver.CollectiveKind, qs []*engine.Queue, send []*engine.Buffer[T], root int) ([][]T, []*engine.HostBuffer[T], error) {
	n := len(g.devs)
	parts := make([][]T, n)
	hosts := make([]*engine.HostBuffer[T], n)
	err := eachDevice(n, fmt.Sprintf("reading the %s parts", kind), func(i int) error {
		if send[i] == nil || (kind == driver.Broadcast && g.first+i != root) {
			return nil
		}
		m := send[i].Len()
		hb, err := stage[T](g, i, stageSend, m)
		if err != nil {
			return err
		}
		hosts[i], parts[i] = hb, hb.Slice()[:m]
		if m == 0 {
			return nil
		}
		ev, err := send[i].ReadAsync(qs[i], 0, hb, 0, m)
		if err != nil {
			return err
		}
		defer ev.Close()
		return ev.Wait(ctx)
	})
	return parts, hosts, err
}

// combineStaged is combine into the first device's result buffer (stage), reused from one
// collective to the next (a Broadcast's result is the root's part: nothing to hold).
func combineStaged[T CollectiveScalar](g *Group, kind driver.CollectiveKind, parts [][]T, op ReduceOp, root, count int) ([][]T, error) {
	var dst []T
	if m := resultLen(kind, len(parts), count); m > 0 {
		hb, err := stage[T](g, 0, stageRecv, m)
		if err != nil {
			return nil, err
		}
		dst = hb.Slice()[:m]
	}
	return combine(kind, parts, op, root, count, dst)
}

// resultLen is the elements of the result combine computes for size ranks: count for
// AllReduce, size x count for ReduceScatter (every rank's block) and AllGather, none for
// Broadcast (the root's part is the result).
func resultLen(kind driver.CollectiveKind, size, count int) int {
	switch kind {
	case driver.AllReduce:
		return count
	case driver.ReduceScatter, driver.AllGather:
		return size * count
	}
	return 0
}

// eachDevice calls f(i) for i in [0, n), each in its own goroutine, and returns the
// first error; a panic in f is returned as a *PanicError that names what and device i.
func eachDevice(n int, what string, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		goSafe(fmt.Sprintf("%s of device %d", what, i), func() error { return f(i) }, func(err error) {
			errs[i] = err
			wg.Done()
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// combine computes every rank's result from every rank's part, in rank order (a
// Broadcast's parts are nil but the root's), into dst where it holds resultLen elements,
// else into new memory. Results may share memory. The parts have the lengths the
// collective gives; a panic in the reduction's goroutines is returned as a *PanicError.
func combine[T CollectiveScalar](kind driver.CollectiveKind, parts [][]T, op ReduceOp, root, count int, dst []T) ([][]T, error) {
	size := len(parts)
	out := make([][]T, size)
	if m := resultLen(kind, size, count); len(dst) < m {
		dst = make([]T, m)
	} else {
		dst = dst[:m]
	}
	switch kind {
	case driver.AllReduce, driver.ReduceScatter:
		if err := reduceInto(dst, parts, op); err != nil {
			return nil, err
		}
		for k := range out {
			if kind == driver.AllReduce {
				out[k] = dst
			} else {
				out[k] = dst[k*count : (k+1)*count]
			}
		}
	case driver.AllGather:
		for k, p := range parts {
			copy(dst[k*count:], p)
		}
		for k := range out {
			out[k] = dst
		}
	case driver.Broadcast:
		for k := range out {
			out[k] = parts[root]
		}
	}
	return out, nil
}

// reduceInto reduces the parts element-wise, in rank order, into r, in ranges of
// reduceChunk elements spread over the host's cores. Each part holds at least len(r)
// elements; r may be the first part but no other. A panic in one of its goroutines (a part too short) is
// returned as a *PanicError.
func reduceInto[T CollectiveScalar](r []T, parts [][]T, op ReduceOp) error {
	n := len(r)
	chunks := (n + reduceChunk - 1) / reduceChunk
	workers := min(chunks, runtime.GOMAXPROCS(0))
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		goSafe("reducing the parts", func() error {
			for {
				c := int(next.Add(1)) - 1
				if c >= chunks {
					return nil
				}
				lo, hi := c*reduceChunk, min(n, (c+1)*reduceChunk)
				reduceRange(r[lo:hi], parts, lo, op)
			}
		}, func(err error) {
			errs[w] = err
			wg.Done()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// reduceChunk is the range of elements one goroutine reduces at a time.
const reduceChunk = 1 << 16

// reduceRange reduces elements [lo, lo+len(r)) of every part into r (which may be the
// first part's range, not another's).
func reduceRange[T CollectiveScalar](r []T, parts [][]T, lo int, op ReduceOp) {
	copy(r, parts[0][lo:lo+len(r)])
	for _, p := range parts[1:] {
		p = p[lo : lo+len(r)]
		switch op {
		case ReduceSum:
			for j, v := range p {
				r[j] += v
			}
		case ReduceProd:
			for j, v := range p {
				r[j] *= v
			}
		case ReduceMax:
			for j, v := range p {
				r[j] = max(r[j], v)
			}
		case ReduceMin:
			for j, v := range p {
				r[j] = min(r[j], v)
			}
		}
	}
}

// asBytes views a slice's memory as bytes (little-endian on every host Prism runs on).
func asBytes[T CollectiveScalar](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// fromBytes views bytes received as a slice of T; b's length is a multiple of T's size.
func fromBytes[T CollectiveScalar](b []byte) []T {
	var z T
	es := int(unsafe.Sizeof(z))
	if len(b) < es {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/es)
}
