package group

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// Groups across processes. Process 0 listens at the rendezvous address; the others dial
// it. Each says how many devices it brings and whether they can join a collective
// library's communicator; process 0 numbers the ranks, picks the library or the host, and
// (for NCCL) makes the communicator's identity, which it sends to all. Collectives staged
// through the host then pass through process 0: each process sends its ranks' parts, and
// process 0 combines them and sends each process its results. Every message is a frame:
// a 4-byte length and a JSON header, then the header's byte parts, each after an 8-byte
// length (all little-endian).

// Rendezvous names where the processes of a group meet and who this process is.
type Rendezvous struct {
	// Addr is "host:port": process 0 listens on port, the others dial host:port.
	Addr string
	// Rank is this process's number, from 0 to Size-1; Size is the number of processes.
	Rank, Size int
}

// String returns "tcp://host:port rank R of S".
func (r Rendezvous) String() string {
	return fmt.Sprintf("tcp://%s rank %d of %d", r.Addr, r.Rank, r.Size)
}

// RendezvousFromEnv reads the rendezvous of this process from its environment, in this
// order: PRISM_RENDEZVOUS=tcp://host:port with PRISM_RANK and PRISM_WORLD_SIZE; the
// variables torchrun-style launchers set (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE);
// Slurm's (SLURM_PROCID, SLURM_NTASKS) with the address from PRISM_RENDEZVOUS or
// MASTER_ADDR and MASTER_PORT. ok is false when none is set; a variable set but malformed
// is an error that names it.
func RendezvousFromEnv() (r Rendezvous, ok bool, err error) {
	get := os.Getenv
	addr := ""
	if v := get("PRISM_RENDEZVOUS"); v != "" {
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "tcp" || u.Host == "" || u.Port() == "" {
			return r, false, fmt.Errorf("group: PRISM_RENDEZVOUS=%q: want tcp://host:port: %w", v, engine.ErrInvalidArg)
		}
		addr = u.Host
	} else if h, p := get("MASTER_ADDR"), get("MASTER_PORT"); h != "" && p != "" {
		addr = net.JoinHostPort(h, p)
	}
	pairs := [][2]string{{"PRISM_RANK", "PRISM_WORLD_SIZE"}, {"RANK", "WORLD_SIZE"}, {"SLURM_PROCID", "SLURM_NTASKS"}}
	for _, p := range pairs {
		rv, sv := get(p[0]), get(p[1])
		if rv == "" && sv == "" {
			continue
		}
		if addr == "" {
			return r, false, fmt.Errorf("group: %s and %s are set but no rendezvous address: set PRISM_RENDEZVOUS=tcp://host:port (or MASTER_ADDR and MASTER_PORT): %w", p[0], p[1], engine.ErrInvalidArg)
		}
		rank, err1 := strconv.Atoi(rv)
		size, err2 := strconv.Atoi(sv)
		if err1 != nil || err2 != nil || size < 1 || rank < 0 || rank >= size {
			return r, false, fmt.Errorf("group: %s=%q %s=%q: want a rank from 0 to the world size minus 1: %w", p[0], rv, p[1], sv, engine.ErrInvalidArg)
		}
		return Rendezvous{Addr: addr, Rank: rank, Size: size}, true, nil
	}
	if get("PRISM_RENDEZVOUS") != "" {
		return r, false, fmt.Errorf("group: PRISM_RENDEZVOUS is set without PRISM_RANK and PRISM_WORLD_SIZE: %w", engine.ErrInvalidArg)
	}
	return r, false, nil
}

// Join makes a group of devs with the devices other processes bring to the same
// rendezvous: every process calls it with its own rank and the same address and size.
// It returns once every process has joined, or fails when ctx is done first (process 0
// waits for the others to dial; the others dial until process 0 listens). A Rendezvous
// of one process makes the same group New does.
func Join(ctx context.Context, devs []*engine.Device, rv Rendezvous, o Options) (*Group, error) {
	if rv.Size < 1 || rv.Rank < 0 || rv.Rank >= rv.Size {
		return nil, fmt.Errorf("group: rendezvous rank %d of %d: want a rank from 0 to the size minus 1: %w", rv.Rank, rv.Size, engine.ErrInvalidArg)
	}
	if rv.Size == 1 {
		return New(ctx, devs, o)
	}
	if _, _, err := net.SplitHostPort(rv.Addr); err != nil {
		return nil, fmt.Errorf("group: rendezvous address %q: %v: %w", rv.Addr, err, engine.ErrInvalidArg)
	}
	g, err := newGroup(devs)
	if err != nil {
		return nil, err
	}
	_, why := g.provider()
	h := hello{Rank: rv.Rank, Size: rv.Size, Devices: len(devs), Why: why, Cards: g.cards()}
	if o.HostStaged {
		h.Why = "asked for (Options.HostStaged)"
	}
	var pl plan
	if rv.Rank == 0 {
		g.net, pl, err = host(ctx, g, rv, h)
	} else {
		g.net, pl, err = dial(ctx, rv, h)
	}
	if err != nil {
		return nil, err
	}
	g.first, g.size = pl.First, pl.Ranks
	if pl.ID == nil {
		g.lib, g.why = hostStaged, pl.Why
		return g, nil
	}
	if err := g.connect(ctx, pl.ID); err != nil {
		g.net.close()
		return nil, err
	}
	return g, nil
}

