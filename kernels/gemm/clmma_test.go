package gemm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
	"github.com/prism-compute/prism/platform"
)

// clmmaPrecisions are the precisions gemm_mma.cl computes.
var clmmaPrecisions = []string{"tf32", "float16", "bfloat16"}

// TestCLMMAEmulated runs gemm_mma.cl on every device that takes its work-groups, built
// with PRISM_MMA_EMULATE: mma.sync and cvt.rna computed in OpenCL C from the fragments
// each warp's lanes leave in local memory, read back by the PTX ISA's fragment layouts.
// Everything else of the kernel runs as on NVIDIA's OpenCL: the tile mapping, the loads
// (16-byte and element by element, zero-filled at the edges), the transposes into the
// k-contiguous local layout, the register prefetch and the double buffering, the
// fragment loads and the epilogue, in every layout, at shapes around the tiles, with
// padded leading dimensions, strided batches, beta = 0 over a C of NaN and a separate D.
// On NVIDIA's OpenCL, TestPrecisions runs the same kernel on the tensor cores.
func TestCLMMAEmulated(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, name := range clmmaPrecisions {
			p := precisionOf(name)
			t.Run(name, func(t *testing.T) {
				switch p.In {
				case "float32":
					testCLMMAEmulated[float32](t, dev, q, p)
				case "float16":
					testCLMMAEmulated[engine.Half](t, dev, q, p)
				case "bfloat16":
					testCLMMAEmulated[engine.BFloat16](t, dev, q, p)
				}
			})
		}
	})
}

func testCLMMAEmulated[In InputType](t *testing.T, dev *engine.Device, q *engine.Queue, p Precision) {
	// The second geometry fits Oclgrind's 32 KiB of local memory: the small pass checks
	// the kernel's accesses and barriers there.
	for _, tiles := range []clmmaTiles{clmmaDefault, {BM: 64, BN: 64, WarpsM: 2, WarpsN: 2, GroupM: 2}} {
		t.Run(tiles.String(), func(t *testing.T) {
			g, err := newCLMMA[In](dev, p, tiles, true)
			if errors.Is(err, engine.ErrUnsupported) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			rng := rand.New(rand.NewPCG(12, uint64(p.MMA)))
			bk := 64 / engine.SizeOf[In]()
			shapes := [][3]int{{1, 1, 1}, {7, 9, 13}, {tiles.BM + 1, tiles.BN - 1, 2*bk + 3}, {tiles.BM, 2 * tiles.BN, 3 * bk}}
			transposes := gemmTransposes
			switch {
			case kerneltest.Small() && p.Name == "bfloat16":
				// Under Oclgrind (a minute a precision): bfloat16 moves as float16 does.
				t.Skip("the small pass checks float16 and tf32")
			case kerneltest.Small() && p.Name == "float16":
				// Under Oclgrind (7 s a layout): nn alone stages A k-major and B n-contiguous
				// through the 16-bit branches, with partial chunks at K = bk + 1; tt runs the
				// same functions with A's and B's roles exchanged (BM = BN here), as tf32 does.
				shapes, transposes = [][3]int{{17, 16, bk + 1}}, [][2]bool{{false, false}}
			case kerneltest.Small():
				// Two k steps across the edges; nn and tt take the four ways of staging a tile.
				shapes, transposes = [][3]int{{17, 16, bk + 1}}, [][2]bool{{false, false}, {true, true}}
			case testing.Short():
				shapes = [][3]int{{1, 1, 1}, {17, 16, bk + 1}}
			}
			for _, d := range shapes {
				for _, tr := range transposes {
					s := GEMMShape{TransA: tr[0], TransB: tr[1], M: d[0], N: d[1], K: d[2]}
					runPrecCase(t, q, any(g).(Runner[In, float32]), p, s, gemmCase{alpha: 1.5, beta: -0.75}, rng)
				}
			}
			if kerneltest.Small() || testing.Short() {
				return
			}
			for _, tr := range gemmTransposes {
				s := GEMMShape{TransA: tr[0], TransB: tr[1], M: 67, N: 45, K: 70}
				_, colsA := s.StoredA()
				_, colsB := s.StoredB()
				ld := s
				ld.LDA, ld.LDB, ld.LDC = colsA+3, colsB+5, s.N+7 // rows off 16-byte boundaries
				r := any(g).(Runner[In, float32])
				runPrecCase(t, q, r, p, ld, gemmCase{alpha: -0.5, beta: 2}, rng)
				runPrecCase(t, q, r, p, s, gemmCase{alpha: 1, beta: 0, nanC: true}, rng)
				runPrecCase(t, q, r, p, s, gemmCase{alpha: 0.25, beta: 1, into: true}, rng)
				wide := s
				wide.LDA, wide.LDB = colsA+64, colsB+32 // 16-byte loads in a wider array
				runPrecCase(t, q, r, p, wide, gemmCase{alpha: 1, beta: 0.5}, rng)
				b := GEMMShape{TransA: tr[0], TransB: tr[1], M: 70, N: 66, K: 35, Batch: 3}
				rowsA, colsA := b.StoredA()
				rowsB, colsB := b.StoredB()
				b.LDC, b.StrideC = b.N+1, (b.N+1)*b.M+5
				b.StrideA, b.StrideB = rowsA*colsA+11, rowsB*colsB+2
				runPrecCase(t, q, r, p, b, gemmCase{alpha: 0.75, beta: 0.5}, rng)
			}
		})
	}
}

