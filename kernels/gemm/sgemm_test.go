package gemm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// sgemmCase is one problem of TestSGEMMSimt: a shape whose transposes are set per subtest,
// the padding of the leading dimensions and strides of A and B over their packed values
// (set per transpose from the stored shapes), and how to call the kernel.
type sgemmCase struct {
	s           GEMMShape
	align4      bool // LDA, LDB = row length as stored, rounded up to a multiple of 4
	padA, padB  int  // LDA, LDB = row length as stored + pad (0: the default)
	gapA, gapB  int  // StrideA, StrideB = rows * LDX + gap (0: the default; Batch > 1)
	alpha, beta float64
	nanC        bool // fill C with NaN (beta must be 0: C must not be read)
	into        bool // RunInto a separate D instead of Run in place
}

// sgemmTransposes are the four (transA, transB) combinations.
var sgemmTransposes = [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}}

// sgemmTestTunables are the tunables TestSGEMMSimt runs its problems with: the default,
// and sets that take sgemm.cu's other paths (so that the sets BenchmarkSGEMMSimtTunables
// measures are verified too): k steps of 16 (two vectors of each operand per thread) with
// no register cap; 128 x 256 tiles on 512 threads, with more than the 48 KiB of shared
// memory a block gets without opting in; 128 x 64 tiles on 128 threads of 64 x 32 warps,
// 3 blocks per SM, row-major raster.
var sgemmTestTunables = []SimtTunables{
	DefaultSimtTunables,
	{BM: 128, BN: 128, BK: 8, WM: 32, WN: 64, GroupM: 8, MinBlocks: 2},
	{BM: 128, BN: 128, BK: 16, WM: 32, WN: 64, GroupM: 8, MinBlocks: 1},
	{BM: 128, BN: 256, BK: 16, WM: 32, WN: 64, GroupM: 16, MinBlocks: 1},
	{BM: 128, BN: 64, BK: 16, WM: 64, WN: 32, GroupM: 1, MinBlocks: 3},
}

// TestSGEMMSimt checks the cuda-simt SGEMM against the float64 reference on every device
// that builds CUDA C++, with each of sgemmTestTunables: shapes below, at and across its
// tiles in all four transpose combinations, with leading dimensions and batch strides that
// allow 16-byte loads (the fast path, also with a partial last k step) and that do not
// (the guarded path), beta = 0 with C full of NaN, alpha = 0, a separate D, and guard bands
// after C and D and gaps between rows and matrices that must stay untouched. Elsewhere
// NewSGEMMSimt must refuse with ErrUnsupported.
func TestSGEMMSimt(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if !dev.Builds(engine.DialectCUDA) {
			g, err := NewSGEMMSimt(dev)
			if !errors.Is(err, engine.ErrUnsupported) {
				g.Close()
				t.Errorf("NewSGEMMSimt on %s, which builds no CUDA C++: %v, want ErrUnsupported", dev.ID(), err)
			}
			t.Skipf("%s builds no CUDA C++ (%v)", dev.ID(), dev.Dialects())
		}
		for _, tun := range sgemmTestTunables {
			t.Run(strings.ReplaceAll(tun.String(), " ", ","), func(t *testing.T) { testSGEMMSimtWith(t, dev, q, tun) })
		}
	})
}

// testSGEMMSimtWith runs TestSGEMMSimt's problems (sgemmCases) with tunables tun.
func testSGEMMSimtWith(t *testing.T, dev *engine.Device, q *engine.Queue, tun SimtTunables) {
	g, err := NewSGEMMSimtWith(dev, tun)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	bm, bn, bk, threads := g.Tiles()
	for _, tr := range sgemmTransposes {
		at := g.kernel(tr[0], tr[1]).Attributes()
		t.Logf("sgemm_simt transA=%v transB=%v: %d x %d x %d tiles, %d threads, %d registers, %d bytes static shared, %d bytes dynamic shared, %d bytes private (spills), max block %d",
			tr[0], tr[1], bm, bn, bk, threads, at.Registers, at.LocalBytes, tun.SharedBytes(), at.PrivateBytes, at.MaxWorkGroupSize)
	}
	runSGEMMCases(t, q, g, rand.New(rand.NewPCG(6, uint64(dev.Info().ComputeUnits))))
}

