package gemm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestWGMMALayouts checks the reading of the 128-byte swizzled matrix descriptors NewWGMMA
// uses (wgmmaDefault) on the nn and nt layouts at every width, with K = 576 (nine k steps:
// the ring of four stages turns twice) and M, N of two blocks. Where the MN-major B of the nn layout
// computes a wrong product, it also runs the other reading (MN_SWAP=1) and logs whether
// that one holds.
func TestWGMMALayouts(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		p := needWGMMA(t, dev)
		rng := rand.New(rand.NewPCG(3, 3))
		for _, bn := range []int{64, 128, 256} {
			for _, tb := range []bool{false, true} {
				w, err := newWGMMA[engine.Half](dev, p, wgmmaDefault, WGMMATunables{BN: bn, Stages: 4, Cluster: 1, GroupM: 8})
				if err != nil {
					t.Fatal(err)
				}
				shape := GEMMShape{M: 256, N: 2 * bn, K: 576, TransB: tb}
				err = wgmmaProduct(t, q, w, shape, rng)
				w.Close()
				if err != nil {
					t.Errorf("BN=%d transB=%v: %v", bn, tb, err)
					if !tb { // say whether the other reading of the MN-major descriptor holds
						o, oerr := newWGMMA[engine.Half](dev, p, wgmmaLayout{mnSwap: 1}, WGMMATunables{BN: bn, Stages: 4, Cluster: 1, GroupM: 8})
						if oerr != nil {
							t.Fatal(oerr)
						}
						t.Logf("BN=%d with MN_SWAP=1: %v", bn, wgmmaProduct(t, q, o, shape, rng))
						o.Close()
					}
				}
			}
		}
	})
}

// wgmmaProduct runs D = A*B of shape s through w on random float16 inputs and returns an
// error naming the first element beyond the tolerance.
func wgmmaProduct(t *testing.T, q *engine.Queue, w *WGMMA[engine.Half], s GEMMShape, rng *rand.Rand) error {
	return wgmmaProductBeta(t, q, w, s, 0, rng)
}

// TestWGMMAPersistent runs the persistent forms (PERSISTENT=1, and 2: ping-pong) with the
// grid capped at two blocks (one cluster of two), so that each block takes many tiles: the
// stage ring's rounds carry over from tile to tile, with k steps fewer and more than the
// stages, in both layouts, with a batch, and D's last tile rows and columns partial; and
// blocks with one tile, none, and an odd number (a ping-pong warpgroup with nothing to do).
// Rows of A and B are on 16-byte boundaries (else the call runs on mma.sync).
func TestWGMMAPersistent(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		p := needWGMMA(t, dev)
		defer func(c int) { wgmmaGridCap = c }(wgmmaGridCap)
		wgmmaGridCap = 2
		rng := rand.New(rand.NewPCG(5, 5))
		for _, wt := range []WGMMATunables{
			{BN: 256, Stages: 4, Cluster: 1, GroupM: 8, Persistent: 1},
			{BN: 128, Stages: 3, Cluster: 2, GroupM: 4, Persistent: 1},
			{BN: 128, Stages: 4, Cluster: 1, GroupM: 8, Persistent: 2},
			{BN: 64, Stages: 6, Cluster: 1, GroupM: 8, Persistent: 2},
			{BN: 128, Stages: 3, Cluster: 2, GroupM: 4, Persistent: 2},
		} {
			w, err := NewWGMMAWith[engine.Half](dev, p, wt)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []GEMMShape{
				// 24 tiles (12 clusters of two tiles) for two blocks.
				{M: 700, N: 904, K: 128},                // 2 k steps: fewer than the stages
				{M: 520, N: 1030, K: 520, TransB: true}, // 9 k steps
				{M: 300, N: 296, K: 200, Batch: 3},
				{M: 100, N: 96, K: 304},              // one tile: the second block has none
				{M: 300, N: 64, K: 64, TransB: true}, // three tiles (or three cluster rows)
			} {
				if !w.takes(s.WithDefaults()) {
					t.Fatalf("%v would run on mma.sync, not wgmma", s)
				}
				if err := wgmmaProduct(t, q, w, s, rng); err != nil {
					t.Errorf("%s, %v: %v", wt, s, err)
				}
			}
			w.Close()
		}
	})
}

