package gemm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

func TestGEMM(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testGEMM[float32](t, dev, q) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testGEMM[float64](t, dev, q)
		})
	})
}

// gemmCase is one test problem: a shape (its transposes are set per subtest) and how to
// call the kernel.
type gemmCase struct {
	s           GEMMShape
	alpha, beta float64
	nanC        bool // fill C with NaN (beta must be 0: C must not be read)
	into        bool // RunInto a separate D instead of Run in place
}

// gemmShapes returns the shapes of TestGEMM: 1, below, at and above the tile sizes of
// every device's tunables (TS 32, 64 or 128; TSK 16 or 32) in M, N and K, degenerate
// vectors, and one case over a million elements of C unless the tests run small (under
// Oclgrind, about 10^4 times slower, where they stay at a few thousand multiply-adds);
// TestGEMM leaves that case off the devices kerneltest.Large excludes.
func gemmShapes() [][3]int {
	if kerneltest.Small() {
		return [][3]int{{1, 1, 1}, {7, 5, 3}, {17, 16, 33}, {33, 34, 5}}
	}
	return [][3]int{{1, 1, 1}, {7, 5, 3}, {63, 65, 17}, {64, 64, 64}, {65, 63, 129}, {1, 300, 1}, {300, 1, 300},
		{129, 127, 33}, {128, 128, 32}, {1100, 1000, 64}}
}

// gemmTransposes are the four (transA, transB) combinations.
var gemmTransposes = [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}}

func testGEMM[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue) {
	g, err := NewGEMM[T](dev)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ts, tsk, wpt := g.Tiles()
	t.Logf("tiles: TS=%d TSK=%d WPT=%d", ts, tsk, wpt)
	rng := rand.New(rand.NewPCG(4, uint64(dev.Info().ComputeUnits)))
	for _, d := range gemmShapes() {
		if d[0]*d[1] > 1<<20 && !kerneltest.Large(dev) {
			continue // over a million elements of C: PoCL runs it
		}
		runGEMMTransposes(t, q, g, gemmTransposes, gemmCase{s: GEMMShape{M: d[0], N: d[1], K: d[2]}, alpha: 1.5, beta: -0.75}, rng)
	}
	// The cases below test the host side's arguments more than the arithmetic: under
	// Oclgrind they run in float32 only, with no and both operands transposed.
	trs := gemmTransposes
	if kerneltest.Small() {
		if _, f32 := any(T(0)).(float32); !f32 {
			return
		}
		trs = [][2]bool{{false, false}, {true, true}}
	}
	pad := GEMMShape{M: 9, N: 7, K: 5}
	batch := GEMMShape{M: 6, N: 5, K: 4, Batch: 3}
	if !kerneltest.Small() {
		pad = GEMMShape{M: 67, N: 45, K: 70}
		batch = GEMMShape{M: 70, N: 66, K: 35, Batch: 3}
	}
	// Leading dimensions above the row lengths: the padding between rows must stay as it was.
	ld := pad
	ld.LDC = pad.N + 7 // LDA and LDB are set per transpose below
	for _, c := range []gemmCase{
		{s: ld, alpha: -0.5, beta: 2},
		// beta = 0: C is not read, so NaN there must not reach the result.
		{s: pad, alpha: 1, beta: 0, nanC: true},
		// alpha = 0: D = beta*C exactly.
		{s: pad, alpha: 0, beta: 0.5},
		// A separate output D.
		{s: pad, alpha: 0.25, beta: 1, into: true},
		// Strided batch, packed and with gaps between the matrices (which must stay as they were).
		{s: batch, alpha: 1.25, beta: -1},
		{s: GEMMShape{M: batch.M, N: batch.N, K: batch.K, Batch: 3, LDC: batch.N + 1,
			StrideC: (batch.N+1)*batch.M + 5}, alpha: 0.75, beta: 0.5},
	} {
		runGEMMTransposes(t, q, g, trs, c, rng)
	}
}

// runGEMMTransposes runs case c in the transpose combinations trs, as subtests.
func runGEMMTransposes[T kernels.Float](t *testing.T, q *engine.Queue, g *GEMM[T], trs [][2]bool, c gemmCase, rng *rand.Rand) {
	for _, tr := range trs {
		s := c.s
		s.TransA, s.TransB = tr[0], tr[1]
		if s.LDC > 0 { // the ld case: pad A and B too
			_, colsA := s.StoredA()
			_, colsB := s.StoredB()
			s.LDA, s.LDB = colsA+3, colsB+5
		}
		if s.Batch > 1 && s.StrideC > 0 { // the gapped batch: gaps in A and B too
			rowsA, colsA := s.StoredA()
			rowsB, colsB := s.StoredB()
			s.StrideA, s.StrideB = rowsA*colsA+11, rowsB*colsB+2
		}
		name := fmt.Sprintf("%s/M=%d,N=%d,K=%d,lda=%d,ldb=%d,ldc=%d,batch=%d,alpha=%g,beta=%g", s.String()[:2], s.M, s.N, s.K, s.LDA, s.LDB, s.LDC, max(s.Batch, 1), c.alpha, c.beta)
		if c.into {
			name += ",into"
		}
		t.Run(name, func(t *testing.T) { runGEMMCase[T](t, q, g, s, c, rng) })
	}
}

