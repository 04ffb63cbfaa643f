package group

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// withTransport runs the test with open as the registered transport, restoring the one
// registered before (internal/mpi's, in this test binary) afterwards.
func withTransport(t *testing.T, open func() (Transport, error)) {
	t.Helper()
	transports.mu.Lock()
	saved := struct {
		open  func() (Transport, error)
		name  string
		t     Transport
		users int
		ended string
	}{transports.open, transports.name, transports.t, transports.users, transports.ended}
	transports.open, transports.name, transports.t, transports.users, transports.ended = open, "test", nil, 0, ""
	transports.mu.Unlock()
	t.Cleanup(func() {
		transports.mu.Lock()
		transports.open, transports.name, transports.t, transports.users, transports.ended = saved.open, saved.name, saved.t, saved.users, saved.ended
		transports.mu.Unlock()
	})
}

// TestRendezvousFromMPIEnv checks the variables of MPI launchers: the rank and size they
// give, bounded and named in errors, and the TCP fallback's address.
func TestRendezvousFromMPIEnv(t *testing.T) {
	vars := []string{"PRISM_RENDEZVOUS", "PRISM_RANK", "PRISM_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE",
		"SLURM_PROCID", "SLURM_NTASKS", TokenEnv, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_RANK"}
	for _, c := range []struct {
		env  map[string]string
		want Rendezvous
		err  string
	}{
		{env: map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4"}, want: Rendezvous{Rank: 1, Size: 4, MPI: "OMPI_COMM_WORLD_RANK"}},
		{env: map[string]string{"PMI_RANK": "0", "PMI_SIZE": "2"}, want: Rendezvous{Rank: 0, Size: 2, MPI: "PMI_RANK"}},
		{env: map[string]string{"PMIX_RANK": "3", "SLURM_NTASKS": "4", "SLURM_PROCID": "3"}, want: Rendezvous{Rank: 3, Size: 4, MPI: "PMIX_RANK"}},
		{env: map[string]string{"PMIX_RANK": "3"}, want: Rendezvous{Rank: 3, Size: 0, MPI: "PMIX_RANK"}},
		// srun --mpi=pmix under the Slurm recipe: MPI first, the recipe's address the fallback
		{env: map[string]string{"PMIX_RANK": "1", "SLURM_PROCID": "1", "SLURM_NTASKS": "2", "MASTER_ADDR": "node7", "MASTER_PORT": "29500"},
			want: Rendezvous{Addr: "node7:29500", Rank: 1, Size: 2, MPI: "PMIX_RANK"}},
		{env: map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "PRISM_RENDEZVOUS": "tcp://127.0.0.1:29500"},
			want: Rendezvous{Addr: "127.0.0.1:29500", Rank: 1, Size: 2, MPI: "OMPI_COMM_WORLD_RANK"}},
		// PRISM_RANK says the user chose Prism's rendezvous
		{env: map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "PRISM_RENDEZVOUS": "tcp://127.0.0.1:29500", "PRISM_RANK": "0", "PRISM_WORLD_SIZE": "2"},
			want: Rendezvous{Addr: "127.0.0.1:29500", Rank: 0, Size: 2}},
		{env: map[string]string{"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "2"}, err: `OMPI_COMM_WORLD_RANK="2": want an integer from 0 to 1`},
		{env: map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "99999999999"}, err: `OMPI_COMM_WORLD_SIZE="99999999999": want an integer from 1 to 65536`},
		{env: map[string]string{"PMI_RANK": "x", "PMI_SIZE": "2"}, err: `PMI_RANK="x"`},
		{env: map[string]string{"PMIX_RANK": "70000"}, err: `PMIX_RANK="70000": want an integer from 0 to 65535`},
	} {
		t.Run(fmt.Sprint(c.env), func(t *testing.T) {
			for _, v := range vars {
				t.Setenv(v, c.env[v])
			}
			rv, ok, err := RendezvousFromEnv()
			if c.err != "" {
				if err == nil || !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, %v; want an invalid argument naming %q", rv, err, c.err)
				}
				return
			}
			if err != nil || !ok || rv != c.want {
				t.Fatalf("got %#v, %v, %v; want %#v", rv, ok, err, c.want)
			}
		})
	}
}

