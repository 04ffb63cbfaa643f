package group

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// Processes of one host. Where every process an MPI launcher started maps the same host
// memory, the host-staged collectives do not pass their data through MPI's collectives:
// each process copies its devices' parts straight into one segment of shared memory
// (page-locked for the devices where the backend registers host memory, as CUDA does),
// every process reduces its own range of the elements on all its cores (or, for an
// all-reduce of one device a process that page-locked the segment, on its device:
// shmdevice.go), and each device copies its result straight out. MPI only synchronizes (MPI_Barrier) and sets the
// segment up. MPI's own collectives, one core per process and copies through its buffers,
// moved about 2.5 GB/s on two processes of one host; the segment moves what the copies
// between the devices and the host allow.
//
// Process 0 makes the segment, a file in shmDir that every process maps and that
// process 0 removes as soon as all have mapped it (the mapping stays; nothing is left
// behind when a process dies). A random token written by process 0 and read back by the
// others shows the memory is truly shared (containers on one host can have separate
// /dev/shm); if any process cannot map it or reads another token, every process stays
// with MPI's collectives and the group says why. The segment grows, as every process
// agrees, when a collective needs more; collectives take the same sizes in every process,
// so the processes grow it together.

// shmDir is where segments are made: tmpfs on Linux.
var shmDir = "/dev/shm"

// mapPath is the file a process other than 0 maps for process 0's path: the same (tests
// give another, as a process with a /dev/shm of its own would see).
var mapPath = func(path string) string { return path }

// shmMin is the size of the first segment, made when the group is joined; shmMaxBytes,
// where positive, the largest process 0 makes (the tests' stand-in for a full /dev/shm).
// Variables for the tests.
var (
	shmMin      int64 = 1 << 20
	shmMaxBytes int64
)

// segment is the group's shared memory, the same in every process of the group.
type segment struct {
	mem      []byte
	pin      *engine.HostBuffer[uint8] // the memory page-locked for the devices; nil where no backend registers it
	unpinned string                    // why a device that registers host memory did not ("" when none failed)
	out      *engine.Queue             // the copies of a pipelined all-reduce's results (one device per process)
}

// shmChunk is the piece of a pipelined all-reduce, in bytes: the copies of one piece
// overlap the reduction of the next. A variable for the tests.
var shmChunk = 32 << 20

// shmToken is what process 0 writes at the start of a new segment for the others to read.
type shmToken struct {
	Path  string
	Size  int64
	Token []byte
	Why   string // process 0 could not make a segment: why ("" when it did)
}

// shareMemory sets up the group's segment with at least size bytes: where every process
// maps the same memory it returns nil, else why not (every process alike). An error is a
// failure of MPI itself.
func (g *Group) shareMemory(size int64) (string, error) {
	if g.shm != nil && int64(len(g.shm.mem)) >= size {
		return "", nil
	}
	g.closeSegment()
	size = max(size, shmMin)
	me := g.mpi.Rank()
	var tok shmToken
	var mem []byte
	var made func() error // removes process 0's file
	if me == 0 {
		tok.Token = make([]byte, 16)
		rand.Read(tok.Token)
		var err error
		if shmMaxBytes > 0 && size > shmMaxBytes {
			err = fmt.Errorf("shared memory: %d bytes: more than the %d allowed", size, shmMaxBytes)
		} else {
			tok.Path, mem, made, err = makeSegment(shmDir, size)
		}
		if err != nil {
			tok = shmToken{Why: err.Error()}
		} else {
			tok.Size = size
			copy(mem, tok.Token)
		}
	}
	js, err := json.Marshal(tok)
	if err != nil {
		return "", err
	}
	b, err := broadcastText(g.mpi, js, maxHeader)
	if err != nil {
		return "", fmt.Errorf("group: receiving process 0's shared memory: %w", err)
	}
	if me != 0 {
		tok = shmToken{}
		if err := decodeStrict(b, &tok); err != nil {
			return "", fmt.Errorf("group: process 0's shared memory: %v: %w", err, errFrame)
		}
	}
	// Each process says whether it maps the segment and reads the token: every one must.
	bad := []int32{0}
	why := peerText(tok.Why)
	switch {
	case why != "":
		bad[0] = 1
	case me != 0:
		if tok.Size != size {
			why, bad[0] = fmt.Sprintf("process 0 made %d bytes of shared memory; this process needs %d", tok.Size, size), 1
		} else if mem, err = mapSegment(mapPath(tok.Path), size); err != nil {
			why, bad[0] = err.Error(), 1
		} else if !bytes.Equal(mem[:len(tok.Token)], tok.Token) {
			why, bad[0] = fmt.Sprintf("%s holds other data in process %d: the processes do not share memory", tok.Path, me), 1
		}
	}
	errAgree := g.mpi.AllReduce(asBytes(bad), driver.CollInt32, ReduceMax)
	if made != nil {
		made() // every process has mapped it, or gave up
	}
	if errAgree != nil {
		unmapSegment(mem)
		return "", errAgree
	}
	if bad[0] != 0 {
		unmapSegment(mem)
		if why == "" {
			why = "another process could not map the shared memory"
		}
		return why, nil
	}
	g.shm = &segment{mem: mem}
	// Page-locked once for every device of the process (CUDA registers it for every
	// context); copies into plain memory work where no backend registers it.
	var errs []error
	for _, d := range g.devs {
		pin, err := engine.RegisterHostBuffer(d, mem)
		if err == nil {
			g.shm.pin = pin
			break
		}
		errs = append(errs, err)
	}
	engine.Tracef("group: %d bytes of shared memory; page-locked: %v %v", size, g.shm.pin != nil, errs)
	if g.shm.pin == nil {
		for _, err := range errs {
			if !errors.Is(err, engine.ErrUnsupported) { // a backend that registers host memory failed to
				g.shm.unpinned = err.Error()
			}
		}
	}
	g.lib.Name = g.libBase + ", shared memory"
	if g.shm.unpinned != "" {
		g.lib.Name += " (not page-locked: " + g.shm.unpinned + ")"
	}
	return "", nil
}

