package group

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prism-compute/prism/engine"
)

// Groups across processes. Process 0 listens at the rendezvous address, on that address
// alone; the others dial it. Process 0 speaks first, with a challenge (a random nonce);
// each other process answers with its hello, which proves the rendezvous token: an
// HMAC-SHA256 keyed by the token over both nonces. Process 0 checks the proof and every
// count the hello gives against the group's own size and the maxima of bounds.go, refuses
// (and goes on waiting) what does not fit, and once every process has joined numbers the
// ranks, picks the library or the host, and (for NCCL) makes the communicator's identity;
// it sends each process its plan, which proves the token the other way. Collectives staged
// through the host then pass through process 0 (exchange.go). The token itself never
// crosses the network.
//
// Without a token, a rendezvous must be on a loopback address: the processes are then on
// one host and no other host can reach them.

// Rendezvous names where the processes of a group meet and who this process is.
type Rendezvous struct {
	// Addr is "host:port": process 0 listens on host:port (that address only), the others
	// dial it.
	Addr string
	// Rank is this process's number, from 0 to Size-1; Size is the number of processes,
	// at most MaxProcesses.
	Rank, Size int
	// Token is the secret every process of the group shares (PRISM_RENDEZVOUS_TOKEN), at
	// least MinTokenBytes long; it may be empty only where Addr is a loopback address.
	// Processes prove it to each other without sending it.
	Token string
	// MPI names the variable by which an MPI launcher (mpirun, mpiexec, srun --mpi) said
	// this process's rank (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK); "" for a TCP
	// rendezvous. The processes then meet through MPI, and Addr, which may be empty, is
	// the TCP rendezvous they fall back to where no MPI loads. Size may be 0: MPI's.
	MPI string
}

// MinTokenBytes is the shortest rendezvous token accepted.
const MinTokenBytes = 16

// TokenEnv is the environment variable that holds the rendezvous token.
const TokenEnv = "PRISM_RENDEZVOUS_TOKEN"

// String returns "tcp://host:port rank R of S", or "mpi (OMPI_COMM_WORLD_RANK) rank R of
// S" (never the token).
func (r Rendezvous) String() string {
	if r.MPI != "" {
		s := fmt.Sprintf("mpi (%s) rank %d of %d", r.MPI, r.Rank, r.Size)
		if r.Addr != "" {
			s += ", else tcp://" + r.Addr
		}
		return s
	}
	return fmt.Sprintf("tcp://%s rank %d of %d", r.Addr, r.Rank, r.Size)
}

// GoString is String, so that %#v does not show the token either.
func (r Rendezvous) GoString() string { return r.String() }

