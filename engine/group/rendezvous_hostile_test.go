package group

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/internal/fake"
)

// Hostile peers, written here on 127.0.0.1, against a real process of a group: each
// malformed or lying frame must end in a clear error within a bounded time and without a
// large allocation (the frames announce up to 1 TiB, 2^30 devices, 2^30 ranks).

const testToken = "0123456789abcdef0123456789abcdef"

// hostileBudget bounds the bytes a process may allocate while it refuses one hostile
// frame, and hostileTime the wall time it may take.
const (
	hostileBudget = 32 << 20
	hostileTime   = 3 * time.Second
)

// fakeDevices opens n handles on the fake CPU device.
func fakeDevices(t *testing.T, n int) []*engine.Device {
	t.Helper()
	fake.Register()
	devs := make([]*engine.Device, n)
	for i := range devs {
		d, err := engine.Open(context.Background(), "fake:1")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		devs[i] = d
	}
	return devs
}

// freeAddr returns a localhost address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// bounded runs f and fails t when it allocates more than hostileBudget bytes or takes
// longer than hostileTime.
func bounded(t *testing.T, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	f()
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	a := after.TotalAlloc - before.TotalAlloc
	t.Logf("refused in %v, %d KiB allocated by the process meanwhile", took.Round(time.Microsecond), a>>10)
	if a > hostileBudget {
		t.Errorf("allocated %d MiB; want at most %d", a>>20, hostileBudget>>20)
	}
	if took > hostileTime {
		t.Errorf("took %v; want at most %v", took, hostileTime)
	}
}

// wantErr fails t unless err holds every one of wants and no raw control or bidi
// character.
func wantErr(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\nlacks %q", err, w)
		}
	}
	if i := strings.IndexFunc(err.Error(), func(r rune) bool { return r < ' ' || r == 0x7f || r == '\u202e' || r == '\u2066' }); i >= 0 {
		t.Errorf("error %q holds a raw control or bidi character at byte %d", err, i)
	}
}

// peer is a hostile process at the other end of a connection.
type peer struct {
	c net.Conn
	r *bufio.Reader
}

func newPeer(c net.Conn) *peer { return &peer{c: c, r: bufio.NewReader(c)} }

func (p *peer) frame(t *testing.T, h header, parts ...[]byte) {
	t.Helper()
	if err := writeFrame(p.c, h, parts); err != nil {
		t.Logf("writing a frame: %v", err) // process 0 may have closed already
	}
}

func (p *peer) raw(b []byte) { p.c.Write(b) }

// read reads a frame whatever its parts.
func (p *peer) read() (header, [][]byte, error) {
	p.c.SetDeadline(time.Now().Add(hostileTime))
	return readFrame(p.r, func(*header) error { return nil })
}

// opFrame returns a frame's header of m announcing parts (a JSON list's elements).
func opFrame(m message, parts string) []byte {
	js, _ := json.Marshal(m)
	h := `{"Op":` + string(js) + `,"Parts":[` + parts + `]}`
	return rawHeader(uint32(len(h)), h)
}

// rawHeader returns a frame whose header is js, announcing size bytes of header.
func rawHeader(size uint32, js string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, size)
	return append(b, js...)
}