// TestGEMMTiles runs the tunables that gemmTiles chooses for every kind of device (the GPU
// choice included, which PoCL can run too) on shapes that cross their tile edges; under
// Oclgrind, one small problem each.
func TestGEMMTiles(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		rng := rand.New(rand.NewPCG(5, 1))
		for _, tiles := range [][3]int{{64, 16, 4}, {128, 16, 8}, {128, 32, 8}, {128, 32, 16}, {32, 16, 8}} {
			t.Run(fmt.Sprintf("TS=%d,TSK=%d,WPT=%d", tiles[0], tiles[1], tiles[2]), func(t *testing.T) {
				rts := tiles[0] / tiles[2]
				if rts*rts > dev.Info().MaxWorkGroupSize || int64(2*tiles[1]*(tiles[0]+1)*4) > dev.Info().LocalMemBytes {
					t.Skipf("work-group of %d or local tiles do not fit %s", rts*rts, dev.ID())
				}
				g, err := newGEMM[float32, float32](dev, precisionOf("float32"), tiles[0], tiles[1], tiles[2])
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				if m := g.kern.MaxWorkGroupSize(); m < rts*rts {
					t.Skipf("the compiled kernel allows %d work-items per group on %s, these tiles need %d", m, dev.ID(), rts*rts)
				}
				if kerneltest.Small() {
					s := GEMMShape{TransA: true, M: 7, N: 9, K: 5}
					t.Run(s.String(), func(t *testing.T) { runGEMMCase(t, q, g, s, gemmCase{alpha: 1.5, beta: -0.5}, rng) })
					return
				}
				ts, tsk := tiles[0], tiles[1]
				for _, d := range [][3]int{{ts - 1, ts + 1, tsk + 1}, {ts, 2 * ts, 2 * tsk}, {2*ts + 1, ts + 3, 3*tsk - 1}} {
					runGEMMTransposes(t, q, g, gemmTransposes, gemmCase{s: GEMMShape{M: d[0], N: d[1], K: d[2]}, alpha: 1.5, beta: -0.5}, rng)
				}
				runGEMMTransposes(t, q, g, gemmTransposes, gemmCase{s: GEMMShape{M: ts + 5, N: ts - 3, K: tsk + 7, Batch: 3}, alpha: -1, beta: 0.25}, rng)
			})
		}
	})
}

// TestGEMMLongK runs k split into launches (RunInto's ranges of kChunk) on every device,
// the limit lowered so that a range is two k steps: ranges whole and partial, beta nonzero
// in place and into a separate D (whose C must be read by the first range alone), beta 0
// with NaN in C, every transpose and a strided batch. On a device that ends a work-item's
// loops (Mesa's llvmpipe) it also runs 32 x 32 x 13000 at the device's own limit, which
// gave wrong sums there in one launch.
func TestGEMMLongK(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		g, err := NewGEMM[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		rng := rand.New(rand.NewPCG(6, 2))
		if limit := kernels.LoopLimit(dev); limit > 0 && !kerneltest.Small() {
			if c := g.kChunk(); c <= 0 || c >= 13000 {
				t.Errorf("a k range of %d on a device that ends loops after %d: want below 13000", c, limit)
			}
			s := GEMMShape{M: 32, N: 32, K: 13000}
			t.Run("device limit/"+s.String(), func(t *testing.T) { runGEMMCase(t, q, g, s, gemmCase{alpha: 1.5, beta: -0.5}, rng) })
		}
		_, tsk, _ := g.Tiles()
		g.loops = (2*g.loopsPerStep()+32)*10/9 + 10
		if c := g.kChunk(); c != 2*tsk {
			t.Fatalf("kChunk %d with a limit of %d; want two k steps (%d)", c, g.loops, 2*tsk)
		}
		ks := []int{2 * tsk, 2*tsk + 1, 5*tsk - 3}
		if kerneltest.Small() {
			// Oclgrind: one product into a separate D, whose C the first range alone reads.
			c := gemmCase{s: GEMMShape{M: 5, N: 6, K: 2*tsk + 1}, alpha: 0.5, beta: 2, into: true}
			runGEMMTransposes(t, q, g, [][2]bool{{true, false}}, c, rng)
			return
		}
		for _, k := range ks {
			for _, c := range []gemmCase{
				{s: GEMMShape{M: 9, N: 7, K: k}, alpha: 1.5, beta: -0.75},
				{s: GEMMShape{M: 9, N: 7, K: k}, alpha: 0.5, beta: 2, into: true},
				{s: GEMMShape{M: 5, N: 6, K: k}, alpha: 1, beta: 0, nanC: true, into: true},
			} {
				runGEMMTransposes(t, q, g, gemmTransposes, c, rng)
			}
		}
		batch := gemmCase{s: GEMMShape{M: 6, N: 5, K: 3*tsk + 2, Batch: 3, LDC: 6, StrideC: 6*6 + 5}, alpha: 0.75, beta: 0.5}
		runGEMMTransposes(t, q, g, [][2]bool{{false, false}, {true, true}}, batch, rng)
	})
}