// runSGEMMCases runs TestSGEMMSimt's problems (sgemmCases) in every transpose combination
// through g, one subtest each (also CLSimt's).
func runSGEMMCases(t *testing.T, q *engine.Queue, g Runner[float32, float32], rng *rand.Rand) {
	for _, c := range sgemmCases() {
		for _, tr := range sgemmTransposes {
			s := c.s
			s.TransA, s.TransB = tr[0], tr[1]
			rowsA, colsA := s.StoredA()
			rowsB, colsB := s.StoredB()
			if c.align4 {
				s.LDA, s.LDB = engine.RoundUp(colsA, 4), engine.RoundUp(colsB, 4)
			}
			if c.padA > 0 {
				s.LDA = colsA + c.padA
			}
			if c.padB > 0 {
				s.LDB = colsB + c.padB
			}
			if c.gapA > 0 {
				s.StrideA = rowsA*max(s.LDA, colsA) + c.gapA
			}
			if c.gapB > 0 {
				s.StrideB = rowsB*max(s.LDB, colsB) + c.gapB
			}
			name := fmt.Sprintf("%s/M=%d,N=%d,K=%d,lda=%d,ldb=%d,ldc=%d,batch=%d,alpha=%g,beta=%g", s.String()[:2], s.M, s.N, s.K,
				s.WithDefaults().LDA, s.WithDefaults().LDB, s.WithDefaults().LDC, max(s.Batch, 1), c.alpha, c.beta)
			if c.nanC {
				name += ",nanC"
			}
			if c.into {
				name += ",into"
			}
			t.Run(name, func(t *testing.T) { runSGEMMSimtCase(t, q, g, s, c, rng) })
		}
	}
}

// sgemmCases returns the problems of TestSGEMMSimt (see there).
func sgemmCases() []sgemmCase {
	var cs []sgemmCase
	// Around the tile edges; K=128 and K=64 run only whole k steps, the others end on a
	// partial one. 128 and 256 x 384 are interior blocks with 16-byte rows in every
	// combination (the fast path); 7, 127, 257 and 255 leave the rows unaligned.
	for _, d := range [][3]int{{1, 1, 1}, {7, 9, 13}, {127, 129, 65}, {128, 128, 128}, {257, 255, 33}, {256, 384, 64}, {1, 300, 9}, {300, 1, 300}} {
		cs = append(cs, sgemmCase{s: GEMMShape{M: d[0], N: d[1], K: d[2]}, alpha: 1.5, beta: -0.75})
	}
	cs = append(cs,
		// 16-byte rows through padding (K=37 is not a multiple of 4): interior blocks take
		// the fast path, the last k step (37 = 4*8 + 5) is partial, ldc > N.
		sgemmCase{s: GEMMShape{M: 256, N: 260, K: 37, LDC: 264}, align4: true, alpha: -0.5, beta: 2},
		// Unaligned padding of every leading dimension.
		sgemmCase{s: GEMMShape{M: 131, N: 133, K: 70, LDC: 140}, padA: 3, padB: 5, alpha: -0.5, beta: 2},
		// beta = 0: C is not read, so NaN there must not reach the result.
		sgemmCase{s: GEMMShape{M: 130, N: 132, K: 40}, alpha: 1, beta: 0, nanC: true},
		sgemmCase{s: GEMMShape{M: 128, N: 128, K: 16}, alpha: 1, beta: 0, nanC: true, into: true},
		// alpha = 0: D = beta*C exactly.
		sgemmCase{s: GEMMShape{M: 67, N: 45, K: 70}, alpha: 0, beta: 0.5},
		// A separate output D.
		sgemmCase{s: GEMMShape{M: 200, N: 136, K: 24}, alpha: 0.25, beta: 1, into: true},
		// Strided batches: packed; with 16-byte leading dimensions and strides (the fast
		// path in every matrix) and gaps between C's rows and matrices; and with gaps that
		// leave every matrix after the first unaligned (A's base by 11, B's by 2 elements).
		sgemmCase{s: GEMMShape{M: 130, N: 132, K: 40, Batch: 3}, alpha: 1.25, beta: -1},
		sgemmCase{s: GEMMShape{M: 256, N: 128, K: 24, Batch: 3, LDC: 132, StrideC: 132*256 + 8}, padA: 4, padB: 8, gapA: 4, gapB: 12, alpha: 0.75, beta: 0.5},
		sgemmCase{s: GEMMShape{M: 140, N: 136, K: 36, Batch: 3, LDC: 137, StrideC: 137*140 + 5}, gapA: 11, gapB: 2, alpha: 0.75, beta: 0.5},
	)
	return cs
}

