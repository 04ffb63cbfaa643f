package group

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// Groups whose processes a launcher started with MPI. The processes meet through MPI
// itself: each gives every other its hello (MPI_Allgatherv), checked as a TCP
// rendezvous checks it; every process then numbers the ranks alike, and where every
// device can join the collective library (NCCL), process 0 broadcasts the communicator's
// identity. Otherwise the collectives are staged through host memory: each device's
// send is read into a host buffer of its device (page-locked or mapped where the backend
// gives them), the parts of one process combined on the host, and the processes' parts
// combined by MPI's collective on those buffers, whose results are written back to each
// recv. MPI's launcher authenticates the processes; no token is needed, and no port is
// opened by Prism. MPI's calls cannot be interrupted: ctx bounds the device copies, but a
// process that never joins or never calls leaves the others waiting in MPI until the
// launcher ends the job (mpirun does when a process exits with an error).

// mpiChoice is process 0's choice of library: NCCL's identity, or why the collectives are
// staged through the host.
type mpiChoice struct {
	ID  []byte
	Why string
}

// joinLaunched joins the group of the processes an MPI launcher started: through MPI where
// it loads, else through Prism's TCP rendezvous at rv.Addr (the fallback), saying why.
func joinLaunched(ctx context.Context, devs []*engine.Device, rv Rendezvous, o Options) (*Group, error) {
	t, err := acquireTransport()
	if err != nil {
		if rv.Addr == "" || rv.Size == 0 {
			return nil, fmt.Errorf("group: started by an MPI launcher (%s=%d) but %v: set PRISM_RENDEZVOUS=tcp://host:port (and %s off loopback) to meet through Prism's TCP rendezvous instead: %w",
				rv.MPI, rv.Rank, err, TokenEnv, engine.ErrUnavailable)
		}
		tcp := rv
		tcp.MPI = ""
		if err := tcp.check(); err != nil {
			return nil, err
		}
		return joinTCP(ctx, devs, tcp, o, "no MPI: "+err.Error())
	}
	g, err := joinMPI(ctx, devs, rv, o, t)
	if err != nil {
		releaseTransport()
		return nil, err
	}
	return g, nil
}

