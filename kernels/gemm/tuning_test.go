package gemm

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
	"github.com/prism-compute/prism/platform"
)

// TestMMATunables checks the tuning table and the candidates against mma.cu's
// constraints (geomOf), and that a tunable set breaking one is refused with
// ErrInvalidArg naming it.
func TestMMATunables(t *testing.T) {
	for _, p := range append(Precisions(), precisionOf("float64")) {
		for _, cc := range []int{80, 89, 90} {
			if cc < p.MMACompute {
				continue
			}
			if _, err := geomOf(p.MMA, cc, MMADefaults(p.Name, cc)); err != nil {
				t.Errorf("%s sm_%d: the table's row: %v", p.Name, cc, err)
			}
			in := map[string]int{"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "float8e4m3": 1, "float8e5m2": 1}[p.In]
			for _, c := range mmaCandidates(in, cc) {
				if _, err := geomOf(p.MMA, cc, c); err != nil {
					t.Errorf("%s sm_%d: candidate %v: %v", p.Name, cc, c, err)
				}
			}
		}
	}
	for _, c := range []struct {
		t    MMATunables
		want string
	}{
		{MMATunables{BM: 100, BN: 128, BK: 32, WarpsM: 2, WarpsN: 4, Stages: 3, GroupM: 8, MinBlocks: 1}, "BM must be a multiple"},
		{MMATunables{BM: 128, BN: 128, BK: 12, WarpsM: 2, WarpsN: 4, Stages: 3, GroupM: 8, MinBlocks: 1}, "BK must be a multiple"},
		{MMATunables{BM: 128, BN: 128, BK: 32, WarpsM: 2, WarpsN: 4, Stages: 1, GroupM: 8, MinBlocks: 1}, "at least 2 stages"},
		{MMATunables{BM: 128, BN: 128, BK: 32, WarpsM: 8, WarpsN: 8, Stages: 3, GroupM: 8, MinBlocks: 1}, "above 1024"},
		{MMATunables{BM: 16, BN: 8, BK: 8, WarpsM: 1, WarpsN: 1, Stages: 3, GroupM: 8, MinBlocks: 1}, "whole 16-byte chunks"},
		{MMATunables{BM: 128, BN: 128, BK: 32, WarpsM: 2, WarpsN: 4, Stages: 3, GroupM: 8, MinBlocks: 9}, "exceed an SM's 2048 threads"},
		{MMATunables{}, "must be positive"},
	} {
		_, err := geomOf(PrecTF32, 90, c.t)
		if !errors.Is(err, engine.ErrInvalidArg) || !contains(err, c.want) {
			t.Errorf("%v: %v; want ErrInvalidArg saying %q", c.t, err, c.want)
		}
	}
	// The float64 mma's k: 16 and 8 need sm_90, 5 is no shape, and the other precisions
	// take only their own.
	dgemm := MMATunables{BM: 64, BN: 64, BK: 16, WarpsM: 2, WarpsN: 2, Stages: 3, GroupM: 8, MinBlocks: 3}
	for _, c := range []struct {
		prec Prec
		cc   int
		k    int
		want string
	}{
		{PrecFloat64, 80, 16, "MMA_K=16 needs sm_90"},
		{PrecFloat64, 90, 5, "MMA_K=5 is not 4, 8 or 16"},
		{PrecTF32, 90, 16, "not MMA_K=16"},
	} {
		tn := dgemm
		tn.MMAK = c.k
		if _, err := geomOf(c.prec, c.cc, tn); !errors.Is(err, engine.ErrInvalidArg) || !contains(err, c.want) {
			t.Errorf("PREC %d sm_%d MMA_K=%d: %v; want ErrInvalidArg saying %q", c.prec, c.cc, c.k, err, c.want)
		}
	}
	for _, k := range []int{0, 4, 8, 16} {
		tn := dgemm
		tn.MMAK = k
		g, err := geomOf(PrecFloat64, 90, tn)
		want := map[int]int{0: 8, 4: 4, 8: 8, 16: 16}[k]
		if err != nil || g.mmaK != want || !slices.Contains(g.defines(), fmt.Sprintf("-DDMMA_K=%d", want)) {
			t.Errorf("float64 sm_90 MMA_K=%d: k %d, defines %v, %v; want k %d", k, g.mmaK, g.defines(), err, want)
		}
	}
}

func contains(err error, s string) bool { return err != nil && strings.Contains(err.Error(), s) }

// forEachCUDA runs f as a sub-benchmark on every CUDA device, or skips saying why there
// is none.
func forEachCUDA(b *testing.B, f func(b *testing.B, dev *engine.Device, q *engine.Queue)) {
	forEachBenchDevice(b, func(d platform.Device) bool { return d.Backend == "cuda" }, f)
}

// forEachBenchDevice runs f as a sub-benchmark on every device that keep accepts, or
// skips saying why there is none.
func forEachBenchDevice(b *testing.B, keep func(platform.Device) bool, f func(b *testing.B, dev *engine.Device, q *engine.Queue)) {
	dis, err := platform.Discover(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	found := false
	for _, d := range dis.Devices {
		if !keep(d) {
			continue
		}
		found = true
		b.Run(d.ID, func(b *testing.B) {
			dev, err := engine.Open(b.Context(), d.ID)
			if err != nil {
				b.Fatal(err)
			}
			defer dev.Close()
			q, err := dev.NewQueue()
			if err != nil {
				b.Fatal(err)
			}
			defer q.Close()
			f(b, dev, q)
		})
	}
	if !found {
		b.Skipf("no device to measure: %v", dis.Unavailable())
	}
}

// benchN returns M = N = K of the tuning benchmarks: PRISM_BENCH_N, default 8192.
func benchN(b *testing.B) int {
	n := 8192
	if v := os.Getenv("PRISM_BENCH_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("PRISM_BENCH_N=%q: want a positive integer", v)
		}
	}
	return n
}

// BenchmarkMMATunables measures the tensor-core GEMM of every precision with the table's
// tunables and each candidate (mmaCandidates) on every CUDA device, nn layout (nt for
// fp8, the layout whose B loads are 32-bit), M = N = K = PRISM_BENCH_N: one sub-benchmark
// per set, each verified on a sample of D first, reporting TFLOP/s.
func BenchmarkMMATunables(b *testing.B) {
	forEachCUDA(b, func(b *testing.B, dev *engine.Device, q *engine.Queue) {
		for _, p := range append(Precisions(), precisionOf("float64")) {
			b.Run(p.Name, func(b *testing.B) {
				switch p.In {
				case "float32":
					benchMMA[float32, float32](b, dev, q, p)
				case "float64":
					benchMMA[float64, float64](b, dev, q, p)
				case "float16":
					benchMMA[engine.Half, float32](b, dev, q, p)
				case "bfloat16":
					benchMMA[engine.BFloat16, float32](b, dev, q, p)
				case "float8e4m3":
					benchMMA[engine.Float8E4M3, float32](b, dev, q, p)
				case "float8e5m2":
					benchMMA[engine.Float8E5M2, float32](b, dev, q, p)
				}
			})
		}
	})
}

func benchMMA[In InputType, Out kernels.Float](b *testing.B, dev *engine.Device, q *engine.Queue, p Precision) {
	if dev.Info().ComputeCapability < p.MMACompute {
		b.Skipf("%s is sm_%d; %s needs sm_%d", dev.ID(), dev.Info().ComputeCapability, p.Name, p.MMACompute)
	}
	n := benchN(b)
	s := GEMMShape{M: n, N: n, K: n, TransB: p.In == "float8e4m3" || p.In == "float8e5m2"}.WithDefaults()
	inst, err := newGEMMInstance[In, Out](b.Context(), q, "gemm/bench/"+p.Name, p, false, s.TransB, 1, kernels.Params{Size: n * n, Seed: 1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Close()
	def := MMADefaults(p.Name, dev.Info().ComputeCapability)
	sets := []MMATunables{def}
	for _, c := range mmaCandidates(engine.SizeOf[In](), dev.Info().ComputeCapability) {
		if c != def {
			sets = append(sets, c)
		}
	}
	for _, wt := range wgmmaCandidates(p.MMA) {
		if !p.MMA.Bits16() {
			break
		}
		b.Run("wgmma/"+strings.ReplaceAll(wt.String(), " ", "_"), func(b *testing.B) {
			w, err := NewWGMMAWith[In](dev, p, wt)
			if errors.Is(err, engine.ErrUnsupported) {
				b.Skip(err)
			}
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			timeGEMM(b, q, inst, any(w).(Runner[In, Out]), n)
		})
	}
	for i, t := range sets {
		name := t.String()
		if i == 0 {
			name = "table/" + name
		}
		b.Run(name, func(b *testing.B) {
			g, err := NewMMAWith[In, Out](dev, p, t)
			if errors.Is(err, engine.ErrUnsupported) {
				b.Skip(err)
			}
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			k, err := g.kernel(false, s.TransB)
			if err != nil {
				b.Fatal(err)
			}
			at := k.Attributes()
			b.Logf("%d registers, %d bytes private (spills)", at.Registers, at.PrivateBytes)
			timeGEMM(b, q, inst, g, n)
		})
	}
}

// BenchmarkGEMMTiles measures the portable float32 GEMM (gemm.cl) on every GPU, through
// every API, with the tiles gemmTiles chooses and other candidates, nn layout, M = N = K
// = PRISM_BENCH_N: one sub-benchmark per {TS, TSK, WPT}, verified on a sample first,
// reporting TFLOP/s. Its runs choose gemmTiles' GPU row.
func BenchmarkGEMMTiles(b *testing.B) {
	forEachBenchDevice(b, func(d platform.Device) bool { return d.Kind == engine.KindGPU }, func(b *testing.B, dev *engine.Device, q *engine.Queue) {
		n := benchN(b)
		p := precisionOf("float32")
		inst, err := newGEMMInstance[float32, float32](b.Context(), q, "gemm/bench/float32", p, false, false, 1, kernels.Params{Size: n * n, Seed: 1}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer inst.Close()
		lim := kernels.DeviceLimits(dev)
		ts, tsk, wpt := gemmTiles[float32](dev.Info(), lim)
		for _, c := range [][3]int{{ts, tsk, wpt}, {128, 32, 8}, {64, 16, 4}, {64, 32, 4}, {64, 16, 8}, {128, 8, 8}, {64, 8, 4}} {
			b.Run(fmt.Sprintf("TS=%d,TSK=%d,WPT=%d", c[0], c[1], c[2]), func(b *testing.B) {
				rts := c[0] / c[2]
				if !lim.Fits(rts, rts) || int64(2*c[1]*(c[0]+1)*4) > lim.LocalBytes {
					b.Skipf("work-group of %d or local tiles do not fit %s", rts*rts, dev.ID())
				}
				g, err := newGEMM[float32, float32](dev, p, c[0], c[1], c[2])
				if err != nil {
					b.Fatal(err)
				}
				defer g.Close()
				if m := g.kern.MaxWorkGroupSize(); m < rts*rts {
					b.Skipf("the compiled kernel allows %d work-items per group, these tiles need %d", m, rts*rts)
				}
				timeGEMM(b, q, inst, g, n)
			})
		}
	})
}

// timeGEMM runs inst through g: once verified, then timed, reporting TFLOP/s.
func timeGEMM[In InputType, Out kernels.Float](b *testing.B, q *engine.Queue, inst *gemmInstance[In, Out], g Runner[In, Out], n int) {
	inst.g = g
	defer func() { inst.g = nil }()
	if err := inst.Run(b.Context(), q); err != nil {
		b.Fatal(err)
	}
	if err := inst.Verify(b.Context(), q); err != nil {
		b.Fatal(err)
	}
	runs := 0
	for b.Loop() {
		if err := inst.Run(b.Context(), q); err != nil {
			b.Fatal(err)
		}
		if err := q.Finish(b.Context()); err != nil {
			b.Fatal(err)
		}
		runs++
	}
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(runs)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
}

// TestParseTunables checks that the tunables read back as written, and that malformed ones
// are refused with ErrInvalidArg naming the problem.
func TestParseTunables(t *testing.T) {
	for _, c := range append(mmaCandidates(2, 90), mmaCandidates(8, 90)...) {
		got, err := ParseMMATunables(c.String())
		if err != nil || got != c {
			t.Errorf("ParseMMATunables(%q) = %v, %v", c.String(), got, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"BM=128 BN=128 BK=32 WARPS=2x4 STAGES=3 MIN_BLOCKS=1", "GROUP_M missing"},
		{"BM=128 BN=128 BK=32 WARPS=2x4 STAGES=3 GROUP_M=8 MIN_BLOCKS=1 BM=64", "BM given twice"},
		{"BM=128 BN=128 BK=32 WARPS=8 STAGES=3 GROUP_M=8 MIN_BLOCKS=1", "not MxN"},
		{"BM=-1 BN=128 BK=32 WARPS=2x4 STAGES=3 GROUP_M=8 MIN_BLOCKS=1", "positive integer"},
		{"BM=128 BN=128 BK=32 WARPS=2x4 STAGES=3 GROUP_M=8 MIN_BLOCKS=1 SPLIT_K=2", "unknown tunable SPLIT_K"},
		{"BM128", "not KEY=VALUE"},
	} {
		if _, err := ParseMMATunables(c.in); !errors.Is(err, engine.ErrInvalidArg) || !contains(err, c.want) {
			t.Errorf("ParseMMATunables(%q) = %v; want ErrInvalidArg saying %q", c.in, err, c.want)
		}
	}
	for _, p := range []Prec{PrecTF32, PrecFloat32x3TF32, PrecFloat16, PrecFloat8E4M3} {
		for _, c := range wgmmaCandidates(p) {
			if got, err := ParseWGMMATunables(c.String()); err != nil || got != c {
				t.Errorf("ParseWGMMATunables(%q) = %v, %v", c.String(), got, err)
			}
		}
	}
	for _, c := range []struct{ in, want string }{
		{"BN=256 STAGES=4 CLUSTER=1 PERSISTENT=0 SPLIT_K=0", "want all of BN, STAGES, CLUSTER, GROUP_M, PERSISTENT, SPLIT_K"},
		{"BN=192 STAGES=4 CLUSTER=1 GROUP_M=8 PERSISTENT=0 SPLIT_K=0", "BN must be 64, 128 or 256"},
		{"BN=256 STAGES=1 CLUSTER=1 GROUP_M=8 PERSISTENT=0 SPLIT_K=0", "STAGES=1 is out of its range 2..8"},
		{"BN=256 STAGES=4 CLUSTER=4 GROUP_M=8 PERSISTENT=0 SPLIT_K=0", "CLUSTER=4 is out of its range 1..2"},
		{"BN=256 STAGES=4 CLUSTER=2 GROUP_M=3 PERSISTENT=0 SPLIT_K=0", "GROUP_M must be a multiple of CLUSTER"},
		{"BN=256 STAGES=4 CLUSTER=1 GROUP_M=8 PERSISTENT=0 SPLIT_K=0 WARPS=2x4", "\"WARPS=2x4\" is not KEY=integer"},
		{"BN=256 STAGES=four CLUSTER=1 GROUP_M=8 PERSISTENT=0 SPLIT_K=0", "\"STAGES=four\" is not KEY=integer"},
		{"BN=256 STAGES=4 CLUSTER=1 GROUP_M=8 PERSISTENT=3 SPLIT_K=0", "PERSISTENT=3 is out of its range 0..2"},
		{"BN=256 STAGES=4 CLUSTER=1 GROUP_M=8 PERSISTENT=2 SPLIT_K=0", "PERSISTENT=2 (ping-pong) takes BN 64 or 128"},
		{"BN=256 STAGES=4 CLUSTER=1 GROUP_M=8 PERSISTENT=0 SPLIT_K=65", "SPLIT_K=65 is out of its range 0..64"},
		{"BN=256 STAGES=4 CLUSTER=1 GROUP_M=8 PERSISTENT=0 SPLIT_K=0 TILE=3", "unknown key TILE"},
	} {
		if _, err := ParseWGMMATunables(c.in); !errors.Is(err, engine.ErrInvalidArg) || !contains(err, c.want) {
			t.Errorf("ParseWGMMATunables(%q) = %v; want ErrInvalidArg saying %q", c.in, err, c.want)
		}
	}
	for _, c := range portableTiles {
		s := tilesString(c[0], c[1], c[2])
		if got, err := parseTiles(s); err != nil || got != c {
			t.Errorf("parseTiles(%q) = %v, %v", s, got, err)
		}
	}
	for _, bad := range []string{"TS=128 TSK=16", "TS=100 TSK=16 WPT=8", "TS=128 TSK=16 WPT=8 X=1", "TS=0 TSK=16 WPT=8"} {
		if _, err := parseTiles(bad); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("parseTiles(%q) = %v; want ErrInvalidArg", bad, err)
		}
	}
}

// TestTunedSetup checks that a forced tile set reaches the portable kernel and the report,
// that tunables on a variant without them are refused, and that a saved tuning is taken.
func TestTunedSetup(t *testing.T) {
	t.Setenv("PRISM_CACHE_DIR", t.TempDir())
	op := opNamed(t, "gemm/nn/float32")
	size := 4096 // M = N = K = 64
	if kerneltest.Small() {
		// Oclgrind: M = N = K = 33, a seventh of the work, a partial last tile in M, N and K
		// for each tile set.
		size = 33 * 33
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		run := func(p kernels.Params) string {
			in, err := op.Setup(t.Context(), q, p)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if err := in.Run(t.Context(), q); err != nil {
				t.Fatal(err)
			}
			if err := in.Verify(t.Context(), q); err != nil {
				t.Fatal(err)
			}
			return in.(kernels.TunablesReporter).Tunables()
		}
		if got := run(kernels.Params{Size: size, Seed: 1, Variant: "portable", Tunables: "TS=32 TSK=16 WPT=8"}); got != "TS=32 TSK=16 WPT=8 (forced)" {
			t.Errorf("forced tiles: %q", got)
		}
		if _, err := op.Setup(t.Context(), q, kernels.Params{Size: size, Tunables: "TS=32 TSK=16 WPT=4"}); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("tunables without a variant: %v; want ErrInvalidArg", err)
		}
		if err := kernels.SaveTuned(dev, kernels.Tuned{Op: op.Name, Variant: "portable", Tunables: "TS=32 TSK=8 WPT=8"}); err != nil {
			t.Fatal(err)
		}
		if got := run(kernels.Params{Size: size, Seed: 1, Variant: "portable"}); got != "TS=32 TSK=8 WPT=8 (tuned)" {
			t.Errorf("after a saved tuning: %q", got)
		}
		// A tuning beyond the device's limits: the device's own tiles, saying why.
		if err := kernels.SaveTuned(dev, kernels.Tuned{Op: op.Name, Variant: "portable", Tunables: "TS=512 TSK=32 WPT=4"}); err != nil {
			t.Fatal(err)
		}
		if got := run(kernels.Params{Size: size, Seed: 1, Variant: "portable"}); !strings.Contains(got, "the tuned TS=512 TSK=32 WPT=4 do not fit") {
			t.Errorf("after a tuning that does not fit: %q", got)
		}
	})
}

// BenchmarkCLSimt measures the opencl-simt SGEMM (sgemm.cl) on every OpenCL GPU, nn
// layout, M = N = K = PRISM_BENCH_N, with each of clsimtCandidates that fits the device
// (one sub-benchmark each, verified on a sample of D first), and the portable kernel
// beside it, reporting TFLOP/s.
func BenchmarkCLSimt(b *testing.B) {
	forEachBenchDevice(b, func(d platform.Device) bool {
		return d.Backend == "opencl" && d.Kind == engine.KindGPU
	}, func(b *testing.B, dev *engine.Device, q *engine.Queue) {
		n := benchN(b)
		p := precisionOf("float32")
		inst, err := newGEMMInstance[float32, float32](b.Context(), q, "gemm/bench/float32", p, false, false, 1, kernels.Params{Size: n * n, Seed: 1}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer inst.Close()
		for _, t := range clsimtCandidates {
			b.Run(strings.ReplaceAll(clsimtString(t), " ", ","), func(b *testing.B) {
				g, err := newCLSimt(dev, t, false, [4]bool{true})
				if errors.Is(err, engine.ErrUnsupported) {
					b.Skip(err)
				}
				if err != nil {
					b.Fatal(err)
				}
				defer g.Close()
				logCLSimt(b, g)
				timeGEMM[float32, float32](b, q, inst, g, n)
			})
		}
		b.Run("portable", func(b *testing.B) {
			g, err := NewGEMMOf[float32, float32](dev, p)
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			timeGEMM(b, q, inst, g, n)
		})
	})
}