// needWGMMA returns the float16 precision where dev runs wgmma.cu; it skips the test
// elsewhere, and fails it on an sm_90 CUDA device that should have run it.
func needWGMMA(t *testing.T, dev *engine.Device) Precision {
	t.Helper()
	p, _ := LookupPrecision("float16")
	w, err := NewWGMMA[engine.Half](dev, p)
	if errors.Is(err, engine.ErrUnsupported) {
		if dev.Backend() == "cuda" && dev.Info().ComputeCapability == 90 {
			t.Fatalf("%s should run wgmma: %v", dev.ID(), err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	return p
}

// TestWGMMASplitK runs split-K (wgmmaSplitK forced: the blocks' partial sums in the
// workspace, gemm_splitk_reduce adding them into D) with more splits than some shapes have
// k steps, a batch, both layouts, beta (C read by the reduction), and the persistent form.
func TestWGMMASplitK(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		p := needWGMMA(t, dev)
		defer func(s, c int) { wgmmaSplitK, wgmmaGridCap = s, c }(wgmmaSplitK, wgmmaGridCap)
		rng := rand.New(rand.NewPCG(7, 7))
		for _, c := range []struct {
			split int
			wt    WGMMATunables
			s     GEMMShape
		}{
			{3, WGMMADefaults(PrecFloat16), GEMMShape{M: 300, N: 264, K: 640}},               // 10 k steps in 3 + 3 + 3 + 1
			{16, WGMMADefaults(PrecFloat16), GEMMShape{M: 130, N: 96, K: 192, TransB: true}}, // 3 k steps: 3 splits
			{4, WGMMADefaults(PrecFloat16), GEMMShape{M: 200, N: 136, K: 512, Batch: 3}},
			{2, WGMMATunables{BN: 128, Stages: 4, Cluster: 2, GroupM: 8, Persistent: 1}, GEMMShape{M: 520, N: 520, K: 1024}},
			{3, WGMMATunables{BN: 128, Stages: 5, Cluster: 1, GroupM: 8, Persistent: 2}, GEMMShape{M: 520, N: 520, K: 1024, TransB: true}},
		} {
			wgmmaSplitK, wgmmaGridCap = c.split, 2
			w, err := NewWGMMAWith[engine.Half](dev, p, c.wt)
			if err != nil {
				t.Fatal(err)
			}
			if !w.takes(c.s.WithDefaults()) {
				t.Fatalf("%v would run on mma.sync, not wgmma", c.s)
			}
			if err := wgmmaProductBeta(t, q, w, c.s, -0.75, rng); err != nil {
				t.Errorf("split %d, %s, %v: %v", c.split, c.wt, c.s, err)
			}
			w.Close()
		}
	})
}

// wgmmaProductBeta runs D = A*B + beta*C of shape s through w on random inputs and a random
// C, and returns an error naming the first element beyond the tolerance.
func wgmmaProductBeta[In InputType](t *testing.T, q *engine.Queue, w *WGMMA[In], s GEMMShape, beta float32, rng *rand.Rand) error {
	s = s.WithDefaults()
	la, lb, lc := s.Lens()
	a, b := randIn[In](rng, la, -1, 1), randIn[In](rng, lb, -1, 1)
	c := make([]float32, lc)
	for i := range c {
		c[i] = float32(rng.Float64()*2 - 1)
	}
	ba, err := engine.Upload(t.Context(), q, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ba.Close()
	bb, err := engine.Upload(t.Context(), q, b)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	bc := kerneltest.Guarded(t, q, c)
	// D starts as a copy of C: GEMMRef's elements between the matrices (ldc > N) keep C's
	// values, which the call must leave as they are.
	dc := kerneltest.Guarded(t, q, slices.Clone(c))
	if err := w.RunInto(q, s, 1, ba, bb, beta, bc, dc); err != nil {
		return err
	}
	got := kerneltest.Download(t, q, "D", dc, lc)
	c64 := make([]float64, lc)
	for i, v := range c {
		c64[i] = float64(v)
	}
	want, mag := GEMMRef(s, 1, widen(a), widen(b), float64(beta), c64)
	for o := range lc {
		if d := math.Abs(float64(got[o]) - want[o]); !(d <= w.p.Tolerance(s.K, 1, mag[o])) {
			return fmt.Errorf("%w: D[%d][%d] = %v, want %v", kernels.ErrVerify, o/s.LDC, o%s.LDC, got[o], want[o])
		}
	}
	return nil
}

// TestWGMMAPadded runs shapes whose operands TMA cannot read as stored (rows or matrices
// not on 16-byte boundaries) on wgmma: the call copies them into aligned scratch first
// (gemm_pad), one operand or both, in a batch, with C's rows at odd offsets (C read one
// element at a time), float16 in both layouts and float8 in both (nn through a transposed
// copy of B, gemm_transpose), at the widths that fill the device (bnFill); a larger shape
// after a smaller one grows the scratch.
func TestWGMMAPadded(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		p := needWGMMA(t, dev)
		defer func(f int) { wgmmaFillSMs = f }(wgmmaFillSMs)
		wgmmaFillSMs = 0 // the device's multiprocessors: these small shapes take narrower tiles
		rng := rand.New(rand.NewPCG(9, 9))
		shapes := []GEMMShape{
			{M: 131, N: 200, K: 77},                           // A's rows unaligned
			{M: 130, N: 203, K: 64},                           // B's rows unaligned (nn)
			{M: 301, N: 203, K: 157, TransB: true},            // both, nt
			{M: 67, N: 99, K: 45, Batch: 3},                   // both, in a batch
			{M: 64, N: 64, K: 64, LDA: 65, LDB: 72, LDC: 67},  // A's stride alone, C's rows odd
			{M: 1000, N: 517, K: 333, TransB: true, LDC: 519}, // larger: the scratch grows
		}
		w, err := NewWGMMA[engine.Half](dev, p)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for _, s := range shapes {
			if w.takes(s.WithDefaults()) {
				t.Fatalf("%v: TMA reads it as stored; the test wants a shape it cannot", s)
			}
			if err := wgmmaProductBeta(t, q, w, s, 0.5, rng); err != nil {
				t.Errorf("float16 %v: %v", s, err)
			}
		}
		if len(w.padded) != 1 {
			t.Errorf("the calls on one queue made %d sets of aligned copies, want 1", len(w.padded))
		}
		p8, _ := LookupPrecision("float8e4m3")
		w8, err := NewWGMMA[engine.Float8E4M3](dev, p8)
		if err != nil {
			t.Fatal(err)
		}
		defer w8.Close()
		for _, s := range []GEMMShape{
			{M: 200, N: 150, K: 100, TransB: true}, {M: 129, N: 64, K: 257, TransB: true, Batch: 2},
			// nn: B copied n x k by gemm_transpose, aligned or not, in a batch.
			{M: 256, N: 256, K: 256}, {M: 200, N: 150, K: 100}, {M: 129, N: 72, K: 257, Batch: 2}, {M: 64, N: 40, K: 48, LDB: 41, LDC: 45},
		} {
			if w8.takes(s.WithDefaults()) {
				t.Fatalf("%v: TMA reads it as stored; the test wants a shape it cannot", s)
			}
			if err := wgmmaProductBeta(t, q, w8, s, -1, rng); err != nil {
				t.Errorf("float8e4m3 %v: %v", s, err)
			}
		}
	})
}

