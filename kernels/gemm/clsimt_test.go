package gemm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// clsimtTestTunables are the tunables TestCLSimt and TestCLSimtAnyDevice build: the
// default; k steps of 16 on 64 x 32 warps with row-major raster (two vectors of each
// operand per work-item); k steps of 4 on 64 work-items (sgemm.cl's BK == 4 placement);
// one warp of 32 work-items (the placement that walks along m; Rusticl's llvmpipe compiles
// sgemm.cl for at most 32 work-items per group).
var clsimtTestTunables = []SimtTunables{
	DefaultCLSimtTunables,
	{BM: 128, BN: 64, BK: 16, WM: 64, WN: 32, GroupM: 1, MinBlocks: 1},
	{BM: 64, BN: 64, BK: 4, WM: 32, WN: 64, GroupM: 2, MinBlocks: 1},
	{BM: 32, BN: 64, BK: 8, WM: 32, WN: 64, GroupM: 4, MinBlocks: 1},
}

// isCLGPU reports whether dev is an OpenCL GPU, where NewCLSimt must build.
func isCLGPU(dev *engine.Device) bool {
	return dev.Backend() == "opencl" && dev.Info().Kind == engine.KindGPU
}

// TestCLSimt checks the opencl-simt SGEMM against the float64 reference on every OpenCL
// GPU, with each of clsimtTestTunables, on TestSGEMMSimt's problems (sgemmCases: shapes
// around the tiles in all four transpose combinations, 16-byte and unaligned leading
// dimensions and strides, beta = 0 over a C of NaN, alpha = 0, a separate D, strided
// batches, guard bands). Elsewhere NewCLSimt must refuse with ErrUnsupported.
func TestCLSimt(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if !isCLGPU(dev) {
			g, err := NewCLSimt(dev)
			if !errors.Is(err, engine.ErrUnsupported) {
				g.Close()
				t.Fatalf("NewCLSimt on %s (%s, %v): %v, want ErrUnsupported", dev.ID(), dev.Backend(), dev.Info().Kind, err)
			}
			t.Skipf("not an OpenCL GPU: %v (TestCLSimtAnyDevice runs sgemm.cl here)", err)
		}
		for _, tun := range clsimtTestTunables {
			t.Run(strings.ReplaceAll(clsimtString(tun), " ", ","), func(t *testing.T) {
				g, err := NewCLSimtWith(dev, tun)
				if errors.Is(err, engine.ErrUnsupported) && strings.Contains(dev.Info().Platform, "Oclgrind") {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				logCLSimt(t, g)
				runSGEMMCases(t, q, g, rand.New(rand.NewPCG(7, uint64(tun.BK))))
			})
		}
	})
}

// logCLSimt logs what the compiler made of g's four kernels.
func logCLSimt(t testing.TB, g *CLSimt) {
	t.Helper()
	for i, k := range g.kerns {
		if k == nil {
			continue
		}
		at := k.Attributes()
		t.Logf("sgemm.cl %s transA=%v transB=%v: %d work-items, %d registers, %d bytes local, %d bytes private (spills), max work-group %d",
			clsimtString(g.t), i/2 == 1, i%2 == 1, g.t.Threads(), at.Registers, at.LocalBytes, at.PrivateBytes, at.MaxWorkGroupSize)
	}
}