// runSGEMMSimtCase runs one problem and checks D against GEMMRef within GEMMTolerance, the
// elements of C's buffer outside the matrices (between rows and matrices) unchanged, the
// guard band after C and D untouched, and C unchanged by RunInto.
func runSGEMMSimtCase(t *testing.T, q *engine.Queue, g Runner[float32, float32], s GEMMShape, c sgemmCase, rng *rand.Rand) {
	runGEMM(t, q, g, s, gemmCase{alpha: c.alpha, beta: c.beta, nanC: c.nanC, into: c.into}, rng, GEMMTolerance[float32])
}

// TestSGEMMSimtInvalid checks that bad shapes and buffers are refused with ErrInvalidArg
// before anything is launched, that Close is idempotent and that a closed SGEMMSimt
// refuses to run; and that concurrent use through one queue per goroutine is safe.
func TestSGEMMSimtInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if !dev.Builds(engine.DialectCUDA) {
			t.Skipf("%s builds no CUDA C++ (%v)", dev.ID(), dev.Dialects())
		}
		g, err := NewSGEMMSimt(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		buf := func(n int) *engine.Buffer[float32] { return kerneltest.NewBuffer[float32](t, dev, n) }
		big := buf(64 * 64 * 4)
		short := buf(8*5 - 1)
		ok := GEMMShape{M: 8, N: 5, K: 6}
		for _, c := range []struct {
			name       string
			s          GEMMShape
			a, b, c, d *engine.Buffer[float32]
		}{
			{"M=0", GEMMShape{M: 0, N: 5, K: 6}, big, big, big, big},
			{"K<0", GEMMShape{M: 8, N: 5, K: -1}, big, big, big, big},
			{"nil A", ok, nil, big, big, big},
			{"nil B", ok, big, nil, big, big},
			{"nil C", ok, big, big, nil, big},
			{"nil D", ok, big, big, big, nil},
			{"short A", ok, short, big, big, big},
			{"short B", GEMMShape{M: 8, N: 8, K: 5}, big, short, big, big},
			{"short C", ok, big, big, short, big},
			{"short D", ok, big, big, big, short},
			{"lda<M transA", GEMMShape{TransA: true, M: 8, N: 5, K: 6, LDA: 6}, big, big, big, big},
			{"ldb<K transB", GEMMShape{TransB: true, M: 8, N: 5, K: 6, LDB: 5}, big, big, big, big},
			{"ldc<N", GEMMShape{M: 8, N: 5, K: 6, LDC: 4}, big, big, big, big},
			{"overlapping C", GEMMShape{M: 8, N: 5, K: 6, Batch: 2, StrideC: 39}, big, big, big, big},
			{"batch>65535", GEMMShape{M: 1, N: 1, K: 1, Batch: 65536}, big, big, big, big},
			{"int32 overflow", GEMMShape{M: 50000, N: 50000, K: 50000}, big, big, big, big},
		} {
			t.Run(c.name, func(t *testing.T) {
				if err := g.RunInto(q, c.s, 1, c.a, c.b, 0, c.c, c.d); !errors.Is(err, engine.ErrInvalidArg) {
					t.Errorf("RunInto(%+v): %v, want ErrInvalidArg", c.s, err)
				}
			})
		}
		if err := g.RunInto(nil, ok, 1, big, big, 0, big, big); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("RunInto with a nil queue: %v, want ErrInvalidArg", err)
		}

		// Four goroutines, one queue and one transpose combination each, at once.
		t.Run("concurrent", func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make([]error, len(sgemmTransposes))
			for i, tr := range sgemmTransposes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = sgemmOnce(t, dev, GEMMShape{TransA: tr[0], TransB: tr[1], M: 150, N: 140, K: 30})
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
		})

		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if err := g.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := g.Run(q, ok, 1, big, big, 0, big); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("Run after Close: %v, want ErrClosed", err)
		}
	})
}

