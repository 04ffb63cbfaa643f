package group_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/prism-compute/prism/cl"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/engine/group"
	_ "github.com/prism-compute/prism/internal/mpi"
)

// Processes started by mpirun: the group meets through MPI and stages its collectives
// through it. Each rank opens PoCL's device (opencl:0:0) and checks every collective
// against a float64 reference of every rank's data, which each rank can make.

// Variables that make this test binary one rank of a test.
const (
	mpiRankEnv    = "PRISM_TEST_MPI_RANK"    // TestMPIRank runs: the number of devices of the rank
	mpiFallbackOK = "PRISM_TEST_MPI_NO_MPI"  // the rank expects the TCP fallback, not MPI
	mpiWantLib    = "PRISM_TEST_MPI_LIBRARY" // the library name the group must report
	mpiShared     = "PRISM_TEST_MPI_SHARED"  // "1": the processes must share memory; "0": they must not be asked to; "apart": asked, they must find they do not
	mpiShmChunk   = "PRISM_TEST_MPI_CHUNK"   // the piece of a pipelined all-reduce through shared memory, bytes
	mpiNotShared  = "PRISM_TEST_MPI_APART"   // "1": processes but 0 map a file of their own, as with separate /dev/shm
	mpiBounce     = "PRISM_TEST_MPI_BOUNCE"  // "1": the shared all-reduce's pieces pass through the devices' host buffers
	mpiShmSizes   = "PRISM_TEST_MPI_SIZES"   // "first,most": the shared segment grows from first and cannot pass most
	mpiDevice     = "PRISM_TEST_MPI_DEVICE"  // "1": a shared all-reduce of one device a process reduces on the device; "1,r": but process r cannot build its kernels
)

// mpirun returns the mpirun to start ranks with; without one the test is skipped, or fails
// under PRISM_REQUIRE=mpi.
func mpirun(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("mpirun")
	if err != nil {
		enginetest.RequireOrSkip(t, "mpi", fmt.Errorf("no mpirun on PATH (Debian: apt-get install openmpi-bin): %w", engine.ErrUnavailable))
	}
	return p
}

// TestMPICollectives runs TestMPIRank as 2 and 4 processes under mpirun with one PoCL
// device each, and as 2 processes with two handles on it each (4 ranks, the parts of a
// process combined before the processes'), through the memory the processes of one host
// share, and once through MPI's own collectives (Options.NoSharedMemory).
func TestMPICollectives(t *testing.T) {
	run := mpirun(t)
	enginetest.DeviceIDs(t, "opencl")
	for _, c := range []struct {
		np, devs int
		shared   bool
		chunk    int    // bytes; 0: the default
		apart    bool   // the processes but 0 map other memory: every one must stay on MPI's collectives
		bounce   bool   // the all-reduce's pieces pass through the devices' host buffers
		sizes    string // the first segment's bytes and the most process 0 makes ("64,40000")
		device   string // "1": a shared all-reduce reduces on the device (allReduceOnDevice); "1,r": process r cannot build its kernel
	}{{2, 1, true, 0, false, false, "", ""}, {3, 1, true, 28, false, false, "", ""}, {2, 1, true, 40, false, true, "", ""}, {4, 1, true, 0, false, false, "", ""},
		{2, 2, true, 0, false, false, "", ""}, {2, 2, false, 0, false, false, "", ""}, {3, 1, false, 0, true, false, "", ""}, {2, 1, true, 0, false, false, "64,40000", ""},
		{2, 1, true, 0, false, false, "", "1"}, {3, 1, true, 4000, false, false, "", "1"}, {3, 1, true, 0, false, false, "", "1,1"}} {
		name := fmt.Sprintf("%d processes of %d devices", c.np, c.devs)
		if !c.shared {
			name += ", MPI's collectives"
		}
		if c.chunk > 0 {
			name += fmt.Sprintf(", all-reduce in pieces of %d bytes", c.chunk)
		}
		if c.apart {
			name += ", memory not shared"
		}
		if c.bounce {
			name += ", through host buffers"
		}
		if c.sizes != "" {
			name += ", segments of " + c.sizes + " bytes"
		}
		switch c.device {
		case "1":
			name += ", reduced on the devices"
		case "1,1":
			name += ", reduced on the host: process 1 cannot build the device's kernel"
		}
		t.Run(name, func(t *testing.T) {
			// A rank that fails leaves the others waiting in MPI: the whole job is bounded.
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, run, "--allow-run-as-root", "--oversubscribe", "-np", fmt.Sprint(c.np), os.Args[0], "-test.run", "^TestMPIRank$", "-test.v")
			shared := "0"
			switch {
			case c.apart:
				shared = "apart"
			case c.shared:
				shared = "1"
			}
			cmd.Env = append(os.Environ(), fmt.Sprint(mpiRankEnv, "=", c.devs), mpiWantLib+"=host-staged over Open MPI", mpiShared+"="+shared, fmt.Sprint(mpiShmChunk, "=", c.chunk), fmt.Sprint(mpiNotShared, "=", map[bool]int{true: 1}[c.apart]), fmt.Sprint(mpiBounce, "=", map[bool]int{true: 1}[c.bounce]), mpiShmSizes+"="+c.sizes, mpiDevice+"="+c.device)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("mpirun -np %d: %v\n%s", c.np, err, out)
			}
			if n := strings.Count(string(out), "--- PASS: TestMPIRank"); n != c.np {
				t.Fatalf("%d of %d ranks passed:\n%s", n, c.np, out)
			}
			t.Logf("%s", grepLines(string(out), "through"))
		})
	}
}