// joinMPI makes the group of devs with the devices of every other process of t's world.
func joinMPI(ctx context.Context, devs []*engine.Device, rv Rendezvous, o Options, t Transport) (*Group, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("group: joining through %s (%s=%d): "+format, append([]any{t.Library().Name, rv.MPI, rv.Rank}, a...)...)
	}
	if rv.Size != 0 && (t.Size() != rv.Size || t.Rank() != rv.Rank) {
		return nil, fail("MPI_COMM_WORLD makes this process rank %d of %d; the environment says %d of %d: %w", t.Rank(), t.Size(), rv.Rank, rv.Size, engine.ErrInvalidArg)
	}
	if t.Size() > MaxProcesses {
		return nil, fail("%d processes: at most %d: %w", t.Size(), MaxProcesses, engine.ErrInvalidArg)
	}
	if len(devs) > MaxProcessDevices {
		return nil, fail("%d devices in one process of a group: at most %d: %w", len(devs), MaxProcessDevices, engine.ErrInvalidArg)
	}
	g, err := newGroup(devs)
	if err != nil {
		return nil, err
	}
	me, size := t.Rank(), t.Size()
	_, why := g.provider()
	if o.HostStaged {
		why = "asked for (Options.HostStaged)"
	}
	own := hello{Rank: me, Size: size, Devices: len(devs), Why: why, Cards: g.cards(), Nonce: newNonce()}
	js, err := json.Marshal(own)
	if err != nil {
		return nil, fail("%w", err)
	}
	texts, err := gatherTexts(t, js, maxHeader)
	if err != nil {
		return nil, fail("exchanging the hellos: %w", err)
	}
	hellos := make([]hello, size)
	counts := make([]int, size)
	total := 0
	for p, b := range texts {
		if err := decodeStrict(b, &hellos[p]); err != nil {
			return nil, fail("process %d's hello: %v: %w", p, err, errFrame)
		}
		h := hellos[p]
		if h.Rank != p {
			return nil, fail("process %d says it is rank %d: %w", p, h.Rank, errFrame)
		}
		if err := checkHelloBody(h, rv.withSize(size)); err != nil {
			return nil, fail("%v: %w", err, errFrame)
		}
		counts[p] = h.Devices
		total += h.Devices
		if p < me {
			g.first += h.Devices
		}
	}
	if total > MaxRanks {
		return nil, fail("the %d processes bring %d devices: at most %d ranks in a group: %w", size, total, MaxRanks, engine.ErrInvalidArg)
	}
	g.size, g.mpi, g.counts = total, t, counts
	choice := mpiChoice{Why: planWhy(hellos)}
	if choice.Why == "" && me == 0 {
		choice.ID, choice.Why = g.collectiveID()
	}
	if choice.Why == "" { // process 0 tells every other process what it made
		js, err := json.Marshal(choice)
		if err != nil {
			return nil, fail("%w", err)
		}
		b, err := broadcastText(t, js, maxHeader)
		if err != nil {
			return nil, fail("receiving process 0's choice: %w", err)
		}
		choice = mpiChoice{}
		if err := decodeStrict(b, &choice); err != nil {
			return nil, fail("process 0's choice: %v: %w", err, errFrame)
		}
		if len(choice.ID) > maxCollectiveID || len(choice.Why) > maxPeerText || (choice.ID == nil) == (choice.Why == "") {
			return nil, fail("process 0 chose a communicator identity of %d bytes and a reason of %d bytes: %w", len(choice.ID), len(choice.Why), errFrame)
		}
		choice.Why = peerText(choice.Why)
	}
	if choice.ID != nil {
		if err := g.connect(ctx, choice.ID); err != nil {
			return nil, err
		}
		return g, nil
	}
	lib := t.Library()
	g.lib = engine.Library{Name: "host-staged over " + lib.Name, Version: lib.Version, Path: lib.Path}
	g.libBase, g.why = g.lib.Name, choice.Why
	// Process 0's choice holds for all.
	off := []uint64{0}
	if o.NoSharedMemory {
		off[0] = 1
	}
	if err := t.Broadcast(asBytes(off), driver.CollUint64, 0); err != nil {
		return nil, fail("receiving process 0's choice of shared memory: %w", err)
	}
	switch {
	case off[0] != 0:
		g.shmOff = "asked for (Options.NoSharedMemory)"
	case size == 1:
		g.shmOff = "one process"
	default:
		if g.shmOff, err = g.shareMemory(shmMin); err != nil {
			return nil, fail("setting up shared memory: %w", err)
		}
	}
	return g, nil
}

// withSize returns r with its size set to size (MPI's, where the environment gave none).
func (r Rendezvous) withSize(size int) Rendezvous {
	r.Size = size
	return r
}

// hostStage is a host buffer of one device kept between the collectives of a group.
type hostStage struct {
	buf   any // *engine.HostBuffer[T]
	close func() error
}

// The host buffers of each device: what its send is read into, and what results land in.
const (
	stageSend = iota
	stageRecv
	stageSlots
)

// stage returns a host buffer of device i's slot holding at least n elements of T, the
// one of the last collective where it is large enough and of that type.
func stage[T CollectiveScalar](g *Group, i, slot, n int) (*engine.HostBuffer[T], error) {
	if g.stages == nil {
		g.stages = make([][stageSlots]hostStage, len(g.devs))
	}
	s := &g.stages[i][slot]
	if hb, ok := s.buf.(*engine.HostBuffer[T]); ok && hb.Len() >= n {
		return hb, nil
	}
	if s.close != nil {
		s.close()
		*s = hostStage{}
	}
	hb, err := engine.NewHostBuffer[T](g.devs[i], max(n, 1))
	if err != nil {
		return nil, err
	}
	*s = hostStage{buf: hb, close: hb.Close}
	return hb, nil
}

// closeStages releases the group's host buffers.
func (g *Group) closeStages() {
	for i := range g.stages {
		for k := range g.stages[i] {
			if c := g.stages[i][k].close; c != nil {
				c()
			}
		}
	}
	g.stages = nil
}

// result is where one device's result of a collective lies: in a host buffer of that
// device (hb, from element off), written back with an asynchronous copy, or in host
// memory s.
type result[T CollectiveScalar] struct {
	hb  *engine.HostBuffer[T]
	off int
	s   []T
}