// TestCLSimtAnyDevice runs sgemm.cl on every OpenCL device, CPUs included (built past the
// GPU check: this is CI's check of the kernel, on PoCL and Rusticl), with each of
// clsimtTestTunables that fits the device, at edge shapes in every transpose combination:
// M, N, K of 1, 7, 33 and 129, odd leading dimensions, whole aligned tiles (the unguarded
// 16-byte loads), strided batches of 3 with gaps, beta = 0 over a C of NaN, a separate D.
func TestCLSimtAnyDevice(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if dev.Backend() != "opencl" {
			t.Skipf("%s is %s", dev.ID(), dev.Backend())
		}
		for _, tun := range clsimtTestTunables {
			t.Run(strings.ReplaceAll(clsimtString(tun), " ", ","), func(t *testing.T) {
				g, err := newCLSimt(dev, tun, true, [4]bool{true, true, true, true})
				if errors.Is(err, engine.ErrUnsupported) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				rng := rand.New(rand.NewPCG(8, uint64(tun.BK)))
				shapes := [][3]int{{1, 1, 1}, {7, 33, 129}, {129, 7, 33}, {33, 129, 7}, {129, 129, 129}, {1, 129, 33}, {129, 1, 7},
					{tun.BM, 2 * tun.BN, 4 * tun.BK}, {2 * tun.BM, tun.BN, 3*tun.BK + 1}}
				if kerneltest.Small() {
					shapes = [][3]int{{1, 1, 1}, {7, 33, 129}, {tun.BM, tun.BN, 2 * tun.BK}}
				}
				for _, d := range shapes {
					for _, tr := range sgemmTransposes {
						s := GEMMShape{TransA: tr[0], TransB: tr[1], M: d[0], N: d[1], K: d[2]}
						runPrecCase[float32, float32](t, q, g, precisionOf("float32"), s, gemmCase{alpha: 1.5, beta: -0.75}, rng)
					}
				}
				if kerneltest.Small() {
					return
				}
				for _, tr := range sgemmTransposes {
					s := GEMMShape{TransA: tr[0], TransB: tr[1], M: 33, N: 129, K: 7}
					_, colsA := s.StoredA()
					_, colsB := s.StoredB()
					p := precisionOf("float32")
					odd := s
					odd.LDA, odd.LDB, odd.LDC = colsA+3, colsB+5, s.N+7
					runPrecCase(t, q, Runner[float32, float32](g), p, odd, gemmCase{alpha: -0.5, beta: 2}, rng)
					runPrecCase(t, q, Runner[float32, float32](g), p, s, gemmCase{alpha: 1, beta: 0, nanC: true}, rng)
					runPrecCase(t, q, Runner[float32, float32](g), p, s, gemmCase{alpha: 0.25, beta: 1, into: true}, rng)
					// Whole tiles with 16-byte rows inside wider arrays: the unguarded loads.
					w := GEMMShape{TransA: tr[0], TransB: tr[1], M: 2 * tun.BM, N: tun.BN, K: 2*tun.BK + 4}
					_, colsA = w.StoredA()
					_, colsB = w.StoredB()
					w.LDA, w.LDB, w.LDC = colsA+4, colsB+8, w.N+4
					runPrecCase(t, q, Runner[float32, float32](g), p, w, gemmCase{alpha: 1, beta: 0, nanC: true}, rng)
					b := GEMMShape{TransA: tr[0], TransB: tr[1], M: 33, N: 129, K: 7, Batch: 3}
					runPrecCase(t, q, Runner[float32, float32](g), p, b, gemmCase{alpha: 1.25, beta: -1}, rng)
					rowsA, colsA := b.StoredA()
					rowsB, colsB := b.StoredB()
					b.LDC, b.StrideC = b.N+1, (b.N+1)*b.M+5
					b.StrideA, b.StrideB = rowsA*colsA+11, rowsB*colsB+2
					runPrecCase(t, q, Runner[float32, float32](g), p, b, gemmCase{alpha: 0.75, beta: 0.5}, rng)
					ab := GEMMShape{TransA: tr[0], TransB: tr[1], M: 129, N: 33, K: 129, Batch: 3}
					runPrecCase(t, q, Runner[float32, float32](g), p, ab, gemmCase{alpha: 1, beta: 0, nanC: true, into: true}, rng)
				}
			})
		}
	})
}