// TestSplitK checks the choice of split-K: forced splits capped at the k steps; where the
// call chooses, none while the tiles fill half of the multiprocessors, else as many as fill
// them once, at least splitKMinSteps k steps each, at most 16.
func TestSplitK(t *testing.T) {
	const sms = 132
	for _, c := range []struct{ forced, blocks, ktiles, want int }{
		{3, 1, 10, 3}, {16, 1, 3, 3}, {2, 500, 1, 1}, // forced
		{0, sms, 128, 1},     // the tiles fill the GPU
		{0, sms / 2, 128, 1}, // half of it: no split
		{0, 1, 512, 16},      // one tile: up to 16 ways
		{0, 1, 128, 8},       // splitKMinSteps k steps a split at least
		{0, 1, 31, 1},        // too few k steps to repay a split
		{0, 1, 1, 1},         // one k step: nothing to split
		{0, 32, 128, 4},      // under a quarter: four ways
		{0, 33, 128, 1},      // a quarter: no split, the narrowed tiles' deeper ring instead
		{0, 64, 128, 1},      // between a quarter and half: no split
		{0, 0, 128, 1},
	} {
		if got := splitK(c.forced, sms, c.blocks, c.ktiles); got != c.want {
			t.Errorf("splitK(forced %d, %d multiprocessors, %d blocks, %d k steps) = %d, want %d", c.forced, sms, c.blocks, c.ktiles, got, c.want)
		}
	}
}

// TestStagesFor checks the ring's depth at a width and tile rows: the tunables' stages at
// their width or wider in 128-row tiles, as many as fill the same shared memory (at most
// 8) where the tiles were narrowed or have 64 rows, there an even number.
func TestStagesFor(t *testing.T) {
	for _, c := range []struct{ tbn, stages, bn, bm, want int }{
		{256, 4, 256, 128, 4}, {256, 4, 128, 128, 6}, {256, 4, 64, 128, 8}, // bfloat16's table: 192 KiB of ring each
		{128, 4, 128, 128, 4}, {128, 4, 64, 128, 5}, // float8's
		{128, 6, 64, 128, 8}, {256, 2, 64, 128, 4}, // the default's, 3xTF32's
		{256, 8, 64, 128, 8}, {128, 6, 256, 128, 6}, // at most 8; wider: the tunables'
		// 64-row tiles: even, rounded up where the tunables' memory holds it, else down.
		{256, 4, 256, 64, 4}, {256, 4, 64, 64, 8}, {256, 2, 128, 64, 4},
		{128, 4, 128, 64, 4}, // 5 fit, 6 do not
		{256, 3, 256, 64, 2}, // 3 fit, 4 do not
		{128, 5, 64, 64, 8},  // 5 * 256 / 128 = 10: at most 8
	} {
		got := stagesFor(c.tbn, c.stages, c.bn, c.bm)
		if got != c.want {
			t.Errorf("stagesFor(BN=%d STAGES=%d, width %d, %d rows) = %d, want %d", c.tbn, c.stages, c.bn, c.bm, got, c.want)
		}
		if c.bm != wgmmaBM && got%2 != 0 {
			t.Errorf("stagesFor(BN=%d STAGES=%d, width %d, %d rows) = %d: odd", c.tbn, c.stages, c.bn, c.bm, got)
		}
		if (c.bn < c.tbn || c.bm != wgmmaBM) && wgmmaShared(c.bn, c.bm, got, 1) > wgmmaShared(c.tbn, wgmmaBM, c.stages, 1) {
			t.Errorf("stagesFor(BN=%d STAGES=%d, width %d, %d rows) = %d: %d bytes of ring, more than the tunables' %d", c.tbn, c.stages, c.bn,
				c.bm, got, wgmmaShared(c.bn, c.bm, got, 1), wgmmaShared(c.tbn, wgmmaBM, c.stages, 1))
		}
	}
}

