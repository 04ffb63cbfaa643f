package enginetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/group"
)

// testGroups checks collectives across groups of this device: the device alone (through
// its collective library where it has one), two handles on it in one process (staged
// through the host: two ranks cannot share a card in a library's communicator), and
// three processes, played by goroutines, meeting at a rendezvous on localhost. Every
// collective is compared with its reference, in float32 and int64.
func (s *suite) testGroups(t *testing.T) {
	ctx := context.Background()
	t.Run("Alone", func(t *testing.T) {
		g, err := group.New(ctx, []*engine.Device{s.dev}, group.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		t.Logf("%s alone: %s %s", s.id, g.Library(), g.Staged())
		if g.Size() != 1 || g.Rank(0) != 0 {
			t.Errorf("Size %d, Rank(0) %d; want 1, 0", g.Size(), g.Rank(0))
		}
		checkCollectives(t, [][]*engine.Device{{s.dev}}, []*group.Group{g})
	})
	t.Run("TwoHandles", func(t *testing.T) {
		devs := s.handles(t, 2)
		g, err := group.New(ctx, devs, group.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		if g.Library().Name != "host-staged" || g.Staged() == "" {
			t.Errorf("two handles on one device run through %s (%q); want host-staged with a reason", g.Library(), g.Staged())
		}
		checkCollectives(t, [][]*engine.Device{devs}, []*group.Group{g})
	})
	t.Run("Processes", func(t *testing.T) {
		// Processes 0 and 2 bring one device each, process 1 two: ranks 0, 1-2, 3.
		counts := []int{1, 2, 1}
		devs := make([][]*engine.Device, len(counts))
		for p, n := range counts {
			devs[p] = s.handles(t, n)
		}
		groups, err := joinAll(ctx, devs, group.Options{HostStaged: true})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			for _, g := range groups {
				g.Close()
			}
		}()
		for p, g := range groups {
			if g.Size() != 4 || g.Rank(0) != []int{0, 1, 3}[p] {
				t.Errorf("process %d: Size %d, Rank(0) %d", p, g.Size(), g.Rank(0))
			}
		}
		checkCollectives(t, devs, groups)
		// Processes that disagree get an error each, and the group stays usable.
		errs := make([]error, len(groups))
		each(len(groups), func(p int) {
			n := 8 + boolInt(p == 2)
			qs, send, recv := groupBuffers[float32](t, devs[p], n, n)
			errs[p] = group.AllReduce(ctx, groups[p], qs, send, recv, group.ReduceSum)
		})
		for p, err := range errs {
			if !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("process %d, all-reduce of unequal counts: %v; want ErrInvalidArg", p, err)
			}
		}
		each(len(groups), func(p int) { errs[p] = groups[p].Barrier(ctx) })
		for p, err := range errs {
			if err != nil {
				t.Errorf("process %d, barrier: %v", p, err)
			}
		}
	})
	t.Run("Invalid", func(t *testing.T) { s.testGroupErrors(t) })
}

