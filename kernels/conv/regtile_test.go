package conv

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

func TestRegtile(t *testing.T) {
	swept := false
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testRegtile[float32](t, dev, q, 3, DefaultRegtileTunables) })
		if kerneltest.Small() {
			return // Oclgrind: the float32 build only (float64 is the same code)
		}
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testRegtile[float64](t, dev, q, 3, DefaultRegtileTunables)
		})
		// Other filter sides, and the candidates prism tune measures: on the first device
		// only (each is a build of its own, and CPU compilers take seconds a build).
		if swept {
			return
		}
		swept = true
		for _, r := range []int{1, 5} {
			t.Run(fmt.Sprintf("R%d", r), func(t *testing.T) { testRegtile[float32](t, dev, q, r, DefaultRegtileTunables) })
		}
		// TestRegtileCandidatesFit checks every candidate's limits; three of them run here.
		for _, c := range []RegtileTunables{regtileCandidates[1], regtileCandidates[len(regtileCandidates)/2], regtileCandidates[len(regtileCandidates)-1]} {
			t.Run(c.String(), func(t *testing.T) { testRegtile[float32](t, dev, q, 3, c) })
		}
	})
}

// regtileTestShapes are stride-1 shapes of filter side r around the tiles of tt (as
// built): one channel, channels not multiples of a stage, output channels below, at and
// one past a work-group's, images smaller than a tile and one past it, paddings of 0, r/2
// and r-1, and the ops' shape (C = K = 64) at a reduced image size.
func regtileTestShapes(r int, tt RegtileTunables) []ConvShape {
	p := r / 2
	s := []ConvShape{
		{N: 1, C: 1, H: 1, W: 1, K: 1, R: r, Stride: 1, Pad: r - 1},
		{N: 2, C: 1, H: 5, W: 7, K: 3, R: r, Stride: 1, Pad: p},
		{N: 1, C: tt.CC + 1, H: 3, W: 6, K: 5, R: r, Stride: 1, Pad: p},
		{N: 2, C: 3, H: tt.TH + r, W: tt.TW + r, K: 2, R: r, Stride: 1, Pad: 0}, // P, Q one past the tile
	}
	if kerneltest.Small() {
		return s
	}
	return append(s,
		ConvShape{N: 2, C: 2*tt.CC + 3, H: tt.TH - 1, W: tt.TW + 5, K: tt.BK + 1, R: r, Stride: 1, Pad: p},
		ConvShape{N: 3, C: 5, H: 2*tt.TH + 1, W: tt.TW - 3, K: tt.BK, R: r, Stride: 1, Pad: r - 1},
		ConvShape{N: 2, C: 7, H: tt.TH + 1, W: 2*tt.TW + 1, K: 2*tt.BK - 1, R: r, Stride: 1, Pad: p},
		ConvShape{N: 2, C: convOpC, H: 19, W: 21, K: convOpC, R: r, Stride: 1, Pad: p}, // the ops' channels
	)
}

func testRegtile[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue, r int, tun RegtileTunables) {
	c, err := NewRegtile[T](dev, r, tun)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Logf("built with %v", c.Tunables())
	rng := rand.New(rand.NewPCG(11, 0x436f))
	for i, s := range regtileTestShapes(r, c.Tunables()) {
		withBias := i%2 == 0
		t.Run(fmt.Sprintf("N%dC%dH%dW%dK%dR%dp%d/bias=%v", s.N, s.C, s.H, s.W, s.K, s.R, s.Pad, withBias), func(t *testing.T) {
			checkConv(t, q, rng, s, withBias, c.Run)
		})
	}
}