// cards names the group's local devices by host and PCI address (else ID), so that
// process 0 sees two ranks on one card across processes.
func (g *Group) cards() []string {
	host, _ := os.Hostname()
	s := make([]string, len(g.devs))
	for i, d := range g.devs {
		c := d.Info().PCIBusID
		if c == "" {
			c = d.ID()
		}
		s[i] = host + "/" + c
	}
	return s
}

// hello is what a process tells process 0 when it joins.
type hello struct {
	Rank, Size, Devices int
	Why                 string   // why its devices cannot join a library's communicator; "" when they can
	Cards               []string // host/PCI address of each device
	Err                 string   // a refusal, from process 0
}

// plan is process 0's answer: this process's first rank, the ranks in all, and the
// library's communicator identity (nil: staged through the host, for reason Why).
type plan struct {
	First, Ranks int
	ID           []byte
	Why          string
	Err          string
}

// peers are the connections of a group across processes: process 0 holds one per other
// process (conns[0] nil), the others one to process 0.
type peers struct {
	rank   int
	conns  []*link
	counts []int // ranks of each process
}

// link is one TCP connection, framed.
type link struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

func newLink(c net.Conn) *link {
	return &link{c: c, r: bufio.NewReaderSize(c, 1<<20), w: bufio.NewWriterSize(c, 1<<20)}
}

// header is a frame's JSON part: a hello, plan or collective message, and the lengths of
// the byte parts that follow.
type header struct {
	Hello *hello   `json:",omitempty"`
	Plan  *plan    `json:",omitempty"`
	Op    *message `json:",omitempty"`
	Parts []int64  `json:",omitempty"`
}

// message describes a collective's parts: what each process asks, or what process 0
// answers (Err set when the processes disagree).
type message struct {
	Kind  driver.CollectiveKind
	Type  driver.CollectiveType
	Op    ReduceOp
	Root  int
	Count int
	Err   string
}

// send writes one frame, bounded by ctx.
func (l *link) send(ctx context.Context, h header, parts [][]byte) error {
	defer deadline(ctx, l.c)()
	h.Parts = make([]int64, len(parts))
	for i, p := range parts {
		h.Parts[i] = int64(len(p))
	}
	js, err := json.Marshal(h)
	if err != nil {
		return err
	}
	var n [8]byte
	binary.LittleEndian.PutUint32(n[:4], uint32(len(js)))
	if _, err := l.w.Write(n[:4]); err != nil {
		return l.failed(ctx, err)
	}
	if _, err := l.w.Write(js); err != nil {
		return l.failed(ctx, err)
	}
	for _, p := range parts {
		if _, err := l.w.Write(p); err != nil {
			return l.failed(ctx, err)
		}
	}
	return l.failed(ctx, l.w.Flush())
}

// maxHeader bounds a frame's JSON header.
const maxHeader = 1 << 20

// recv reads one frame, bounded by ctx.
func (l *link) recv(ctx context.Context) (header, [][]byte, error) {
	defer deadline(ctx, l.c)()
	var h header
	var n [4]byte
	if _, err := io.ReadFull(l.r, n[:]); err != nil {
		return h, nil, l.failed(ctx, err)
	}
	size := binary.LittleEndian.Uint32(n[:])
	if size > maxHeader {
		return h, nil, fmt.Errorf("group: group peer %s sent a header of %d bytes: not a Prism group", l.c.RemoteAddr(), size)
	}
	js := make([]byte, size)
	if _, err := io.ReadFull(l.r, js); err != nil {
		return h, nil, l.failed(ctx, err)
	}
	if err := json.Unmarshal(js, &h); err != nil {
		return h, nil, fmt.Errorf("group: group peer %s: %v: not a Prism group", l.c.RemoteAddr(), err)
	}
	parts := make([][]byte, len(h.Parts))
	for i, sz := range h.Parts {
		if sz < 0 || sz > 1<<40 {
			return h, nil, fmt.Errorf("group: group peer %s announced a part of %d bytes", l.c.RemoteAddr(), sz)
		}
		parts[i] = make([]byte, sz)
		if _, err := io.ReadFull(l.r, parts[i]); err != nil {
			return h, nil, l.failed(ctx, err)
		}
	}
	return h, parts, nil
}