// handles opens n handles on the suite's device, closed at the test's end.
func (s *suite) handles(t *testing.T, n int) []*engine.Device {
	devs := make([]*engine.Device, n)
	for i := range devs {
		d, err := engine.Open(context.Background(), s.id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		devs[i] = d
	}
	return devs
}

// joinAll joins one group per element of devs, each a process of a rendezvous on a free
// localhost port, concurrently.
func joinAll(ctx context.Context, devs [][]*engine.Device, o group.Options) ([]*group.Group, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	groups := make([]*group.Group, len(devs))
	errs := make([]error, len(devs))
	each(len(devs), func(p int) {
		rv := group.Rendezvous{Addr: addr, Rank: p, Size: len(devs)}
		groups[p], errs[p] = group.Join(ctx, devs[p], rv, o)
	})
	if err := errors.Join(errs...); err != nil {
		for _, g := range groups {
			g.Close()
		}
		return nil, err
	}
	return groups, nil
}

// each calls f(p) for p in [0, n), concurrently, and waits.
func each(n int, f func(p int)) {
	var wg sync.WaitGroup
	for p := range n {
		wg.Add(1)
		go func() { defer wg.Done(); f(p) }()
	}
	wg.Wait()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// groupBuffers makes a queue and a send buffer of ns random elements and a recv buffer of
// nr sentinels per device.
func groupBuffers[T group.CollectiveScalar](t *testing.T, devs []*engine.Device, ns, nr int) ([]*engine.Queue, []*engine.Buffer[T], []*engine.Buffer[T]) {
	qs := make([]*engine.Queue, len(devs))
	send := make([]*engine.Buffer[T], len(devs))
	recv := make([]*engine.Buffer[T], len(devs))
	for i, d := range devs {
		qs[i] = newQueue(t, d)
		for _, b := range []struct {
			p **engine.Buffer[T]
			n int
		}{{&send[i], ns}, {&recv[i], nr}} {
			buf, err := engine.NewBuffer[T](d, b.n)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { buf.Close() })
			*b.p = buf
		}
	}
	return qs, send, recv
}

// checkCollectives runs every collective across the groups (one per process, devs[p]
// its devices) in both element types at edge counts and compares each rank's result with
// the reference computed from every rank's input.
func checkCollectives(t *testing.T, devs [][]*engine.Device, groups []*group.Group) {
	for _, n := range []int{1, 7, 1000} {
		t.Run("float32/"+strconv.Itoa(n), func(t *testing.T) { collectivesOf[float32](t, devs, groups, n) })
		t.Run("int64/"+strconv.Itoa(n), func(t *testing.T) { collectivesOf[int64](t, devs, groups, n) })
	}
}

func collectivesOf[T group.CollectiveScalar](t *testing.T, devs [][]*engine.Device, groups []*group.Group, n int) {
	ctx := context.Background()
	size := groups[0].Size()
	type proc struct {
		qs         []*engine.Queue
		send, recv []*engine.Buffer[T]
	}
	// input returns global rank r's input of count elements for a collective; the same
	// seed gives the same data to the rank and to the reference.
	input := func(kind string, r, count int) []T {
		rng := rand.New(rand.NewPCG(uint64(r), uint64(len(kind))))
		v := make([]T, count)
		for i := range v {
			if isFloat[T]() {
				v[i] = T(float64(rng.IntN(16)-8) / 4) // small exact values: every order of the sum agrees
			} else {
				v[i] = T(rng.IntN(1 << 20))
			}
		}
		return v
	}
	cases := []struct {
		kind   string
		ns, nr int
		run    func(p int, pr proc) error
		want   func(r int) []T
	}{
		{"all-reduce", n, n, func(p int, pr proc) error {
			return group.AllReduce(ctx, groups[p], pr.qs, pr.send, pr.recv, group.ReduceSum)
		}, func(int) []T {
			w := make([]T, n)
			for r := range size {
				for i, v := range input("all-reduce", r, n) {
					w[i] += v
				}
			}
			return w
		}},
		{"all-reduce-max", n, n, func(p int, pr proc) error {
			return group.AllReduce(ctx, groups[p], pr.qs, pr.send, pr.recv, group.ReduceMax)
		}, func(int) []T {
			w := input("all-reduce-max", 0, n)
			for r := 1; r < size; r++ {
				for i, v := range input("all-reduce-max", r, n) {
					w[i] = max(w[i], v)
				}
			}
			return w
		}},
		{"all-gather", n, n * size, func(p int, pr proc) error {
			return group.AllGather(ctx, groups[p], pr.qs, pr.send, pr.recv)
		}, func(int) []T {
			var w []T
			for r := range size {
				w = append(w, input("all-gather", r, n)...)
			}
			return w
		}},
		{"reduce-scatter", n * size, n, func(p int, pr proc) error {
			return group.ReduceScatter(ctx, groups[p], pr.qs, pr.send, pr.recv, group.ReduceSum)
		}, func(r int) []T {
			w := make([]T, n*size)
			for q := range size {
				for i, v := range input("reduce-scatter", q, n*size) {
					w[i] += v
				}
			}
			return w[r*n : (r+1)*n]
		}},
		{"broadcast", n, n, func(p int, pr proc) error {
			return group.Broadcast(ctx, groups[p], pr.qs, pr.send, pr.recv, size-1)
		}, func(int) []T { return input("broadcast", size-1, n) }},
	}
	for _, c := range cases {
		procs := make([]proc, len(groups))
		for p := range groups {
			qs, send, recv := groupBuffers[T](t, devs[p], c.ns, c.nr)
			procs[p] = proc{qs, send, recv}
			for i := range devs[p] {
				if err := send[i].Write(ctx, qs[i], 0, input(c.kind, groups[p].Rank(i), c.ns)); err != nil {
					t.Fatal(err)
				}
				if err := recv[i].Write(ctx, qs[i], 0, sentinels[T](c.nr)); err != nil {
					t.Fatal(err)
				}
			}
		}
		errs := make([]error, len(groups))
		each(len(groups), func(p int) { errs[p] = c.run(p, procs[p]) })
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("%s of %d: %v", c.kind, n, err)
		}
		for p, g := range groups {
			for i := range devs[p] {
				got := make([]T, c.nr)
				if err := procs[p].recv[i].Read(ctx, procs[p].qs[i], 0, got); err != nil {
					t.Fatal(err)
				}
				checkBits(t, fmt.Sprintf("%s of %d, rank %d", c.kind, n, g.Rank(i)), got, c.want(g.Rank(i)), 0)
			}
		}
	}
}