// TestRegtileSmallGroups builds the regtile kernel under work-group limits down to one
// item (as PRISM_MAX_WORK_GROUP would impose, and Rusticl's 32 items do) and checks that
// the shrunk tiles compute the same convolution.
func TestRegtileSmallGroups(t *testing.T) {
	limits := []int{32, 1}
	if !kerneltest.Small() {
		limits = []int{64, 32, 8, 1}
	}
	for _, lim := range limits {
		t.Run(fmt.Sprintf("items%d", lim), func(t *testing.T) {
			t.Setenv(kernels.EnvMaxWorkGroup, fmt.Sprint(lim))
			kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
				c, err := NewRegtile[float32](dev, 3, DefaultRegtileTunables)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				x, y := c.Tunables().Items()
				if x*y > lim {
					t.Fatalf("built with %v: %d items, over the limit of %d", c.Tunables(), x*y, lim)
				}
				s := ConvShape{N: 2, C: 5, H: 6, W: 9, K: 3, R: 3, Stride: 1, Pad: 1}
				if lim == 1 {
					s = ConvShape{N: 1, C: 2, H: 3, W: 5, K: 2, R: 3, Stride: 1, Pad: 1}
				}
				rng := rand.New(rand.NewPCG(3, uint64(lim)))
				a := kernels.RandFloats[float32](rng, s.InLen(), -1, 1)
				f := kernels.RandFloats[float32](rng, s.FilterLen(), -1, 1)
				bias := kernels.RandFloats[float32](rng, s.K, -1, 1)
				out := kerneltest.Guarded(t, q, make([]float32, s.OutLen()))
				if err := c.Run(q, out, kerneltest.Guarded(t, q, a), kerneltest.Guarded(t, q, f), kerneltest.Guarded(t, q, bias), s); err != nil {
					t.Fatal(err)
				}
				got := kerneltest.Download(t, q, "conv regtile out", out, s.OutLen())
				want, mag := ConvRef(a, f, bias, s)
				for i := range want {
					if d := math.Abs(float64(got[i]) - want[i]); !(d <= ConvTolerance[float32](s, true, mag[i])) {
						t.Fatalf("%v with %v: output %d = %v, want %v", s, c.Tunables(), i, got[i], want[i])
					}
				}
			})
		})
	}
}

// TestRegtileRefuses checks the shapes and tunables the regtile kernel does not take.
func TestRegtileRefuses(t *testing.T) {
	for _, s := range []string{
		"", "BK=64 TK=8 TH=8 TR=2 TW=32 TP=4", // a key missing
		"BK=64 TK=6 TH=8 TR=2 TW=32 TP=4 CC=4",   // TK not a multiple of 4
		"BK=64 TK=8 TH=8 TR=3 TW=32 TP=4 CC=4",   // TH not a multiple of TR
		"BK=256 TK=4 TH=16 TR=1 TW=64 TP=4 CC=4", // 256 x 64 items
		"BK=64 TK=8 TH=8 TR=2 TW=32 TP=4 CC=0",
	} {
		if _, err := ParseRegtileTunables(s); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("ParseRegtileTunables(%q): %v, want ErrInvalidArg", s, err)
		}
	}
	for _, c := range regtileCandidates {
		if got, err := ParseRegtileTunables(c.String()); err != nil || got != c {
			t.Errorf("ParseRegtileTunables(%q) = %v, %v", c.String(), got, err)
		}
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if _, err := NewRegtile[float32](dev, 8, DefaultRegtileTunables); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewRegtile(R 8): %v, want ErrInvalidArg", err)
		}
		c, err := NewRegtile[float32](dev, 3, DefaultRegtileTunables)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		mk := func(n int) *engine.Buffer[float32] {
			b, err := engine.Upload(t.Context(), q, make([]float32, n))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		}
		ok := ConvShape{N: 1, C: 2, H: 6, W: 6, K: 3, R: 3, Stride: 1, Pad: 1}
		in, f, out := mk(ok.InLen()), mk(ok.FilterLen()), mk(ok.OutLen())
		for _, s := range []ConvShape{
			{N: 1, C: 2, H: 6, W: 6, K: 3, R: 3, Stride: 2, Pad: 1}, // stride 2
			{N: 1, C: 2, H: 6, W: 6, K: 3, R: 1, Stride: 1, Pad: 0}, // another filter side
			{N: 1, C: 2, H: 6, W: 6, K: 0, R: 3, Stride: 1, Pad: 1}, // invalid
			{N: 1, C: 3, H: 6, W: 6, K: 3, R: 3, Stride: 1, Pad: 1}, // input too short
		} {
			if err := c.Run(q, out, in, f, nil, s); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("Run(%v): %v, want ErrInvalidArg", s, err)
			}
		}
		if err := c.Run(q, in, in, f, nil, ok); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("Run(out is in): %v, want ErrInvalidArg", err)
		}
	})
}