// grepLines returns the lines of s that hold w.
func grepLines(s, w string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, w) {
			b.WriteString(strings.TrimSpace(l) + "\n")
		}
	}
	return b.String()
}

// TestMPIRank is one process of TestMPICollectives (or of a test that starts processes
// through Prism's TCP rendezvous with mpiFallbackOK); skipped unless one started it.
func TestMPIRank(t *testing.T) {
	nd, _ := strconv.Atoi(os.Getenv(mpiRankEnv))
	if nd < 1 {
		t.Skip("one process of TestMPICollectives, started by it under mpirun")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rv, ok, err := group.RendezvousFromEnv()
	if err != nil || !ok {
		t.Fatalf("rendezvous from the environment: %v, %v, %v", rv, ok, err)
	}
	devs := make([]*engine.Device, nd)
	for i := range devs {
		if devs[i], err = engine.Open(ctx, "opencl:0:0"); err != nil {
			t.Fatal(err)
		}
		defer devs[i].Close()
	}
	shared := os.Getenv(mpiShared)
	if c, _ := strconv.Atoi(os.Getenv(mpiShmChunk)); c > 0 {
		group.SetShmChunk(c)
	}
	if on, fails, _ := strings.Cut(os.Getenv(mpiDevice), ","); on == "1" {
		group.SetDeviceReduce(true)
		if fails != "" && fails == os.Getenv("OMPI_COMM_WORLD_RANK") {
			group.SetDeviceBuildFails(true)
		}
	}
	if os.Getenv(mpiBounce) == "1" {
		group.SetBounce(true)
	}
	limited := false
	if f, m, ok := strings.Cut(os.Getenv(mpiShmSizes), ","); ok {
		first, err1 := strconv.ParseInt(f, 10, 64)
		most, err2 := strconv.ParseInt(m, 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s=%q", mpiShmSizes, os.Getenv(mpiShmSizes))
		}
		group.SetShmSizes(first, most)
		limited = true
	}
	if os.Getenv(mpiNotShared) == "1" {
		dir := t.TempDir()
		group.SetMapPath(func(path string) string { // a file of the same size, zeros: not the token
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(dir, filepath.Base(path))
			if err := os.WriteFile(other, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(other, fi.Size()); err != nil {
				t.Fatal(err)
			}
			return other
		})
	}
	g, err := group.Join(ctx, devs, rv, group.Options{NoSharedMemory: shared == "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := g.Close(); err != nil {
			t.Error(err)
		}
	}()
	t.Logf("process %s: ranks %d to %d of %d through %s; fallback: %q", rv, g.Rank(0), g.Rank(nd-1), g.Size(), g.Library(), g.Fallback())
	if want := os.Getenv(mpiWantLib); !strings.HasPrefix(g.Library().Name, want) {
		t.Fatalf("the group runs through %s; want %s", g.Library(), want)
	}
	if has := strings.Contains(g.Library().Name, ", shared memory"); shared != "" && has != (shared == "1") {
		t.Fatalf("the group runs through %s; want shared memory: %v", g.Library(), shared == "1")
	}
	if on, why := g.SharedMemory(); shared != "" && (on != (shared == "1") || (shared == "apart" && !strings.Contains(why, "share"))) {
		t.Fatalf("SharedMemory() = %v, %q; want %v, and why not where the memory is apart", on, why, shared == "1")
	}
	t.Logf("shared memory: %q", func() string { _, why := g.SharedMemory(); return why }())
	if (os.Getenv(mpiFallbackOK) != "") != (g.Fallback() != "") {
		t.Fatalf("fallback %q; want one: %v", g.Fallback(), os.Getenv(mpiFallbackOK) != "")
	}
	qs := make([]*engine.Queue, nd)
	for i, d := range devs {
		if qs[i], err = d.NewQueue(); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{1, 7, 4097} {
		checkCollectives[float32](ctx, t, g, qs, n)
		checkCollectives[float64](ctx, t, g, qs, n)
		checkCollectives[int32](ctx, t, g, qs, n)
	}
	if err := g.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	if limited { // the largest collectives went through MPI's, the others through shared memory
		checkCollectives[float32](ctx, t, g, qs, 7) // a segment made again, smaller
		if on, why := g.SharedMemory(); !on || !strings.Contains(why, "go through MPI's collectives") || !strings.Contains(why, "more than the") {
			t.Fatalf("SharedMemory() = %v, %q; want true, saying the largest went through MPI's collectives and why", on, why)
		}
	}
}

// rankData returns global rank r's n values of T, the same in every process: integers
// from -50 to 50 for integer types, values in [-1, 1) for floating point.
func rankData[T group.CollectiveScalar](r, n int, salt uint64) []T {
	rng := rand.New(rand.NewPCG(uint64(r), salt))
	v := make([]T, n)
	var z T
	_, isFloat := any(z).(float32)
	if _, ok := any(z).(float64); ok {
		isFloat = true
	}
	for i := range v {
		if isFloat {
			v[i] = T(rng.Float64()*2 - 1)
		} else {
			v[i] = T(rng.IntN(101) - 50)
		}
	}
	return v
}

// checkCollectives runs every collective on n elements of T per rank and compares each
// result with a float64 reference: exact for max, gather and broadcast; within
// size x the unit roundoff of T x the sum of magnitudes for sums (MPI and the host may
// add in another order).
func checkCollectives[T group.CollectiveScalar](ctx context.Context, t *testing.T, g *group.Group, qs []*engine.Queue, n int) {
	t.Helper()
	size, nd := g.Size(), len(qs)
	var z T
	eps := 0.0
	switch any(z).(type) {
	case float32:
		eps = 0x1p-24
	case float64:
		eps = 0x1p-53
	}
	name := fmt.Sprintf("%T n=%d", z, n)
	upload := func(i int, v []T) *engine.Buffer[T] {
		b, err := engine.Upload(ctx, qs[i], v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	newBuf := func(i, m int) *engine.Buffer[T] {
		b, err := engine.NewBuffer[T](qs[i].Device(), m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	download := func(i int, b *engine.Buffer[T]) []float64 {
		v, err := b.Download(ctx, qs[i])
		if err != nil {
			t.Fatal(err)
		}
		f := make([]float64, len(v))
		for j, x := range v {
			f[j] = float64(x)
		}
		b.Close()
		return f
	}
	compare := func(what string, got []float64, want, mag []float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s %s: %d elements, want %d", name, what, len(got), len(want))
		}
		for j := range got {
			tol := 0.0
			if mag != nil {
				tol = float64(size) * eps * mag[j]
			}
			if math.Abs(got[j]-want[j]) > tol {
				t.Fatalf("%s %s: element %d = %v, want %v (tolerance %g)", name, what, j, got[j], want[j], tol)
			}
		}
	}
	// references over every rank
	sum, mag, mx := make([]float64, size*n), make([]float64, size*n), make([]float64, size*n)
	for j := range mx {
		mx[j] = math.Inf(-1)
	}
	var gathered []float64
	for r := range size {
		for j, x := range rankData[T](r, size*n, 1) {
			sum[j] += float64(x)
			mag[j] += math.Abs(float64(x))
			mx[j] = math.Max(mx[j], float64(x))
		}
		for _, x := range rankData[T](r, n, 2) {
			gathered = append(gathered, float64(x))
		}
	}
	var bcast []float64
	for _, x := range rankData[T](size-1, n, 2) {
		bcast = append(bcast, float64(x))
	}
	// all-reduce (sum in place, max out of place)
	bufs, outs := make([]*engine.Buffer[T], nd), make([]*engine.Buffer[T], nd)
	for i := range nd {
		bufs[i] = upload(i, rankData[T](g.Rank(i), size*n, 1)[:n])
		outs[i] = newBuf(i, n)
	}
	if err := group.AllReduce(ctx, g, qs, bufs, bufs, group.ReduceSum); err != nil {
		t.Fatal(err)
	}
	for i := range nd {
		bufs[i].Close()
		bufs[i] = upload(i, rankData[T](g.Rank(i), size*n, 1)[:n])
	}
	if err := group.AllReduce(ctx, g, qs, bufs, outs, group.ReduceMax); err != nil {
		t.Fatal(err)
	}
	for i := range nd {
		bufs[i].Close()
		compare("all-reduce max", download(i, outs[i]), mx[:n], nil)
	}
	// all-reduce sum, read back after max so that the in-place result is checked too
	for i := range nd {
		bufs[i] = upload(i, rankData[T](g.Rank(i), size*n, 1)[:n])
	}
	if err := group.AllReduce(ctx, g, qs, bufs, bufs, group.ReduceSum); err != nil {
		t.Fatal(err)
	}
	for i := range nd {
		compare("all-reduce sum", download(i, bufs[i]), sum[:n], mag[:n])
	}
	// reduce-scatter sum
	for i := range nd {
		bufs[i] = upload(i, rankData[T](g.Rank(i), size*n, 1))
		outs[i] = newBuf(i, n)
	}
	if err := group.ReduceScatter(ctx, g, qs, bufs, outs, group.ReduceSum); err != nil {
		t.Fatal(err)
	}
	for i := range nd {
		bufs[i].Close()
		r := g.Rank(i)
		compare("reduce-scatter sum", download(i, outs[i]), sum[r*n:(r+1)*n], mag[r*n:(r+1)*n])
	}
	// all-gather
	for i := range nd {
		bufs[i] = upload(i, rankData[T](g.Rank(i), n, 2))
		outs[i] = newBuf(i, size*n)
	}
	if err := group.AllGather(ctx, g, qs, bufs, outs); err != nil {
		t.Fatal(err)
	}
	for i := range nd {
		bufs[i].Close()
		compare("all-gather", download(i, outs[i]), gathered, nil)
	}
	// broadcast from the last rank
	for i := range nd {
		bufs[i] = upload(i, rankData[T](g.Rank(i), n, 2))
		outs[i] = newBuf(i, n)
	}
	if err := group.Broadcast(ctx, g, qs, bufs, outs, size-1); err != nil {
		t.Fatal(err)
	}
	for i := range nd {
		bufs[i].Close()
		compare("broadcast", download(i, outs[i]), bcast, nil)
	}
}