// testGroupErrors checks that bad collectives and rendezvous fail with errors that say
// what is wrong, before any data moves.
func (s *suite) testGroupErrors(t *testing.T) {
	ctx := context.Background()
	devs := s.handles(t, 2)
	if _, err := group.New(ctx, nil, group.Options{}); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("NewGroup of no device: %v; want ErrInvalidArg", err)
	}
	if _, err := group.New(ctx, []*engine.Device{devs[0], devs[0]}, group.Options{}); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("NewGroup of one device twice: %v; want ErrInvalidArg", err)
	}
	g, err := group.New(ctx, devs, group.Options{})
	if err != nil {
		t.Fatal(err)
	}
	qs, send, recv := groupBuffers[float32](t, devs, 8, 8)
	_, _, long := groupBuffers[float32](t, devs, 16, 16)
	bad := []struct {
		what string
		err  error
	}{
		{"too few queues", group.AllReduce(ctx, g, qs[:1], send, recv, group.ReduceSum)},
		{"unknown reduction", group.AllReduce(ctx, g, qs, send, recv, group.ReduceOp(99))},
		{"unequal send and recv", group.AllReduce(ctx, g, qs, send, long, group.ReduceSum)},
		{"all-gather recv too short", group.AllGather(ctx, g, qs, send, recv)},
		{"reduce-scatter send too short", group.ReduceScatter(ctx, g, qs, send, recv, group.ReduceSum)},
		{"all-gather in place", group.AllGather(ctx, g, qs, long, long)},
		{"broadcast root out of range", group.Broadcast(ctx, g, qs, send, recv, 2)},
		{"nil recv", group.AllReduce(ctx, g, qs, send, []*engine.Buffer[float32]{recv[0], nil}, group.ReduceSum)},
		{"queues swapped", group.AllReduce(ctx, g, []*engine.Queue{qs[1], qs[0]}, send, recv, group.ReduceSum)},
		{"counts differ", group.AllReduce(ctx, g, qs, []*engine.Buffer[float32]{send[0], long[1]}, []*engine.Buffer[float32]{recv[0], long[1]}, group.ReduceSum)},
		{"rendezvous rank out of range", joinErr(devs[:1], group.Rendezvous{Addr: "127.0.0.1:1", Rank: 2, Size: 2})},
		{"rendezvous address", joinErr(devs[:1], group.Rendezvous{Addr: "nowhere", Rank: 1, Size: 2})},
	}
	for _, b := range bad {
		if !errors.Is(b.err, engine.ErrInvalidArg) {
			t.Errorf("%s: %v; want ErrInvalidArg", b.what, b.err)
		}
	}
	// A process whose peers never come gives up when its context ends.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	if _, err := group.Join(short, devs[:1], group.Rendezvous{Addr: addr, Rank: 0, Size: 2}, group.Options{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("JoinGroup with no peer: %v; want context.DeadlineExceeded", err)
	}
	// A connection that says nothing (not a Prism process) holds up no process that joins.
	ln, _ = net.Listen("tcp", "127.0.0.1:0")
	addr = ln.Addr().String()
	ln.Close()
	var silent net.Conn
	defer func() {
		if silent != nil {
			silent.Close()
		}
	}()
	start := time.Now()
	groups := make([]*group.Group, 2)
	errs := make([]error, 2)
	each(2, func(p int) {
		if p == 1 {
			for silent == nil && time.Since(start) < 5*time.Second {
				silent, _ = net.Dial("tcp", addr) // before rank 1 dials
			}
		}
		groups[p], errs[p] = group.Join(ctx, devs[p:p+1], group.Rendezvous{Addr: addr, Rank: p, Size: 2}, group.Options{HostStaged: true})
	})
	if err := errors.Join(errs...); err != nil || time.Since(start) > 5*time.Second {
		t.Errorf("joining beside a silent connection: %v after %v", err, time.Since(start))
	}
	for _, g := range groups {
		g.Close()
	}
	g.Close()
	if err := group.AllReduce(ctx, g, qs, send, recv, group.ReduceSum); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("all-reduce on a closed group: %v; want ErrClosed", err)
	}
}

func joinErr(devs []*engine.Device, rv group.Rendezvous) error {
	g, err := group.Join(context.Background(), devs, rv, group.Options{})
	g.Close()
	return err
}