func runGEMMCase[T kernels.Float](t *testing.T, q *engine.Queue, g *GEMM[T], s GEMMShape, c gemmCase, rng *rand.Rand) {
	runGEMM(t, q, g, s, c, rng, GEMMTolerance[T])
}

// TestGEMMInvalid checks that bad shapes and buffers are refused with ErrInvalidArg before
// anything is launched.
func TestGEMMInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		g, err := NewGEMM[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		buf := func(n int) *engine.Buffer[float32] { return kerneltest.NewBuffer[float32](t, dev, n) }
		big := buf(64 * 64 * 4)
		short := buf(8*5 - 1)
		ok := GEMMShape{M: 8, N: 5, K: 6}
		for _, c := range []struct {
			name    string
			s       GEMMShape
			a, b, c *engine.Buffer[float32]
		}{
			{"M=0", GEMMShape{M: 0, N: 5, K: 6}, big, big, big},
			{"N=0", GEMMShape{M: 8, N: 0, K: 6}, big, big, big},
			{"K=0", GEMMShape{M: 8, N: 5, K: 0}, big, big, big},
			{"M<0", GEMMShape{M: -1, N: 5, K: 6}, big, big, big},
			{"nil A", ok, nil, big, big},
			{"nil B", ok, big, nil, big},
			{"nil C", ok, big, big, nil},
			{"short A", ok, short, big, big},
			{"short B", GEMMShape{M: 8, N: 8, K: 5}, big, short, big},
			{"short C", ok, big, big, short},
			{"short A with lda", GEMMShape{M: 8, N: 5, K: 4, LDA: 6}, short, big, big},
			{"lda<K", GEMMShape{M: 8, N: 5, K: 6, LDA: 5}, big, big, big},
			{"lda<M transA", GEMMShape{TransA: true, M: 8, N: 5, K: 6, LDA: 6}, big, big, big},
			{"ldb<N", GEMMShape{M: 8, N: 5, K: 6, LDB: 4}, big, big, big},
			{"ldb<K transB", GEMMShape{TransB: true, M: 8, N: 5, K: 6, LDB: 5}, big, big, big},
			{"ldc<N", GEMMShape{M: 8, N: 5, K: 6, LDC: 4}, big, big, big},
			{"negative ld", GEMMShape{M: 8, N: 5, K: 6, LDA: -6}, big, big, big},
			{"negative batch", GEMMShape{M: 8, N: 5, K: 6, Batch: -1}, big, big, big},
			{"negative stride", GEMMShape{M: 8, N: 5, K: 6, Batch: 2, StrideA: -1}, big, big, big},
			{"overlapping C", GEMMShape{M: 8, N: 5, K: 6, Batch: 2, StrideC: 39}, big, big, big},
			{"batch too short", GEMMShape{M: 8, N: 5, K: 6, Batch: 3}, big, big, buf(8*5*2 + 1)},
			{"batch>65535", GEMMShape{M: 1, N: 1, K: 1, Batch: 65536}, big, big, big},
			{"int32 overflow", GEMMShape{M: 50000, N: 50000, K: 50000}, big, big, big},
			{"stride overflow", GEMMShape{M: 1, N: 1, K: 1, Batch: 3, StrideA: 1 << 30}, big, big, big},
		} {
			t.Run(c.name, func(t *testing.T) {
				if err := g.Run(q, c.s, 1, c.a, c.b, 0, c.c); !errors.Is(err, engine.ErrInvalidArg) {
					t.Errorf("Run(%+v): %v, want ErrInvalidArg", c.s, err)
				}
			})
		}
		if err := g.RunInto(q, ok, 1, big, big, 0, big, nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("RunInto with nil D: %v, want ErrInvalidArg", err)
		}
		if err := g.RunInto(q, ok, 1, big, big, 0, big, short); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("RunInto with short D: %v, want ErrInvalidArg", err)
		}
		if err := g.Multiply(q, 8, 5, 6, big, big, nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("Multiply with nil C: %v, want ErrInvalidArg", err)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if err := g.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// TestGEMMMultiply checks the convenience call on small integers, where float32 is exact.
func TestGEMMMultiply(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		g, err := NewGEMM[float32](dev)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		const m, n, k = 9, 70, 20
		a, b := make([]float32, m*k), make([]float32, k*n)
		for i := range a {
			a[i] = float32(i%7) - 3
		}
		for i := range b {
			b[i] = float32(i%5) - 2
		}
		ba, _ := engine.Upload(t.Context(), q, a)
		defer ba.Close()
		bb, _ := engine.Upload(t.Context(), q, b)
		defer bb.Close()
		bc := kerneltest.Guarded(t, q, make([]float32, m*n))
		if err := g.Multiply(q, m, n, k, ba, bb, bc); err != nil {
			t.Fatal(err)
		}
		got := kerneltest.Download(t, q, "C", bc, m*n)
		for i := range m {
			for j := range n {
				var w float32
				for l := range k {
					w += a[i*k+l] * b[l*n+j]
				}
				if got[i*n+j] != w {
					t.Fatalf("C[%d][%d] = %v, want %v", i, j, got[i*n+j], w)
				}
			}
		}
	})
}