// sgemmOnce runs shape s on a new queue of dev with a new SGEMMSimt and checks the result;
// it reports failures as errors (it runs in goroutines of a test).
func sgemmOnce(t *testing.T, dev *engine.Device, s GEMMShape) error {
	g, err := NewSGEMMSimt(dev)
	if err != nil {
		return err
	}
	defer g.Close()
	q, err := dev.NewQueue()
	if err != nil {
		return err
	}
	defer q.Close()
	rng := rand.New(rand.NewPCG(uint64(s.M), uint64(sgemmIndex(s.TransA, s.TransB))))
	la, lb, lc := s.Lens()
	a, b, c := kernels.RandFloats[float32](rng, la, -1, 1), kernels.RandFloats[float32](rng, lb, -1, 1), kernels.RandFloats[float32](rng, lc, -1, 1)
	ba, err := engine.Upload(t.Context(), q, a)
	if err != nil {
		return err
	}
	defer ba.Close()
	bb, err := engine.Upload(t.Context(), q, b)
	if err != nil {
		return err
	}
	defer bb.Close()
	bc, err := engine.Upload(t.Context(), q, c)
	if err != nil {
		return err
	}
	defer bc.Close()
	for range 3 { // in place with beta = 0: every run writes the same result
		if err := g.Run(q, s, 1, ba, bb, 0, bc); err != nil {
			return err
		}
	}
	got, err := bc.Download(t.Context(), q)
	if err != nil {
		return err
	}
	want, mag := GEMMRef(s, 1, a, b, 0, c)
	for o := range got {
		if diff := math.Abs(float64(got[o]) - want[o]); !(diff <= GEMMTolerance[float32](s.K, 1, mag[o])) {
			return fmt.Errorf("%v: element %d = %v, want %v", s, o, got[o], want[o])
		}
	}
	return nil
}

// TestSimtTunables checks that the default, the tested and the benchmarked tunables are
// valid, that String and ParseSimtTunables round-trip, and that sets breaking one of
// sgemm.cu's constraints, and malformed strings, are refused with ErrInvalidArg naming it.
func TestSimtTunables(t *testing.T) {
	for _, tun := range append(append([]SimtTunables{DefaultSimtTunables}, sgemmTestTunables...), simtCandidates...) {
		if err := tun.Validate(); err != nil {
			t.Errorf("%v: %v", tun, err)
		}
		if got, err := ParseSimtTunables(tun.String()); err != nil || got != tun {
			t.Errorf("ParseSimtTunables(%q) = %v, %v; want %v", tun.String(), got, err, tun)
		}
	}
	if got := DefaultSimtTunables.Threads(); got != sgemmThreads {
		t.Errorf("DefaultSimtTunables.Threads() = %d, sgemmThreads = %d", got, sgemmThreads)
	}
	// Two buffers of BK rows of A (BM + 4 floats) and of B (BN + 4 floats).
	if got, want := DefaultSimtTunables.SharedBytes(), 2*sgemmBK*(sgemmBM+4+sgemmBN+4)*4; got != want {
		t.Errorf("DefaultSimtTunables.SharedBytes() = %d, want %d", got, want)
	}
	def := DefaultSimtTunables
	with := func(f func(*SimtTunables)) SimtTunables {
		t := def
		f(&t)
		return t
	}
	for _, c := range []struct {
		t    SimtTunables
		want string
	}{
		{SimtTunables{}, "must be positive"},
		{with(func(t *SimtTunables) { t.MinBlocks = 0 }), "must be positive"},
		{with(func(t *SimtTunables) { t.WM, t.WN = 32, 32 }), "(WM/8)*(WN/8) == 32"},
		{with(func(t *SimtTunables) { t.WM, t.WN = 12, 64 }), "(WM/8)*(WN/8) == 32"},
		{with(func(t *SimtTunables) { t.BM = 96 + 48 }), "multiples of WM and WN"},
		{with(func(t *SimtTunables) { t.BK = 12 }), "BK must be 4 or a multiple of 8"},
		{with(func(t *SimtTunables) { t.BM, t.BN = 256, 512 }), "above 1024"},
		{with(func(t *SimtTunables) { t.BK = 4 }), "BM*BK/4 and BN*BK/4"},
		{SimtTunables{BM: 32, BN: 256, BK: 64, WM: 8, WN: 256, GroupM: 1, MinBlocks: 1}, "or of BK/8"},
	} {
		if err := c.t.Validate(); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: Validate() = %v; want ErrInvalidArg saying %q", c.t, err, c.want)
		}
		if _, err := NewSGEMMSimtWith(nil, c.t); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewSGEMMSimtWith(nil, %v) = %v; want ErrInvalidArg", c.t, err)
		}
	}
	for _, s := range []string{"", "BM=128", "BM=128 BN=128 BK=8 WM=32 WN=64 GROUP_M=8 MIN_BLOCKS=2 BM=64",
		"BM=128 BN=128 BK=8 WM=32 WN=64 GROUP_M=8 MIN_BLOCKS=x", "BM=128 BN=128 BK=8 WM=32 WN=64 GROUP_M=8 MIN_BLOCKS=2 PAD=4",
		"BM=128 BN=128 BK=8 WM=32 WN=64 GROUP_M=8 MIN_BLOCKS"} {
		if _, err := ParseSimtTunables(s); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("ParseSimtTunables(%q) = %v; want ErrInvalidArg", s, err)
		}
	}
}

