package cuda

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// streamNonBlocking is CU_STREAM_NON_BLOCKING. Queues are streams that do not synchronize
// with the legacy default (NULL) stream: each Queue is ordered by itself, as the SPI asks,
// and nothing this process or a library does on the NULL stream serializes the queues of
// concurrent goroutines. Nothing of this package uses the NULL stream: every copy is
// enqueued on the queue's own stream.
const streamNonBlocking = 1

// queue is a CUDA stream. It is used by one goroutine at a time. Every command is
// bracketed by two timing events, so that each has a device time (Event.Elapsed).
type queue struct {
	d       *device
	stream  cuStream
	pending bool // commands were enqueued since the stream was last seen idle
	closed  atomic.Bool

	// LaunchUntimed's memory, reused by every launch: the packed arguments and the C
	// block of kernelParams the driver reads them from.
	packed packedArgs
	params cScratch

	// word is the page-locked, device-mapped word that Hold's gate kernel reads: the
	// number of the last hold opened. holds counts the holds made.
	word  *uint32
	holds uint32
}

var (
	_ driver.Queue           = (*queue)(nil)
	_ driver.UntimedLauncher = (*queue)(nil)
	_ driver.PeerCopier      = (*queue)(nil)
	_ driver.PeerAccessor    = (*queue)(nil)
	_ driver.Gater           = (*queue)(nil)
)

func (q *queue) check() error {
	if q.closed.Load() {
		return errClosed("queue")
	}
	return nil
}

// idle waits until the stream has completed its commands (polling cuStreamQuery).
func (q *queue) idle(ctx context.Context) error {
	if !q.pending {
		return nil
	}
	err := q.d.poll(ctx, "cuStreamQuery", func() Result { return cuStreamQueryIn(q.d.ctx, q.stream) },
		func() Result { return cuStreamSynchronizeIn(q.d.ctx, q.stream) })
	if err != nil {
		return err
	}
	q.pending = false
	return nil
}

// Write copies size bytes from host memory at src to dst at offset, after the queue's
// earlier commands: cuMemcpyHtoDAsync_v2 on the queue's stream, enqueued from the calling
// goroutine (onCaller), then the stream is polled until the copy is done, so that it
// returns when src may be reused. (The synchronous cuMemcpyHtoD_v2 would run on the
// legacy stream, which a non-blocking stream does not wait for, and may return before a
// copy from pageable memory has reached the device.) Nothing holds the device's thread:
// the other queues of the device go on meanwhile.
func (q *queue) Write(dst driver.Buffer, offset int64, src unsafe.Pointer, size int64) error {
	if err := q.check(); err != nil {
		return err
	}
	b, err := asBuffer(dst)
	if err != nil {
		return err
	}
	return q.hostCopy(fmt.Sprintf("cuMemcpyHtoDAsync_v2(%d bytes at %d)", size, offset), func() Result {
		return cuMemcpyHtoDAsync(b.ptr+devptr(offset), src, size, q.stream)
	})
}

// Read copies size bytes from src at offset to host memory at dst, after the queue's
// earlier commands (cuMemcpyDtoHAsync_v2 and polling, as Write).
func (q *queue) Read(src driver.Buffer, offset int64, dst unsafe.Pointer, size int64) error {
	if err := q.check(); err != nil {
		return err
	}
	b, err := asBuffer(src)
	if err != nil {
		return err
	}
	return q.hostCopy(fmt.Sprintf("cuMemcpyDtoHAsync_v2(%d bytes at %d)", size, offset), func() Result {
		return cuMemcpyDtoHAsync(dst, b.ptr+devptr(offset), size, q.stream)
	})
}

// hostCopy enqueues a copy with pageable host memory (copy, from the calling goroutine)
// and waits until it is done. The driver stages such a copy itself and returns only once
// the stream has reached it: waiting for the earlier commands first, through the queue's
// poll, was measured no faster on two H200 (BenchmarkPairRead, 2026-11-30).
func (q *queue) hostCopy(call string, copy func() Result) error {
	if err := q.d.onCaller(func() error { return check(call, copy()) }); err != nil {
		return err
	}
	q.pending = true
	return q.idle(context.Background())
}