// TestJoinFallsBackToTCP joins two processes (goroutines here) that an MPI launcher
// started, where no MPI loads: they meet at the TCP fallback's address, the group says
// so, and its collectives run over Prism's frames.
func TestJoinFallsBackToTCP(t *testing.T) {
	withTransport(t, func() (Transport, error) {
		return nil, fmt.Errorf("mpi: no MPI library loads (tried libmpi.so.40: cannot open shared object file): %w", engine.ErrUnavailable)
	})
	addr := freeAddr(t)
	devs := fakeDevices(t, 2)
	groups := make([]*Group, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rv := Rendezvous{Addr: addr, Rank: r, Size: 2, MPI: "OMPI_COMM_WORLD_RANK"}
			groups[r], errs[r] = Join(context.Background(), devs[r:r+1], rv, Options{})
		}()
	}
	wg.Wait()
	for r, g := range groups {
		if errs[r] != nil {
			t.Fatalf("process %d: %v", r, errs[r])
		}
		defer g.Close()
		if g.Library() != tcpFallback || !strings.Contains(g.Fallback(), "no MPI: mpi: no MPI library loads (tried libmpi.so.40") {
			t.Errorf("process %d: library %v, fallback %q; want the TCP fallback that says why", r, g.Library(), g.Fallback())
		}
	}
	var wg2 sync.WaitGroup
	for r, g := range groups {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			q, _ := devs[r].NewQueue()
			b, err := engine.Upload(context.Background(), q, []float32{1, float32(r)})
			if err == nil {
				err = AllReduce(context.Background(), g, []*engine.Queue{q}, []*engine.Buffer[float32]{b}, []*engine.Buffer[float32]{b}, ReduceSum)
			}
			var v []float32
			if err == nil {
				v, err = b.Download(context.Background(), q)
			}
			if err != nil || len(v) != 2 || v[0] != 2 || v[1] != 1 {
				errs[r] = fmt.Errorf("process %d: all-reduce gave %v, %v; want [2 1]", r, v, err)
			}
		}()
	}
	wg2.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	// A plain TCP rendezvous says it was not started by an MPI launcher.
	if !strings.Contains(notLaunched, "OMPI_COMM_WORLD_RANK") {
		t.Errorf("the TCP rendezvous's reason %q does not name the launchers' variables", notLaunched)
	}
}

// TestJoinLaunchedWithoutMPI checks the refusal where an MPI launcher started the process,
// no MPI loads and no TCP fallback is given, or this program binds no MPI.
func TestJoinLaunchedWithoutMPI(t *testing.T) {
	devs := fakeDevices(t, 1)
	rv := Rendezvous{Rank: 1, Size: 2, MPI: "PMI_RANK"}
	withTransport(t, func() (Transport, error) {
		return nil, fmt.Errorf("mpi: no MPI library loads (tried libmpi.so.12): %w", engine.ErrUnavailable)
	})
	_, err := Join(context.Background(), devs, rv, Options{})
	if !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), "PMI_RANK=1") || !strings.Contains(err.Error(), "libmpi.so.12") || !strings.Contains(err.Error(), "set PRISM_RENDEZVOUS=tcp://host:port") {
		t.Errorf("Join without MPI or an address: %v", err)
	}
	transports.mu.Lock()
	transports.open = nil
	transports.mu.Unlock()
	if _, err := Join(context.Background(), devs, rv, Options{}); !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), "binds no MPI") {
		t.Errorf("Join in a program without internal/mpi: %v", err)
	}
}

