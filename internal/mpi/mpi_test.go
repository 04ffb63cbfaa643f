package mpi

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/internal/dl"
)

// rankEnv marks a process this test started under mpirun as one rank of TestWorld.
const rankEnv = "PRISM_TEST_MPI_WORLD_RANK"

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

// TestWorld runs TestWorldRank as 2 and 3 ranks under mpirun: the binding's collectives
// on every element type and reduction, in pieces where counts exceed maxCount, against
// float64 references.
func TestWorld(t *testing.T) {
	run := mpirun(t)
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprint(np, " ranks"), func(t *testing.T) {
			c := exec.Command(run, "--allow-run-as-root", "--oversubscribe", "-np", fmt.Sprint(np), os.Args[0], "-test.run", "^TestWorldRank$", "-test.v")
			c.Env = append(os.Environ(), rankEnv+"=1")
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("mpirun -np %d: %v\n%s", np, err, out)
			}
			if n := strings.Count(string(out), "--- PASS: TestWorldRank"); n != np {
				t.Fatalf("%d of %d ranks passed:\n%s", n, np, out)
			}
		})
	}
}

// TestWorldRank is one rank of TestWorld (skipped unless TestWorld started it).
func TestWorldRank(t *testing.T) {
	if os.Getenv(rankEnv) == "" {
		t.Skip("one rank of TestWorld, started by it under mpirun")
	}
	w, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	wantRank, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK"))
	wantSize, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_SIZE"))
	if w.Rank() != wantRank || w.Size() != wantSize || w.ABI() != OpenMPI || !strings.Contains(w.Library().Name, "Open MPI") {
		t.Fatalf("rank %d of %d, %v %v; want %d of %d, Open MPI", w.Rank(), w.Size(), w.ABI(), w.Library(), wantRank, wantSize)
	}
	t.Logf("rank %d of %d through %s", w.Rank(), w.Size(), w.Library())
	old := maxCount
	maxCount = 5 // every all-reduce and broadcast below runs in pieces
	defer func() { maxCount = old }()
	size, rank := w.Size(), w.Rank()
	const n = 23
	// data returns process p's values, the same in every process.
	data := func(p int, ty driver.CollectiveType, m int) []float64 {
		rng := rand.New(rand.NewPCG(uint64(p), uint64(ty)))
		v := make([]float64, m)
		for i := range v {
			v[i] = float64(rng.IntN(7) + 1) // products of a few stay exact in every type
		}
		return v
	}
	for _, ty := range []driver.CollectiveType{driver.CollFloat32, driver.CollFloat64, driver.CollInt32, driver.CollUint32, driver.CollInt64, driver.CollUint64} {
		for _, op := range []driver.ReduceOp{driver.ReduceSum, driver.ReduceProd, driver.ReduceMax, driver.ReduceMin} {
			buf := encode(ty, data(rank, ty, n))
			if err := w.AllReduce(buf, ty, op); err != nil {
				t.Fatal(err)
			}
			want := data(0, ty, n)
			for p := 1; p < size; p++ {
				for i, v := range data(p, ty, n) {
					want[i] = reduce(op, want[i], v)
				}
			}
			check(t, fmt.Sprintf("all-reduce %v %v", ty, op), decode(ty, buf), want)

			// Reduce-scatter: process p keeps p+1 elements.
			counts, total := make([]int64, size), 0
			for p := range counts {
				counts[p] = int64(p + 1)
				total += p + 1
			}
			recv := make([]byte, int(counts[rank])*ty.Size())
			if err := w.ReduceScatter(encode(ty, data(rank, ty, total)), recv, counts, ty, op); err != nil {
				t.Fatal(err)
			}
			full := data(0, ty, total)
			for p := 1; p < size; p++ {
				for i, v := range data(p, ty, total) {
					full[i] = reduce(op, full[i], v)
				}
			}
			at := rank * (rank + 1) / 2
			check(t, fmt.Sprintf("reduce-scatter %v %v", ty, op), decode(ty, recv), full[at:at+rank+1])
		}
		// All-gather: process p gives p+2 elements.
		counts, total := make([]int64, size), 0
		var want []float64
		for p := range counts {
			counts[p] = int64(p + 2)
			total += p + 2
			want = append(want, data(p, ty, p+2)...)
		}
		all := make([]byte, total*ty.Size())
		if err := w.AllGather(encode(ty, data(rank, ty, rank+2)), all, counts, ty); err != nil {
			t.Fatal(err)
		}
		check(t, fmt.Sprintf("all-gather %v", ty), decode(ty, all), want)
		// Broadcast from the last process.
		buf := encode(ty, data(rank, ty, n))
		if err := w.Broadcast(buf, ty, size-1); err != nil {
			t.Fatal(err)
		}
		check(t, fmt.Sprintf("broadcast %v", ty), decode(ty, buf), data(size-1, ty, n))
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
	// Counts past a C int are refused before MPI sees them.
	maxCount = 3
	if err := w.AllGather(make([]byte, 16), make([]byte, 16*size), slicesOf(size, 4), driver.CollFloat32); !errors.Is(err, engine.ErrUnsupported) {
		t.Errorf("an all-gather past the C int counts: %v; want ErrUnsupported", err)
	}
	maxCount = old
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Barrier(); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("a barrier after Close: %v; want ErrClosed", err)
	}
	if _, err := Open(); err == nil || !strings.Contains(err.Error(), "finalized") {
		t.Errorf("Open after MPI_Finalize: %v; want an error that says MPI is finalized", err)
	}
}