// TestCLSimtRefuses checks that NewCLSimt and the opencl-simt variant refuse, with
// ErrUnsupported and the reason, every device but an OpenCL GPU, before any build; and
// that invalid tunables and a nil device are ErrInvalidArg.
func TestCLSimtRefuses(t *testing.T) {
	if err := clsimtNeeds(engine.DeviceInfo{Kind: engine.KindGPU}); err != nil {
		t.Errorf("a GPU refused: %v", err)
	}
	if err := clsimtNeeds(engine.DeviceInfo{Kind: engine.KindCPU}); err == nil || !strings.Contains(err.Error(), "GPU") {
		t.Errorf("a CPU: %v; want a reason naming GPUs", err)
	}
	if _, err := NewCLSimt(nil); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("nil device: %v, want ErrInvalidArg", err)
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		bad := DefaultCLSimtTunables
		bad.WN = 48
		if _, err := NewCLSimtWith(dev, bad); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("WN=48: %v, want ErrInvalidArg", err)
		}
		if isCLGPU(dev) {
			t.Skipf("%s is an OpenCL GPU: TestCLSimt runs opencl-simt there", dev.ID())
		}
		g, err := NewCLSimt(dev)
		if err == nil {
			g.Close()
			t.Fatalf("%s (%s, %v) built opencl-simt", dev.ID(), dev.Backend(), dev.Info().Kind)
		}
		if !errors.Is(err, engine.ErrUnsupported) || errors.Is(err, engine.ErrBuild) {
			t.Errorf("%s: %v; want ErrUnsupported before any build", dev.ID(), err)
		}
		t.Logf("%s: %v", dev.ID(), err)
		op := opNamed(t, "gemm/nn/float32")
		v, err := op.Variant("opencl-simt")
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Fits(dev); !errors.Is(err, engine.ErrUnsupported) || !contains(err, "opencl-simt") {
			t.Errorf("Fits = %v; want ErrUnsupported with the reason", err)
		}
		if _, err := op.Setup(t.Context(), q, kernels.Params{Size: 64, Variant: "opencl-simt"}); !errors.Is(err, engine.ErrUnsupported) {
			t.Errorf("Setup(opencl-simt) = %v; want ErrUnsupported", err)
		}
	})
}

// TestCLSimtVariants checks where opencl-simt sits in the variant lists: in every float32
// op, after the CUDA and vendor variants and just before the portable one; in no other op.
func TestCLSimtVariants(t *testing.T) {
	n := 0
	for _, op := range Family().Ops {
		names := op.VariantNames()
		i := slices.Index(names, "opencl-simt")
		if op.Type != "float32" {
			if i >= 0 {
				t.Errorf("%s has opencl-simt", op.Name)
			}
			continue
		}
		n++
		if i < 0 || i != len(names)-2 || names[len(names)-1] != kernels.PortableName {
			t.Errorf("%s: variants %v; want opencl-simt just before portable", op.Name, names)
			continue
		}
		v := op.Variants[i]
		if v.Backend != "opencl" || v.Dialect != engine.DialectOpenCL || v.Needs == nil || v.Doc == "" || v.Tunables == "" || v.Candidates == nil || v.Vendor {
			t.Errorf("%s: opencl-simt is %+v", op.Name, v)
		}
	}
	if n != len(gemmLayouts) {
		t.Errorf("%d ops have opencl-simt, want %d", n, len(gemmLayouts))
	}
	for _, c := range clsimtCandidates {
		if err := c.Validate(); err != nil {
			t.Errorf("candidate %s: %v", clsimtString(c), err)
		}
		got, from, err := clsimtTunablesFor(nil, "gemm/nn/float32", clsimtString(c))
		if err != nil || got != c || from != "forced" {
			t.Errorf("forced %q read as %v (%s), %v", clsimtString(c), got, from, err)
		}
	}
}

// TestCLSimtHeader checks that sgemm.cl opens with the header of the suite's files.
func TestCLSimtHeader(t *testing.T) {
	if h := kernels.Header(clsimtSource); !strings.HasPrefix(h, "sgemm.cl: ") {
		t.Errorf("sgemm.cl's header starts %q", strings.SplitN(h, "\n", 2)[0])
	}
	for _, section := range []string{"Purpose", "Arguments", "Tunables", "Variants", "Launch", "Boundaries", "Accuracy"} {
		if kernels.HeaderSection(clsimtSource, section) == "" {
			t.Errorf("sgemm.cl's header has no %s section", section)
		}
	}
	if !strings.Contains(clsimtString(DefaultCLSimtTunables), fmt.Sprintf("BM=%d", DefaultCLSimtTunables.BM)) {
		t.Error(clsimtString(DefaultCLSimtTunables))
	}
}