// The tests run small shapes at the tunables' widths, which bnFor would narrow on a GPU of
// many multiprocessors; TestWGMMAPadded runs the narrowed widths (and TestBNFill checks
// the rule).
func init() { wgmmaFillSMs = 1 }

// TestBNFill checks the width a call takes: the tunables' BN, halved while D's columns fit
// in half of it, or, with a full tile row, while the tiles fill less than half of the
// multiprocessors (in 64-row tiles, at any m), down to 64.
// TestPersistentFor checks when the ping-pong kernel gives way to one tile a block: only
// where its tiles do not outnumber the multiprocessors; the other forms stand.
func TestPersistentFor(t *testing.T) {
	for _, c := range []struct{ pers, tiles, sms, want int }{
		{2, 16, 132, 0}, {2, 132, 132, 0}, {2, 133, 132, 2}, {2, 4096, 132, 2},
		{1, 16, 132, 1}, {0, 16, 132, 0}, {0, 4096, 132, 0}, {1, 4096, 132, 1},
	} {
		if got := persistentFor(c.pers, c.tiles, c.sms); got != c.want {
			t.Errorf("persistentFor(%d, %d tiles, %d SMs) = %d, want %d", c.pers, c.tiles, c.sms, got, c.want)
		}
	}
}

func TestBNFill(t *testing.T) {
	for _, c := range []struct{ bn, m, n, bm, batch, sms, want int }{
		{256, 8192, 8192, 128, 1, 132, 256}, {256, 8192, 129, 128, 1, 1, 256}, {256, 8192, 128, 128, 1, 1, 128},
		{256, 8192, 65, 128, 1, 1, 128}, {256, 8192, 64, 128, 1, 1, 64}, {256, 8192, 1, 128, 1, 1, 64}, {128, 8192, 64, 128, 1, 1, 64},
		{128, 8192, 100, 128, 1, 1, 128}, {64, 1, 1, 128, 1, 132, 64},
		{256, 512, 512, 128, 1, 132, 64},    // 8 tiles at 256, 16 at 128, 32 at 64: still under 66
		{256, 1024, 1024, 128, 1, 132, 64},  // 32 tiles at 256, 64 at 128, 128 at 64
		{256, 2048, 2048, 128, 1, 132, 256}, // 128 tiles fill half
		{256, 512, 512, 128, 8, 132, 128},   // a batch of 8: 64 tiles at 256, 128 at 128
		{128, 128, 8192, 128, 1, 132, 64},   // one tile row: 64 tiles at 128, 128 at 64
		{256, 64, 8192, 128, 1, 132, 256},   // half a 128-row tile: A's boxes half zeros, not narrowed
		{256, 64, 8192, 64, 1, 132, 64},     // a full 64-row tile: 32 tiles at 256, 64 at 128, 128 at 64
		{256, 32, 8192, 64, 1, 132, 64},     // half a 64-row tile: narrowed as a full one
		{256, 512, 512, 128, 1, 1, 256},     // tests' one multiprocessor: the tunables' width
	} {
		if got := bnFill(c.bn, c.m, c.n, c.bm, c.batch, c.sms); got != c.want {
			t.Errorf("BN=%d, %dx%d in %d-row tiles (batch %d) on %d multiprocessors: width %d, want %d", c.bn, c.m, c.n, c.bm, c.batch, c.sms, got, c.want)
		}
	}
}