// TestCLMMARefuses checks that NewCLMMA and the opencl-mma variant refuse, with
// ErrUnsupported and the reason, every device but NVIDIA's OpenCL (the portable OpenCL
// devices never build gemm_mma.cl), and the precisions gemm_mma.cl does not compute; and
// that a wrong input type or tile geometry is ErrInvalidArg.
func TestCLMMARefuses(t *testing.T) {
	if err := clmmaNeeds(engine.DeviceInfo{Platform: "NVIDIA CUDA", Vendor: "NVIDIA Corporation"}); err != nil {
		t.Errorf("NVIDIA's platform refused: %v", err)
	}
	for _, info := range []engine.DeviceInfo{
		{Platform: "Portable Computing Language", Vendor: "NVIDIA Corporation"}, // PoCL's CUDA device
		{Platform: "rusticl", Vendor: "Mesa"},
		{Platform: "Oclgrind", Vendor: "University of Bristol"},
	} {
		if err := clmmaNeeds(info); err == nil || !strings.Contains(err.Error(), "NVIDIA's OpenCL") {
			t.Errorf("%s: %v; want a reason naming NVIDIA's OpenCL", info.Platform, err)
		}
	}
	for _, c := range []struct {
		t    clmmaTiles
		want string
	}{
		{clmmaTiles{BM: 100, BN: 128, WarpsM: 2, WarpsN: 4, GroupM: 8}, "BM must be a multiple"},
		{clmmaTiles{BM: 128, BN: 128, WarpsM: 8, WarpsN: 8, GroupM: 8}, "above 1024"},
		{clmmaTiles{BM: 32, BN: 32, WarpsM: 2, WarpsN: 4, GroupM: 8}, "whole pairs of 16-byte chunks"},
		{clmmaTiles{}, "must be positive"},
	} {
		if err := c.t.check(); !errors.Is(err, engine.ErrInvalidArg) || !contains(err, c.want) {
			t.Errorf("%v: %v; want ErrInvalidArg saying %q", c.t, err, c.want)
		}
	}
	if err := clmmaDefault.check(); err != nil {
		t.Errorf("the default tiles: %v", err)
	}
	if _, err := NewCLMMA[engine.Half](nil, precisionOf("float16")); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("nil device: %v, want ErrInvalidArg", err)
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if _, err := NewCLMMA[engine.Half](dev, precisionOf("bfloat16")); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("float16 inputs for bfloat16: %v, want ErrInvalidArg", err)
		}
		for _, name := range []string{"float32x3tf32", "float8e4m3"} {
			var err error
			if name == "float32x3tf32" {
				_, err = NewCLMMA[float32](dev, precisionOf(name))
			} else {
				_, err = NewCLMMA[engine.Float8E4M3](dev, precisionOf(name))
			}
			if !errors.Is(err, engine.ErrUnsupported) || !contains(err, "no OpenCL tensor-core kernel") {
				t.Errorf("%s: %v; want ErrUnsupported saying there is no kernel", name, err)
			}
		}
		nvidia := dev.Backend() == "opencl" && clmmaNeeds(dev.Info()) == nil
		if nvidia {
			t.Skipf("%s is NVIDIA's OpenCL: TestPrecisions runs opencl-mma there", dev.ID())
		}
		g, err := NewCLMMA[engine.Half](dev, precisionOf("float16"))
		if err == nil {
			g.Close()
			t.Fatalf("%s (%s) built the inline-PTX GEMM", dev.ID(), dev.Info().Platform)
		}
		if !errors.Is(err, engine.ErrUnsupported) || !contains(err, "NVIDIA") || errors.Is(err, engine.ErrBuild) {
			t.Errorf("%s: %v; want ErrUnsupported naming NVIDIA, before any build", dev.ID(), err)
		}
		t.Logf("%s: %v", dev.ID(), err)
		for _, name := range clmmaPrecisions {
			op := opNamed(t, "gemm/nn/"+name)
			v, err := op.Variant("opencl-mma")
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Fits(dev); !errors.Is(err, engine.ErrUnsupported) || !contains(err, "opencl-mma") {
				t.Errorf("%s: Fits = %v; want ErrUnsupported with the reason", op.Name, err)
			}
			if _, err := op.Setup(t.Context(), q, kernels.Params{Size: 64, Variant: "opencl-mma"}); !errors.Is(err, engine.ErrUnsupported) {
				t.Errorf("%s: Setup(opencl-mma) = %v; want ErrUnsupported", op.Name, err)
			}
		}
	})
}

