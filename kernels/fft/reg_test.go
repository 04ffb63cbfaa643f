package fft

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestRegFFT checks the regradix variant at the default shape against the float64
// reference at every length, batch, 2D shape and real-input length the portable FFT's
// test uses (testFFTOn): float32 in full on the first device and in short on the others,
// float64 in short on GPUs.
func TestRegFFT(t *testing.T) {
	first := true
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		// In full on the first device, in short on the others: each takes the same code
		// paths, and Rusticl runs this kernel four times slower than the portable one.
		short := !first
		first = false
		t.Run("float32", func(t *testing.T) {
			f := newRegFFT[float32](t, dev, RegDefault)
			testFFTOn(t, dev, q, f, short)
		})
		if kerneltest.Small() {
			return // Oclgrind: the float32 build only (float64 is the same code)
		}
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			if dev.Info().Kind == engine.KindCPU { // the same code: a build of seconds spared
				t.Skipf("float64 runs on GPUs; %s is a CPU", dev.ID())
			}
			testFFTOn(t, dev, q, newRegFFT[float64](t, dev, RegDefault), true)
		})
	})
}

// newRegFFT builds the regradix variant with shape tun, closed at the end of the test.
func newRegFFT[T kernels.Float](t *testing.T, dev *engine.Device, tun RegTunables) *FFT[T] {
	t.Helper()
	f, err := NewRegFFT[T](dev, tun)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("regradix %v (asked %v): local length %d", f.RegTunables(), tun, f.LocalLen())
	return f
}

// TestRegFFTShapes runs the regradix kernel in small work-groups, so that small data takes
// every kind of stage and pass: 2 items (32 points: a pass is one radix-16 and one radix-2
// stage, and MINC=1 lets multi-pass transforms move single strided columns), 4 items with
// MINC=4 (passes of 16, 8 and 4 points: one stage that loads and stores with different
// strides); three stages in one pass run at the default shape in TestRegFFT (4096 points).
// On the first device only.
func TestRegFFTShapes(t *testing.T) {
	first := true
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if !first { // one device: each shape is a build of its own, slow for CPU compilers
			t.Skip("the shapes run on the first device")
		}
		first = false
		for _, tun := range []RegTunables{{WG: 2, MinC: 1}, {WG: 4, MinC: 4}} {
			t.Run(tun.String(), func(t *testing.T) {
				f := newRegFFT[float32](t, dev, tun)
				if f.RegTunables().WG != tun.WG {
					t.Skipf("built with %v on this device, want %v", f.RegTunables(), tun)
				}
				rng := rand.New(rand.NewPCG(13, uint64(tun.WG)))
				if kerneltest.Small() { // Oclgrind: each path once, on small data
					for _, n := range []int{1, 2, 32, 128, 512} {
						fftCheckC2C(t, q, f, rng, n)
					}
					fftCheckBatch(t, q, f, rng, 64, 3)
					fftCheck2D(t, q, f, rng, 8, 32)
					fftCheckR2C(t, q, f, rng, 128, 1)
					return
				}
				for lg := 0; lg <= 14; lg++ {
					fftCheckC2C(t, q, f, rng, 1<<lg)
				}
				fftCheckBatch(t, q, f, rng, 8, 3)
				fftCheckBatch(t, q, f, rng, 256, 3)
				fftCheckBatch(t, q, f, rng, 1024, 5)
				fftCheck2D(t, q, f, rng, 32, 64)
				fftCheck2D(t, q, f, rng, 128, 2)
				fftCheckR2C(t, q, f, rng, 2, 3)
				fftCheckR2C(t, q, f, rng, 512, 3)
			})
		}
	})
}

