package group

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// Transports. Processes that a launcher started together (mpirun, mpiexec, srun with MPI)
// already share a message-passing library: the group meets through it and runs its
// collectives staged through host memory with the library's collectives on host buffers
// (mpi.go). Prism's own TCP rendezvous and frames are the fallback where no such library
// loads, and the group says so (Library, Fallback). The library is bound by a package
// that registers it here (internal/mpi, imported by the prism CLI), so that this package
// stays free of cgo.

// Transport is a message-passing library that moves host memory between the processes
// a launcher started: MPI_COMM_WORLD. Its methods are collectives: every process calls
// them in the same order with matching arguments. Buffers hold elements of type t,
// little-endian; counts are in elements. It is safe for concurrent use.
type Transport interface {
	// Library names it ("Open MPI v4.1.4" and the file it was loaded from).
	Library() engine.Library
	// Rank is this process's rank; Size the number of processes.
	Rank() int
	Size() int
	// AllReduce reduces buf element-wise across every process, in place.
	AllReduce(buf []byte, t driver.CollectiveType, op ReduceOp) error
	// AllGather leaves in recv every process's send in rank order, process p giving
	// counts[p] elements.
	AllGather(send, recv []byte, counts []int64, t driver.CollectiveType) error
	// ReduceScatter reduces send element-wise across every process and leaves in recv
	// this process's block (counts[p] elements for process p, in rank order).
	ReduceScatter(send, recv []byte, counts []int64, t driver.CollectiveType, op ReduceOp) error
	// Broadcast copies process root's buf into every other process's.
	Broadcast(buf []byte, t driver.CollectiveType, root int) error
	// Barrier returns once every process has called it.
	Barrier() error
	// Close ends the library in this process (MPI_Finalize); it cannot start again.
	Close() error
}

// transports holds the registered transport and the one open in this process, shared by
// every group that joined through it.
var transports struct {
	mu    sync.Mutex
	name  string
	open  func() (Transport, error)
	t     Transport
	users int    // groups that hold t
	ended string // why no transport can open again (it was closed), "" while it can
}

// RegisterTransport makes open the transport of groups whose processes a launcher
// started (package internal/mpi registers MPI in its init). It panics if open is nil or
// a transport is registered already.
func RegisterTransport(name string, open func() (Transport, error)) {
	if open == nil || name == "" {
		panic("group: RegisterTransport with a nil function or no name")
	}
	transports.mu.Lock()
	defer transports.mu.Unlock()
	if transports.open != nil {
		panic("group: RegisterTransport called twice (" + transports.name + ", " + name + ")")
	}
	transports.name, transports.open = name, open
}

// acquireTransport opens the registered transport, or returns the one open, for one more
// group.
func acquireTransport() (Transport, error) {
	transports.mu.Lock()
	defer transports.mu.Unlock()
	switch {
	case transports.t != nil:
		transports.users++
		return transports.t, nil
	case transports.open == nil:
		return nil, fmt.Errorf("group: this program binds no MPI (package internal/mpi is not in it): %w", engine.ErrUnavailable)
	case transports.ended != "":
		return nil, fmt.Errorf("group: %s: %w", transports.ended, engine.ErrUnavailable)
	}
	t, err := transports.open()
	if err != nil {
		return nil, err
	}
	transports.t, transports.users = t, 1
	return t, nil
}

// releaseTransport gives back one group's hold on the transport and closes it with the
// last: a library like MPI then ends in this process for good.
func releaseTransport() error {
	transports.mu.Lock()
	defer transports.mu.Unlock()
	if transports.t == nil {
		return nil
	}
	if transports.users--; transports.users > 0 {
		return nil
	}
	t := transports.t
	transports.t = nil
	transports.ended = fmt.Sprintf("%s was finalized in this process when its last group closed, and it starts once per process", t.Library().Name)
	return t.Close()
}

// Fallback says why the collectives across processes pass through Prism's own TCP frames
// rather than MPI ("" where they do not: one process, a collective library, or MPI).
func (g *Group) Fallback() string { return g.fallback }

// tcpFallback is the library name of collectives staged through the host across processes
// over Prism's TCP frames.
var tcpFallback = engine.Library{Name: "host-staged over TCP (fallback: no MPI)"}

// notLaunched is why a TCP rendezvous has no MPI.
const notLaunched = "not started by an MPI launcher (no OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK): mpirun, mpiexec or srun --mpi start processes that meet through MPI"

// wordBytes is the unit in which texts cross a transport: uint64 words.
const wordBytes = 8

// words pads b with spaces (JSON allows them at its end) to a whole number of uint64 words.
func words(b []byte) []byte {
	for len(b)%wordBytes != 0 {
		b = append(b, ' ')
	}
	return b
}

// gatherTexts gives every process's text to every process through t, each checked
// against max bytes before anything is allocated for it.
func gatherTexts(t Transport, mine []byte, max int) ([][]byte, error) {
	mine = words(mine)
	size := t.Size()
	lens := make([]byte, size*wordBytes)
	ones := make([]int64, size)
	for i := range ones {
		ones[i] = 1
	}
	if err := t.AllGather(asBytes([]uint64{uint64(len(mine))}), lens, ones, driver.CollUint64); err != nil {
		return nil, err
	}
	ls := fromBytes[uint64](lens)
	counts := make([]int64, size)
	var total int64
	for p, l := range ls {
		if l > uint64(max)+wordBytes || l%wordBytes != 0 {
			return nil, fmt.Errorf("process %d announces a text of %d bytes: at most %d, in whole %d-byte words", p, l, max, wordBytes)
		}
		counts[p] = int64(l / wordBytes)
		total += int64(l)
	}
	all := make([]byte, total)
	if err := t.AllGather(mine, all, counts, driver.CollUint64); err != nil {
		return nil, err
	}
	out := make([][]byte, size)
	at := 0
	for p, l := range ls {
		out[p] = all[at : at+int(l)]
		at += int(l)
	}
	return out, nil
}

// broadcastText gives process 0's text to every process through t, checked against max
// bytes before anything is allocated for it.
func broadcastText(t Transport, mine []byte, max int) ([]byte, error) {
	mine = words(mine)
	n := []uint64{uint64(len(mine))}
	if err := t.Broadcast(asBytes(n), driver.CollUint64, 0); err != nil {
		return nil, err
	}
	if n[0] > uint64(max)+wordBytes || n[0]%wordBytes != 0 {
		return nil, fmt.Errorf("process 0 announces a text of %d bytes: at most %d, in whole %d-byte words", n[0], max, wordBytes)
	}
	b := mine
	if t.Rank() != 0 {
		b = make([]byte, n[0])
	}
	if err := t.Broadcast(b, driver.CollUint64, 0); err != nil {
		return nil, err
	}
	return b, nil
}

// decodeStrict decodes one JSON value of b into v, refusing unknown fields and anything
// after it but spaces.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if len(bytes.TrimSpace(b[dec.InputOffset():])) != 0 {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}