// TestCheckShape checks the shapes the kernels take: the shape's own rules
// (engine.GemmSpec.Validate) and the kernels' 32-bit index range and batch limit, which
// the vendor BLAS does not share.
func TestCheckShape(t *testing.T) {
	for _, c := range []struct {
		name   string
		s      GEMMShape
		msg    string // empty: taken
		vendor bool   // a valid shape for engine.Gemm all the same
	}{
		{"1x1x1", GEMMShape{M: 1, N: 1, K: 1}, "", true},
		{"edges", GEMMShape{TransA: true, M: 257, N: 255, K: 4097, LDB: 300, Batch: 3}, "", true},
		{"batch 65535", GEMMShape{M: 1, N: 1, K: 1, Batch: 65535}, "", true},
		{"A spans 2^31-1", GEMMShape{M: 1, N: 1, K: math.MaxInt32}, "exceed the kernel's int range", true},
		{"C spans 2^31-1", GEMMShape{M: 32767, N: 65538, K: 1}, "", true},
		{"M=0", GEMMShape{N: 5, K: 6}, "M=0", false},
		{"negative batch", GEMMShape{M: 8, N: 5, K: 6, Batch: -1}, "negative", false},
		{"lda<K", GEMMShape{M: 8, N: 5, K: 6, LDA: 5}, "lda 5 below", false},
		{"overlapping C", GEMMShape{M: 8, N: 5, K: 6, Batch: 2, StrideC: 39}, "overlap", false},
		{"M*K overflows int64", GEMMShape{M: 1 << 40, N: 1, K: 1 << 40}, "too large", false},
		{"batch 65536", GEMMShape{M: 1, N: 1, K: 1, Batch: 65536}, "batch 65536 above 65535", true},
		{"dimension beyond int32", GEMMShape{M: math.MaxInt32, N: 1, K: 1}, "exceed the kernel's int range", true},
		{"M*K beyond int32", GEMMShape{M: 50000, N: 1, K: 50000}, "A spans 2500000000", true},
		{"M*N beyond int32", GEMMShape{M: 50000, N: 50000, K: 1}, "C spans 2500000000", true},
		{"lda beyond int32", GEMMShape{M: 4, N: 1, K: 1, LDA: 1 << 30}, "A spans", true},
		{"stride beyond int32", GEMMShape{M: 1, N: 1, K: 1, Batch: 3, StrideA: 1 << 30}, "A spans", true},
		{"batch of B beyond int32", GEMMShape{M: 1, N: 1 << 10, K: 1 << 10, Batch: 4096}, "B spans", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.s.Validate(); (err == nil) != c.vendor {
				t.Errorf("Validate(%+v) = %v; want valid %v", c.s, err, c.vendor)
			}
			err := checkShape(c.s)
			if c.msg == "" {
				if err != nil {
					t.Errorf("checkShape(%+v) = %v, want nil", c.s, err)
				}
				return
			}
			if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("checkShape(%+v) = %v, want ErrInvalidArg saying %q", c.s, err, c.msg)
			}
		})
	}
}