// dialRank0 dials addr until process 0 listens and returns the connection and its
// challenge.
func dialRank0(t *testing.T, addr string) (*peer, []byte) {
	t.Helper()
	for deadline := time.Now().Add(hostileTime); ; time.Sleep(5 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			p := newPeer(c)
			h, _, err := p.read()
			if err != nil || h.Challenge == nil {
				t.Fatalf("process 0 sent %+v, %v; want a challenge", h, err)
			}
			return p, h.Challenge.Nonce
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
}

// goodHello is rank 1's hello of one device in a group of two, proving token.
func goodHello(token string, ch []byte) hello {
	n := newNonce()
	return hello{Rank: 1, Size: 2, Devices: 1, Cards: []string{"evil/0"}, Nonce: n, Proof: prove(token, roleHello, ch, n)}
}

// TestHostilePeerAtRendezvous joins a real process 0 (one fake device, two processes,
// the token set) while a hostile process sends one malformed hello: process 0 refuses
// it, says why in its error, and allocates little.
func TestHostilePeerAtRendezvous(t *testing.T) {
	cases := []struct {
		name  string
		token string // process 0's
		send  func(t *testing.T, p *peer, ch []byte)
		want  string
	}{
		{"huge announced part", testToken, func(t *testing.T, p *peer, ch []byte) {
			js := `{"Hello":{"Rank":1,"Size":2,"Devices":1},"Parts":[1099511627776]}`
			p.raw(rawHeader(uint32(len(js)), js))
		}, "1 parts announced where none belongs"},
		{"part beyond the maximum", testToken, func(t *testing.T, p *peer, ch []byte) {
			js := `{"Hello":{"Rank":1,"Size":2,"Devices":1},"Parts":[4398046511104]}`
			p.raw(rawHeader(uint32(len(js)), js))
		}, "part 0 announced as 4398046511104 bytes"},
		{"huge header", testToken, func(t *testing.T, p *peer, ch []byte) {
			p.raw(rawHeader(0xffffffff, "{"))
		}, "a header of 4294967295 bytes"},
		{"header shorter than announced", testToken, func(t *testing.T, p *peer, ch []byte) {
			p.raw(rawHeader(1<<20, `{"Hello":`))
			p.c.(*net.TCPConn).CloseWrite()
		}, "a header of 1048576 bytes ended after 9"},
		{"huge Devices", testToken, func(t *testing.T, p *peer, ch []byte) {
			h := goodHello(testToken, ch)
			h.Devices = 1 << 30
			p.frame(t, header{Hello: &h})
		}, "process 1 brings 1073741824 devices: want 1 to 1024"},
		{"cards and devices disagree", testToken, func(t *testing.T, p *peer, ch []byte) {
			h := goodHello(testToken, ch)
			h.Devices = 3
			p.frame(t, header{Hello: &h})
		}, "process 1 names 1 devices and brings 3"},
		{"wrong token", testToken, func(t *testing.T, p *peer, ch []byte) {
			h := goodHello("not the token, but as long as it", ch)
			p.frame(t, header{Hello: &h})
		}, "its token is not this process's PRISM_RENDEZVOUS_TOKEN"},
		{"no token", testToken, func(t *testing.T, p *peer, ch []byte) {
			h := goodHello("", ch)
			p.frame(t, header{Hello: &h})
		}, "it gives no token"},
		{"a token where process 0 has none", "", func(t *testing.T, p *peer, ch []byte) {
			h := goodHello(testToken, ch)
			p.frame(t, header{Hello: &h})
		}, "it proves a token but PRISM_RENDEZVOUS_TOKEN is not set here"},
		{"proof replayed from another challenge", testToken, func(t *testing.T, p *peer, ch []byte) {
			h := goodHello(testToken, newNonce())
			p.frame(t, header{Hello: &h})
		}, "its token is not this process's"},
		{"rank out of range", testToken, func(t *testing.T, p *peer, ch []byte) {
			h := goodHello(testToken, ch)
			h.Rank = -3
			p.frame(t, header{Hello: &h})
		}, "rank -3 is out of range for 2 processes"},
		{"size of 2^30", testToken, func(t *testing.T, p *peer, ch []byte) {
			h := goodHello(testToken, ch)
			h.Size = 1 << 30
			p.frame(t, header{Hello: &h})
		}, "process 1 says the group has 1073741824 processes; process 0 says 2"},
		{"not JSON", testToken, func(t *testing.T, p *peer, ch []byte) {
			p.raw(rawHeader(5, "\x1b[2J\x00"))
		}, "not a Prism group frame"},
		{"no hello", testToken, func(t *testing.T, p *peer, ch []byte) {
			p.frame(t, header{Plan: &plan{Ranks: 1 << 30}})
		}, "it sent no hello"},
		{"reason too long", testToken, func(t *testing.T, p *peer, ch []byte) {
			h := goodHello(testToken, ch)
			h.Why = strings.Repeat("\x1b", 4096)
			p.frame(t, header{Hello: &h})
		}, "gives a reason of 4096 bytes: at most 1024"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			addr := freeAddr(t)
			devs := fakeDevices(t, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			bounded(t, func() {
				done := make(chan error, 1)
				go func() {
					g, err := Join(ctx, devs, Rendezvous{Addr: addr, Rank: 0, Size: 2, Token: c.token}, Options{})
					if g != nil {
						g.Close()
					}
					done <- err
				}()
				p, ch := dialRank0(t, addr)
				defer p.c.Close()
				c.send(t, p, ch)
				for { // until process 0 closes the connection: it has kept the refusal
					if _, _, err := p.read(); err != nil {
						break
					}
				}
				cancel()
				err := <-done
				wantErr(t, err, "1 of 2 processes joined", "refused 1: 127.0.0.1:", c.want)
			})
		})
	}
}

// TestHostilePeerThenGenuine shows that a refused peer holds up nothing: process 0
// refuses a hostile hello, then a genuine process joins and the group runs.
func TestHostilePeerThenGenuine(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var groups [2]*Group
	var errs [2]error
	done := make(chan struct{})
	go func() {
		defer close(done)
		groups[0], errs[0] = Join(ctx, fakeDevices(t, 1), Rendezvous{Addr: addr, Rank: 0, Size: 2, Token: testToken}, Options{})
	}()
	p, ch := dialRank0(t, addr)
	h := goodHello("not the token, but as long as it", ch)
	p.frame(t, header{Hello: &h})
	got, _, err := p.read()
	if err != nil || got.Plan == nil || !strings.Contains(got.Plan.Err, "its token is not") {
		t.Fatalf("the hostile process read %+v, %v; want a refusal", got.Plan, err)
	}
	groups[1], errs[1] = Join(ctx, fakeDevices(t, 1), Rendezvous{Addr: addr, Rank: 1, Size: 2, Token: testToken}, Options{})
	<-done
	for i, g := range groups {
		if errs[i] != nil {
			t.Fatalf("process %d: %v", i, errs[i])
		}
		defer g.Close()
		if g.Size() != 2 || g.Rank(0) != i {
			t.Errorf("process %d: size %d, rank %d", i, g.Size(), g.Rank(0))
		}
	}
}

// TestHostileProcessZero joins a real process 1 to a hostile process 0 that answers with
// one malformed or lying frame: process 1 fails at once with a clear error.
func TestHostileProcessZero(t *testing.T) {
	// plan answers a hello with pl, proving token.
	planOf := func(pl plan, token string) func(t *testing.T, p *peer, ch []byte, h hello) {
		return func(t *testing.T, p *peer, ch []byte, h hello) {
			pl.Proof = prove(token, rolePlan, ch, h.Nonce)
			p.frame(t, header{Plan: &pl})
		}
	}
	cases := []struct {
		name      string
		token     string // process 1's
		challenge func(t *testing.T, p *peer) []byte
		answer    func(t *testing.T, p *peer, ch []byte, h hello)
		want      string
	}{
		{"no challenge", testToken, func(t *testing.T, p *peer) []byte {
			p.frame(t, header{Plan: &plan{First: 1, Ranks: 2}})
			return nil
		}, nil, "process 0 sent no challenge"},
		{"challenge with a huge part", testToken, func(t *testing.T, p *peer) []byte {
			js := `{"Challenge":{"Nonce":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="},"Parts":[1099511627776]}`
			p.raw(rawHeader(uint32(len(js)), js))
			return nil
		}, nil, "1 parts announced where none belongs"},
		{"huge header", testToken, func(t *testing.T, p *peer) []byte {
			p.raw(rawHeader(1<<31, "{"))
			return nil
		}, nil, "a header of 2147483648 bytes"},
		{"plan with a huge part", testToken, nil, func(t *testing.T, p *peer, ch []byte, h hello) {
			js := `{"Plan":{"First":1,"Ranks":2},"Parts":[1099511627776]}`
			p.raw(rawHeader(uint32(len(js)), js))
		}, "1 parts announced where none belongs"},
		{"wrong token", testToken, nil, planOf(plan{First: 1, Ranks: 2}, "not the token, but as long as it"), "process 0 does not prove the token: its token is not this process's PRISM_RENDEZVOUS_TOKEN"},
		{"no token", testToken, nil, planOf(plan{First: 1, Ranks: 2}, ""), "process 0 does not prove the token: it gives no token"},
		{"a token where process 1 has none", "", nil, planOf(plan{First: 1, Ranks: 2}, testToken), "it proves a token but PRISM_RENDEZVOUS_TOKEN is not set here"},
		{"Ranks 2^30", testToken, nil, planOf(plan{First: 1, Ranks: 1 << 30}, testToken), "a plan of 1073741824 ranks for 2 processes: want 2 to 65536"},
		{"Ranks 0", testToken, nil, planOf(plan{First: 1, Ranks: 0}, testToken), "a plan of 0 ranks for 2 processes"},
		{"Ranks -3", testToken, nil, planOf(plan{First: 1, Ranks: -3}, testToken), "a plan of -3 ranks for 2 processes"},
		{"First out of range", testToken, nil, planOf(plan{First: 5, Ranks: 4}, testToken), "numbers process 1's 1 devices from rank 5 of 4"},
		{"First before its rank", testToken, nil, planOf(plan{First: 0, Ranks: 2}, testToken), "from rank 0 of 2"},
		{"huge communicator identity", testToken, nil, planOf(plan{First: 1, Ranks: 2, ID: make([]byte, 1<<14)}, testToken), "a communicator identity of 16384 bytes"},
		{"escape characters in a refusal", testToken, nil, planOf(plan{Err: "\x1b[2J\x1b]0;owned\x07 \u202eevil\u2066"}, testToken),
			`process 0 refused rank 1: \x1b[2J\x1b]0;owned\a \u202eevil\u2066`},
		{"escape characters in an unproved refusal", testToken, nil, planOf(plan{Err: "\x1b[31mred"}, ""),
			`(it said: \x1b[31mred)`},
		{"no plan", testToken, nil, func(t *testing.T, p *peer, ch []byte, h hello) {
			p.frame(t, header{Op: &message{}})
		}, "process 0 sent no plan"},
		{"closed", testToken, nil, func(t *testing.T, p *peer, ch []byte, h hello) {
			p.c.Close()
		}, "waiting for process 0's plan"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			devs := fakeDevices(t, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			bounded(t, func() {
				go func() {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					defer conn.Close()
					p := newPeer(conn)
					var ch []byte
					if c.challenge != nil {
						ch = c.challenge(t, p)
					} else {
						ch = newNonce()
						p.frame(t, header{Challenge: &challenge{Nonce: ch}})
					}
					if c.answer == nil {
						p.read() // until process 1 gives up
						return
					}
					h, _, err := p.read()
					if err != nil || h.Hello == nil {
						t.Errorf("process 1 sent %+v, %v; want a hello", h, err)
						return
					}
					c.answer(t, p, ch, *h.Hello)
					p.read()
				}()
				g, err := Join(ctx, devs, Rendezvous{Addr: ln.Addr().String(), Rank: 1, Size: 2, Token: c.token}, Options{})
				if g != nil {
					g.Close()
				}
				wantErr(t, err, c.want)
			})
		})
	}
}

// TestPeerTextEscaped checks that what other processes say reaches Staged escaped: on
// process 0, a reason and a device name with escape, bidi and control characters; on a
// process 1 joined to a process 0 whose reason holds them, through a real rendezvous.
func TestPeerTextEscaped(t *testing.T) {
	const evil = "\x1b[31mred\u202e\x00"
	const shown = `\x1b[31mred\u202e\x00`
	for _, c := range []struct {
		hellos []hello
		want   string
	}{
		{[]hello{{}, {Why: evil}}, "process 1: " + shown},
		{[]hello{{Cards: []string{"a/0"}}, {Cards: []string{evil}}, {Cards: []string{evil}}}, "two ranks share device " + shown},
		{[]hello{{Why: "process 0's own"}, {Why: evil}}, "process 0's own"},
		{[]hello{{Cards: []string{"a/0"}}, {Cards: []string{"a/1"}}}, ""},
	} {
		if got := planWhy(c.hellos); got != c.want {
			t.Errorf("planWhy(%+v) = %q; want %q", c.hellos, got, c.want)
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		p := newPeer(conn)
		ch := newNonce()
		p.frame(t, header{Challenge: &challenge{Nonce: ch}})
		h, _, err := p.read()
		if err != nil || h.Hello == nil {
			return
		}
		pl := plan{First: 1, Ranks: 2, Why: "process 0: " + evil, Proof: prove(testToken, rolePlan, ch, h.Hello.Nonce)}
		p.frame(t, header{Plan: &pl})
		p.read()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g, err := Join(ctx, fakeDevices(t, 1), Rendezvous{Addr: ln.Addr().String(), Rank: 1, Size: 2, Token: testToken}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got, want := g.Staged(), "process 0: "+shown; got != want {
		t.Errorf("Staged() = %q; want %q", got, want)
	}
}

// rank1 plays a hostile process 1 that joins properly (one device) and then returns its
// connection, with the real process 0's group.
func rank1(t *testing.T, ctx context.Context) (*Group, *peer) {
	t.Helper()
	addr := freeAddr(t)
	var g *Group
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		g, err = Join(ctx, fakeDevices(t, 1), Rendezvous{Addr: addr, Rank: 0, Size: 2, Token: testToken}, Options{})
	}()
	p, ch := dialRank0(t, addr)
	h := goodHello(testToken, ch)
	p.frame(t, header{Hello: &h})
	got, _, rerr := p.read()
	<-done
	if err != nil || rerr != nil || got.Plan == nil || got.Plan.Err != "" {
		t.Fatalf("joining: %v, %v, %+v", err, rerr, got.Plan)
	}
	t.Cleanup(func() { g.Close(); p.c.Close() })
	return g, p
}

// rank0 plays a hostile process 0 that lets a real process 1 (one device) join, and
// returns the real process's group and the connection.
func rank0(t *testing.T, ctx context.Context) (*Group, *peer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pc := make(chan *peer, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			pc <- nil
			return
		}
		p := newPeer(conn)
		ch := newNonce()
		p.frame(t, header{Challenge: &challenge{Nonce: ch}})
		h, _, err := p.read()
		if err != nil || h.Hello == nil {
			pc <- nil
			return
		}
		p.frame(t, header{Plan: &plan{First: 1, Ranks: 2, Why: "staged", Proof: prove(testToken, rolePlan, ch, h.Hello.Nonce)}})
		p.c.SetDeadline(time.Time{})
		pc <- p
	}()
	g, err := Join(ctx, fakeDevices(t, 1), Rendezvous{Addr: ln.Addr().String(), Rank: 1, Size: 2, Token: testToken}, Options{})
	p := <-pc
	if err != nil || p == nil {
		t.Fatalf("joining: %v", err)
	}
	t.Cleanup(func() { g.Close(); p.c.Close() })
	return g, p
}

// allReduce runs an all-reduce of n float32 on the group's one device.
func allReduce(t *testing.T, ctx context.Context, g *Group, n int) error {
	t.Helper()
	d := g.Devices()[0]
	q, err := d.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	b, err := engine.Upload(ctx, q, make([]float32, n))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	return AllReduce(ctx, g, []*engine.Queue{q}, []*engine.Buffer[float32]{b}, []*engine.Buffer[float32]{b}, ReduceSum)
}

// TestHostilePeerCollectives runs an all-reduce of 1000 float32 on a real process 0 whose
// process 1 sends a malformed frame: the collective fails at once, names it, allocates
// little, and the group is stopped (the next collective fails at once) but where the two
// only disagree.
func TestHostilePeerCollectives(t *testing.T) {
	const n = 1000
	m := message{Kind: driver.AllReduce, Type: driver.CollFloat32, Op: ReduceSum, Count: n}
	cases := []struct {
		name    string
		send    func(t *testing.T, p *peer)
		want    string
		stopped bool
	}{
		{"short part announced", func(t *testing.T, p *peer) {
			p.frame(t, header{Op: &m}, make([]byte, 4))
		}, "process 1 announced the part of rank 1 as 4 bytes; the all-reduce of 1000 float32 (reduction sum, root 0) on 2 ranks gives 4000", true},
		{"huge part announced", func(t *testing.T, p *peer) {
			p.raw(opFrame(m, "1099511627776"))
		}, "process 1 announced the part of rank 1 as 1099511627776 bytes", true},
		{"part shorter than announced", func(t *testing.T, p *peer) {
			p.raw(append(opFrame(m, "4000"), make([]byte, 10)...))
			p.c.(*net.TCPConn).CloseWrite()
		}, "part 0 of 4000 bytes ended after 10", true},
		{"too many parts", func(t *testing.T, p *peer) {
			p.frame(t, header{Op: &m}, make([]byte, 4000), make([]byte, 4000))
		}, "process 1 announced 2 parts for its 1 ranks", true},
		{"2^20 parts", func(t *testing.T, p *peer) {
			js := `{"Op":{"Count":1000},"Parts":[` + strings.Repeat("0,", 1<<20-1) + `0]}`
			p.raw(rawHeader(uint32(len(js)), js))
		}, "a header of", true},
		{"no collective", func(t *testing.T, p *peer) {
			p.frame(t, header{Plan: &plan{}})
		}, "process 1 sent no collective", true},
		{"another collective", func(t *testing.T, p *peer) {
			o := m
			o.Count = 3
			p.frame(t, header{Op: &o}, make([]byte, 12))
		}, "process 1 asked all-reduce of 3 float32 (reduction sum, root 0), process 0 all-reduce of 1000 float32", false},
		{"another collective, parts that do not fit it", func(t *testing.T, p *peer) {
			o := m
			o.Count = 1 << 40
			p.frame(t, header{Op: &o}, make([]byte, 12))
		}, "process 1 announced the part of rank 1 as 12 bytes; the all-reduce of 1099511627776 float32 (reduction sum, root 0) on 2 ranks gives 4398046511104", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			g, p := rank1(t, ctx)
			bounded(t, func() {
				go c.send(t, p)
				wantErr(t, allReduce(t, ctx, g, n), c.want)
			})
			if !c.stopped {
				// The processes only disagreed: process 1 hears why, and the group goes on.
				h, _, err := p.read()
				if err != nil || h.Op == nil || !strings.Contains(h.Op.Err, "process 1 asked") {
					t.Fatalf("process 1 read %+v, %v; want the disagreement", h.Op, err)
				}
				answered := make(chan error, 1)
				go func() {
					p.frame(t, header{Op: &m}, make([]byte, 4*n))
					h, parts, err := p.read()
					if err == nil && (h.Op == nil || *h.Op != m || len(parts) != 1 || len(parts[0]) != 4*n) {
						err = fmt.Errorf("process 0 answered %+v with %d parts", h.Op, len(parts))
					}
					answered <- err
				}()
				if err := allReduce(t, ctx, g, n); err != nil {
					t.Fatalf("the next all-reduce: %v", err)
				}
				if err := <-answered; err != nil {
					t.Fatal(err)
				}
				return
			}
			start := time.Now()
			wantErr(t, allReduce(t, ctx, g, n), "the group stopped at an earlier failure")
			if d := time.Since(start); d > time.Second {
				t.Errorf("the next all-reduce took %v to fail", d)
			}
		})
	}
}

// TestHostileProcessZeroCollectives runs an all-reduce of 1000 float32 on a real process
// 1 whose process 0 answers with a malformed frame.
func TestHostileProcessZeroCollectives(t *testing.T) {
	const n = 1000
	m := message{Kind: driver.AllReduce, Type: driver.CollFloat32, Op: ReduceSum, Count: n}
	cases := []struct {
		name   string
		answer func(t *testing.T, p *peer)
		want   string
	}{
		{"huge result announced", func(t *testing.T, p *peer) {
			p.raw(opFrame(m, "1099511627776"))
		}, "process 0 announced result 0 as 1099511627776 bytes; the all-reduce of 1000 float32 (reduction sum, root 0) on 2 ranks gives 4000"},
		{"short result announced", func(t *testing.T, p *peer) {
			p.frame(t, header{Op: &m}, make([]byte, 4))
		}, "process 0 announced result 0 as 4 bytes"},
		{"result shorter than announced", func(t *testing.T, p *peer) {
			p.raw(append(opFrame(m, "4000"), 1, 2, 3))
			p.c.(*net.TCPConn).CloseWrite()
		}, "part 0 of 4000 bytes ended after 3"},
		{"no result", func(t *testing.T, p *peer) {
			p.frame(t, header{Op: &m})
		}, "process 0 announced 0 results for the 1 ranks of this process"},
		{"another collective", func(t *testing.T, p *peer) {
			o := m
			o.Count = 7
			p.frame(t, header{Op: &o}, make([]byte, 28))
		}, "process 0 answered all-reduce of 7 float32"},
		{"an error with parts", func(t *testing.T, p *peer) {
			p.frame(t, header{Op: &message{Err: "x"}}, make([]byte, 28))
		}, "process 0 announced 1 parts with an error"},
		{"escape characters in an error", func(t *testing.T, p *peer) {
			p.frame(t, header{Op: &message{Err: "\x1b[2J\u202eevil"}})
		}, `\x1b[2J\u202eevil`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			g, p := rank0(t, ctx)
			bounded(t, func() {
				go func() {
					if _, _, err := p.read(); err == nil {
						c.answer(t, p)
					}
				}()
				wantErr(t, allReduce(t, ctx, g, n), c.want)
			})
		})
	}
}

// TestRendezvousBindsItsAddress checks that process 0 listens on the address the
// rendezvous names: on 127.0.0.1, no other address of the host answers.
func TestRendezvousBindsItsAddress(t *testing.T) {
	other := ""
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && !ip.IP.IsLoopback() && ip.IP.To4() != nil {
			other = ip.IP.String()
			break
		}
	}
	if other == "" {
		t.Skip("this host has no address but loopback to dial")
	}
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Join(ctx, fakeDevices(t, 1), Rendezvous{Addr: addr, Rank: 0, Size: 2}, Options{})
		done <- err
	}()
	p, _ := dialRank0(t, addr) // listening now
	p.c.Close()
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(other, port), time.Second); err == nil {
		c.Close()
		t.Errorf("process 0 of a rendezvous at %s answers at %s:%s", addr, other, port)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Join: %v; want it cancelled", err)
	}
}