// TestCLMMAVariants checks where opencl-mma sits in the variant lists: in the ops of
// tf32, float16 and bfloat16 in every layout, after the CUDA variants and before the
// portable one; in no other op.
func TestCLMMAVariants(t *testing.T) {
	n := 0
	for _, op := range Family().Ops {
		names := op.VariantNames()
		i := slices.Index(names, "opencl-mma")
		if !slices.Contains(clmmaPrecisions, op.Type) {
			if i >= 0 {
				t.Errorf("%s has opencl-mma", op.Name)
			}
			continue
		}
		n++
		if i < 0 || i != len(names)-2 || names[len(names)-1] != kernels.PortableName {
			t.Errorf("%s: variants %v; want opencl-mma just before portable", op.Name, names)
			continue
		}
		for _, name := range names[i+1:] {
			if strings.HasPrefix(name, "cuda-") {
				t.Errorf("%s: variants %v; want opencl-mma after the CUDA variants", op.Name, names)
			}
		}
		v := op.Variants[i]
		if v.Backend != "opencl" || v.Dialect != engine.DialectOpenCL || v.MinCompute != 80 || v.Needs == nil || v.Doc == "" || v.Tunables == "" {
			t.Errorf("%s: opencl-mma is %+v", op.Name, v)
		}
	}
	if n != len(clmmaPrecisions)*len(gemmLayouts) {
		t.Errorf("%d ops have opencl-mma, want %d", n, len(clmmaPrecisions)*len(gemmLayouts))
	}
}

// TestCLMMAHeader checks that gemm_mma.cl opens with the header of the suite's files, and
// that the family's source, which listings read, is still gemm.cl.
func TestCLMMAHeader(t *testing.T) {
	if h := kernels.Header(clmmaSource); !strings.HasPrefix(h, "gemm_mma.cl: ") {
		t.Errorf("gemm_mma.cl's header starts %q", strings.SplitN(h, "\n", 2)[0])
	}
	for _, section := range []string{"Purpose", "Arguments", "Tunables", "Variants", "Launch", "Boundaries", "Accuracy"} {
		if kernels.HeaderSection(clmmaSource, section) == "" {
			t.Errorf("gemm_mma.cl's header has no %s section", section)
		}
	}
	if h := kernels.Header(Family().Source); !strings.HasPrefix(h, "gemm.cl: ") {
		t.Errorf("the family's source is not gemm.cl: %q", strings.SplitN(h, "\n", 2)[0])
	}
}