// failed wraps a connection error, naming ctx's error when ctx ended the wait.
func (l *link) failed(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("group: group peer %s: %w", l.c.RemoteAddr(), ctx.Err())
	}
	return fmt.Errorf("group: group peer %s: %w", l.c.RemoteAddr(), err)
}

// deadline makes c's reads and writes fail once ctx is done, and returns what undoes it.
func deadline(ctx context.Context, c net.Conn) func() {
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	return func() {
		if !stop() {
			c.SetDeadline(time.Time{})
		}
	}
}

// helloTimeout bounds the wait for a process's hello once it has connected, so that a
// connection that says nothing (not a Prism process) does not hold up the others.
const helloTimeout = 10 * time.Second

// host is process 0's side of the rendezvous: it listens, accepts every other process's
// hello, numbers the ranks and sends each its plan.
func host(ctx context.Context, g *Group, rv Rendezvous, own hello) (*peers, plan, error) {
	_, port, _ := net.SplitHostPort(rv.Addr)
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort("", port))
	if err != nil {
		return nil, plan{}, fmt.Errorf("group: rendezvous: listening on port %s: %w", port, err)
	}
	p := &peers{rank: 0, conns: make([]*link, rv.Size), counts: make([]int, rv.Size)}
	hellos := make([]hello, rv.Size)
	hellos[0] = own
	// Connections are accepted and their hellos read concurrently, each within
	// helloTimeout, so that one that says nothing holds up no other.
	type arrival struct {
		l *link
		h hello
	}
	arrivals := make(chan arrival)
	done := make(chan struct{})
	defer close(done)
	defer ln.Close() // every process has joined, or the rendezvous failed
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				l := newLink(c)
				hctx, cancel := context.WithTimeout(ctx, helloTimeout)
				h, _, err := l.recv(hctx)
				cancel()
				if err != nil || h.Hello == nil {
					c.Close() // not a Prism process, or one that gave up
					return
				}
				select {
				case arrivals <- arrival{l, *h.Hello}:
				case <-done:
					c.Close()
				}
			}()
		}
	}()
	for joined := 1; joined < rv.Size; {
		var a arrival
		select {
		case a = <-arrivals:
		case <-ctx.Done():
			p.close()
			return nil, plan{}, fmt.Errorf("group: rendezvous at %s: %d of %d processes joined: %w", rv.Addr, joined, rv.Size, ctx.Err())
		}
		l, hi := a.l, a.h
		refuse := ""
		switch {
		case hi.Size != rv.Size:
			refuse = fmt.Sprintf("process %d says the group has %d processes; process 0 says %d", hi.Rank, hi.Size, rv.Size)
		case hi.Rank < 1 || hi.Rank >= rv.Size:
			refuse = fmt.Sprintf("rank %d is out of range for %d processes", hi.Rank, rv.Size)
		case p.conns[hi.Rank] != nil:
			refuse = fmt.Sprintf("rank %d joined twice", hi.Rank)
		case hi.Devices < 1:
			refuse = fmt.Sprintf("process %d brings no device", hi.Rank)
		}
		if refuse != "" {
			l.send(ctx, header{Plan: &plan{Err: refuse}}, nil)
			l.c.Close()
			continue
		}
		p.conns[hi.Rank], hellos[hi.Rank] = l, hi
		joined++
	}
	total, why := 0, own.Why
	var seen []string
	for r, hi := range hellos {
		p.counts[r] = hi.Devices
		total += hi.Devices
		if why == "" && hi.Why != "" {
			why = fmt.Sprintf("process %d: %s", r, hi.Why)
		}
		for _, c := range hi.Cards {
			if why == "" && slices.Contains(seen, c) {
				why = fmt.Sprintf("two ranks share device %s", c)
			}
			seen = append(seen, c)
		}
	}
	var id []byte
	if why == "" {
		id, why = g.collectiveID()
	}
	first := 0
	var errs []error
	for r := range rv.Size {
		pl := plan{First: first, Ranks: total, ID: id, Why: why}
		first += p.counts[r]
		if r == 0 {
			continue
		}
		if err := p.conns[r].send(ctx, header{Plan: &pl}, nil); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		p.close()
		return nil, plan{}, fmt.Errorf("group: rendezvous: %w", err)
	}
	return p, plan{First: 0, Ranks: total, ID: id, Why: why}, nil
}