// simtBenchLayout returns the transposes of BenchmarkSGEMMSimtTunables: PRISM_BENCH_LAYOUT,
// nn (default), nt, tn or tt.
func simtBenchLayout(b *testing.B) (string, bool, bool) {
	l := os.Getenv("PRISM_BENCH_LAYOUT")
	if l == "" {
		l = "nn"
	}
	if len(l) != 2 || strings.Trim(l, "nt") != "" {
		b.Fatalf("PRISM_BENCH_LAYOUT=%q: want nn, nt, tn or tt", l)
	}
	return l, l[0] == 't', l[1] == 't'
}

// simtBlocksByRegisters returns how many blocks of threads threads using regs registers
// each an SM's 64K registers hold: registers are allocated per warp in units of 256, and
// an SM keeps at most 2048 threads (sm_80, sm_90) and 32 blocks.
func simtBlocksByRegisters(regs, threads int) int {
	if regs <= 0 || threads <= 0 {
		return 0
	}
	perWarp := (regs*32 + 255) / 256 * 256
	return min((65536/perWarp)/((threads+31)/32), 2048/threads, 32)
}

// BenchmarkSGEMMSimtTunables measures the cuda-simt SGEMM with each of simtCandidates on
// every CUDA device, M = N = K = PRISM_BENCH_N (8192), layout PRISM_BENCH_LAYOUT (nn): one
// sub-benchmark per set, named by it, each verified on a sample of D first (as the gemm
// ops' Verify: 1024 random elements and the corners, against float64 dot products),
// reporting TFLOP/s and the kernel's registers and spilled bytes per thread. Only the
// measured layout is compiled. At 8192 one run is about 25-30 ms on an H100, so with
// -benchtime 10x a set takes about a second (most of it the NVRTC build):
//
//	go test ./kernels/gemm/ -run '^$' -bench SGEMMSimtTunables -benchtime 10x
func BenchmarkSGEMMSimtTunables(b *testing.B) {
	forEachCUDA(b, benchSGEMMSimtTunables)
}

func benchSGEMMSimtTunables(b *testing.B, dev *engine.Device, q *engine.Queue) {
	if !dev.Builds(engine.DialectCUDA) {
		b.Skipf("%s builds no CUDA C++ (%v)", dev.ID(), dev.Dialects())
	}
	n := benchN(b)
	layout, ta, tb := simtBenchLayout(b)
	inst, err := newGEMMInstance[float32, float32](b.Context(), q, "gemm/"+layout+"/float32", precisionOf("float32"), ta, tb, 1, kernels.Params{Size: n * n, Seed: 1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Close()
	var want [4]bool
	want[sgemmIndex(ta, tb)] = true
	for i, tun := range simtCandidates {
		name := strings.ReplaceAll(tun.String(), " ", ",")
		if i == 0 {
			name = "default/" + name
		}
		b.Run(name, func(b *testing.B) {
			g, err := newSGEMMSimt(dev, tun, want)
			if errors.Is(err, engine.ErrUnsupported) {
				b.Skip(err)
			}
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			at := g.kernel(ta, tb).Attributes()
			b.Logf("%s %s: %d threads, %d registers (%d blocks per SM by registers), %d bytes spilled per thread, %d bytes of shared memory",
				layout, tun, tun.Threads(), at.Registers, simtBlocksByRegisters(at.Registers, tun.Threads()), at.PrivateBytes, tun.SharedBytes())
			timeGEMM(b, q, inst, Runner[float32, float32](g), n)
			b.ReportMetric(float64(at.Registers), "regs")
			b.ReportMetric(float64(at.PrivateBytes), "spill-B")
		})
	}
}