// closeSegment unmaps the group's segment.
func (g *Group) closeSegment() {
	if g.shm == nil {
		return
	}
	if g.shm.out != nil {
		g.shm.out.Close()
	}
	if g.shm.pin != nil {
		g.shm.pin.Close()
	}
	unmapSegment(g.shm.mem)
	g.shm = nil
}

// sharedSlice views n elements of T of the segment from element off.
func sharedSlice[T CollectiveScalar](s *segment, off, n int) []T {
	return fromBytes[T](s.mem)[off : off+n]
}

// stagedShared runs a collective through the group's segment: every process's parts go
// into it, each process reduces its own range of the elements, and each device's result
// comes out of it. ok is false where the processes do not share memory: then nothing was
// done, and MPI's collectives run instead.
func stagedShared[T CollectiveScalar](ctx context.Context, g *Group, kind driver.CollectiveKind, qs []*engine.Queue, send, recv []*engine.Buffer[T], op ReduceOp, root, count int) (ok bool, err error) {
	if g.shmOff != "" {
		return false, nil
	}
	fail := func(err error) (bool, error) {
		return true, fmt.Errorf("group: %s staged through shared memory (%s): %w", kind, g.mpi.Library().Name, g.panics.keep(err))
	}
	if count == 0 {
		return true, nil
	}
	procs, me, n := g.mpi.Size(), g.mpi.Rank(), len(g.devs)
	m := count // the elements of one process's part
	if kind == driver.ReduceScatter {
		m = g.size * count
	}
	var need int // elements of T
	switch kind {
	case driver.AllReduce, driver.ReduceScatter:
		need = (procs + 1) * m // each process's part, then the result
	case driver.AllGather:
		need = g.size * count
	case driver.Broadcast:
		need = count
	}
	size := int64(need) * int64(engine.SizeOf[T]())
	if g.shmTooBig > 0 && size >= g.shmTooBig {
		return false, nil // a segment this large could not be made: MPI's collectives
	}
	why, err := g.shareMemory(size)
	if err != nil {
		return fail(err)
	}
	if why != "" {
		// Collectives this large or larger go through MPI's collectives from now on;
		// smaller ones make a segment of their size again.
		g.shmTooBig, g.shmTooBigWhy = size, why
		engine.Tracef("group: %s of %d bytes through MPI's collectives: %s", kind, size, why)
		return false, nil
	}
	seg, barrier := g.shm, g.mpi.Barrier
	if reduceOnDevice(g, kind) {
		on, err := deviceReduceAgreed[T](g, qs[0].Device(), op)
		if err != nil {
			return fail(err)
		}
		if on {
			if err := allReduceOnDevice(ctx, g, qs[0], send[0], recv[0], op, count); err != nil {
				return fail(err)
			}
			if err := barrier(); err != nil {
				return fail(err)
			}
			return true, nil
		}
	}
	if kind == driver.AllReduce && n == 1 {
		if seg.out == nil {
			if seg.out, err = g.devs[0].NewQueue(); err != nil {
				return fail(err)
			}
		}
		if err := allReduceShared(ctx, g, qs[0], seg.out, send[0], recv[0], op, count); err != nil {
			return fail(err)
		}
		if err := barrier(); err != nil {
			return fail(err)
		}
		return true, nil
	}
	// The parts go in.
	switch kind {
	case driver.AllReduce, driver.ReduceScatter:
		mine := sharedSlice[T](seg, me*m, m)
		if n == 1 {
			err = send[0].Read(ctx, qs[0], 0, mine)
		} else {
			err = reduceLocal(ctx, g, qs, send, mine, op)
		}
	case driver.AllGather:
		err = eachDevice(n, "reading the all-gather parts", func(i int) error {
			return send[i].Read(ctx, qs[i], 0, sharedSlice[T](seg, (g.first+i)*count, count))
		})
	case driver.Broadcast:
		if i := root - g.first; i >= 0 && i < n {
			err = send[i].Read(ctx, qs[i], 0, sharedSlice[T](seg, 0, count))
		}
	}
	if err != nil {
		return fail(err)
	}
	if err := barrier(); err != nil {
		return fail(err)
	}
	// Each process reduces its range: an equal share of an all-reduce, its own ranks'
	// blocks of a reduce-scatter (which no other process reads).
	var result []T
	if kind == driver.AllReduce || kind == driver.ReduceScatter {
		lo, hi := me*m/procs, (me+1)*m/procs
		if kind == driver.ReduceScatter {
			lo, hi = g.first*count, (g.first+n)*count
		}
		parts := make([][]T, procs)
		for p := range parts {
			parts[p] = sharedSlice[T](seg, p*m+lo, hi-lo)
		}
		result = sharedSlice[T](seg, procs*m, m)
		if err := reduceInto(result[lo:hi], parts, op); err != nil {
			return fail(err)
		}
		if kind == driver.AllReduce {
			if err := barrier(); err != nil {
				return fail(err)
			}
		}
	}
	// The results come out.
	err = eachDevice(n, fmt.Sprintf("writing the %s results", kind), func(i int) error {
		var r []T
		switch kind {
		case driver.AllReduce:
			r = result
		case driver.ReduceScatter:
			r = result[(g.first+i)*count : (g.first+i+1)*count]
		case driver.AllGather:
			r = sharedSlice[T](seg, 0, g.size*count)
		case driver.Broadcast:
			r = sharedSlice[T](seg, 0, count)
		}
		return recv[i].Write(ctx, qs[i], 0, r)
	})
	if err != nil {
		return fail(err)
	}
	// No process writes the next collective's parts before every one has read this one's
	// results.
	if err := barrier(); err != nil {
		return fail(err)
	}
	return true, nil
}