// BenchmarkWGMMACall times calls of the Hopper GEMM at M = N = K = PRISM_BENCH_CALL_N
// (default 512, where a call's fixed costs weigh most), bfloat16 nn, on every CUDA device
// of compute capability 9.0, with the input sets rotating as the bench's runs do:
// "pipelined" enqueues b.N calls back to back and waits once (the host's cost a call,
// where it exceeds the device's), "roundtrip" waits after each call (a call as the host
// sees it), and "timed" brackets each call with Queue.Timed as prism bench does (the
// device time between its events; the mean, and the median that prism bench reports).
// Each reports µs/call.
func BenchmarkWGMMACall(b *testing.B) {
	forEachCUDA(b, func(b *testing.B, dev *engine.Device, q *engine.Queue) {
		if dev.Info().ComputeCapability != 90 {
			b.Skipf("%s is sm_%d; wgmma needs sm_90", dev.ID(), dev.Info().ComputeCapability)
		}
		n := 512
		if v := os.Getenv("PRISM_BENCH_CALL_N"); v != "" {
			var err error
			if n, err = strconv.Atoi(v); err != nil || n < 1 {
				b.Fatalf("PRISM_BENCH_CALL_N=%q: want a positive integer", v)
			}
		}
		p := precisionOf("bfloat16")
		w, err := NewWGMMA[engine.BFloat16](dev, p)
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		s := GEMMShape{M: n, N: n, K: n}.WithDefaults()
		la, lb, lc := s.Lens()
		rng := rand.New(rand.NewPCG(1, 1))
		const sets = 8
		var as, bs []*engine.Buffer[engine.BFloat16]
		for range sets {
			a, err := engine.Upload(b.Context(), q, randIn[engine.BFloat16](rng, la, -1, 1))
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			bb, err := engine.Upload(b.Context(), q, randIn[engine.BFloat16](rng, lb, -1, 1))
			if err != nil {
				b.Fatal(err)
			}
			defer bb.Close()
			as, bs = append(as, a), append(bs, bb)
		}
		c, err := engine.Upload(b.Context(), q, make([]float32, lc))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		d, err := engine.NewBuffer[float32](dev, lc)
		if err != nil {
			b.Fatal(err)
		}
		defer d.Close()
		call := func(i int) error { return w.RunInto(q, s, 1, as[i%sets], bs[i%sets], 0.5, c, d) }
		for i := range sets { // builds, tensor maps, workspace
			if err := call(i); err != nil {
				b.Fatal(err)
			}
		}
		if err := q.Finish(b.Context()); err != nil {
			b.Fatal(err)
		}
		perCall := func(b *testing.B, calls int) {
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(calls), "µs/call")
		}
		b.Run("pipelined", func(b *testing.B) {
			i := 0
			for b.Loop() {
				if err := call(i); err != nil {
					b.Fatal(err)
				}
				i++
			}
			if err := q.Finish(b.Context()); err != nil {
				b.Fatal(err)
			}
			perCall(b, i)
		})
		b.Run("roundtrip", func(b *testing.B) {
			i := 0
			for b.Loop() {
				if err := call(i); err != nil {
					b.Fatal(err)
				}
				if err := q.Finish(b.Context()); err != nil {
					b.Fatal(err)
				}
				i++
			}
			perCall(b, i)
		})
		b.Run("timed", func(b *testing.B) {
			i := 0
			var dt time.Duration
			var ts []time.Duration
			for b.Loop() {
				t, err := q.Timed(b.Context(), func() error { return call(i) })
				if err != nil {
					b.Fatal(err)
				}
				dt += t
				ts = append(ts, t)
				i++
			}
			slices.Sort(ts)
			b.ReportMetric(float64(dt.Nanoseconds())/1e3/float64(i), "µs/call")
			b.ReportMetric(float64(ts[len(ts)/2].Nanoseconds())/1e3, "median-µs/call") // as prism bench reports
		})
	})
}

// TestWGMMATF32InPlace runs tf32 on wgmma where it reads an operand in place (A not
// transposed, B transposed, rows on 16-byte boundaries) and where it reads gemm_split's
// copy (the other layouts, rows not aligned), alone and together, in a batch with strides,
// against float64 with tf32's bound for truncated inputs; it checks that a call with both
// operands in place made no copy, and runs float32x3tf32, which copies both, beside it.
func TestWGMMATF32InPlace(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		needWGMMA(t, dev)
		defer func(r int) { wgmmaSwapRows = r }(wgmmaSwapRows)
		wgmmaSwapRows = 0 // nn copies B here; TestWGMMATF32Swap runs it transposed
		rng := rand.New(rand.NewPCG(5, 5))
		for _, name := range []string{"tf32", "float32x3tf32"} {
			p, _ := LookupPrecision(name)
			w, err := NewWGMMA[float32](dev, p)
			if err != nil {
				t.Fatal(err)
			}
			// Both in place first, on a fresh WGMMA: no copy may be made.
			nt := GEMMShape{M: 200, N: 136, K: 96, TransB: true}
			if err := wgmmaProductBeta(t, q, w, nt, 0.5, rng); err != nil {
				t.Errorf("%s %v: %v", name, nt, err)
			}
			if sc := w.scratch[q]; name == "tf32" && sc != nil && (sc.aBig != nil || sc.bBig != nil) {
				t.Errorf("tf32 %v: the call copied an operand it reads in place", nt)
			}
			for _, s := range []GEMMShape{
				{M: 200, N: 136, K: 96},                                    // nn: A in place, B copied
				{M: 130, N: 72, K: 100, TransA: true, TransB: true},        // tt: B in place, A copied
				{M: 130, N: 72, K: 100, TransA: true},                      // tn: both copied
				{M: 67, N: 99, K: 45, TransB: true},                        // rows unaligned: both copied
				{M: 129, N: 72, K: 64, Batch: 2, TransB: true},             // a batch, both in place
				{M: 64, N: 64, K: 64, LDA: 68, LDB: 65, TransB: true},      // A in place with its stride, B copied
				{M: 96, N: 80, K: 40, Batch: 3, StrideA: 96*40 + 4},        // A's matrices apart, in place
				{M: 300, N: 260, K: 333, LDA: 336, TransB: true, LDB: 340}, // K not a multiple of a k step
			} {
				if err := wgmmaProductBeta(t, q, w, s, -1, rng); err != nil {
					t.Errorf("%s %v: %v", name, s, err)
				}
			}
			w.Close()
		}
	})
}