// command enqueues one command, bracketed by a start and an end event, from the calling
// goroutine (onCaller), and returns its event.
func (q *queue) command(what string, enqueue func() error) (driver.Event, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	var start, end cuEvent
	q.pending = true
	err := q.d.onCaller(func() error {
		var err error
		if start, err = q.d.event(); err != nil {
			return err
		}
		if end, err = q.d.event(); err != nil {
			q.d.giveBack(start)
			return err
		}
		if err = check("cuEventRecord", cuEventRecord(start, q.stream)); err == nil {
			if err = enqueue(); err == nil {
				err = check("cuEventRecord", cuEventRecord(end, q.stream))
			}
		}
		if err != nil {
			q.d.giveBack(start, end)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &event{d: q.d, start: start, end: end, what: what}, nil
}

// Copy enqueues cuMemcpyDtoDAsync_v2.
func (q *queue) Copy(dst driver.Buffer, dstOffset int64, src driver.Buffer, srcOffset int64, size int64) (driver.Event, error) {
	d, err := asBuffer(dst)
	if err != nil {
		return nil, err
	}
	s, err := asBuffer(src)
	if err != nil {
		return nil, err
	}
	return q.command("copy", func() error {
		r := cuMemcpyDtoDAsync(d.ptr+devptr(dstOffset), s.ptr+devptr(srcOffset), size, q.stream)
		return check(fmt.Sprintf("cuMemcpyDtoDAsync_v2(%d bytes)", size), r)
	})
}

// CopyPeer enqueues a copy from a buffer of any CUDA device of this process into dst, a
// buffer of the queue's device (driver.PeerCopier): cuMemcpyPeerAsync between the two
// devices' contexts, which goes over NVLink or PCIe directly where the devices reach each
// other with peer access enabled (enablePeers, at the first copy between them), and
// which the driver stages through host memory otherwise; within one context,
// cuMemcpyDtoDAsync.
func (q *queue) CopyPeer(dst driver.Buffer, dstOffset int64, src driver.Buffer, srcOffset int64, size int64) (driver.Event, error) {
	d, err := asBuffer(dst)
	if err != nil {
		return nil, err
	}
	s, ok := src.(*buffer)
	if !ok || s == nil {
		return nil, fmt.Errorf("cuda: peer copy from %T, not a CUDA buffer: %w", src, driver.ErrUnsupported)
	}
	if s.closed.Load() {
		return nil, errClosed("buffer")
	}
	if d.d.ctx == s.d.ctx {
		return q.Copy(dst, dstOffset, src, srcOffset, size)
	}
	enablePeers(d.d, s.d)
	return q.command("peer copy", func() error {
		r := cuMemcpyPeerAsync(d.ptr+devptr(dstOffset), d.d.ctx, s.ptr+devptr(srcOffset), s.d.ctx, size, q.stream)
		return check(fmt.Sprintf("cuMemcpyPeerAsync(%d bytes, %s to %s)", size, s.d.info.ID, d.d.info.ID), r)
	})
}

// ReachPeer makes src, a buffer of another CUDA device, addressable by the kernels of the
// queue's device (driver.PeerAccessor): peer access between the two contexts and the
// source pool's memory granted to the queue's device (enablePeers), after which its
// device pointer is a kernel argument like one of the device's own. ErrUnsupported where
// the driver refused either.
func (q *queue) ReachPeer(src driver.Buffer) error {
	s, ok := src.(*buffer)
	if !ok || s == nil {
		return fmt.Errorf("cuda: reach %T, not a CUDA buffer: %w", src, driver.ErrUnsupported)
	}
	if s.closed.Load() {
		return errClosed("buffer")
	}
	if s.d.ctx == q.d.ctx {
		return nil
	}
	if r := enablePeers(q.d, s.d); r != Success {
		return fmt.Errorf("cuda: %s cannot reach the memory of %s (%v): %w", q.d.info.ID, s.d.info.ID, r, driver.ErrUnsupported)
	}
	return nil
}

// peers records the pairs of open devices whose peer access enablePeers has asked for,
// with what the driver answered. A pair is keyed by the devices, not their contexts: a
// device opened again after every opening of it closed gets the same primary context
// handle back, but a new context (whose peer access is gone) and a new pool (granted to
// nobody), so a device's entries leave with it (forgetPeers, from Close).
var peers struct {
	sync.Mutex
	tried map[[2]*device]Result
}

// forgetPeers drops d's pairs from peers: the next device that reaches, or copies from, a
// device opened in its place asks the driver again.
func forgetPeers(d *device) {
	peers.Lock()
	defer peers.Unlock()
	for k := range peers.tried {
		if k[0] == d || k[1] == d {
			delete(peers.tried, k)
		}
	}
}

// enablePeers enables peer access between the contexts of a and b, both ways, once per
// pair, and grants each device the memory of the other's stream-ordered pool, from which
// engine's buffers come and which peer access does not cover: without them
// cuMemcpyPeerAsync stages its copies through host memory (on two H200 joined by NVLink,
// a 256 MiB copy between plain allocations moved 380 GB/s with peer access; the sharded
// sort's exchange between pool buffers about 55, 2026-11-29). A driver that
// refuses (devices that cannot reach each other, too many peers) leaves the copies
// staged, which still work; PRISM_TRACE says so. The mapping lasts as long as the
// contexts, which are the devices' primary contexts. It returns what the driver answered
// for a reaching b's memory (Success where it can).
func enablePeers(a, b *device) Result {
	peers.Lock()
	defer peers.Unlock()
	if peers.tried == nil {
		peers.tried = map[[2]*device]Result{}
	}
	for _, p := range [][2]*device{{a, b}, {b, a}} {
		key := p
		if _, ok := peers.tried[key]; ok {
			continue
		}
		r := cuCtxEnablePeerAccessIn(p[0].ctx, p[1].ctx)
		if r == PeerAccessAlreadyEnabled {
			r = Success
		}
		if r != Success {
			tracef("%s cannot reach %s's memory (cuCtxEnablePeerAccess: %v): copies between them are staged through host memory", p[0].info.ID, p[1].info.ID, r)
		} else if m := p[1].pooled(); m != nil {
			// engine's buffers come from the stream-ordered pool, which peer access does
			// not cover: the pool grants p[0] its memory too.
			if g := cuMemPoolGrant(m.pool, p[0].ordinal); g != Success {
				tracef("%s cannot reach the memory of %s's pool (cuMemPoolSetAccess: %v): copies of engine's buffers between them are staged through host memory", p[0].info.ID, p[1].info.ID, g)
				r = g
			}
		}
		peers.tried[key] = r
	}
	return peers.tried[[2]*device{a, b}]
}

// Fill enqueues a fill with a pattern of 1 to 128 bytes (see fillPlan): one
// cuMemsetD8Async, cuMemsetD16Async or cuMemsetD32Async when the pattern repeats with a
// period of 1, 2 or 4 bytes, else the pattern's words set once and doubled with
// device-to-device copies.
func (q *queue) Fill(dst driver.Buffer, offset int64, pattern []byte, size int64) (driver.Event, error) {
	b, err := asBuffer(dst)
	if err != nil {
		return nil, err
	}
	ops, err := fillPlan(offset, pattern, size)
	if err != nil {
		return nil, err
	}
	return q.command("fill", func() error {
		for _, op := range ops {
			at := b.ptr + devptr(op.dst)
			var r Result
			var call string
			switch op.kind {
			case opMemset8:
				r, call = cuMemsetD8Async(at, uint8(op.value), op.count, q.stream), "cuMemsetD8Async"
			case opMemset16:
				r, call = cuMemsetD16Async(at, uint16(op.value), op.count, q.stream), "cuMemsetD16Async"
			case opMemset32:
				r, call = cuMemsetD32Async(at, op.value, op.count, q.stream), "cuMemsetD32Async"
			case opCopy:
				r, call = cuMemcpyDtoDAsync(at, b.ptr+devptr(op.src), op.count, q.stream), "cuMemcpyDtoDAsync_v2"
			}
			if err := check(fmt.Sprintf("%s(%d at %d, for a %d-byte pattern)", call, op.count, op.dst, len(pattern)), r); err != nil {
				return err
			}
		}
		return nil
	})
}

// Fill operations.
const (
	opMemset8  = iota // count bytes of value
	opMemset16        // count 16-bit words of value
	opMemset32        // count 32-bit words of value
	opCopy            // count bytes from src to dst
)

// fillOp is one device operation of a fill; offsets are bytes from the buffer's start.
type fillOp struct {
	kind     int
	dst, src int64
	count    int64
	value    uint32
}

// fillPlan returns the operations that fill size bytes at offset with pattern (1 to 128
// bytes, a power of two; offset and size multiples of its length). A pattern is first
// reduced to its shortest period; a period of 1, 2 or 4 bytes is one memset. A longer one
// (a multiple of 4 bytes) is written as 32-bit words at the start of the region, then the
// filled prefix is copied after itself, doubling it, until the region is full: period/4 +
// log2(size/period) operations, all on the device.
func fillPlan(offset int64, pattern []byte, size int64) ([]fillOp, error) {
	n := int64(len(pattern))
	if n == 0 || n > 128 || n&(n-1) != 0 || offset%n != 0 || size%n != 0 || size < 0 {
		return nil, fmt.Errorf("cuda: fill of %d bytes at %d with a %d-byte pattern: %w", size, offset, n, driver.ErrInvalidArg)
	}
	if size == 0 {
		return nil, nil
	}
	p := period(pattern)
	le := binary.LittleEndian
	switch p {
	case 1:
		return []fillOp{{kind: opMemset8, dst: offset, count: size, value: uint32(pattern[0])}}, nil
	case 2:
		return []fillOp{{kind: opMemset16, dst: offset, count: size / 2, value: uint32(le.Uint16(pattern))}}, nil
	case 4:
		return []fillOp{{kind: opMemset32, dst: offset, count: size / 4, value: le.Uint32(pattern)}}, nil
	}
	var ops []fillOp
	for i := int64(0); i < p; i += 4 {
		ops = append(ops, fillOp{kind: opMemset32, dst: offset + i, count: 1, value: le.Uint32(pattern[i:])})
	}
	for filled := p; filled < size; {
		c := min(filled, size-filled)
		ops = append(ops, fillOp{kind: opCopy, dst: offset + filled, src: offset, count: c})
		filled += c
	}
	return ops, nil
}

// period returns the shortest power-of-two period of pattern, whose length is a power of
// two.
func period(pattern []byte) int64 {
	n := len(pattern)
	for p := 1; p < n; p *= 2 {
		same := true
		for i := p; i < n && same; i++ {
			same = pattern[i] == pattern[i-p]
		}
		if same {
			return int64(p)
		}
	}
	return int64(n)
}

// Launch enqueues the kernel with cuLaunchKernel: grid Global/Local and block Local in
// each dimension (1 in unused ones), with r.SharedBytes of dynamic shared memory per block
// (raising the kernel's limit first where it is lower: the opt-in above 48 KiB, once per
// kernel and size). A range with clusters launches with cuLaunchKernelEx and
// CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, on devices that have them. Arguments are packed
// by their sizes (packArgs): a buffer as its 8-byte device pointer, a value (a scalar, a
// tensor map's 128 bytes) as its bytes, in C memory aligned for it; a __local pointer
// parameter's size (Arg.Local) becomes its offset in the dynamic shared memory
// (withLocals), for kernels built from OpenCL C.
func (q *queue) Launch(dk driver.Kernel, r driver.Range, args []driver.Arg) (driver.Event, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	k, err := asKernel(dk)
	if err != nil {
		return nil, err
	}
	if r, args, err = k.withLocals(r, args); err != nil {
		return nil, wrapf(err, "launch %s", k.name)
	}
	grid, block, err := launchShape(r, q.d.props.MaxGridDim)
	if err != nil {
		return nil, wrapf(err, "launch %s", k.name)
	}
	if err := checkOptions(r, grid, q.d.props); err != nil {
		return nil, wrapf(err, "launch %s", k.name)
	}
	packed, err := packArgs(args, k.params)
	if err != nil {
		return nil, wrapf(err, "launch %s", k.name)
	}
	if r.Clustered() && !haveLaunchKernelEx() {
		return nil, fmt.Errorf("cuda: launch %s in clusters %v: the driver has no cuLaunchKernelEx (CUDA 12.0): %w", k.name, r.Cluster, driver.ErrUnsupported)
	}
	return q.command("kernel "+k.name, func() error {
		if err := k.optInShared(r.SharedBytes); err != nil {
			return err
		}
		params := packed.toC()
		defer params.free()
		if r.Clustered() {
			cluster := clusterShape(r)
			res := cuLaunchKernelEx(k.fn, grid, block, cluster, r.SharedBytes, q.stream, params.p)
			return check(fmt.Sprintf("cuLaunchKernelEx(%s, grid %v, block %v, cluster %v, %d shared bytes)", k.name, grid, block, cluster, r.SharedBytes), res)
		}
		res := cuLaunchKernel(k.fn, grid, block, r.SharedBytes, q.stream, params.p)
		return check(fmt.Sprintf("cuLaunchKernel(%s, grid %v, block %v, %d shared bytes)", k.name, grid, block, r.SharedBytes), res)
	})
}

// LaunchUntimed enqueues a kernel without events (driver.UntimedLauncher), from the
// calling goroutine: the arguments are packed into the queue's own memory and
// cuLaunchKernel is called with the context made current on the caller's thread
// (cuLaunchKernelIn), with no hop to the device's thread and no allocation. A launch that
// must first raise the kernel's dynamic shared memory limit, or that uses clusters, takes
// Launch's path instead.
func (q *queue) LaunchUntimed(dk driver.Kernel, r driver.Range, args []driver.Arg) error {
	if err := q.check(); err != nil {
		return err
	}
	k, err := asKernel(dk)
	if err != nil {
		return err
	}
	if r, args, err = k.withLocals(r, args); err != nil {
		return wrapf(err, "launch %s", k.name)
	}
	if r.Clustered() || r.SharedBytes > k.maxDynamic.Load() {
		ev, err := q.Launch(dk, r, args)
		if err != nil {
			return err
		}
		return ev.Close()
	}
	grid, block, err := launchShape(r, q.d.props.MaxGridDim)
	if err != nil {
		return wrapf(err, "launch %s", k.name)
	}
	if err := checkOptions(r, grid, q.d.props); err != nil {
		return wrapf(err, "launch %s", k.name)
	}
	if err := q.packed.pack(args, k.params); err != nil {
		return wrapf(err, "launch %s", k.name)
	}
	params := q.params.get(q.packed.cSize())
	q.packed.writeC(params)
	q.pending = true
	if res := cuLaunchKernelIn(q.d.ctx, k.fn, grid, block, r.SharedBytes, q.stream, params.p); res != Success {
		return check(fmt.Sprintf("cuLaunchKernel(%s, grid %v, block %v, %d shared bytes)", k.name, grid, block, r.SharedBytes), res)
	}
	return nil
}

// withLocals gives the __local pointer parameters of a kernel built from OpenCL C their
// memory: each LocalBytes argument becomes the uint byte offset the translation's kernel
// takes (prelude.cuh, prism_local_at), the first at r.SharedBytes rounded up to 16, each
// next one 16-byte aligned after the one before, and the range's dynamic shared memory
// grows to hold them all. A __local parameter given anything else, or a LocalBytes
// argument for another parameter, is refused (ErrInvalidArg); a kernel without __local
// parameters gets its arguments unchanged.
func (k *kernel) withLocals(r driver.Range, args []driver.Arg) (driver.Range, []driver.Arg, error) {
	if len(k.locals) == 0 {
		if k.opencl {
			for i, a := range args {
				if a.Local != 0 {
					return r, nil, fmt.Errorf("argument %d: %d bytes of local memory for a parameter that is not a __local pointer: %w", i, a.Local, driver.ErrInvalidArg)
				}
			}
		}
		return r, args, nil
	}
	out := slices.Clone(args)
	offsets := make([]byte, 0, 4*len(k.locals))
	off, next := (r.SharedBytes+15)&^15, 0
	for i, a := range args {
		local := next < len(k.locals) && k.locals[next] == i
		switch {
		case local && a.Local <= 0:
			return r, nil, fmt.Errorf("argument %d is a __local pointer parameter: give its size in bytes (engine.LocalBytes): %w", i, driver.ErrInvalidArg)
		case !local && a.Local != 0:
			return r, nil, fmt.Errorf("argument %d: %d bytes of local memory for a parameter that is not a __local pointer: %w", i, a.Local, driver.ErrInvalidArg)
		case local:
			if off > math.MaxUint32 {
				return r, nil, fmt.Errorf("argument %d: local memory offset %d: %w", i, off, driver.ErrInvalidArg)
			}
			offsets = binary.NativeEndian.AppendUint32(offsets, uint32(off))
			out[i] = driver.Arg{Value: offsets[len(offsets)-4:]}
			off += (a.Local + 15) &^ 15
			next++
		}
	}
	r.SharedBytes = off
	return r, out, nil
}

// launchShape converts a range to CUDA's grid and block, checking the grid against the
// device's limits (zero limits are not checked).
func launchShape(r driver.Range, maxGrid [3]int) (grid, block [3]int, err error) {
	if r.Dims < 1 || r.Dims > 3 {
		return grid, block, fmt.Errorf("%d dimensions: %w", r.Dims, driver.ErrInvalidArg)
	}
	grid, block = [3]int{1, 1, 1}, [3]int{1, 1, 1}
	for i := 0; i < r.Dims; i++ {
		g, l := r.Global[i], r.Local[i]
		if l <= 0 || g <= 0 || g%l != 0 {
			return grid, block, fmt.Errorf("global %d, local %d in dimension %d: %w", g, l, i, driver.ErrInvalidArg)
		}
		grid[i], block[i] = g/l, l
		if limit := maxGrid[i]; (limit > 0 && grid[i] > limit) || grid[i] > math.MaxUint32 {
			return grid, block, fmt.Errorf("%d blocks in dimension %d, above the device's %d: %w", grid[i], i, limit, driver.ErrInvalidArg)
		}
	}
	return grid, block, nil
}

// checkOptions checks a launch's dynamic shared memory and clusters against the device:
// the shared bytes within the opt-in limit, clusters only on devices that have them, each
// used dimension dividing the grid, at most maxClusterSize blocks.
func checkOptions(r driver.Range, grid [3]int, p Properties) error {
	if n := r.SharedBytes; n < 0 || n > math.MaxUint32 || (p.SharedMemPerBlockOptin > 0 && n > p.SharedMemPerBlockOptin) {
		return fmt.Errorf("%d bytes of dynamic shared memory, the device allows %d with opt-in: %w", n, p.SharedMemPerBlockOptin, driver.ErrInvalidArg)
	}
	if !r.Clustered() {
		return nil
	}
	if !p.ClusterLaunch {
		return fmt.Errorf("thread-block cluster %v: this device (sm_%d%d) has no clusters: %w", r.Cluster, p.ComputeCapability[0], p.ComputeCapability[1], driver.ErrUnsupported)
	}
	c := clusterShape(r)
	size := c[0] * c[1] * c[2]
	for i := range 3 {
		if c[i] <= 0 || grid[i]%c[i] != 0 || (i >= r.Dims && c[i] != 1) {
			return fmt.Errorf("cluster %v for a grid of %v blocks: %w", r.Cluster, grid, driver.ErrInvalidArg)
		}
	}
	if size > maxClusterSize {
		return fmt.Errorf("cluster %v of %d blocks, above %d: %w", r.Cluster, size, maxClusterSize, driver.ErrInvalidArg)
	}
	return nil
}

// clusterShape returns r's cluster with unused dimensions (0) as 1.
func clusterShape(r driver.Range) [3]int {
	c := r.Cluster
	for i := range c {
		if i >= r.Dims && c[i] == 0 {
			c[i] = 1
		}
	}
	return c
}

// packedArgs holds kernel arguments ready for cuLaunchKernel: their bytes, each in a slot
// aligned as slotAlign says, and the slots' offsets.
type packedArgs struct {
	data    []byte
	offsets []int
}

// slotAlign returns the alignment of the slot of an argument of n bytes: 8 up to 8 bytes,
// else n's power of two up to cAlign (64: a tensor map's 128 bytes are 64-byte aligned, as
// the kernel's parameter is).
func slotAlign(n int) int {
	a := 8
	for a < n && a < cAlign {
		a *= 2
	}
	return a
}

// packArgs packs arguments: a buffer as its device pointer (8 bytes), a value (a scalar,
// or a structure such as a tensor map's 128 bytes) as its bytes. When the kernel's
// parameter sizes are known (sizes not nil), the count and each size must match them
// (ErrInvalidArg otherwise); a slot is at least 8 bytes, a multiple of 8, zero-padded, so
// that the driver never reads past an argument's storage, and aligned by slotAlign
// within the data, which writeC places at a multiple of cAlign in memory aligned to it.
func packArgs(args []driver.Arg, sizes []int) (packedArgs, error) {
	var p packedArgs
	err := p.pack(args, sizes)
	return p, err
}

// pack is packArgs into p, reusing its memory.
func (p *packedArgs) pack(args []driver.Arg, sizes []int) error {
	p.data, p.offsets = p.data[:0], p.offsets[:0]
	if sizes != nil && len(args) != len(sizes) {
		return fmt.Errorf("%d arguments given, the kernel declares %d: %w", len(args), len(sizes), driver.ErrInvalidArg)
	}
	var zero [8]byte
	for i, a := range args {
		var val []byte
		var ptr [8]byte
		switch {
		case a.Buffer != nil:
			b, err := asBuffer(a.Buffer)
			if err != nil {
				return wrapf(err, "argument %d", i)
			}
			val = binary.NativeEndian.AppendUint64(ptr[:0], b.ptr)
		case len(a.Value) > 0:
			val = a.Value
		case a.Local != 0:
			return fmt.Errorf("argument %d: %d bytes of local memory for a __local pointer parameter: CUDA C++ kernels have none (size dynamic shared memory with Range.SharedBytes): %w",
				i, a.Local, driver.ErrUnsupported)
		default:
			return fmt.Errorf("argument %d has neither buffer nor value: %w", i, driver.ErrInvalidArg)
		}
		if sizes != nil && len(val) != sizes[i] {
			return fmt.Errorf("argument %d is %d bytes, the kernel's parameter is %d: %w", i, len(val), sizes[i], driver.ErrInvalidArg)
		}
		align := slotAlign(len(val))
		for pad := (align - len(p.data)%align) % align; pad > 0; pad -= min(pad, len(zero)) {
			p.data = append(p.data, zero[:min(pad, len(zero))]...)
		}
		slot := (max(len(val), 8) + 7) &^ 7
		p.offsets = append(p.offsets, len(p.data))
		p.data = append(p.data, val...)
		for pad := slot - len(val); pad > 0; pad -= min(pad, len(zero)) {
			p.data = append(p.data, zero[:min(pad, len(zero))]...)
		}
	}
	return nil
}

// toC copies the arguments to C memory laid out as cuLaunchKernel's kernelParams: an
// array of one pointer per argument, followed, from the next multiple of cAlign, by the
// argument slots it points to. The caller frees it after the launch (the driver copies
// the arguments during the call).
func (p packedArgs) toC() cMemory {
	m := cAlloc(p.cSize())
	p.writeC(m)
	return m
}

// head is the offset of the slots in the kernelParams block: the pointer array, rounded
// up to cAlign so that each slot keeps its alignment.
func (p packedArgs) head() int {
	n := len(p.offsets) * int(unsafe.Sizeof(uintptr(0)))
	return (n + cAlign - 1) &^ (cAlign - 1)
}

// cSize is the size of the kernelParams block toC writes.
func (p packedArgs) cSize() int { return p.head() + len(p.data) }

// writeC lays the arguments out in m, which holds at least cSize bytes and is aligned to
// cAlign (cAlloc's).
func (p packedArgs) writeC(m cMemory) {
	head := p.head()
	copy(m.bytes(head + len(p.data))[head:], p.data)
	ptrs := unsafe.Slice((*unsafe.Pointer)(m.p), len(p.offsets))
	for i, off := range p.offsets {
		ptrs[i] = unsafe.Add(m.p, head+off)
	}
}

// gateSource is the kernel that holds a stream (Hold): one thread reads the hold's word
// in host memory until it reaches the hold's number (compared as a signed difference, so
// that the count may wrap), or until limit nanoseconds of the device's global timer have
// passed.
const gateSource = `
extern "C" __global__ void prism_gate(const volatile unsigned int *word, unsigned int hold, unsigned long long limit) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while ((int)(*word - hold) < 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 >= limit) {
      break;
    }
  }
}
`

// gateKernel is the built gate.
type gateKernel struct {
	prog driver.Program
	k    driver.Kernel
}

// gateKernel builds the gate once per device (NVRTC, through the cache like any build).
func (d *device) gateKernel() (driver.Kernel, error) {
	d.gateOnce.Do(func() {
		prog, err := d.BuildSource(driver.Source{Dialect: driver.DialectCUDA, Text: gateSource, Name: "gate.cu"}, nil)
		if err != nil {
			d.gateErr = fmt.Errorf("cuda: build the queue gate: %w", err)
			return
		}
		k, err := prog.Kernel("prism_gate")
		if err != nil {
			prog.Close()
			d.gateErr = fmt.Errorf("cuda: the queue gate: %w", err)
			return
		}
		d.gate = &gateKernel{prog: prog, k: k}
	})
	if d.gateErr != nil {
		return nil, d.gateErr
	}
	return d.gate.k, nil
}

// Hold holds the stream's later commands (driver.Gater) behind a one-thread kernel that
// waits until the returned open writes the hold's number into a word of mapped host
// memory, or until limit has passed on the device's timer. The kernel is launched without
// events. The word is the queue's own, allocated by its first Hold and freed by Close.
func (q *queue) Hold(limit time.Duration) (open func(), err error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("cuda: hold a queue for %v: the limit must be positive: %w", limit, driver.ErrInvalidArg)
	}
	k, err := q.d.gateKernel()
	if err != nil {
		return nil, err
	}
	if q.word == nil {
		err := q.d.th.Call(func() error {
			p, r := cuMemHostAllocMapped(4)
			if r == Success {
				q.word = (*uint32)(p)
				atomic.StoreUint32(q.word, 0)
			}
			return check("cuMemHostAlloc(4 bytes, mapped)", r)
		})
		if err != nil {
			return nil, err
		}
	}
	q.holds++
	hold := q.holds
	args := []driver.Arg{
		{Value: binary.LittleEndian.AppendUint64(nil, uint64(uintptr(unsafe.Pointer(q.word))))},
		{Value: binary.LittleEndian.AppendUint32(nil, hold)},
		{Value: binary.LittleEndian.AppendUint64(nil, uint64(limit.Nanoseconds()))},
	}
	one := driver.Range{Dims: 1, Global: [3]int{1, 1, 1}, Local: [3]int{1, 1, 1}}
	if err := q.LaunchUntimed(k, one, args); err != nil {
		return nil, err
	}
	word := q.word
	var once sync.Once
	return func() {
		once.Do(func() {
			if !q.closed.Load() { // Close freed the word, after the stream ran every hold out
				atomic.StoreUint32(word, hold)
			}
		})
	}, nil
}

// Finish waits until the stream has completed every command (polling cuStreamQuery), or
// ctx is done.
func (q *queue) Finish(ctx context.Context) error {
	if err := q.check(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cuda: finish: %w", err)
	}
	return q.idle(ctx)
}

// Close waits for the stream's commands and destroys it (cuStreamDestroy_v2). While a
// wait that a done context gave up on still has its work running on the device (a kernel
// that never returns), Close returns at once and leaves the stream unreleased: the wait
// would never end (see device.leaking). Idempotent.
func (q *queue) Close() error {
	if !q.closed.CompareAndSwap(false, true) {
		return nil
	}
	if q.d.leaking() {
		tracef("closing a queue whose device still runs work a done context gave up on: left unreleased")
		return nil
	}
	err := q.idle(context.Background())
	if derr := q.d.th.Call(func() error { return check("cuStreamDestroy_v2", cuStreamDestroy(q.stream)) }); err == nil {
		err = derr
	}
	q.params.free()
	if q.word != nil {
		// Every hold has run: the stream is idle or its destruction waited for it.
		if ferr := q.d.th.Call(func() error { return check("cuMemFreeHost", cuMemFreeHost(unsafe.Pointer(q.word))) }); err == nil {
			err = ferr
		}
		q.word = nil
	}
	return err
}

// event is the completion of one command: the events recorded before and after it. It is
// used by one goroutine at a time.
type event struct {
	d          *device
	start, end cuEvent
	what       string
	closed     bool
}

var _ driver.Event = (*event)(nil)

// Wait blocks until the command has completed (polling cuEventQuery) or ctx is done.
func (e *event) Wait(ctx context.Context) error {
	if e.closed {
		return errClosed("event of " + e.what)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cuda: wait for %s: %w", e.what, err)
	}
	return e.d.poll(ctx, "cuEventQuery("+e.what+")", func() Result { return cuEventQueryIn(e.d.ctx, e.end) },
		func() Result { return cuEventSynchronizeIn(e.d.ctx, e.end) })
}

// Elapsed returns the time between the command's start and end events
// (cuEventElapsedTime, about half a microsecond of resolution); zero for a recorded
// event (Queue.Record), which brackets no command.
func (e *event) Elapsed() (time.Duration, error) {
	if e.closed {
		return 0, errClosed("event of " + e.what)
	}
	if e.start == nil {
		return 0, nil
	}
	var ms float32
	err := e.d.onCaller(func() error {
		var r Result
		ms, r = cuEventElapsedTime(e.start, e.end)
		return check("cuEventElapsedTime("+e.what+")", r)
	})
	if err != nil {
		return 0, err
	}
	return elapsedOf(e.what, ms)
}

// elapsedOf converts the milliseconds cuEventElapsedTime gave into a duration. A NaN, an
// infinity or a negative time is no time: an error wrapping driver.ErrUnsupported, on which
// engine.Queue.Timed measures host time instead.
func elapsedOf(what string, ms float32) (time.Duration, error) {
	f := float64(ms)
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > float64(math.MaxInt64/int64(time.Millisecond)) {
		return 0, fmt.Errorf("cuda: cuEventElapsedTime(%s) gave %v ms, which is no time: %w", what, ms, driver.ErrUnsupported)
	}
	return time.Duration(f * float64(time.Millisecond)), nil
}

// Close returns the events to the device's pool, without a call to the device's thread.
// It does not wait for the command. Idempotent; after the device is closed it does nothing
// (the context's destruction released the events).
func (e *event) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	e.d.giveBack(e.start, e.end)
	return nil
}