// RendezvousFromEnv reads the rendezvous of this process from its environment, in this
// order: PRISM_RENDEZVOUS=tcp://host:port with PRISM_RANK and PRISM_WORLD_SIZE; an MPI
// launcher's (Open MPI's OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE, PMI_RANK and
// PMI_SIZE of MPICH's Hydra and srun --mpi=pmi2, PMIX_RANK of srun --mpi=pmix with
// SLURM_NTASKS): the processes meet through MPI, with PRISM_RENDEZVOUS or MASTER_ADDR and
// MASTER_PORT, where set, as the TCP fallback; the
// variables torchrun-style launchers set (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE);
// Slurm's (SLURM_PROCID, SLURM_NTASKS) with the address from PRISM_RENDEZVOUS or
// MASTER_ADDR and MASTER_PORT. The token is PRISM_RENDEZVOUS_TOKEN's. ok is false when
// none is set; a variable set but malformed or out of range (a size above MaxProcesses, a
// port outside 1 to 65535, a rendezvous off loopback without a token) is an error that
// names it.
func RendezvousFromEnv() (r Rendezvous, ok bool, err error) {
	get := os.Getenv
	addr := ""
	if v := get("PRISM_RENDEZVOUS"); v != "" {
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "tcp" || u.Hostname() == "" || u.Port() == "" || u.Path != "" || u.User != nil {
			return r, false, fmt.Errorf("group: PRISM_RENDEZVOUS=%q: want tcp://host:port: %w", v, engine.ErrInvalidArg)
		}
		if _, err := parsePort(u.Port()); err != nil {
			return r, false, fmt.Errorf("group: PRISM_RENDEZVOUS=%q: %w", v, err)
		}
		addr = u.Host
	} else if h, p := get("MASTER_ADDR"), get("MASTER_PORT"); h != "" && p != "" {
		if _, err := parsePort(p); err != nil {
			return r, false, fmt.Errorf("group: MASTER_PORT=%q: %w", p, err)
		}
		addr = net.JoinHostPort(h, p)
	}
	if get("PRISM_RANK") == "" && get("PRISM_WORLD_SIZE") == "" {
		if r, ok, err := mpiFromEnv(addr); ok || err != nil {
			return r, ok, err
		}
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
		size, err := parseCount(p[1], sv, 1, MaxProcesses)
		if err != nil {
			return r, false, err
		}
		rank, err := parseCount(p[0], rv, 0, size-1)
		if err != nil {
			return r, false, fmt.Errorf("%w (%s=%s)", err, p[1], sv)
		}
		r = Rendezvous{Addr: addr, Rank: rank, Size: size, Token: get(TokenEnv)}
		if err := r.check(); err != nil {
			return Rendezvous{}, false, err
		}
		return r, true, nil
	}
	if get("PRISM_RENDEZVOUS") != "" {
		return r, false, fmt.Errorf("group: PRISM_RENDEZVOUS is set without PRISM_RANK and PRISM_WORLD_SIZE: %w", engine.ErrInvalidArg)
	}
	return r, false, nil
}

// mpiLaunchers are the variables by which MPI launchers give a process its rank, each with
// the variable of the number of processes, tried in order ("" where the launcher sets
// none: then the first of sizeVars that is set, else MPI's own size).
var mpiLaunchers = [][2]string{{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}, {"PMIX_RANK", ""}}

// sizeVars give the number of processes where the launcher's own variable is not set.
var sizeVars = []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}

// mpiFromEnv reads the rendezvous of a process an MPI launcher started, with addr the TCP
// fallback ("" for none); ok is false where no launcher's variable is set.
func mpiFromEnv(addr string) (r Rendezvous, ok bool, err error) {
	for _, l := range mpiLaunchers {
		rv := os.Getenv(l[0])
		if rv == "" {
			continue
		}
		sizeVar, sv := l[1], ""
		if sizeVar != "" {
			sv = os.Getenv(sizeVar)
		}
		for _, n := range sizeVars {
			if sv != "" {
				break
			}
			sizeVar, sv = n, os.Getenv(n)
		}
		size, hi := 0, MaxProcesses-1
		if sv != "" {
			if size, err = parseCount(sizeVar, sv, 1, MaxProcesses); err != nil {
				return r, false, err
			}
			hi = size - 1
		}
		rank, err := parseCount(l[0], rv, 0, hi)
		if err != nil {
			if sv != "" {
				err = fmt.Errorf("%w (%s=%s)", err, sizeVar, sv)
			}
			return r, false, err
		}
		r = Rendezvous{Addr: addr, Rank: rank, Size: size, Token: os.Getenv(TokenEnv), MPI: l[0]}
		if err := r.check(); err != nil {
			return Rendezvous{}, false, err
		}
		return r, true, nil
	}
	return r, false, nil
}

// parseCount reads the environment variable name's value v, an integer from lo to hi.
func parseCount(name, v string, lo, hi int) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < int64(lo) || n > int64(hi) {
		return 0, fmt.Errorf("group: %s=%q: want an integer from %d to %d: %w", name, v, lo, hi, engine.ErrInvalidArg)
	}
	return int(n), nil
}

// parsePort reads a TCP port, 1 to 65535.
func parsePort(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q: want a port from 1 to 65535: %w", v, engine.ErrInvalidArg)
	}
	return n, nil
}