// TestRegtileOp sets the conv/3x3 op's regtile variant up on every device, past its Needs
// (which refuses CPUs, with the reason), at the op's shape reduced (tiny under Oclgrind),
// and verifies it against the reference, with the default and with forced tunables.
func TestRegtileOp(t *testing.T) {
	var op kernels.Op
	for _, o := range Family().Ops {
		if o.Name == "conv/3x3/float32" {
			op = o
		}
	}
	if names := op.VariantNames(); len(names) != 2 || names[0] != RegtileName || names[1] != kernels.PortableName {
		t.Fatalf("conv/3x3/float32 variants %v, want [%s %s]", names, RegtileName, kernels.PortableName)
	}
	for _, o := range Family().Ops {
		if o.Name != op.Name && len(o.Variants) != 1 {
			t.Errorf("%s has variants %v; only conv/3x3 has regtile", o.Name, o.VariantNames())
		}
	}
	v, err := op.Variant(RegtileName)
	if err != nil {
		t.Fatal(err)
	}
	size := 1 << 16 // N = 8, C = K = 64, H = W = 11
	if kerneltest.Small() {
		size = 64 // N = 1, C = K = 4, H = W = 4
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		err := v.Fits(dev)
		if cpu := dev.Info().Kind == engine.KindCPU; cpu != (err != nil) {
			t.Errorf("Fits on a %v: %v", dev.Info().Kind, err)
		} else if cpu && (!errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "GPU")) {
			t.Errorf("Fits on a CPU: %v, want ErrUnsupported saying it needs a GPU", err)
		}
		for _, forced := range []string{"", "BK=32 TK=4 TH=4 TR=1 TW=16 TP=4 CC=3"} {
			in, err := v.Setup(t.Context(), q, kernels.Params{Size: size, Seed: 5, Tunables: forced})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if err := in.Run(t.Context(), q); err != nil {
				t.Fatal(err)
			}
			if err := in.Verify(t.Context(), q); err != nil {
				t.Errorf("%s (%s): %v", in.Shape(), in.(kernels.TunablesReporter).Tunables(), err)
			}
			want := "(default)"
			if forced != "" {
				want = "(forced)"
			}
			if got := in.(kernels.TunablesReporter).Tunables(); !strings.HasSuffix(got, want) {
				t.Errorf("tunables reported as %q, want ... %s", got, want)
			}
		}
		if _, err := v.Setup(t.Context(), q, kernels.Params{Size: size, Seed: 5, Tunables: "BK=8"}); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("Setup with tunables BK=8: %v, want ErrInvalidArg", err)
		}
	})
}

// TestRegtileHeader checks that conv_regtile.cl opens with the header of the suite's
// files, and that its defaults are DefaultRegtileTunables.
func TestRegtileHeader(t *testing.T) {
	if h := kernels.Header(regtileSource); !strings.HasPrefix(h, "conv_regtile.cl: ") {
		t.Errorf("conv_regtile.cl's header starts %q", strings.SplitN(h, "\n", 2)[0])
	}
	for _, section := range []string{"Purpose", "Arguments", "Tunables", "Variants", "Launch", "Boundaries", "Design", "Accuracy"} {
		if kernels.HeaderSection(regtileSource, section) == "" {
			t.Errorf("conv_regtile.cl's header has no %s section", section)
		}
	}
	d := DefaultRegtileTunables
	for key, v := range map[string]int{"CR": 3, "BK": d.BK, "TK": d.TK, "TH": d.TH, "TW": d.TW, "TR": d.TR, "TP": d.TP, "CC": d.CC} {
		if def := fmt.Sprintf("#ifndef %s\n#define %s %d\n", key, key, v); !strings.Contains(regtileSource, def) {
			t.Errorf("conv_regtile.cl does not default %s to %d as DefaultRegtileTunables does", key, v)
		}
	}
	if b := d.localBytes(3, 4); b > 48<<10 {
		t.Errorf("the default tiles use %d bytes of static local memory, over CUDA's 48 KiB", b)
	}
}

// TestRegtileCandidatesFit checks that every candidate of prism tune fits CUDA's 48 KiB of
// static local memory in float as it is, so that none is shrunk into another's build.
func TestRegtileCandidatesFit(t *testing.T) {
	seen := map[RegtileTunables]bool{}
	for _, c := range regtileCandidates {
		if err := c.Validate(); err != nil {
			t.Error(err)
		}
		if b := c.localBytes(3, 4); b > 48<<10 {
			t.Errorf("candidate %v uses %d bytes of local memory, over 48 KiB", c, b)
		}
		if seen[c] {
			t.Errorf("candidate %v listed twice", c)
		}
		seen[c] = true
	}
}