func slicesOf(n int, v int64) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func reduce(op driver.ReduceOp, a, b float64) float64 {
	switch op {
	case driver.ReduceSum:
		return a + b
	case driver.ReduceProd:
		return a * b
	case driver.ReduceMax:
		return math.Max(a, b)
	}
	return math.Min(a, b)
}

func check(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// encode writes v as elements of type ty.
func encode(ty driver.CollectiveType, v []float64) []byte {
	b := make([]byte, len(v)*ty.Size())
	for i, x := range v {
		p := unsafe.Pointer(&b[i*ty.Size()])
		switch ty {
		case driver.CollFloat32:
			*(*float32)(p) = float32(x)
		case driver.CollFloat64:
			*(*float64)(p) = x
		case driver.CollInt32:
			*(*int32)(p) = int32(x)
		case driver.CollUint32:
			*(*uint32)(p) = uint32(x)
		case driver.CollInt64:
			*(*int64)(p) = int64(x)
		case driver.CollUint64:
			*(*uint64)(p) = uint64(x)
		}
	}
	return b
}

// decode reads elements of type ty as float64.
func decode(ty driver.CollectiveType, b []byte) []float64 {
	v := make([]float64, len(b)/ty.Size())
	for i := range v {
		p := unsafe.Pointer(&b[i*ty.Size()])
		switch ty {
		case driver.CollFloat32:
			v[i] = float64(*(*float32)(p))
		case driver.CollFloat64:
			v[i] = *(*float64)(p)
		case driver.CollInt32:
			v[i] = float64(*(*int32)(p))
		case driver.CollUint32:
			v[i] = float64(*(*uint32)(p))
		case driver.CollInt64:
			v[i] = float64(*(*int64)(p))
		case driver.CollUint64:
			v[i] = float64(*(*uint64)(p))
		}
	}
	return v
}

// TestOpenMissing checks that a library that is not there is ErrUnavailable naming every
// file tried.
func TestOpenMissing(t *testing.T) {
	_, err := open([]string{"libmpi-prism-none.so.40", "/nonexistent/libmpi.so.12"})
	if !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("got %v; want ErrUnavailable", err)
	}
	for _, w := range []string{"libmpi-prism-none.so.40", "/nonexistent/libmpi.so.12"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %s", err, w)
		}
	}
}

// TestMPICHHandles checks the MPICH handles against mpi.h's values and that every element
// type and reduction has one on both ABIs.
func TestMPICHHandles(t *testing.T) {
	if mpichHandles.world != 0x44000000 || mpichHandles.types[driver.CollFloat32] != 0x4c00040a || mpichHandles.ops[driver.ReduceSum] != 0x58000003 {
		t.Errorf("MPICH handles: %+v", mpichHandles)
	}
	for _, ty := range []driver.CollectiveType{driver.CollFloat32, driver.CollFloat64, driver.CollInt32, driver.CollUint32, driver.CollInt64, driver.CollUint64} {
		if mpichHandles.types[ty] == 0 || openMPIGlobals.types[ty] == "" {
			t.Errorf("%v has no handle", ty)
		}
	}
	for _, op := range []driver.ReduceOp{driver.ReduceSum, driver.ReduceProd, driver.ReduceMax, driver.ReduceMin} {
		if mpichHandles.ops[op] == 0 || openMPIGlobals.ops[op] == "" {
			t.Errorf("%v has no handle", op)
		}
	}
}

