package driver

import "fmt"

// This file is the SPI of collective communication libraries (NCCL): an optional
// capability of a Device, so that engine can run all-reduce, all-gather, reduce-scatter
// and broadcast across several devices, in one process or many, on the devices' own
// queues and buffers. engine stages collectives through host memory where no device offers
// one.

// CollectiveType is the element type of a collective's data.
type CollectiveType int

// Element types of collectives.
const (
	CollFloat32 CollectiveType = iota + 1
	CollFloat64
	CollInt32
	CollUint32
	CollInt64
	CollUint64
)

// Size returns the size in bytes of one element (0 for an unknown type).
func (t CollectiveType) Size() int {
	switch t {
	case CollFloat32, CollInt32, CollUint32:
		return 4
	case CollFloat64, CollInt64, CollUint64:
		return 8
	}
	return 0
}

// String returns the Go name of the type ("float32").
func (t CollectiveType) String() string {
	switch t {
	case CollFloat32:
		return "float32"
	case CollFloat64:
		return "float64"
	case CollInt32:
		return "int32"
	case CollUint32:
		return "uint32"
	case CollInt64:
		return "int64"
	case CollUint64:
		return "uint64"
	}
	return fmt.Sprintf("CollectiveType(%d)", int(t))
}

// ReduceOp is the reduction of all-reduce and reduce-scatter.
type ReduceOp int

// Reductions, element by element across ranks.
const (
	ReduceSum ReduceOp = iota + 1
	ReduceProd
	ReduceMax
	ReduceMin
)

// String returns "sum", "prod", "max" or "min".
func (o ReduceOp) String() string {
	switch o {
	case ReduceSum:
		return "sum"
	case ReduceProd:
		return "prod"
	case ReduceMax:
		return "max"
	case ReduceMin:
		return "min"
	}
	return fmt.Sprintf("ReduceOp(%d)", int(o))
}

// CollectiveKind names a collective.
type CollectiveKind int

// Collectives, as NCCL defines them. With n ranks and count elements:
//   - AllReduce: every rank's Recv (count) holds the reduction of every rank's Send (count).
//   - AllGather: every rank's Recv (n*count) holds the ranks' Send (count each), in rank order.
//   - ReduceScatter: rank r's Recv (count) holds block r of the reduction of every rank's
//     Send (n*count).
//   - Broadcast: every rank's Recv (count) holds the Root rank's Send (count).
const (
	AllReduce CollectiveKind = iota + 1
	AllGather
	ReduceScatter
	Broadcast
)

// String returns the collective's name ("all-reduce").
func (k CollectiveKind) String() string {
	switch k {
	case AllReduce:
		return "all-reduce"
	case AllGather:
		return "all-gather"
	case ReduceScatter:
		return "reduce-scatter"
	case Broadcast:
		return "broadcast"
	}
	return fmt.Sprintf("CollectiveKind(%d)", int(k))
}

// CollectiveCall is one rank's part of a collective: which collective, on which queue,
// from which buffer to which, Count elements as CollectiveKind says. Send and Recv may be
// the same buffer for AllReduce and Broadcast (in place). engine has checked every size.
type CollectiveCall struct {
	Kind       CollectiveKind
	Queue      Queue
	Send, Recv Buffer
	Count      int64
	Type       CollectiveType
	Op         ReduceOp // AllReduce, ReduceScatter
	Root       int      // Broadcast: the global rank whose Send is copied
}

// CollectiveProvider is implemented by devices that can join a collective library's
// communicators (NCCL on CUDA).
type CollectiveProvider interface {
	// CollectiveID loads the library (on first use in the process) and returns a new
	// communicator identity (ncclGetUniqueId): bytes that every process joining the
	// communicator passes to NewCommunicator. A missing library gives an error wrapping
	// engine.ErrUnavailable that names every file tried.
	CollectiveID() ([]byte, error)
	// NewCommunicator makes the communicator id of nranks ranks in which devs (this device
	// first, then others of the same backend, all in this process) are the global ranks
	// ranks[i]. It returns once every rank of every process has joined.
	NewCommunicator(devs []Device, ranks []int, nranks int, id []byte) (Communicator, error)
}

// Communicator is a collective library's communicator for this process's devices of one
// group. Run and Close are not called concurrently.
type Communicator interface {
	// Library describes the library loaded ("NCCL 2.28.3").
	Library() Library
	// Run enqueues one collective, calls[i] being the part of the i-th device given to
	// NewCommunicator, each on its own queue, and returns once every part is enqueued; the
	// collective completes when each queue's commands do.
	Run(calls []CollectiveCall) error
	// Close destroys the communicator; the queues that ran its collectives are finished.
	Close() error
}