// dial is the side of a process other than 0: it dials until process 0 answers, sends
// its hello and reads its plan.
func dial(ctx context.Context, rv Rendezvous, own hello) (*peers, plan, error) {
	var d net.Dialer
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		c, err := d.DialContext(ctx, "tcp", rv.Addr)
		if err == nil {
			l := newLink(c)
			if err := l.send(ctx, header{Hello: &own}, nil); err != nil {
				c.Close()
				return nil, plan{}, fmt.Errorf("group: rendezvous at %s: %w", rv.Addr, err)
			}
			h, _, err := l.recv(ctx)
			if err != nil {
				c.Close()
				return nil, plan{}, fmt.Errorf("group: rendezvous at %s: waiting for process 0's plan: %w", rv.Addr, err)
			}
			if h.Plan == nil || h.Plan.Err != "" {
				c.Close()
				why := "no plan"
				if h.Plan != nil {
					why = h.Plan.Err
				}
				return nil, plan{}, fmt.Errorf("group: rendezvous at %s refused rank %d: %s: %w", rv.Addr, rv.Rank, why, engine.ErrInvalidArg)
			}
			return &peers{rank: rv.Rank, conns: []*link{l}}, *h.Plan, nil
		}
		select {
		case <-ctx.Done():
			return nil, plan{}, fmt.Errorf("group: rendezvous at %s: process 0 did not answer: %v: %w", rv.Addr, err, ctx.Err())
		case <-time.After(wait):
		}
	}
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

// exchange runs a staged collective across processes: the parts of this process's ranks
// go to process 0, which combines every rank's and answers each process with its ranks'
// results.
func exchange[T CollectiveScalar](ctx context.Context, g *Group, kind driver.CollectiveKind, parts [][]T, op ReduceOp, root, count int) ([][]T, error) {
	m := message{Kind: kind, Type: collType[T](), Op: op, Root: root, Count: count}
	fail := func(err error) ([][]T, error) {
		return nil, fmt.Errorf("group: %s across processes: %w", kind, err)
	}
	bytesOf := func(ps [][]T) [][]byte {
		b := make([][]byte, len(ps))
		for i, p := range ps {
			b[i] = asBytes(p)
		}
		return b
	}
	p := g.net
	if p.rank != 0 {
		l := p.conns[0]
		if err := l.send(ctx, header{Op: &m}, bytesOf(parts)); err != nil {
			return fail(err)
		}
		h, got, err := l.recv(ctx)
		if err != nil {
			return fail(err)
		}
		if h.Op == nil || h.Op.Err != "" {
			why := "no answer"
			if h.Op != nil {
				why = h.Op.Err
			}
			return fail(fmt.Errorf("%s: %w", why, engine.ErrInvalidArg))
		}
		if len(got) != len(parts) {
			return fail(fmt.Errorf("process 0 sent %d results for %d ranks", len(got), len(parts)))
		}
		out := make([][]T, len(got))
		for i, b := range got {
			out[i] = fromBytes[T](b)
		}
		return out, nil
	}
	// Process 0: gather every process's parts in rank order, then answer.
	all := make([][]T, 0, g.size)
	all = append(all, parts...)
	disagree := ""
	for r := 1; r < len(p.conns); r++ {
		h, got, err := p.conns[r].recv(ctx)
		if err != nil {
			return fail(err)
		}
		if h.Op == nil || len(got) != p.counts[r] {
			return fail(fmt.Errorf("process %d sent no collective", r))
		}
		if o := *h.Op; o != m && disagree == "" {
			disagree = fmt.Sprintf("process %d asked %s of %d %s, process 0 %s of %d %s", r, o.Kind, o.Count, o.Type, m.Kind, m.Count, m.Type)
		}
		for _, b := range got {
			all = append(all, fromBytes[T](b))
		}
	}
	if disagree != "" {
		for r := 1; r < len(p.conns); r++ {
			p.conns[r].send(ctx, header{Op: &message{Err: disagree}}, nil)
		}
		return fail(fmt.Errorf("%s: %w", disagree, engine.ErrInvalidArg))
	}
	res := combine(kind, all, op, root, count)
	at := len(parts)
	for r := 1; r < len(p.conns); r++ {
		if err := p.conns[r].send(ctx, header{Op: &m}, bytesOf(res[at:at+p.counts[r]])); err != nil {
			return fail(err)
		}
		at += p.counts[r]
	}
	return res[:len(parts)], nil
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
	if g.net == nil {
		return nil
	}
	_, err := exchange(ctx, g, driver.Broadcast, make([][]uint32, len(g.devs)), 0, 0, 0)
	return err
}