// reduceLocal reads every local device's send into its host buffer and reduces them, in
// rank order, into dst.
func reduceLocal[T CollectiveScalar](ctx context.Context, g *Group, qs []*engine.Queue, send []*engine.Buffer[T], dst []T, op ReduceOp) error {
	parts, _, err := readStaged(ctx, g, driver.AllReduce, qs, send, 0)
	if err != nil {
		return err
	}
	return reduceInto(dst, parts, op)
}

// allReduceShared is the all-reduce of one device per process through the segment,
// pipelined in pieces of shmChunk bytes: the device's copy of the next piece into the
// segment (on q, after what it holds) and its copy of the last piece's result out of it
// (on out) run while this process reduces its range of the current piece. send may be
// recv: a piece is read before its result is written.
func allReduceShared[T CollectiveScalar](ctx context.Context, g *Group, q, out *engine.Queue, send, recv *engine.Buffer[T], op ReduceOp, count int) error {
	procs, me, seg := g.mpi.Size(), g.mpi.Rank(), g.shm
	step := max(1, shmChunk/engine.SizeOf[T]())
	pieces := (count + step - 1) / step
	piece := func(k int) (int, int) { return k * step, min(count, (k+1)*step) }
	mine := sharedSlice[T](seg, me*count, count)
	result := sharedSlice[T](seg, procs*count, count)
	// Where the backend page-locks host memory but could not page-lock the segment, the
	// pieces pass through page-locked buffers of the device: a copy at the bus's speed and
	// one between host buffers on all cores, rather than the driver's pageable copy.
	var in, outHB *engine.HostBuffer[T]
	if seg.unpinned != "" || forceBounce {
		var err error
		if in, err = stage[T](g, 0, stageSend, min(step, count)); err != nil {
			return err
		}
		if outHB, err = stage[T](g, 0, stageRecv, min(step, count)); err != nil {
			return err
		}
	}
	readPiece := func(lo, hi int) error {
		if in == nil {
			return send.Read(ctx, q, lo, mine[lo:hi])
		}
		ev, err := send.ReadAsync(q, lo, in, 0, hi-lo)
		if err != nil {
			return err
		}
		defer ev.Close()
		if err := ev.Wait(ctx); err != nil {
			return err
		}
		copyParallel(mine[lo:hi], in.Slice()[:hi-lo])
		return nil
	}
	writePiece := func(lo, hi int) error {
		if outHB == nil {
			return recv.Write(ctx, out, lo, result[lo:hi])
		}
		copyParallel(outHB.Slice()[:hi-lo], result[lo:hi])
		ev, err := recv.WriteAsync(out, lo, outHB, 0, hi-lo)
		if err != nil {
			return err
		}
		defer ev.Close()
		return ev.Wait(ctx)
	}

	var quit atomic.Bool // the reader stops early after a failure
	read := make(chan error, pieces)
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for k := range pieces {
			if quit.Load() {
				return
			}
			lo, hi := piece(k)
			err := readPiece(lo, hi)
			read <- err
			if err != nil {
				return
			}
		}
	}()
	written := make(chan int, pieces)
	wrote := make(chan error, 1)
	go func() {
		var err error
		for k := range written {
			if err == nil {
				err = writePiece(piece(k))
			}
		}
		wrote <- err
	}()
	var err error
	var waited, barriers, reduced time.Duration // the trace's (PRISM_TRACE)
	start := time.Now()
	for k := 0; k < pieces && err == nil; k++ {
		t := time.Now()
		if err = <-read; err != nil {
			break
		}
		t = lap(&waited, t)
		if err = g.mpi.Barrier(); err != nil { // every process's piece k is in
			break
		}
		t = lap(&barriers, t)
		lo, hi := piece(k)
		a, b := lo+me*(hi-lo)/procs, lo+(me+1)*(hi-lo)/procs
		parts := make([][]T, procs)
		for p := range parts {
			parts[p] = sharedSlice[T](seg, p*count+a, b-a)
		}
		if err = reduceInto(result[a:b], parts, op); err != nil {
			break
		}
		t = lap(&reduced, t)
		if err = g.mpi.Barrier(); err != nil { // every range of piece k is reduced
			break
		}
		lap(&barriers, t)
		written <- k
	}
	close(written)
	quit.Store(true)
	readers.Wait()
	t := time.Now()
	err = errors.Join(err, <-wrote)
	if engine.Tracing() {
		engine.Tracef("group: all-reduce of %d bytes through shared memory in %v, %d pieces: waiting for the copies in %v, barriers %v, reducing %v on %d cores, the last copies out %v (page-locked: %v; through the device's host buffers: %v)",
			count*engine.SizeOf[T](), time.Since(start), pieces, waited, barriers, reduced, runtime.GOMAXPROCS(0), time.Since(t), seg.pin != nil, in != nil)
	}
	return err
}

// forceBounce passes a shared all-reduce's pieces through the device's host buffers even
// where the segment is page-locked or the backend page-locks nothing (the tests).
var forceBounce = false

// copyParallel copies src into dst (of one length) in ranges spread over the host's cores.
func copyParallel[T CollectiveScalar](dst, src []T) {
	const chunk = 256 << 10 // elements
	n := len(src)
	if n <= chunk {
		copy(dst, src)
		return
	}
	var wg sync.WaitGroup
	workers := min((n+chunk-1)/chunk, runtime.GOMAXPROCS(0))
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		hi := min(n, lo+per)
		wg.Go(func() { copy(dst[lo:hi], src[lo:hi]) })
	}
	wg.Wait()
}

// lap adds the time since t to d and returns now.
func lap(d *time.Duration, t time.Time) time.Time {
	now := time.Now()
	*d += now.Sub(t)
	return now
}