// TestWGMMATF32Swap runs tf32's nn product transposed (wgmma.cu's SWAP_AB: D^T = B^T A^T,
// B read in place into wgmma's register A fragments, D stored transposed) on shapes whose
// rows, columns and k are and are not multiples of the tiles, with beta (C read
// transposed), in a batch with strides, at every width, split K ways (partial sums in D's
// layout), and in the persistent form with many tiles a block; it checks that no operand
// was copied, and that a B whose rows TMA cannot read falls back to the copy.
func TestWGMMATF32Swap(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		needWGMMA(t, dev)
		defer func(r, k, c, f int) { wgmmaSwapRows, wgmmaSplitK, wgmmaGridCap, wgmmaFillSMs = r, k, c, f }(wgmmaSwapRows, wgmmaSplitK, wgmmaGridCap, wgmmaFillSMs)
		wgmmaSwapRows = 1 << 20
		p, _ := LookupPrecision("tf32")
		rng := rand.New(rand.NewPCG(11, 11))
		for _, c := range []struct {
			wt          WGMMATunables
			split, cap  int
			fill        int
			s           GEMMShape
			beta        float32
			wantInPlace bool
		}{
			{WGMMADefaults(PrecTF32), 0, 0, 1, GEMMShape{M: 64, N: 256, K: 128}, 0, true},
			{WGMMADefaults(PrecTF32), 0, 0, 1, GEMMShape{M: 1, N: 200, K: 96}, 0.5, true},
			{WGMMADefaults(PrecTF32), 0, 0, 1, GEMMShape{M: 300, N: 260, K: 333, LDA: 336}, -1, true},  // every tail
			{WGMMADefaults(PrecTF32), 0, 0, 0, GEMMShape{M: 130, N: 1000, K: 200, LDB: 1004}, 1, true}, // narrowed to fill
			{WGMMADefaults(PrecTF32), 0, 0, 1, GEMMShape{M: 96, N: 80, K: 40, Batch: 3, StrideA: 96*40 + 4, StrideB: 40*80 + 8}, 0.25, true},
			{WGMMATunables{BN: 64, Stages: 4, Cluster: 1, GroupM: 8}, 0, 0, 1, GEMMShape{M: 100, N: 300, K: 520}, 0, true},
			{WGMMATunables{BN: 128, Stages: 5, Cluster: 1, GroupM: 8}, 3, 0, 1, GEMMShape{M: 120, N: 264, K: 640}, -0.75, true}, // split 3 ways
			{WGMMATunables{BN: 128, Stages: 3, Cluster: 2, GroupM: 4, Persistent: 1}, 0, 2, 1, GEMMShape{M: 250, N: 700, K: 256}, 0.5, true},
			{WGMMATunables{BN: 128, Stages: 4, Cluster: 1, GroupM: 8, Persistent: 2}, 2, 2, 1, GEMMShape{M: 70, N: 520, K: 300, Batch: 2}, 0, true},
			{WGMMADefaults(PrecTF32), 0, 0, 1, GEMMShape{M: 64, N: 201, K: 64}, 0, false}, // B's rows unaligned: copied
		} {
			wgmmaSplitK, wgmmaGridCap, wgmmaFillSMs = c.split, c.cap, c.fill
			w, err := NewWGMMAWith[float32](dev, p, c.wt)
			if err != nil {
				t.Fatal(err)
			}
			if got := w.swaps(c.s.WithDefaults()); got != c.wantInPlace {
				t.Errorf("%s %v: swaps = %v, want %v", c.wt, c.s, got, c.wantInPlace)
			}
			if err := wgmmaProductBeta(t, q, w, c.s, c.beta, rng); err != nil {
				t.Errorf("%s split %d %v: %v", c.wt, c.split, c.s, err)
			}
			if sc := w.scratch[q]; c.wantInPlace && sc != nil && (sc.aBig != nil || sc.bBig != nil) {
				t.Errorf("%s %v: the transposed call copied an operand", c.wt, c.s)
			}
			w.Close()
		}
	})
}