// TestRegFFTSpecialized runs the builds of fft_reg.cl made for one pass shape each (the
// PASS_* defines; what GPUs run) on the first device, CPUs included: one-pass transforms
// of every stage count, multi-pass ones with twiddles between passes, batched, 2D (columns
// interleaved) and real-input transforms (post-processed in their one pass up to 8192
// points, PASS_R2C), each shape built once and reused.
func TestRegFFTSpecialized(t *testing.T) {
	first := true
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if !first { // one device: each shape is a build of its own, slow for CPU compilers
			t.Skip("the specialized builds run on the first device")
		}
		first = false
		f := newRegFFT[float32](t, dev, RegDefault)
		f.regSpecialize = true
		rng := rand.New(rand.NewPCG(17, 1))
		if kerneltest.Small() { // Oclgrind: a one-pass and a two-pass transform, a fused real one
			fftCheckC2C(t, q, f, rng, 256)
			fftCheckC2C(t, q, f, rng, 1<<13)
			fftCheckR2C(t, q, f, rng, 64, 3)
		} else {
			for _, n := range []int{2, 256, 4096, 1 << 13} { // one stage, two, three; two passes
				fftCheckC2C(t, q, f, rng, n)
			}
			fftCheckBatch(t, q, f, rng, 1024, 3)
			fftCheck2D(t, q, f, rng, 32, 64)
			for _, n := range []int{2, 4, 32, 512, 8192} { // one pass, post-processing fused
				fftCheckR2C(t, q, f, rng, n, 3)
			}
			fftCheckR2C(t, q, f, rng, 1<<14, 2) // two passes, then the post-pass
			fftCheckC2C(t, q, f, rng, 4096)     // again: the builds are reused
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.regPass) == 0 {
			t.Fatal("no specialized build was made")
		}
		fused := false
		for sh, b := range f.regPass {
			fused = fused || sh.r2c && b.k != nil
			if b.k == nil {
				t.Logf("pass shape %+v runs the generic kernel (the device allows fewer items for its build)", sh)
			}
		}
		if !fused {
			t.Error("no real-input transform ran fused in one pass")
		}
		t.Logf("%d pass shapes built", len(f.regPass))
	})
}

// TestStageTwiddles checks the layout of the regradix variant's stage twiddles against
// fft_reg.cl's indexing: the table's length, each pass's base, and every entry of stage s
// of a pass at base + (s-1)*256 + t*ns + r equal to e^{-2 pi i t r/(R ns)} within u.
func TestStageTwiddles(t *testing.T) {
	tw := stageTwiddles[float32]()
	if got, want := len(tw), 2*stageTwiddleBase(stageLgMax+1); got != want {
		t.Fatalf("%d values, want %d", got, want)
	}
	if got := fmt.Sprint(stageRadices(0), stageRadices(4), stageRadices(10), stageRadices(12)); got != "[0] [4] [4 4 2] [4 4 4]" {
		t.Errorf("stage radices %s", got)
	}
	u := kernels.Epsilon[float32]()
	for lgL := 0; lgL <= stageLgMax; lgL++ {
		base := stageTwiddleBase(lgL)
		for s, lgR := range stageRadices(lgL) {
			if s == 0 {
				continue
			}
			r, ns := 1<<lgR, 1<<(4*s)
			for ti := range r {
				for j := range ns {
					i := base + (s-1)*256 + ti*ns + j
					want := cmplx.Exp(complex(0, -2*math.Pi*float64(ti*j)/float64(r*ns)))
					got := complex(float64(tw[2*i]), float64(tw[2*i+1]))
					if cmplx.Abs(got-want) > 2*u {
						t.Fatalf("pass 2^%d stage %d: entry (t=%d, r=%d) = %v, want %v", lgL, s, ti, j, got, want)
					}
				}
			}
		}
	}
}

// TestRegTunables checks the spelling of the regradix tunables, that every candidate
// parses back to itself, and that shapes out of range are refused.
func TestRegTunables(t *testing.T) {
	for _, c := range regCandidates {
		got, err := ParseRegTunables(c.String())
		if err != nil || got != c {
			t.Errorf("ParseRegTunables(%q) = %v, %v", c, got, err)
		}
	}
	if got, err := ParseRegTunables("minc=4"); err != nil || got != (RegTunables{WG: RegDefault.WG, MinC: 4}) {
		t.Errorf("ParseRegTunables(minc=4) = %v, %v", got, err)
	}
	for _, s := range []string{"WG=3", "WG=512", "WG=0", "MINC=6", "MINC=8192", "WG=16 WG=32", "EPT=16", "WG=x"} {
		if _, err := ParseRegTunables(s); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("ParseRegTunables(%q) = %v, want ErrInvalidArg", s, err)
		}
	}
	if _, err := NewRegFFT[float32](nil, RegTunables{WG: 3, MinC: 1}); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("NewRegFFT with WG=3: %v, want ErrInvalidArg", err)
	}
	// The plans: 2^24 in three passes of 256 at the default shape, two of 4096 never (the
	// local memory a work-group would need), 2^20 in two of 1024 with MINC=4.
	for _, c := range []struct {
		lgN, lgLoc, lgMinC int
		want               string
	}{{24, 12, 4, "[8 8 8]"}, {12, 12, 4, "[12]"}, {20, 12, 2, "[10 10]"}, {13, 12, 4, "[7 6]"}} {
		if got := fmt.Sprint(fftPlan(c.lgN, c.lgLoc, c.lgMinC)); got != c.want {
			t.Errorf("fftPlan(%d, %d, %d) = %s, want %s", c.lgN, c.lgLoc, c.lgMinC, got, c.want)
		}
	}
}

