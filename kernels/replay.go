package kernels

import (
	"errors"
	"slices"
	"sync"

	"github.com/prism-compute/prism/engine"
)

// ReplayKeep is the number of graphs a Replay keeps: one per input set of a rotating
// instance (RotationSets allocates at most 8).
const ReplayKeep = 8

// Replay runs the command sequences of a multi-pass operation (a sort's histogram and
// passes, an FFT's passes) as graphs: the first Run of a sequence with a given key enqueues
// it directly, the second captures it (engine.Queue.Capture) and every later Run with that
// key launches the graph, one driver call for the whole sequence on CUDA instead of one per
// command, so that at small sizes the device does not wait for the host between kernels.
// A key seen once pays no capture: capturing and instantiating a graph costs the host more
// than enqueueing its commands (a sort into new buffers every run, as a sharded sort's
// output is, captured a graph on every run). The key must identify everything the
// sequence's commands take (buffers, sizes, options): a graph replays its arguments as
// they were captured. A graph whose buffers were closed since is captured again. Where the
// queue cannot capture (inside Timed or another capture), Run enqueues the sequence
// directly. The zero value is ready; a Replay is safe for concurrent use.
type Replay struct {
	mu     sync.Mutex
	graphs map[any]*engine.Graph
	keys   []any // the keys of graphs, oldest first
	seen   []any // keys run once, not captured yet, oldest first (at most replaySeen)
}

// replaySeen is the most keys a Replay remembers having run once.
const replaySeen = 2 * ReplayKeep

// Run enqueues the sequence enqueue makes on q: directly the first time key is run, then
// through the graph captured the second time.
func (r *Replay) Run(q *engine.Queue, key any, enqueue func() error) error {
	if !q.CanCapture() {
		return enqueue()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if g := r.graphs[key]; g != nil {
		err := g.Launch(q)
		if !errors.Is(err, engine.ErrClosed) {
			return err
		}
		r.drop(key) // a buffer or kernel it used was closed: capture again
	} else if i := slices.Index(r.seen, key); i < 0 {
		if len(r.seen) == replaySeen {
			r.seen = r.seen[1:]
		}
		r.seen = append(r.seen, key)
		return enqueue()
	} else {
		r.seen = slices.Delete(r.seen, i, i+1)
	}
	g, err := q.Capture(enqueue)
	if err != nil {
		return err
	}
	if r.graphs == nil {
		r.graphs = map[any]*engine.Graph{}
	}
	if len(r.keys) == ReplayKeep {
		r.drop(r.keys[0])
	}
	r.graphs[key] = g
	r.keys = append(r.keys, key)
	return g.Launch(q)
}

// drop closes and forgets the graph of key.
func (r *Replay) drop(key any) {
	if g := r.graphs[key]; g != nil {
		g.Close()
		delete(r.graphs, key)
	}
	for i, k := range r.keys {
		if k == key {
			r.keys = append(r.keys[:i], r.keys[i+1:]...)
			break
		}
	}
}

// Close releases every graph. The Replay stays usable.
func (r *Replay) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, g := range r.graphs {
		errs = append(errs, g.Close())
	}
	r.graphs, r.keys, r.seen = nil, nil, nil
	return errors.Join(errs...)
}
