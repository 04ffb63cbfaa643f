package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	_ "github.com/prism-compute/prism/cl"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/engine/group"
	"github.com/prism-compute/prism/kernels"
)

// smallChunks makes the windows and chunks of the collectives' set-up and verification
// small, and runs them on four goroutines, so that small buffers cross many of each.
func smallChunks(t *testing.T, windowBytes, chunk int) {
	w, c := collectiveWindow, collectiveChunk
	p := runtime.GOMAXPROCS(4)
	collectiveWindow, collectiveChunk = windowBytes, chunk
	t.Cleanup(func() {
		collectiveWindow, collectiveChunk = w, c
		runtime.GOMAXPROCS(p)
	})
}

// TestCollectiveInputs checks the inputs of the collectives: a pure function of seed, rank
// and element, from -4 to 4 with each value about as frequent, different for another rank
// or seed, and written alike by fillInput's goroutines from any offset.
func TestCollectiveInputs(t *testing.T) {
	smallChunks(t, collectiveWindow, 100)
	const n = 90_000
	a, b := newCollectiveInputs(7, 3), newCollectiveInputs(7, 3)
	var hist [9]int
	for r := range 3 {
		for _, j := range []int{0, 1, n, 1 << 30, 1<<31 - 1, 1 << 40} {
			if x, y := a.at(r, j), b.at(r, j); x != y {
				t.Fatalf("seed 7, rank %d, element %d: %d, then %d", r, j, x, y)
			}
		}
	}
	for j := range n {
		v := a.at(1, j)
		if v < -4 || v > 4 {
			t.Fatalf("rank 1, element %d: %d, not from -4 to 4", j, v)
		}
		hist[v+4]++
	}
	for v, c := range hist {
		if c < n/9*9/10 || c > n/9*11/10 { // 10000 each, 1% (3 sigma) expected
			t.Errorf("value %d drawn %d times of %d, want about %d", v-4, c, n, n/9)
		}
	}
	// Another rank or seed draws another input: the same value in about 1 of 9 elements.
	for _, c := range []struct {
		name string
		x, y func(j int) int
	}{
		{"rank 0 and rank 1", func(j int) int { return a.at(0, j) }, func(j int) int { return a.at(1, j) }},
		{"rank 1 and rank 2", func(j int) int { return a.at(1, j) }, func(j int) int { return a.at(2, j) }},
		{"seed 7 and seed 8", func(j int) int { return a.at(0, j) }, func(j int) int { return newCollectiveInputs(8, 1).at(0, j) }},
		{"seed 0 and seed 1", func(j int) int { return newCollectiveInputs(0, 1).at(0, j) }, func(j int) int { return newCollectiveInputs(1, 1).at(0, j) }},
	} {
		same := 0
		for j := range n {
			if c.x(j) == c.y(j) {
				same++
			}
		}
		if same > n/9*12/10 {
			t.Errorf("%s: %d of %d elements alike, want about %d", c.name, same, n, n/9)
		}
	}
	for _, lo := range []int{0, 12_345} {
		got := make([]float64, 1001)
		fillInput(a.key(2), lo, got)
		for i, v := range got {
			if want := float64(a.at(2, lo+i)); v != want {
				t.Fatalf("fillInput from %d, element %d: %v, want %v", lo, lo+i, v, want)
			}
		}
	}
}

// collectiveRecv returns global rank rank's recv buffer after the collective kind of
// count elements on in's ranks, element by element from the inputs (the reference that
// collectiveWant computes by chunks).
func collectiveRecv[T float32 | float64](kind string, in collectiveInputs, ranks, rank, count int) []T {
	var out []T
	sum := func(j int) T {
		s := 0
		for r := range ranks {
			s += in.at(r, j)
		}
		return T(s)
	}
	switch kind {
	case "all-reduce":
		for j := range count {
			out = append(out, sum(j))
		}
	case "reduce-scatter":
		for j := range count {
			out = append(out, sum(rank*count+j))
		}
	case "all-gather":
		for r := range ranks {
			for k := range count {
				out = append(out, T(in.at(r, k)))
			}
		}
	case "broadcast":
		for j := range count {
			out = append(out, T(in.at(0, j)))
		}
	}
	return out
}

