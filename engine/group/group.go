package group

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// Group is a set of devices that run collectives together (AllReduce, AllGather,
// ReduceScatter, Broadcast): the devices of this process given to New, or those of
// several processes joined by Join. Each device is one rank; ranks count the
// devices of process 0 first, then those of process 1, and so on, each process's in the
// order it gave them.
//
// Collectives run through the devices' collective library (NCCL on CUDA) where every
// device of every process offers one and no two ranks share a device; otherwise they are
// staged through host memory (and TCP between processes), with the same results and the
// same API. Library says which. A Group runs one collective at a time; it is safe for
// concurrent use.
type Group struct {
	devs  []*engine.Device
	first int // the global rank of devs[0]
	size  int // ranks in all processes

	comm driver.Communicator // the collective library; nil when staged through the host
	lib  engine.Library
	why  string // why the collectives are staged through the host

	net *peers // the other processes over Prism's TCP frames; nil when the group is this process's alone or meets through MPI

	mpi     Transport               // the other processes through MPI; nil when not
	counts  []int                   // ranks of each process (through MPI)
	stages  [][stageSlots]hostStage // host buffers of each device (staged through MPI)
	shm     *segment                // memory every process maps (one host, staged through MPI); nil when not
	dred    *deviceReduce           // the device's reduction of a shared all-reduce (shmdevice.go); nil until one ran
	shmOff  string                  // why the processes stage through MPI's collectives rather than shared memory
	libBase string                  // lib's name before what the shared memory adds
	// shmTooBig is the size of the smallest segment that could not be made (0: none):
	// collectives that need as much go through MPI's collectives, and shmTooBigWhy says why.
	shmTooBig    int64
	shmTooBigWhy string
	fallback     string // why the processes talk over Prism's TCP frames rather than MPI

	panics panics // the first panic recovered in the group's goroutines

	mu     sync.Mutex // one collective at a time
	closed bool
}

// Options are the choices of New and Join.
type Options struct {
	// HostStaged stages every collective through host memory even where the devices
	// offer a collective library: the portable path, for comparisons. Across processes,
	// process 0's choice holds for all.
	HostStaged bool
	// NoSharedMemory keeps the host-staged collectives of processes an MPI launcher
	// started on one host on MPI's collectives, as across hosts, rather than on memory
	// the processes share.
	NoSharedMemory bool
}

// hostStaged is the Library of collectives staged through the host.
var hostStaged = engine.Library{Name: "host-staged"}

// New makes a group of devs, all in this process (ranks 0 to len(devs)-1), set up
// for collectives. The same *engine.Device may not appear twice; two handles on one device may
// (Open twice), and then the collectives are staged through the host.
func New(ctx context.Context, devs []*engine.Device, o Options) (*Group, error) {
	g, err := newGroup(devs)
	if err != nil {
		return nil, err
	}
	g.size = len(devs)
	if o.HostStaged {
		g.lib, g.why = hostStaged, "asked for (Options.HostStaged)"
		return g, nil
	}
	id, why := g.collectiveID()
	if id == nil {
		g.lib, g.why = hostStaged, why
		return g, nil
	}
	if err := g.connect(ctx, id); err != nil {
		return nil, err
	}
	return g, nil
}

// newGroup checks devs and makes a group of them with no collective library yet.
func newGroup(devs []*engine.Device) (*Group, error) {
	if len(devs) == 0 {
		return nil, fmt.Errorf("group: a group of no device: %w", engine.ErrInvalidArg)
	}
	for i, d := range devs {
		if d == nil {
			return nil, fmt.Errorf("group: group device %d is nil: %w", i, engine.ErrInvalidArg)
		}
		if err := d.Err(); err != nil {
			return nil, err
		}
		if slices.Index(devs, d) != i {
			return nil, fmt.Errorf("group: device %s is given twice to one group (Open it again for a second rank): %w", d.ID(), engine.ErrInvalidArg)
		}
	}
	return &Group{devs: slices.Clone(devs)}, nil
}

// collectiveID returns a new communicator identity of the devices' collective library,
// or nil and why the collectives must be staged through the host.
func (g *Group) collectiveID() ([]byte, string) {
	p, why := g.provider()
	if p == nil {
		return nil, why
	}
	id, err := p.CollectiveID()
	if err != nil {
		return nil, err.Error()
	}
	return id, ""
}