// BenchmarkWGMMATF32Swap times tf32's nn product with few rows, M x 8192 x 8192 for M of
// 64 to 8192 (PRISM_BENCH_SWAP_M, comma-separated, replaces them), in both forms: "copy"
// (B copied transposed, then the product) and "swap" (D^T = B^T A^T, B in place), and the
// swap split two ways; each reports the median device time of a call (µs/call), as prism
// bench does, so that wgmmaSwapRows can be read off where the forms cross.
func BenchmarkWGMMATF32Swap(b *testing.B) {
	forEachCUDA(b, func(b *testing.B, dev *engine.Device, q *engine.Queue) {
		if dev.Info().ComputeCapability != 90 {
			b.Skipf("%s is sm_%d; wgmma needs sm_90", dev.ID(), dev.Info().ComputeCapability)
		}
		ms := []int{64, 128, 256, 512, 1024, 2048, 4096, 8192}
		if v := os.Getenv("PRISM_BENCH_SWAP_M"); v != "" {
			ms = nil
			for _, f := range strings.Split(v, ",") {
				m, err := strconv.Atoi(f)
				if err != nil || m < 1 {
					b.Fatalf("PRISM_BENCH_SWAP_M=%q: want positive integers, comma-separated", v)
				}
				ms = append(ms, m)
			}
		}
		p := precisionOf("tf32")
		defer func(r, k, f int) { wgmmaSwapRows, wgmmaSplitK, wgmmaFillSMs = r, k, f }(wgmmaSwapRows, wgmmaSplitK, wgmmaFillSMs)
		wgmmaFillSMs = 0 // the widths the library takes on the device
		rng := rand.New(rand.NewPCG(1, 1))
		for _, m := range ms {
			s := GEMMShape{M: m, N: 8192, K: 8192}.WithDefaults()
			la, lb, lc := s.Lens()
			a, err := engine.Upload(b.Context(), q, randIn[float32](rng, la, -1, 1))
			if err != nil {
				b.Fatal(err)
			}
			bb, err := engine.Upload(b.Context(), q, randIn[float32](rng, lb, -1, 1))
			if err != nil {
				b.Fatal(err)
			}
			d, err := engine.NewBuffer[float32](dev, lc)
			if err != nil {
				b.Fatal(err)
			}
			for _, form := range []struct {
				name        string
				rows, split int
			}{{"copy", 0, 0}, {"swap", 1 << 20, 0}, {"swap-split2", 1 << 20, 2}} {
				b.Run(fmt.Sprintf("M=%d/%s", m, form.name), func(b *testing.B) {
					wgmmaSwapRows, wgmmaSplitK = form.rows, form.split
					w, err := NewWGMMA[float32](dev, p)
					if err != nil {
						b.Fatal(err)
					}
					defer w.Close()
					call := func() error { return w.RunInto(q, s, 1, a, bb, 0, d, d) }
					if err := call(); err != nil { // builds, tensor maps, scratch
						b.Fatal(err)
					}
					var ts []time.Duration
					for b.Loop() {
						t, err := q.Timed(b.Context(), call)
						if err != nil {
							b.Fatal(err)
						}
						ts = append(ts, t)
					}
					slices.Sort(ts)
					b.ReportMetric(float64(ts[len(ts)/2].Nanoseconds())/1e3, "µs/call")
				})
			}
			a.Close()
			bb.Close()
			d.Close()
		}
	})
}

// TestWGMMARows64 runs products of at most 64 rows in 64-row tiles (wgmma.cu's BM=64: the
// two consumer warpgroups take alternate k steps and add their halves through shared
// memory): 1, 17 and 64 rows; one k step (the odd warpgroup idle), two, three and nine
// (the ring wrapping); every width; an odd Stages rounded to even; tunables of clusters of
// two and persistent grids, which the form runs in clusters of one and one tile a block;
// a batch; a forced split of K; C read (and prefetched, four k steps or fewer), in
// float16 nn and nt, bfloat16, float8 (nt, and nn through the transposed copy of B),
// 3xTF32 and tf32 (its unswapped form: A transposed). Each call is checked to take the
// form (tileOf), or 128-row tiles where 64-row ones would hold fewer than four stages
// (3xTF32 at BN=256); the first tunables' products run in 128-row tiles (wgmmaRows64 = 0)
// too.
func TestWGMMARows64(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		needWGMMA(t, dev)
		defer func(s, r int) { wgmmaSplitK, wgmmaRows64 = s, r }(wgmmaSplitK, wgmmaRows64)
		rng := rand.New(rand.NewPCG(64, 64))
		shapes := []GEMMShape{
			{M: 64, N: 200, K: 64},                // one k step (16-bit): the odd warpgroup has none
			{M: 17, N: 136, K: 128, TransB: true}, // two
			{M: 1, N: 96, K: 150},                 // three, the last partial
			{M: 64, N: 520, K: 576, Batch: 3},     // nine: the ring wraps
			{M: 40, N: 64, K: 1000, TransB: true}, // sixteen
		}
		tunables := []WGMMATunables{
			{BN: 256, Stages: 4, Cluster: 1, GroupM: 8},
			{BN: 128, Stages: 3, Cluster: 2, GroupM: 4, Persistent: 1}, // odd stages; cluster and persistence dropped
			{BN: 64, Stages: 6, Cluster: 1, GroupM: 8, Persistent: 2},
		}
		run := func(t *testing.T, name string, check func(t *testing.T, wt WGMMATunables, s GEMMShape) error) {
			t.Run(name, func(t *testing.T) {
				for i, wt := range tunables {
					for _, split := range []int{0, 3} {
						for _, s := range shapes {
							wgmmaSplitK = split
							// The first tunables in 128-row tiles too (wgmmaRows64 = 0).
							for _, rows := range []int{64, 0}[:1+b2i(i == 0 && split == 0)] {
								wgmmaRows64 = rows
								if err := check(t, wt, s); err != nil {
									t.Errorf("%s, split %d, %v, 64-row tiles up to %d rows: %v", wt, split, s, rows, err)
								}
							}
						}
					}
				}
			})
		}
		rowsOf := func(t *testing.T, s GEMMShape, bm, stages64 int) {
			t.Helper()
			if want := map[bool]int{true: 64, false: wgmmaBM}[wgmmaRows64 >= s.M && stages64 >= 4]; bm != want {
				t.Fatalf("%v takes %d-row tiles (%d stages in 64-row tiles), want %d", s, bm, stages64, want)
			}
		}
		for _, name := range []string{"float16", "bfloat16", "float8e4m3", "float32x3tf32", "tf32"} {
			p := precisionOf(name)
			run(t, name, func(t *testing.T, wt WGMMATunables, s GEMMShape) error {
				if name == "tf32" {
					s.TransA = true // the unswapped form: A copied K-major
				}
				switch name {
				case "float16":
					return rows64Product[engine.Half](t, q, dev, p, wt, s, rng, rowsOf)
				case "bfloat16":
					return rows64Product[engine.BFloat16](t, q, dev, p, wt, s, rng, rowsOf)
				case "float8e4m3":
					return rows64Product[engine.Float8E4M3](t, q, dev, p, wt, s, rng, rowsOf)
				}
				return rows64Product[float32](t, q, dev, p, wt, s, rng, rowsOf)
			})
		}
	})
}