// TestCheckRecvFindsCorruption checks the comparison of a recv buffer for each collective
// and rank: the right result passes, and one element changed at the start, the middle or
// the end, or NaN, is named with its value and the one wanted; of several, the lowest,
// every time; in a window from an offset, by its index in the whole buffer.
func TestCheckRecvFindsCorruption(t *testing.T) {
	smallChunks(t, collectiveWindow, 64)
	const ranks, count = 3, 1000
	in := newCollectiveInputs(11, ranks)
	for _, kind := range []string{"all-reduce", "reduce-scatter", "all-gather", "broadcast"} {
		for rank := range ranks {
			t.Run(fmt.Sprintf("%s/rank%d", kind, rank), func(t *testing.T) {
				ref := collectiveRecv[float32](kind, in, ranks, rank, count)
				want := collectiveWant[float32](kind, in, rank, count)
				if err := checkRecv(kind, rank, 0, ref, want); err != nil {
					t.Fatalf("the right result: %v", err)
				}
				n := len(ref)
				check := func(what string, lo int, bad []int, at int, v float32) {
					t.Helper()
					got := append([]float32(nil), ref...)
					for _, j := range bad {
						got[j] = v
					}
					err := checkRecv(kind, rank, lo, got[lo:], want)
					msg := fmt.Sprintf("%s, rank %d, element %d: %v, want %v", kind, rank, at, v, ref[at])
					if !errors.Is(err, kernels.ErrVerify) || !strings.Contains(fmt.Sprint(err), msg) {
						t.Errorf("%s: %v; want an error wrapping kernels.ErrVerify with %q", what, err, msg)
					}
				}
				for _, j := range []int{0, n / 2, n - 1} {
					check(fmt.Sprintf("element %d changed", j), 0, []int{j}, j, ref[j]+1)
				}
				check("element 500 NaN", 0, []int{500}, 500, float32(math.NaN()))
				// The lowest is found first in its chunk, the others last in theirs.
				for range 20 {
					check("elements 3, 127, 255, 511 and the last changed", 0, []int{n - 1, 511, 255, 127, 3}, 3, 9)
				}
				check("element 700 of a window from 500", 500, []int{100, 700, n - 1}, 700, -9)
			})
		}
	}
}

// TestCheckRecvLowestMismatch checks that checkRecv names the lowest of several changed
// elements however its goroutines race: the lowest in the middle of the first chunk with
// another found before it (at the start of the second chunk) or after it (at the end).
func TestCheckRecvLowestMismatch(t *testing.T) {
	const chunk = 1 << 14
	smallChunks(t, collectiveWindow, chunk)
	in := newCollectiveInputs(3, 2)
	ref := collectiveRecv[float64]("all-reduce", in, 2, 0, 4*chunk)
	want := collectiveWant[float64]("all-reduce", in, 0, 4*chunk)
	for _, other := range []int{chunk, 2*chunk - 1, 3*chunk - 1} {
		for range 20 {
			got := append([]float64(nil), ref...)
			got[chunk/2], got[other] = 99, 99
			err := checkRecv("all-reduce", 0, 0, got, want)
			msg := fmt.Sprintf("all-reduce, rank 0, element %d: 99, want %v:", chunk/2, ref[chunk/2])
			if !errors.Is(err, kernels.ErrVerify) || !strings.Contains(fmt.Sprint(err), msg) {
				t.Fatalf("elements %d and %d changed: %v; want an error wrapping kernels.ErrVerify with %q", chunk/2, other, err, msg)
			}
		}
	}
}