// provider returns the collective library of the group's local devices, or nil and why
// there is none.
func (g *Group) provider() (driver.CollectiveProvider, string) {
	p, ok := g.devs[0].Driver().(driver.CollectiveProvider)
	if !ok {
		return nil, fmt.Sprintf("the %s backend offers no collective library", g.devs[0].Backend())
	}
	for _, d := range g.devs {
		if d.Backend() != g.devs[0].Backend() {
			return nil, fmt.Sprintf("the group mixes the %s and %s backends", g.devs[0].Backend(), d.Backend())
		}
	}
	for i, d := range g.devs {
		for _, e := range g.devs[:i] {
			if e.ID() == d.ID() {
				return nil, fmt.Sprintf("two ranks share device %s", d.ID())
			}
		}
	}
	return p, ""
}

// connect makes the collective library's communicator of the local devices.
func (g *Group) connect(ctx context.Context, id []byte) error {
	p, why := g.provider()
	if p == nil {
		return fmt.Errorf("group: group: %s: %w", why, engine.ErrUnsupported)
	}
	ds := make([]driver.Device, len(g.devs))
	ranks := make([]int, len(g.devs))
	for i, d := range g.devs {
		ds[i], ranks[i] = d.Driver(), g.first+i
	}
	type made struct {
		c   driver.Communicator
		err error
	}
	ch := make(chan made, 1)
	goSafe("joining the communicator", func() error {
		c, err := p.NewCommunicator(ds, ranks, g.size, id)
		ch <- made{c, err}
		return nil
	}, func(err error) {
		if err != nil {
			ch <- made{err: g.panics.keep(err)}
		}
	})
	select {
	case m := <-ch:
		if m.err != nil {
			return fmt.Errorf("group: group of %d ranks on %s: %w", g.size, g.ids(), m.err)
		}
		g.comm, g.lib = m.c, m.c.Library()
		return nil
	case <-ctx.Done():
		// The library's join cannot be interrupted: release it once it returns.
		goSafe("releasing the communicator", func() error {
			if m := <-ch; m.c != nil {
				m.c.Close()
			}
			return nil
		}, func(err error) { g.panics.keep(err) })
		return fmt.Errorf("group: group of %d ranks on %s: waiting for every rank to join: %w", g.size, g.ids(), ctx.Err())
	}
}

// ids lists the local devices' IDs.
func (g *Group) ids() string {
	s := make([]string, len(g.devs))
	for i, d := range g.devs {
		s[i] = d.ID()
	}
	return fmt.Sprint(s)
}

// Devices returns the group's devices of this process, in rank order.
func (g *Group) Devices() []*engine.Device { return slices.Clone(g.devs) }

// Size returns the number of ranks in every process of the group.
func (g *Group) Size() int { return g.size }

// Rank returns the global rank of the i-th device of this process.
func (g *Group) Rank(i int) int { return g.first + i }

// Library returns the collective library the group runs (NCCL and its version), or
// "host-staged" when collectives are staged through host memory.
func (g *Group) Library() engine.Library { return g.lib }

// Staged says why the collectives are staged through the host ("" when they are not).
func (g *Group) Staged() string { return g.why }

// SharedMemory reports whether the processes of a group an MPI launcher started stage
// their collectives through memory they share (one host), and where they do not, why
// ("" for a group that does not meet through MPI). Where a segment as large as a
// collective needed could not be made, collectives that large go through MPI's own:
// the reason then says so, beside true.
func (g *Group) SharedMemory() (bool, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	on := g.mpi != nil && g.shmOff == ""
	if on && g.shmTooBig > 0 {
		return true, fmt.Sprintf("collectives of %d bytes of shared memory or more go through MPI's collectives: %s", g.shmTooBig, g.shmTooBigWhy)
	}
	return on, g.shmOff
}

// Panicked returns the first panic recovered in one of the group's goroutines (a
// *PanicError; the call that ran it returned it too), or nil. A program that finds one
// should save its work and end as on a panic of its own: the panic is a bug, and the
// group's state after it is not to be trusted.
func (g *Group) Panicked() error {
	if g == nil {
		return nil
	}
	if pe := g.panics.first.Load(); pe != nil {
		return pe
	}
	return nil
}

// Close releases the communicator and the connections to the other processes. The
// queues that ran collectives must have finished. It is idempotent.
func (g *Group) Close() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	var errs []error
	if g.comm != nil {
		errs = append(errs, g.comm.Close())
	}
	if g.net != nil {
		errs = append(errs, g.net.close())
	}
	g.closeStages()
	g.closeSegment()
	g.dred.close()
	g.dred = nil
	if g.mpi != nil {
		errs = append(errs, releaseTransport())
	}
	return errors.Join(errs...)
}