// rows64Product runs shape s through a WGMMA of precision p and tunables wt (their stages
// fewer where the precision's shared memory needs it) with beta 0.5, after rowsOf checked
// the tile rows that the call takes.
func rows64Product[In InputType](t *testing.T, q *engine.Queue, dev *engine.Device, p Precision, wt WGMMATunables, s GEMMShape, rng *rand.Rand,
	rowsOf func(*testing.T, GEMMShape, int, int)) error {
	for wt.Stages > 2 && wgmmaShared(wt.BN, wgmmaBM, wt.Stages, splitsOf(p.MMA)) > 227*1024 {
		wt.Stages-- // 3xTF32's two parts of each operand
	}
	w, err := NewWGMMAWith[In](dev, p, wt)
	if err != nil {
		return err
	}
	defer w.Close()
	s = s.WithDefaults()
	bm, _ := w.tileOf(s.M, s.N, s.Batch, w.swaps(s))
	rowsOf(t, s, bm, w.stagesFor(w.bnFor(s.M, s.N, 64, s.Batch), 64))
	return wgmmaProductBeta(t, q, w, s, 0.5, rng)
}

// TestTileOf checks the tile rows and width a call takes: 64 rows for at most
// wgmmaRows64 rows where the ring holds four stages there (3xTF32's two stages at BN=256
// do not), 128 otherwise, where the call swaps or wgmmaRows64 is 0.
func TestTileOf(t *testing.T) {
	defer func(r, f int) { wgmmaRows64, wgmmaFillSMs = r, f }(wgmmaRows64, wgmmaFillSMs)
	for _, c := range []struct {
		prec            string
		m, n, rows, sms int
		swap            bool
		wantBM, wantBN  int
	}{
		{"float16", 64, 8192, 64, 132, false, 64, 64},       // narrowed to fill: 128 tiles
		{"float16", 1, 8192, 64, 132, false, 64, 64},        // fewer rows: the same tiles
		{"float16", 65, 8192, 64, 132, false, 128, 256},     // a 128-row tile, not full: not narrowed
		{"float16", 64, 8192, 0, 132, false, 128, 256},      // 64-row tiles off
		{"float8e4m3", 64, 520, 64, 1, false, 64, 128},      // the tunables' width: six stages fit
		{"float32x3tf32", 64, 300, 64, 1, false, 128, 256},  // two stages at BN=256: 128 rows
		{"float32x3tf32", 64, 8192, 64, 132, false, 64, 64}, // narrowed: six stages
		{"tf32", 64, 8192, 64, 132, true, 128, 256},         // the transposed form: 128 rows, its own width rule
	} {
		wgmmaRows64, wgmmaFillSMs = c.rows, c.sms
		p := precisionOf(c.prec)
		w := &WGMMA[float32]{p: p, t: WGMMADefaults(p.MMA)}
		if bm, bn := w.tileOf(c.m, c.n, 1, c.swap); bm != c.wantBM || bn != c.wantBN {
			t.Errorf("%s %dx%d (swap %v, 64-row tiles up to %d rows, %d multiprocessors): %d x %d tiles, want %d x %d",
				c.prec, c.m, c.n, c.swap, c.rows, c.sms, bm, bn, c.wantBM, c.wantBN)
		}
	}
}
