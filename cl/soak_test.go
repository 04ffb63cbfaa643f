//go:build !noopencl

package cl

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// TestSoak runs many cycles of allocate, write, launch, read and free, and rebuilds the
// program every few cycles, on the first OpenCL device (not under Oclgrind): after a
// warm-up, the process's resident memory and open files must stay flat. PRISM_SOAK_CYCLES
// runs it longer (docs/RELIABILITY.md has a long run's figures).
func TestSoak(t *testing.T) {
	infos := testDevices(t)
	if underOclgrind(infos) || testing.Short() {
		t.Skip("the soak runs on a real device, without -short")
	}
	cycles := 400
	if n, err := strconv.Atoi(os.Getenv("PRISM_SOAK_CYCLES")); err == nil && n > 0 {
		cycles = n
	}
	const rebuildEvery, warmup = 4, 100
	ctx := context.Background()
	dev, err := engine.Open(ctx, "opencl:"+infos[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var prog *engine.Program
	var k *engine.Kernel
	var rss0, fds0 int64
	const n = 1 << 16
	host := make([]int32, n)
	for c := range cycles {
		if c%rebuildEvery == 0 {
			if prog != nil {
				k.Close()
				prog.Close()
			}
			// A distinct -D per rebuild defeats the driver's cache, as a user's changed
			// source would.
			if prog, err = dev.Build(testSource, fmt.Sprintf("-DSOAK_CYCLE=%d", c)); err != nil {
				t.Fatal(err)
			}
			if k, err = prog.Kernel("add_const"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range host {
			host[i] = int32(i + c)
		}
		b, err := engine.Upload(ctx, q, host)
		if err != nil {
			t.Fatal(err)
		}
		wg := min(64, k.MaxWorkGroupSize())
		if err := q.Launch(k, engine.Range1D(engine.RoundUp(n, wg), wg), b, int32(3), int32(n)); err != nil {
			t.Fatal(err)
		}
		got, err := b.Download(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if got[n-1] != int32(n-1+c+3) {
			t.Fatalf("cycle %d: v[%d] = %d, want %d", c, n-1, got[n-1], n-1+c+3)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if c == warmup {
			runtime.GC()
			rss0, fds0 = residentBytes(t), openFiles(t)
		}
	}
	runtime.GC()
	rss, fds := residentBytes(t), openFiles(t)
	t.Logf("%d cycles (%d builds): resident %d MiB after %d cycles, %d MiB at the end; open files %d, then %d",
		cycles, cycles/rebuildEvery, rss0>>20, warmup, rss>>20, fds0, fds)
	// A build costs PoCL a few tens of KiB that it keeps (its program cache, LLVM's
	// contexts); 64 MiB over the cycles is a leak of a buffer or a program per cycle.
	if grow := rss - rss0; grow > 64<<20 {
		t.Errorf("resident memory grew %d MiB over %d cycles after the warm-up", grow>>20, cycles-warmup)
	}
	if fds > fds0+4 {
		t.Errorf("open files grew from %d to %d", fds0, fds)
	}
}

// residentBytes returns the process's resident memory (VmRSS), or skips where /proc is
// missing.
func residentBytes(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	t.Skip("no VmRSS in /proc/self/status")
	return 0
}

// openFiles returns the number of the process's open file descriptors.
func openFiles(t *testing.T) int64 {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return int64(len(ents))
}