// TestRegVariant checks that the regradix variant is listed before the portable one in
// every fft op, refuses CPUs with the reason (Needs), takes tunables, and reports them
// from its instance (set up directly, past Needs, on CPUs).
func TestRegVariant(t *testing.T) {
	for _, op := range Family().Ops {
		names := strings.Join(op.VariantNames(), ",")
		if !strings.HasSuffix(names, RegName+","+kernels.PortableName) {
			t.Errorf("%s: variants %s, want ...,%s,%s", op.Name, names, RegName, kernels.PortableName)
		}
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		op := Family().Ops[0]
		v, err := op.Variant(RegName)
		if err != nil {
			t.Fatal(err)
		}
		ferr := v.Fits(dev)
		if cpu := dev.Info().Kind == engine.KindCPU; cpu != (ferr != nil) || (cpu && !strings.Contains(ferr.Error(), "GPU")) {
			t.Errorf("%s (CPU: %v): Fits = %v, want a refusal naming GPUs exactly on CPUs", dev.ID(), cpu, ferr)
		}
		if ferr != nil && !errors.Is(ferr, engine.ErrUnsupported) {
			t.Errorf("Fits = %v, want ErrUnsupported", ferr)
		}
		// The shape TestRegFFTShapes builds: the compiler's cache has it.
		in, err := setupFFT[float32](t.Context(), q, op.Name, fftC2C, true, kernels.Params{Size: 64, Seed: 1, Tunables: "WG=4 MINC=4"})
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
		tr, ok := in.(kernels.TunablesReporter)
		if !ok || !strings.HasSuffix(tr.Tunables(), "(forced)") {
			t.Errorf("instance tunables %v, want ... (forced)", tr)
		}
		if _, err := setupFFT[float32](t.Context(), q, op.Name, fftC2C, true, kernels.Params{Size: 64, Tunables: "WG=5"}); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("WG=5: %v, want ErrInvalidArg", err)
		}
	})
}

// BenchmarkFFTVariants times the portable FFT against the regradix variant on every
// OpenCL device (go test -bench FFTVariants ./kernels/fft): one 2^20-point forward
// transform, and 256 batched 1024-point ones.
func BenchmarkFFTVariants(b *testing.B) {
	kerneltest.ForEachBenchDevice(b, "opencl", func(b *testing.B, id string, dev *engine.Device, q *engine.Queue) {
		for _, c := range []struct{ n, batch int }{{1 << 20, 1}, {1024, 256}} {
			x := kernels.RandFloats[float32](rand.New(rand.NewPCG(1, 2)), 2*c.n*c.batch, -1, 1)
			src, err := engine.Upload(b.Context(), q, x)
			if err != nil {
				b.Fatal(err)
			}
			dst, err := engine.NewBuffer[float32](dev, 2*c.n*c.batch)
			if err != nil {
				b.Fatal(err)
			}
			for _, v := range []string{kernels.PortableName, RegName} {
				b.Run(fmt.Sprintf("%s/n=%d/batch=%d/%s", id, c.n, c.batch, v), func(b *testing.B) {
					var f *FFT[float32]
					if v == RegName {
						f, err = NewRegFFT[float32](dev, RegDefault)
					} else {
						f, err = NewFFT[float32](dev)
					}
					if err != nil {
						b.Fatal(err)
					}
					defer f.Close()
					b.Logf("passes %v, work-group %d", f.Passes(c.n), f.WorkGroup())
					if err := f.Forward(q, dst, src, c.n, c.batch); err != nil { // warm: tables, scratch
						b.Fatal(err)
					}
					if err := q.Finish(b.Context()); err != nil {
						b.Fatal(err)
					}
					b.ResetTimer()
					for range b.N {
						if err := f.Forward(q, dst, src, c.n, c.batch); err != nil {
							b.Fatal(err)
						}
						if err := q.Finish(b.Context()); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			dst.Close()
			src.Close()
		}
	})
}