// check validates a rendezvous of more than one process: its size and rank, its address,
// and its token (required off loopback). Through MPI, the size may be 0 (MPI's) and the
// address is checked only where the processes fall back to it.
func (r Rendezvous) check() error {
	if r.MPI != "" {
		hi := r.Size // 0: MPI's, at most MaxProcesses
		if hi == 0 {
			hi = MaxProcesses
		}
		if r.Size < 0 || r.Size > MaxProcesses || r.Rank < 0 || r.Rank >= hi {
			return fmt.Errorf("group: rendezvous rank %d of %d: want a size from 1 to %d and a rank from 0 to the size minus 1: %w", r.Rank, r.Size, MaxProcesses, engine.ErrInvalidArg)
		}
		return nil
	}
	if r.Size < 1 || r.Size > MaxProcesses || r.Rank < 0 || r.Rank >= r.Size {
		return fmt.Errorf("group: rendezvous rank %d of %d: want a size from 1 to %d and a rank from 0 to the size minus 1: %w", r.Rank, r.Size, MaxProcesses, engine.ErrInvalidArg)
	}
	if r.Size == 1 {
		return nil
	}
	host, port, err := net.SplitHostPort(r.Addr)
	if err != nil {
		return fmt.Errorf("group: rendezvous address %q: %v: %w", r.Addr, err, engine.ErrInvalidArg)
	}
	if host == "" {
		return fmt.Errorf("group: rendezvous address %q names no host: name process 0's address (127.0.0.1 for one host): %w", r.Addr, engine.ErrInvalidArg)
	}
	if _, err := parsePort(port); err != nil {
		return fmt.Errorf("group: rendezvous address %q: %w", r.Addr, err)
	}
	switch {
	case r.Token == "" && !loopback(host):
		return fmt.Errorf("group: rendezvous at %s is not a loopback address and has no token: set %s to one secret of at least %d bytes in every process (e.g. openssl rand -hex 16): %w",
			r.Addr, TokenEnv, MinTokenBytes, engine.ErrInvalidArg)
	case r.Token != "" && len(r.Token) < MinTokenBytes:
		return fmt.Errorf("group: %s holds %d bytes: want at least %d (e.g. openssl rand -hex 16): %w", TokenEnv, len(r.Token), MinTokenBytes, engine.ErrInvalidArg)
	}
	return nil
}

// loopback reports whether host is a loopback address or "localhost".
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Join makes a group of devs with the devices other processes bring to the same
// rendezvous: every process calls it with its own rank and the same address, size and
// token. It returns once every process has joined, or fails when ctx is done first
// (process 0 waits for the others to dial, refusing those that do not prove the token or
// do not fit the group; the others dial until process 0 listens). A Rendezvous of one
// process makes the same group New does.
//
// Where an MPI launcher started the processes (Rendezvous.MPI), they meet through MPI and
// run their staged collectives through it (mpi.go); where no MPI loads, they fall back to
// the TCP rendezvous at Addr, and Fallback says why. A TCP rendezvous stages its
// collectives over Prism's own TCP frames, the fallback too.
func Join(ctx context.Context, devs []*engine.Device, rv Rendezvous, o Options) (*Group, error) {
	if err := rv.check(); err != nil {
		return nil, err
	}
	if rv.Size == 1 {
		return New(ctx, devs, o)
	}
	if rv.MPI != "" {
		return joinLaunched(ctx, devs, rv, o)
	}
	return joinTCP(ctx, devs, rv, o, notLaunched)
}