// stagedMPI runs a collective staged through host memory, across processes through the
// group's transport.
func stagedMPI[T CollectiveScalar](ctx context.Context, g *Group, kind driver.CollectiveKind, qs []*engine.Queue, send, recv []*engine.Buffer[T], op ReduceOp, root, count int) error {
	fail := func(err error) error {
		return fmt.Errorf("group: %s staged through the host over %s: %w", kind, g.mpi.Library().Name, g.panics.keep(err))
	}
	n := len(g.devs)
	ct := collType[T]()
	parts, hosts, err := readStaged(ctx, g, kind, qs, send, root)
	if err != nil {
		return fail(err)
	}
	size := len(g.counts)
	procCounts := make([]int64, size)
	for p, c := range g.counts {
		procCounts[p] = int64(c) * int64(count)
	}
	res := make([]result[T], n)
	switch kind {
	case driver.AllReduce:
		// This process's parts reduced into the first device's host buffer, in place.
		if n > 1 {
			if err := reduceInto(parts[0], parts, op); err != nil {
				return fail(err)
			}
		}
		r := result[T]{hb: hosts[0], s: parts[0]}
		if err := g.mpi.AllReduce(asBytes(r.s), ct, op); err != nil {
			return fail(err)
		}
		res[0] = r
		for i := 1; i < n; i++ {
			res[i] = result[T]{s: r.s}
		}
	case driver.AllGather:
		mine := parts[0]
		if n > 1 {
			mine = make([]T, 0, n*count)
			for _, p := range parts {
				mine = append(mine, p...)
			}
		}
		hb, err := stage[T](g, 0, stageRecv, g.size*count)
		if err != nil {
			return fail(err)
		}
		all := hb.Slice()[:g.size*count]
		if err := g.mpi.AllGather(asBytes(mine), asBytes(all), procCounts, ct); err != nil {
			return fail(err)
		}
		res[0] = result[T]{hb: hb, s: all}
		for i := 1; i < n; i++ {
			res[i] = result[T]{s: all}
		}
	case driver.ReduceScatter:
		mine := parts[0] // this process's parts reduced into the first's host buffer, in place
		if n > 1 {
			if err := reduceInto(mine, parts, op); err != nil {
				return fail(err)
			}
		}
		hb, err := stage[T](g, 0, stageRecv, n*count)
		if err != nil {
			return fail(err)
		}
		block := hb.Slice()[:n*count]
		if err := g.mpi.ReduceScatter(asBytes(mine), asBytes(block), procCounts, ct, op); err != nil {
			return fail(err)
		}
		res[0] = result[T]{hb: hb, s: block[:count]}
		for i := 1; i < n; i++ {
			res[i] = result[T]{s: block[i*count : (i+1)*count]}
		}
	case driver.Broadcast:
		from, first := 0, 0 // the process of rank root, and its first rank
		for p, c := range g.counts {
			if root < first+c {
				from = p
				break
			}
			first += c
		}
		var r result[T]
		if from == g.mpi.Rank() {
			r = result[T]{hb: hosts[root-g.first], s: parts[root-g.first]}
		} else {
			hb, err := stage[T](g, 0, stageRecv, count)
			if err != nil {
				return fail(err)
			}
			r = result[T]{hb: hb, s: hb.Slice()[:count]}
		}
		if err := g.mpi.Broadcast(asBytes(r.s), ct, from); err != nil {
			return fail(err)
		}
		for i := range res {
			res[i] = result[T]{s: r.s}
			if r.hb != nil && r.hb.Device() == g.devs[i] {
				res[i].hb = r.hb
			}
		}
	}
	err = eachDevice(n, fmt.Sprintf("writing the %s results", kind), func(i int) error {
		r := res[i]
		if len(r.s) == 0 {
			return nil
		}
		if r.hb == nil {
			return recv[i].Write(ctx, qs[i], 0, r.s)
		}
		ev, err := recv[i].WriteAsync(qs[i], 0, r.hb, r.off, len(r.s))
		if err != nil {
			return err
		}
		defer ev.Close()
		return ev.Wait(ctx)
	})
	if err != nil {
		return fail(err)
	}
	return nil
}
