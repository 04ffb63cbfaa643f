package group

import (
	"context"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// Collectives staged through the host across processes: each process sends process 0 a
// frame with its ranks' parts; process 0 checks every frame against its own call before
// reading a byte of the parts (the same collective, one part per rank of that process,
// each exactly as long as the collective makes it), combines them in rank order, and
// answers each process with its ranks' results, which that process checks the same way.
// Processes that ask different collectives all get an error naming both, and the group
// goes on; any other failure (a frame the protocol does not allow, a connection lost, ctx
// done in the middle) leaves the connections out of step, so it stops the group: process 0
// tells every other process why, the connections are closed and every later collective
// fails at once.

// peers are the connections of a group across processes: process 0 holds one per other
// process (conns[0] nil), the others one to process 0. They are used under the group's
// lock.
type peers struct {
	rank   int
	conns  []*link
	counts []int // ranks of each process (process 0 only)
	broken error // why the group stopped; nil while it runs
}

// message describes a collective's parts: what each process asks, or what process 0
// answers (Err set when the processes disagree or the group stopped).
type message struct {
	Kind  driver.CollectiveKind
	Type  driver.CollectiveType
	Op    ReduceOp
	Root  int
	Count int
	Err   string
}

func (m message) String() string {
	return fmt.Sprintf("%s of %d %s (reduction %s, root %d)", m.Kind, m.Count, m.Type, m.Op, m.Root)
}

// sendBytes is the length of global rank r's part of m in a group of size ranks: nil for
// a rank that is not a broadcast's root.
func sendBytes(m message, size, r int) int64 {
	es := m.Type.Size()
	switch m.Kind {
	case driver.ReduceScatter:
		return int64(m.Count) * int64(size) * int64(es)
	case driver.Broadcast:
		if r != m.Root {
			return 0
		}
	}
	return int64(m.Count) * int64(es)
}

// resultBytes is the length of one rank's result of m in a group of size ranks.
func resultBytes(m message, size int) int64 {
	es := m.Type.Size()
	if m.Kind == driver.AllGather {
		return int64(m.Count) * int64(size) * int64(es)
	}
	return int64(m.Count) * int64(es)
}

// checkResults checks process 0's answer to m, before its parts are read: n results of
// the length m gives on size ranks, or an error message without parts.
func checkResults(h *header, m message, size, n int) error {
	switch {
	case h.Op == nil:
		return fmt.Errorf("process 0 answered no collective: %w", errFrame)
	case h.Op.Err != "":
		if len(h.Parts) > 0 {
			return fmt.Errorf("process 0 announced %d parts with an error: %w", len(h.Parts), errFrame)
		}
		return nil
	case *h.Op != m:
		return fmt.Errorf("process 0 answered %s to %s: %w", *h.Op, m, errFrame)
	case len(h.Parts) != n:
		return fmt.Errorf("process 0 announced %d results for the %d ranks of this process: %w", len(h.Parts), n, errFrame)
	}
	want := resultBytes(m, size)
	for i, b := range h.Parts {
		if b != want {
			return fmt.Errorf("process 0 announced result %d as %d bytes; the %s on %d ranks gives %d: %w", i, b, m, size, want, errFrame)
		}
	}
	return nil
}

// checkParts checks process r's frame of a collective, before its parts are read: one
// part for each of its n ranks (the first, global rank first) of the length its
// collective gives on size ranks. A collective other than process 0's m is
// errSkipParts once its parts fit it.
func checkParts(h *header, m message, size, r, first, n int) error {
	if h.Op == nil {
		return fmt.Errorf("process %d sent no collective: %w", r, errFrame)
	}
	o := *h.Op
	if len(h.Parts) != n {
		return fmt.Errorf("process %d announced %d parts for its %d ranks: %w", r, len(h.Parts), n, errFrame)
	}
	for i, b := range h.Parts {
		if want := sendBytes(o, size, first+i); b != want || o.Type.Size() == 0 {
			return fmt.Errorf("process %d announced the part of rank %d as %d bytes; the %s on %d ranks gives %d: %w", r, first+i, b, o, size, want, errFrame)
		}
	}
	if o != m {
		return errSkipParts
	}
	return nil
}

// close closes every connection.
func (p *peers) close() error {
	for _, l := range p.conns {
		if l != nil {
			l.c.Close()
		}
	}
	return nil
}

// stop stops the group for err: process 0 tells every other process (within
// refuseTimeout each), and the connections are closed. It returns err.
func (p *peers) stop(ctx context.Context, err error) error {
	if p.broken == nil {
		p.broken = err
	}
	if p.rank == 0 {
		why := &message{Err: "process 0 stopped the group: " + err.Error()}
		for _, l := range p.conns[1:] {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refuseTimeout)
			l.send(rctx, header{Op: why}, nil)
			cancel()
		}
	}
	p.close()
	return err
}