// joinTCP joins through Prism's TCP rendezvous; fallback says why not through MPI.
func joinTCP(ctx context.Context, devs []*engine.Device, rv Rendezvous, o Options, fallback string) (*Group, error) {
	if rv.Size == 1 {
		return New(ctx, devs, o)
	}
	if len(devs) > MaxProcessDevices {
		return nil, fmt.Errorf("group: %d devices in one process of a group: at most %d: %w", len(devs), MaxProcessDevices, engine.ErrInvalidArg)
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
		return nil, g.panics.keep(err)
	}
	g.first, g.size = pl.First, pl.Ranks
	if pl.ID == nil {
		g.lib, g.why, g.fallback = tcpFallback, pl.Why, fallback
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

// challenge is process 0's first frame on every connection: the nonce the hello's proof
// covers.
type challenge struct {
	Nonce []byte
}

// hello is what a process tells process 0 when it joins.
type hello struct {
	Rank, Size, Devices int
	Why                 string   // why its devices cannot join a library's communicator; "" when they can
	Cards               []string // host/PCI address of each device
	Nonce               []byte   // the nonce the plan's proof covers
	Proof               []byte   // the token's HMAC over both nonces; nil without a token
}

// plan is process 0's answer: this process's first rank, the ranks in all, and the
// library's communicator identity (nil: staged through the host, for reason Why); or
// Err, a refusal.
type plan struct {
	First, Ranks int
	ID           []byte
	Why          string
	Err          string
	Proof        []byte // the token's HMAC over both nonces; nil without a token
}

// nonceBytes is the length of a challenge's and a hello's nonce.
const nonceBytes = 32

// The roles of the two proofs, so that one cannot stand for the other.
const (
	roleHello = "prism rendezvous hello"
	rolePlan  = "prism rendezvous plan"
)

// newNonce returns nonceBytes random bytes.
func newNonce() []byte {
	b := make([]byte, nonceBytes)
	rand.Read(b) // never fails (crypto/rand)
	return b
}

// prove returns the proof of token for role over both nonces, nil without a token.
func prove(token, role string, challenge, nonce []byte) []byte {
	if token == "" {
		return nil
	}
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(role))
	m.Write(challenge)
	m.Write(nonce)
	return m.Sum(nil)
}

// verify checks a peer's proof of the token, in constant time; the error says what is
// wrong in words that never include the token.
func verify(token, role string, proof, challenge, nonce []byte) error {
	want := prove(token, role, challenge, nonce)
	switch {
	case token == "" && len(proof) == 0:
		return nil
	case token == "":
		return fmt.Errorf("it proves a token but %s is not set here", TokenEnv)
	case len(proof) == 0:
		return fmt.Errorf("it gives no token: set the same %s in every process", TokenEnv)
	case subtle.ConstantTimeCompare(proof, want) != 1:
		return fmt.Errorf("its token is not this process's %s", TokenEnv)
	}
	return nil
}

// checkHello checks what a process says in its hello against the group and the maxima,
// before process 0 keeps anything of it.
func checkHello(h hello, rv Rendezvous) error {
	if h.Size == rv.Size && (h.Rank < 1 || h.Rank >= rv.Size) {
		return fmt.Errorf("rank %d is out of range for %d processes", h.Rank, rv.Size)
	}
	return checkHelloBody(h, rv)
}

// checkHelloBody checks a hello's size, counts and lengths against the group and the
// maxima (its rank is the caller's to check).
func checkHelloBody(h hello, rv Rendezvous) error {
	switch {
	case h.Size != rv.Size:
		return fmt.Errorf("process %d says the group has %d processes; process 0 says %d", h.Rank, h.Size, rv.Size)
	case h.Devices < 1 || h.Devices > MaxProcessDevices:
		return fmt.Errorf("process %d brings %d devices: want 1 to %d", h.Rank, h.Devices, MaxProcessDevices)
	case len(h.Cards) != h.Devices:
		return fmt.Errorf("process %d names %d devices and brings %d", h.Rank, len(h.Cards), h.Devices)
	case len(h.Why) > maxPeerText:
		return fmt.Errorf("process %d gives a reason of %d bytes: at most %d", h.Rank, len(h.Why), maxPeerText)
	case len(h.Nonce) != nonceBytes:
		return fmt.Errorf("process %d gives a nonce of %d bytes, not %d", h.Rank, len(h.Nonce), nonceBytes)
	}
	for i, c := range h.Cards {
		if len(c) > maxPeerText {
			return fmt.Errorf("process %d names its device %d in %d bytes: at most %d", h.Rank, i, len(c), maxPeerText)
		}
	}
	return nil
}

// checkPlan checks process 0's plan against this process's place in the group: at least
// one rank per process, at most MaxRanks, this process's devices within them.
func checkPlan(pl plan, rv Rendezvous, devices int) error {
	switch {
	case pl.Ranks < rv.Size || pl.Ranks > MaxRanks:
		return fmt.Errorf("a plan of %d ranks for %d processes: want %d to %d", pl.Ranks, rv.Size, rv.Size, MaxRanks)
	case pl.First < rv.Rank || pl.First > pl.Ranks-devices-(rv.Size-1-rv.Rank):
		return fmt.Errorf("a plan that numbers process %d's %d devices from rank %d of %d", rv.Rank, devices, pl.First, pl.Ranks)
	case len(pl.ID) > maxCollectiveID:
		return fmt.Errorf("a communicator identity of %d bytes: at most %d", len(pl.ID), maxCollectiveID)
	case len(pl.Why) > maxPeerText:
		return fmt.Errorf("a reason of %d bytes: at most %d", len(pl.Why), maxPeerText)
	}
	return nil
}

// helloTimeout bounds the wait for a process's hello once it has connected, so that a
// connection that says nothing (not a Prism process) does not hold up the others.
const helloTimeout = 10 * time.Second

// refuseTimeout bounds the sending of a refusal to a peer that may not read it.
const refuseTimeout = time.Second

// arrival is what a connection to process 0 came to: a process that proved the token and
// fits the group (l, h), a refusal (refused, in words, and the connection, closed once the
// refusal is kept, so that a peer that sees it closed finds it in process 0's error), or a
// panic (err).
type arrival struct {
	l         *link
	h         hello
	challenge []byte
	refused   string
	conn      net.Conn
	err       error
}

// host is process 0's side of the rendezvous: it listens, accepts every other process's
// hello, numbers the ranks and sends each its plan.
func host(ctx context.Context, g *Group, rv Rendezvous, own hello) (*peers, plan, error) {
	ln, err := listen(ctx, rv.Addr)
	if err != nil {
		return nil, plan{}, err
	}
	bound := ln.Addr().String()
	p := &peers{rank: 0, conns: make([]*link, rv.Size), counts: make([]int, rv.Size)}
	hellos := make([]hello, rv.Size)
	challenges := make([][]byte, rv.Size)
	hellos[0] = own
	arrivals := make(chan arrival)
	done := make(chan struct{})
	defer close(done)
	defer ln.Close() // every process has joined, or the rendezvous failed
	deliver := func(a arrival) bool {
		select {
		case arrivals <- a:
			return true
		case <-done:
			return false
		}
	}
	// Connections are accepted and their hellos read concurrently, each within
	// helloTimeout and at most maxPending at a time, so that one that says nothing holds
	// up no other and a flood of them holds no more memory than that.
	pending := make(chan struct{}, maxPending)
	crashed := func(err error) {
		if err != nil {
			deliver(arrival{err: err})
		}
	}
	goSafe("accepting connections at "+bound, func() error {
		for {
			c, err := ln.Accept()
			if err != nil {
				return nil
			}
			select {
			case pending <- struct{}{}:
			default:
				if !deliver(arrival{refused: fmt.Sprintf("%s: more than %d connections waiting to prove themselves", c.RemoteAddr(), maxPending), conn: c}) {
					c.Close()
				}
				continue
			}
			goSafe("reading the hello of "+c.RemoteAddr().String(), func() error {
				defer func() { <-pending }()
				a := greet(ctx, c, rv)
				if !deliver(a) {
					c.Close()
				}
				return nil
			}, crashed)
		}
	}, crashed)
	var refused []string
	for joined := 1; joined < rv.Size; {
		var a arrival
		select {
		case a = <-arrivals:
		case <-ctx.Done():
			p.close()
			why := ""
			if len(refused) > 0 {
				why = fmt.Sprintf(" (refused %d: %s)", len(refused), strings.Join(refused, "; "))
			}
			return nil, plan{}, fmt.Errorf("group: rendezvous at %s (listening at %s): %d of %d processes joined%s: %w", rv.Addr, bound, joined, rv.Size, why, ctx.Err())
		}
		if a.err != nil {
			p.close()
			return nil, plan{}, fmt.Errorf("group: rendezvous at %s: %w", rv.Addr, a.err)
		}
		if a.refused == "" && p.conns[a.h.Rank] != nil {
			a.refused, a.conn = refuse(ctx, a.l, rv, a.challenge, a.h.Nonce, fmt.Sprintf("rank %d joined twice", a.h.Rank)), a.l.c
		}
		if a.refused != "" {
			if len(refused) == 4 { // the first three and the last
				refused = refused[:3]
			}
			refused = append(refused, a.refused)
			a.conn.Close()
			continue
		}
		p.conns[a.h.Rank], hellos[a.h.Rank], challenges[a.h.Rank] = a.l, a.h, a.challenge
		joined++
	}
	total, why := 0, planWhy(hellos)
	for r, hi := range hellos {
		p.counts[r] = hi.Devices
		total += hi.Devices
	}
	if total > MaxRanks {
		err := fmt.Errorf("the %d processes bring %d devices: at most %d ranks in a group", rv.Size, total, MaxRanks)
		for r := 1; r < rv.Size; r++ {
			refuse(ctx, p.conns[r], rv, challenges[r], hellos[r].Nonce, err.Error())
		}
		p.close()
		return nil, plan{}, fmt.Errorf("group: rendezvous at %s: %w: %w", rv.Addr, err, engine.ErrInvalidArg)
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
		pl.Proof = prove(rv.Token, rolePlan, challenges[r], hellos[r].Nonce)
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

// listen listens at addr, that address only. A host name that does not resolve yet (a
// cluster's DNS record of this very process, published as it starts) is asked again
// until ctx is done, as the other processes dial until process 0 listens.
func listen(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		ln, err := lc.Listen(ctx, "tcp", addr)
		var dns *net.DNSError
		if err == nil || !errors.As(err, &dns) {
			if err != nil {
				return nil, fmt.Errorf("group: rendezvous: listening at %s: %w", addr, err)
			}
			return ln, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("group: rendezvous: listening at %s: %v: %w", addr, err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// planWhy says why the group's collectives must be staged through the host, from every
// process's hello (process 0's own first): the first reason a process gives, or two ranks
// on one device; "" when nothing keeps them from a library's communicator. What the
// other processes said is escaped.
func planWhy(hellos []hello) string {
	if hellos[0].Why != "" {
		return hellos[0].Why
	}
	seen := map[string]bool{}
	for r, hi := range hellos {
		if hi.Why != "" {
			return fmt.Sprintf("process %d: %s", r, peerText(hi.Why))
		}
		for _, c := range hi.Cards {
			if seen[c] {
				return fmt.Sprintf("two ranks share device %s", peerText(c))
			}
			seen[c] = true
		}
	}
	return ""
}

// greet is process 0's side of one connection until it is refused or has proved the token
// and fits the group: it sends the challenge and reads and checks the hello, within
// helloTimeout.
func greet(ctx context.Context, c net.Conn, rv Rendezvous) arrival {
	l := newLink(c)
	hctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	ch := newNonce()
	if err := l.send(hctx, header{Challenge: &challenge{Nonce: ch}}, nil); err != nil {
		return arrival{refused: fmt.Sprintf("%s: %v", c.RemoteAddr(), errors.Unwrap(err)), conn: c}
	}
	h, _, err := l.recv(hctx, nil)
	if err != nil { // not a Prism process, or one that gave up
		return arrival{refused: fmt.Sprintf("%s: %v", c.RemoteAddr(), errors.Unwrap(err)), conn: c}
	}
	why, nonce := "it sent no hello", []byte(nil)
	if h.Hello != nil {
		err := verify(rv.Token, roleHello, h.Hello.Proof, ch, h.Hello.Nonce)
		if err == nil {
			err = checkHello(*h.Hello, rv)
		}
		if err == nil {
			return arrival{l: l, h: *h.Hello, challenge: ch, conn: c}
		}
		why, nonce = err.Error(), h.Hello.Nonce
	}
	return arrival{refused: refuse(ctx, l, rv, ch, nonce, why), conn: c}
}

// refuse sends a peer a plan that refuses it for why, within refuseTimeout, and returns
// what happened in words for process 0's error; the caller closes the connection.
func refuse(ctx context.Context, l *link, rv Rendezvous, challenge, nonce []byte, why string) string {
	rctx, cancel := context.WithTimeout(ctx, refuseTimeout)
	defer cancel()
	l.send(rctx, header{Plan: &plan{Err: why, Proof: prove(rv.Token, rolePlan, challenge, nonce)}}, nil)
	return fmt.Sprintf("%s: %s", l.c.RemoteAddr(), why)
}

// dial is the side of a process other than 0: it dials until process 0 answers, proves
// the token in its hello, and reads and checks its plan.
func dial(ctx context.Context, rv Rendezvous, own hello) (*peers, plan, error) {
	var d net.Dialer
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		c, err := d.DialContext(ctx, "tcp", rv.Addr)
		if err == nil {
			l := newLink(c)
			pl, err := greeted(ctx, l, rv, own)
			if err != nil {
				c.Close()
				return nil, plan{}, err
			}
			return &peers{rank: rv.Rank, conns: []*link{l}}, pl, nil
		}
		select {
		case <-ctx.Done():
			return nil, plan{}, fmt.Errorf("group: rendezvous at %s: process 0 did not answer: %v: %w", rv.Addr, err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// greeted is the side of a process other than 0 on its connection to process 0.
func greeted(ctx context.Context, l *link, rv Rendezvous, own hello) (plan, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("group: rendezvous at %s: "+format, append([]any{rv.Addr}, a...)...)
	}
	h, _, err := l.recv(ctx, nil)
	if err != nil {
		return plan{}, fail("waiting for process 0's challenge: %w", err)
	}
	if h.Challenge == nil || len(h.Challenge.Nonce) != nonceBytes {
		return plan{}, fail("process 0 sent no challenge: not a Prism group of this version: %w", engine.ErrInvalidArg)
	}
	ch := h.Challenge.Nonce
	own.Nonce = newNonce()
	own.Proof = prove(rv.Token, roleHello, ch, own.Nonce)
	if err := l.send(ctx, header{Hello: &own}, nil); err != nil {
		return plan{}, fail("%w", err)
	}
	if h, _, err = l.recv(ctx, nil); err != nil {
		return plan{}, fail("waiting for process 0's plan: %w", err)
	}
	if h.Plan == nil {
		return plan{}, fail("process 0 sent no plan: %w", errFrame)
	}
	pl := *h.Plan
	said := ""
	if pl.Err != "" {
		said = fmt.Sprintf(" (it said: %s)", peerText(pl.Err))
	}
	if err := verify(rv.Token, rolePlan, pl.Proof, ch, own.Nonce); err != nil {
		return plan{}, fail("process 0 does not prove the token: %v%s: %w", err, said, engine.ErrInvalidArg)
	}
	if pl.Err != "" {
		return plan{}, fail("process 0 refused rank %d: %s: %w", rv.Rank, peerText(pl.Err), engine.ErrInvalidArg)
	}
	if err := checkPlan(pl, rv, own.Devices); err != nil {
		return plan{}, fail("process 0 sent %v: %w", err, errFrame)
	}
	pl.Why = peerText(pl.Why)
	return pl, nil
}