// TestCollectivesVerifyOnPoCL runs every collective across two handles on the first
// OpenCL device with windows and chunks far smaller than the buffers, checks each was
// verified, and that verifyCollective names an element changed in the last window of
// rank 1's result.
func TestCollectivesVerifyOnPoCL(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	ctx := context.Background()
	var devs []*engine.Device
	for range 2 {
		d, err := engine.Open(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		devs = append(devs, d)
	}
	g, err := group.New(ctx, devs, group.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	count := 10_007
	if enginetest.Small() {
		count = 1001
	}
	smallChunks(t, 4000*4, 512) // windows of 4000 float32 (2000 float64)

	names := []string{"collective/all-reduce/float32", "collective/all-gather/float32", "collective/reduce-scatter/float32", "collective/broadcast/float32"}
	if devs[0].Info().FP64 {
		names = append(names, "collective/all-gather/float64", "collective/reduce-scatter/float64")
	}
	rep, err := RunCollectives(ctx, CollectiveConfig{Names: names, Sizes: []int{count}, Count: 1, Seed: 5}, g)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Collectives) != len(names) {
		t.Fatalf("%d results, want %d", len(rep.Collectives), len(names))
	}
	for _, c := range rep.Collectives {
		if !c.Verified || c.Err != "" || c.Ranks != 2 || c.Count != count || c.Stats.Runs != 1 {
			t.Errorf("%s: verified %v, error %q, %d ranks, count %d, %d runs; want verified on 2 ranks, count %d, 1 run", c.Case, c.Verified, c.Err, c.Ranks, c.Count, c.Stats.Runs, count)
		}
	}

	// In place: all-reduce and broadcast with one buffer, verified after their first run
	// and timed over runs that reuse it; the other two out of place, and said so.
	rep, err = RunCollectives(ctx, CollectiveConfig{Names: names[:4], Sizes: []int{count}, Count: 3, Seed: 6, InPlace: true}, g)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Collectives {
		want := c.Case == "collective/all-reduce/float32" || c.Case == "collective/broadcast/float32"
		if !c.Verified || c.Err != "" || c.Stats.Runs != 3 || c.InPlace != want {
			t.Errorf("in place: %s: verified %v, error %q, %d runs, in place %v; want verified, 3 runs, in place %v", c.Case, c.Verified, c.Err, c.Stats.Runs, c.InPlace, want)
		}
	}

	// The same collectives by hand, then one element of rank 1's result changed.
	in := newCollectiveInputs(5, 2)
	for _, kind := range []string{"all-reduce", "all-gather", "reduce-scatter", "broadcast"} {
		t.Run(kind, func(t *testing.T) {
			ns, nr := count, count
			switch kind {
			case "all-gather":
				nr = 2 * count
			case "reduce-scatter":
				ns = 2 * count
			}
			qs := make([]*engine.Queue, 2)
			send := make([]*engine.Buffer[float32], 2)
			recv := make([]*engine.Buffer[float32], 2)
			for i, d := range devs {
				if qs[i], err = d.NewQueue(); err != nil {
					t.Fatal(err)
				}
				defer qs[i].Close()
				v := make([]float32, ns)
				fillInput(in.key(g.Rank(i)), 0, v)
				if send[i], err = engine.Upload(ctx, qs[i], v); err != nil {
					t.Fatal(err)
				}
				defer send[i].Close()
				if recv[i], err = engine.NewBuffer[float32](d, nr); err != nil {
					t.Fatal(err)
				}
				defer recv[i].Close()
			}
			if err := collectiveCall(ctx, kind, g, qs, send, recv); err != nil {
				t.Fatal(err)
			}
			if err := verifyCollective(ctx, kind, g, qs, recv, in, count); err != nil {
				t.Fatalf("the collective's result: %v", err)
			}
			ref := collectiveRecv[float32](kind, in, 2, 1, count)
			j := nr - 3 // in the last window
			if err := recv[1].Write(ctx, qs[1], j, []float32{ref[j] + 2}); err != nil {
				t.Fatal(err)
			}
			err := verifyCollective(ctx, kind, g, qs, recv, in, count)
			msg := fmt.Sprintf("%s, rank 1, element %d: %v, want %v", kind, j, ref[j]+2, ref[j])
			if !errors.Is(err, kernels.ErrVerify) || !strings.Contains(fmt.Sprint(err), msg) {
				t.Errorf("element %d of rank 1 changed: %v; want an error wrapping kernels.ErrVerify with %q", j, err, msg)
			}
		})
	}
}

// BenchmarkCollectiveSetup measures the host's share of a collective's set-up and
// verification: writing one rank's 16M-element input, and checking an all-reduce result
// of 2 ranks against it.
func BenchmarkCollectiveSetup(b *testing.B) {
	const n = 16 << 20
	in := newCollectiveInputs(1, 2)
	buf := make([]float32, n)
	b.Run("fill", func(b *testing.B) {
		b.SetBytes(n * 4)
		for b.Loop() {
			fillInput(in.key(0), 0, buf)
		}
	})
	want := collectiveWant[float32]("all-reduce", in, 0, n)
	forChunks(n, func() func(lo, hi int) { return func(lo, hi int) { want(lo, buf[lo:hi]) } })
	b.Run("check", func(b *testing.B) {
		b.SetBytes(n * 4)
		for b.Loop() {
			if err := checkRecv("all-reduce", 0, 0, buf, want); err != nil {
				b.Fatal(err)
			}
		}
	})
}