// ask is a process other than 0's side of a collective: it sends its ranks' parts and
// returns their results.
func (p *peers) ask(ctx context.Context, m message, size int, parts [][]byte) ([][]byte, error) {
	l := p.conns[0]
	if err := l.send(ctx, header{Op: &m}, parts); err != nil {
		return nil, p.stop(ctx, err)
	}
	h, got, err := l.recv(ctx, func(h *header) error { return checkResults(h, m, size, len(parts)) })
	if err != nil {
		return nil, p.stop(ctx, err)
	}
	if h.Op.Err != "" {
		return nil, fmt.Errorf("%s: %w", peerText(h.Op.Err), engine.ErrInvalidArg)
	}
	return got, nil
}

// gather is process 0's side of a collective: it reads every other process's parts after
// own, in rank order, and returns them, or the first disagreement between the processes'
// calls (their parts skipped).
func (p *peers) gather(ctx context.Context, m message, size int, own [][]byte) ([][]byte, string, error) {
	all := make([][]byte, 0, size)
	all = append(all, own...)
	disagree := ""
	first := p.counts[0]
	for r := 1; r < len(p.conns); r++ {
		h, got, err := p.conns[r].recv(ctx, func(h *header) error { return checkParts(h, m, size, r, first, p.counts[r]) })
		if err != nil {
			return nil, "", p.stop(ctx, err)
		}
		if *h.Op != m && disagree == "" {
			o := *h.Op
			o.Err = ""
			disagree = fmt.Sprintf("process %d asked %s, process 0 %s", r, o, m)
		}
		all = append(all, got...)
		first += p.counts[r]
	}
	return all, disagree, nil
}

// answer is process 0's reply to every other process: its ranks' results, taken in rank
// order from res (after process 0's own).
func (p *peers) answer(ctx context.Context, m message, res [][]byte) error {
	at := p.counts[0]
	for r := 1; r < len(p.conns); r++ {
		if err := p.conns[r].send(ctx, header{Op: &m}, res[at:at+p.counts[r]]); err != nil {
			return p.stop(ctx, err)
		}
		at += p.counts[r]
	}
	return nil
}

// exchange runs a staged collective across processes: the parts of this process's ranks
// go to process 0, which combines every rank's and answers each process with its ranks'
// results.
func exchange[T CollectiveScalar](ctx context.Context, g *Group, kind driver.CollectiveKind, parts [][]T, op ReduceOp, root, count int) ([][]T, error) {
	m := message{Kind: kind, Type: collType[T](), Op: op, Root: root, Count: count}
	fail := func(err error) ([][]T, error) {
		return nil, fmt.Errorf("group: %s across processes: %w", kind, err)
	}
	p := g.net
	if p.broken != nil {
		return fail(fmt.Errorf("the group stopped at an earlier failure: %w", p.broken))
	}
	if p.rank != 0 {
		got, err := p.ask(ctx, m, g.size, bytesOf(parts))
		if err != nil {
			return fail(err)
		}
		return valuesOf[T](got), nil
	}
	all, disagree, err := p.gather(ctx, m, g.size, bytesOf(parts))
	if err != nil {
		return fail(err)
	}
	if disagree != "" {
		for r := 1; r < len(p.conns); r++ {
			p.conns[r].send(ctx, header{Op: &message{Err: disagree}}, nil)
		}
		return fail(fmt.Errorf("%s: %w", disagree, engine.ErrInvalidArg))
	}
	res, err := combine(kind, valuesOf[T](all), op, root, count, nil)
	if err != nil {
		return fail(p.stop(ctx, g.panics.keep(err)))
	}
	if err := p.answer(ctx, m, bytesOf(res)); err != nil {
		return fail(err)
	}
	return res[:len(parts)], nil
}

// bytesOf views each slice's memory as bytes.
func bytesOf[T CollectiveScalar](ps [][]T) [][]byte {
	b := make([][]byte, len(ps))
	for i, p := range ps {
		b[i] = asBytes(p)
	}
	return b
}

// valuesOf views each byte slice as a slice of T.
func valuesOf[T CollectiveScalar](bs [][]byte) [][]T {
	v := make([][]T, len(bs))
	for i, b := range bs {
		v[i] = fromBytes[T](b)
	}
	return v
}

// Barrier returns once every process of the group has called it (at once, in a group of
// this process alone), or when ctx is done.
func (g *Group) Barrier(ctx context.Context) error {
	if g == nil {
		return fmt.Errorf("group: barrier on a nil group: %w", engine.ErrInvalidArg)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return fmt.Errorf("group: barrier: group: %w", engine.ErrClosed)
	}
	if g.mpi != nil {
		if err := g.mpi.Barrier(); err != nil {
			return fmt.Errorf("group: barrier over %s: %w", g.mpi.Library().Name, err)
		}
		return nil
	}
	if g.net == nil {
		return nil
	}
	_, err := exchange(ctx, g, driver.Broadcast, make([][]uint32, len(g.devs)), 0, 0, 0)
	return err
}