// fakeWorld is a Transport of size processes in which this process is rank 0 and the
// others say what the test makes them say.
type fakeWorld struct {
	size    int
	lens    []uint64 // what AllGather of one uint64 returns (the texts' announced lengths)
	closed  int
	barrier int
}

func (w *fakeWorld) Library() engine.Library { return engine.Library{Name: "Fake MPI 1.0"} }
func (w *fakeWorld) Rank() int               { return 0 }
func (w *fakeWorld) Size() int               { return w.size }
func (w *fakeWorld) AllReduce([]byte, driver.CollectiveType, ReduceOp) error {
	return nil
}
func (w *fakeWorld) AllGather(send, recv []byte, counts []int64, t driver.CollectiveType) error {
	if len(counts) == w.size && counts[0] == 1 && len(send) == 8 {
		copy(recv, asBytes(w.lens))
		return nil
	}
	return fmt.Errorf("fake: a gather of %d bytes past the lengths", len(recv))
}
func (w *fakeWorld) ReduceScatter([]byte, []byte, []int64, driver.CollectiveType, ReduceOp) error {
	return nil
}
func (w *fakeWorld) Broadcast(buf []byte, t driver.CollectiveType, root int) error {
	if len(buf) == 8 {
		copy(buf, asBytes(w.lens[:1]))
	}
	return nil
}
func (w *fakeWorld) Barrier() error { w.barrier++; return nil }
func (w *fakeWorld) Close() error   { w.closed++; return nil }

// TestHostileTexts checks that a length another process announces through MPI (its hello,
// process 0's choice) is checked before anything is allocated for it.
func TestHostileTexts(t *testing.T) {
	for _, l := range []uint64{1 << 40, maxHeader + 2*wordBytes, 1<<63 + 8, 13} {
		w := &fakeWorld{size: 2, lens: []uint64{16, l}}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := gatherTexts(w, []byte("{}"), maxHeader)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("process 1 announces a text of %d bytes", l)) {
			t.Errorf("a hello of %d bytes announced: %v", l, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > hostileBudget {
			t.Errorf("a hello of %d bytes announced: %d bytes allocated", l, got)
		}
		w.lens = []uint64{l}
		if _, err := broadcastText(&fakeWorld{size: 2, lens: []uint64{l}}, nil, maxHeader); err == nil || !strings.Contains(err.Error(), "process 0 announces a text") {
			t.Errorf("process 0's choice of %d bytes: %v", l, err)
		}
	}
}

// TestTransportShared checks that the groups of a process share one transport, closed
// with the last of them and never opened again (MPI starts once per process).
func TestTransportShared(t *testing.T) {
	w := &fakeWorld{size: 2}
	opened := 0
	withTransport(t, func() (Transport, error) { opened++; return w, nil })
	a, err := acquireTransport()
	if err != nil {
		t.Fatal(err)
	}
	b, err := acquireTransport()
	if err != nil || a != b || opened != 1 {
		t.Fatalf("second acquire: %v, %v, opened %d times", b, err, opened)
	}
	releaseTransport()
	if w.closed != 0 {
		t.Fatal("the transport closed while a group holds it")
	}
	releaseTransport()
	if w.closed != 1 {
		t.Fatalf("closed %d times after the last release; want 1", w.closed)
	}
	if _, err := acquireTransport(); !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), "Fake MPI 1.0 was finalized in this process") {
		t.Errorf("acquire after the last release: %v", err)
	}
}

// TestRegisterTransportPanics checks the programmer errors of RegisterTransport.
func TestRegisterTransportPanics(t *testing.T) {
	withTransport(t, func() (Transport, error) { return nil, nil })
	for name, f := range map[string]func(){
		"nil":   func() { RegisterTransport("x", nil) },
		"twice": func() { RegisterTransport("x", func() (Transport, error) { return nil, nil }) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterTransport %s did not panic", name)
				}
			}()
			f()
		}()
	}
}