// TestCLMMAPTX compiles gemm_mma.cl as NVIDIA's OpenCL would, with clang-15's OpenCL front
// end for nvptx64-nvidia-nvcl (NVIDIA's compiler is not available without the driver), for
// each precision, and checks the PTX: every mma.sync of the warp tile (and the tf32
// rounding), the fragment loads as 32-bit shared loads, the local tiles' 40960 bytes, and
// no private array left in local memory (a __local_depot: accumulators or staging
// registers indexed at run time). Without PRISM_PTX the file must not compile.
func TestCLMMAPTX(t *testing.T) {
	clang := ""
	for _, name := range []string{"clang-15", "/usr/lib/llvm-15/bin/clang"} {
		if p, err := exec.LookPath(name); err == nil {
			clang = p
			break
		}
	}
	if clang == "" {
		t.Skip("clang-15 is not installed (apt-get install -y clang-15): gemm_mma.cl's PTX is not checked")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "gemm_mma.cl")
	if err := os.WriteFile(src, []byte(clmmaSource), 0o644); err != nil {
		t.Fatal(err)
	}
	compile := func(defs ...string) (string, error) {
		out := filepath.Join(dir, "out.ptx")
		// NVIDIA's OpenCL C takes GNU's asm keyword; clang's OpenCL mode needs it asked for.
		args := append([]string{"-x", "cl", "-cl-std=CL1.2", "-target", "nvptx64-nvidia-nvcl", "-Xclang", "-finclude-default-header",
			"-fgnu-keywords", "-O3", "-S", "-o", out, src}, defs...)
		msg, err := exec.Command(clang, args...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("clang %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
		b, err := os.ReadFile(out)
		return string(b), err
	}
	mt, nt := clmmaDefault.BM/clmmaDefault.WarpsM/16, clmmaDefault.BN/clmmaDefault.WarpsN/8
	for _, c := range []struct {
		prec     int
		mma      string
		kSteps   int // mma k steps per local tile
		tf32Cvts int
	}{
		{1, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 2, 1},
		{3, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 2, 0},
		{4, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 2, 0},
	} {
		t.Run(fmt.Sprintf("PREC=%d", c.prec), func(t *testing.T) {
			ptx, err := compile("-DPRISM_PTX", fmt.Sprintf("-DPREC=%d", c.prec))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := strings.Count(ptx, c.mma+" "), mt*nt*c.kSteps; got != want {
				t.Errorf("%d %s in the PTX, want %d (the warp tile's %d x %d tiles, %d k steps)", got, c.mma, want, mt, nt, c.kSteps)
			}
			if got := strings.Count(ptx, "mma.sync"); got != mt*nt*c.kSteps {
				t.Errorf("%d mma.sync in the PTX, want %d", got, mt*nt*c.kSteps)
			}
			if cvt := strings.Contains(ptx, "cvt.rna.tf32.f32"); cvt != (c.tf32Cvts > 0) {
				t.Errorf("cvt.rna.tf32.f32 in the PTX: %v", cvt)
			}
			if got, want := strings.Count(ptx, "ld.shared.u32"), (4*mt+2*nt)*c.kSteps; got != want {
				t.Errorf("%d ld.shared.u32 in the PTX, want %d fragment loads", got, want)
			}
			shared := 0
			for _, m := range regexp.MustCompile(`\.shared \.align 16 \.b8 \S+\[(\d+)\]`).FindAllStringSubmatch(ptx, -1) {
				var n int
				fmt.Sscan(m[1], &n)
				shared += n
			}
			if shared != clmmaDefault.localBytes() {
				t.Errorf("%d bytes of __local arrays, want %d", shared, clmmaDefault.localBytes())
			}
			if strings.Contains(ptx, "__local_depot") {
				t.Errorf("the PTX keeps a private array in local memory (__local_depot)")
			}
		})
	}
	if _, err := compile("-DPREC=3"); err == nil || !strings.Contains(err.Error(), "needs NVIDIA's OpenCL") {
		t.Errorf("without PRISM_PTX: %v; want the #error naming NVIDIA's OpenCL", err)
	}
}

// BenchmarkCLMMA measures the OpenCL tensor-core GEMM of each of its precisions on every
// device of NVIDIA's OpenCL platform, nn layout, M = N = K = PRISM_BENCH_N, with the
// default tiles and other geometries (one sub-benchmark each, verified on a sample of D
// first), and the portable kernel beside it, reporting TFLOP/s.
func BenchmarkCLMMA(b *testing.B) {
	forEachBenchDevice(b, func(d platform.Device) bool {
		return d.Backend == "opencl" && clmmaNeeds(d.DeviceInfo) == nil
	}, func(b *testing.B, dev *engine.Device, q *engine.Queue) {
		for _, name := range clmmaPrecisions {
			p := precisionOf(name)
			b.Run(name, func(b *testing.B) {
				switch p.In {
				case "float32":
					benchCLMMA[float32](b, dev, q, p)
				case "float16":
					benchCLMMA[engine.Half](b, dev, q, p)
				case "bfloat16":
					benchCLMMA[engine.BFloat16](b, dev, q, p)
				}
			})
		}
	})
}

func benchCLMMA[In InputType](b *testing.B, dev *engine.Device, q *engine.Queue, p Precision) {
	n := benchN(b)
	inst, err := newGEMMInstance[In, float32](b.Context(), q, "gemm/bench/"+p.Name, p, false, false, 1, kernels.Params{Size: n * n, Seed: 1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Close()
	for _, tiles := range []clmmaTiles{clmmaDefault,
		{BM: 128, BN: 128, WarpsM: 4, WarpsN: 2, GroupM: 8},
		{BM: 128, BN: 64, WarpsM: 2, WarpsN: 2, GroupM: 8},
		{BM: 64, BN: 128, WarpsM: 2, WarpsN: 2, GroupM: 8},
		{BM: 128, BN: 128, WarpsM: 2, WarpsN: 4, GroupM: 16},
	} {
		b.Run(tiles.String(), func(b *testing.B) {
			g, err := newCLMMA[In](dev, p, tiles, false)
			if errors.Is(err, engine.ErrUnsupported) {
				b.Skip(err)
			}
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			at := g.kern.Attributes()
			b.Logf("%d registers, %d bytes private (spills), %d bytes local", at.Registers, at.PrivateBytes, at.LocalBytes)
			timeGEMM(b, q, inst, any(g).(Runner[In, float32]), n)
		})
	}
	b.Run("portable", func(b *testing.B) {
		g, err := NewGEMMOf[In, float32](dev, p)
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		timeGEMM(b, q, inst, g, n)
	})
}