// BenchmarkAllReduce times MPI's all-reduce of float32 on host memory, in place, at 1 MiB
// and 1 GiB per process: run it under mpirun, every rank the same fixed count of
// iterations (each all-reduce waits for every rank's):
//
//	go test -c ./internal/mpi
//	mpirun --allow-run-as-root -np 2 ./mpi.test -test.run '^$' -test.bench AllReduce -test.benchtime 5x
func BenchmarkAllReduce(b *testing.B) {
	if os.Getenv("OMPI_COMM_WORLD_SIZE") == "" && os.Getenv("PMI_SIZE") == "" {
		b.Skip("run under mpirun: every rank runs the benchmark")
	}
	w, err := Open()
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	for _, bytes := range []int{1 << 20, 1 << 30} {
		b.Run(fmt.Sprintf("bytes=%d", bytes), func(b *testing.B) {
			buf := make([]byte, bytes)
			for i := range buf {
				buf[i] = 0 // touch every page before timing
			}
			b.SetBytes(int64(bytes))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.AllReduce(buf, driver.CollFloat32, driver.ReduceSum); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// mpichEnv marks a process TestMPICH started: it runs TestMPICHSingleton.
const mpichEnv = "PRISM_TEST_MPICH_SINGLETON"

// TestMPICH runs TestMPICHSingleton in a process of its own, which no launcher started:
// MPICH's library on its own ABI (integer handles), as a world of one process (MPI's
// singleton start). Skipped where no MPICH library is installed (Debian: libmpich12), a
// failure under PRISM_REQUIRE=mpich.
func TestMPICH(t *testing.T) {
	if lib, _, _, err := load(driver.LibraryCandidates([]string{"libmpich.so.12", "libmpi.so.12"})); err != nil {
		enginetest.RequireOrSkip(t, "mpich", err)
	} else if dl.Sym(lib.Handle, "ompi_mpi_comm_world") != nil {
		t.Skipf("%s is Open MPI's", lib.Path)
	}
	c := exec.Command(os.Args[0], "-test.run", "^TestMPICHSingleton$", "-test.v")
	c.Env = append(os.Environ(), mpichEnv+"=1")
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestMPICHSingleton") {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestMPICHSingleton is the process of TestMPICH (skipped unless it started it).
func TestMPICHSingleton(t *testing.T) {
	if os.Getenv(mpichEnv) == "" {
		t.Skip("the process of TestMPICH")
	}
	w, err := open(driver.LibraryCandidates([]string{"libmpich.so.12", "libmpi.so.12"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s, %v ABI, rank %d of %d", w.Library(), w.ABI(), w.Rank(), w.Size())
	if w.ABI() != MPICH || w.Rank() != 0 || w.Size() != 1 {
		t.Fatalf("%v ABI, rank %d of %d; want MPICH's, rank 0 of 1", w.ABI(), w.Rank(), w.Size())
	}
	maxCount = 5 // all-reduces and broadcasts of 11 elements in pieces
	for _, ty := range []driver.CollectiveType{driver.CollFloat32, driver.CollFloat64, driver.CollInt32, driver.CollUint32, driver.CollInt64, driver.CollUint64} {
		v := []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}
		for _, op := range []driver.ReduceOp{driver.ReduceSum, driver.ReduceProd, driver.ReduceMax, driver.ReduceMin} {
			buf := encode(ty, v)
			if err := w.AllReduce(buf, ty, op); err != nil {
				t.Fatal(err)
			}
			check(t, fmt.Sprintf("all-reduce %v %v", ty, op), decode(ty, buf), v)
			short := v[:5] // the counts of reduce-scatter and all-gather stay within maxCount
			recv := make([]byte, len(short)*ty.Size())
			if err := w.ReduceScatter(encode(ty, short), recv, []int64{int64(len(short))}, ty, op); err != nil {
				t.Fatal(err)
			}
			check(t, fmt.Sprintf("reduce-scatter %v %v", ty, op), decode(ty, recv), short)
		}
		all := make([]byte, 5*ty.Size())
		if err := w.AllGather(encode(ty, v[:5]), all, []int64{5}, ty); err != nil {
			t.Fatal(err)
		}
		check(t, fmt.Sprintf("all-gather %v", ty), decode(ty, all), v[:5])
		buf := encode(ty, v)
		if err := w.Broadcast(buf, ty, 0); err != nil {
			t.Fatal(err)
		}
		check(t, fmt.Sprintf("broadcast %v", ty), decode(ty, buf), v)
	}
	// A wrong handle is an error MPI returns (MPI_ERRORS_RETURN), not the end of the process.
	if err := w.Broadcast(make([]byte, 8), driver.CollFloat32, 7); err == nil || !strings.Contains(err.Error(), "MPI_Bcast") {
		t.Errorf("a broadcast from rank 7 of 1: %v; want MPI's error", err)
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
