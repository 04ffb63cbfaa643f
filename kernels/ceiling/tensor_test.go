package ceiling

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestTensorPeak runs every tensor peak on every NVIDIA device (CUDA, and NVIDIA's OpenCL
// platform), in the form NewTensor picks and in every other form the device runs, and
// checks every thread's sum: exactly iters * instructions * k * a * b per accumulator. A
// device below sm_80 skips with the reason; every other device must refuse the peaks with
// ErrUnsupported. It logs each form's rate over one launch (a hint for picking the forms,
// not a measurement: `prism bench` times the peaks, BenchmarkTensorPeak compares forms).
func TestTensorPeak(t *testing.T) {
	ranCUDA := false
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		cc := dev.Info().ComputeCapability
		if !nvidia(dev) || (cc > 0 && cc < 80) {
			for _, a := range TensorAriths() {
				if _, err := NewTensor(dev, a); !errors.Is(err, engine.ErrUnsupported) {
					t.Errorf("NewTensor(%s) on %s: %v, want ErrUnsupported", a, dev.ID(), err)
				}
			}
			t.Skipf("%s (%s, %s, sm_%d) has no tensor peak: NVIDIA GPUs of sm_80 and newer have", dev.ID(), dev.Backend(), dev.Info().Platform, cc)
		}
		ranCUDA = ranCUDA || dev.Backend() == "cuda"
		for _, a := range TensorAriths() {
			t.Run(a.String(), func(t *testing.T) {
				p, err := NewTensor(dev, a)
				fp8 := a == TensorFloat8E4M3 || a == TensorFloat8E5M2
				if errors.Is(err, engine.ErrUnsupported) && ((fp8 && cc < 89) || (dev.Backend() == "opencl" && (fp8 || a == TensorFloat64))) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				if cc == 90 && dev.Backend() == "cuda" && a != TensorFloat64 && !strings.HasPrefix(p.How(), "wgmma") {
					t.Errorf("sm_90's %s peak is %q; want wgmma", a, p.How())
				}
				testTensor(t, q, p)
				for _, f := range append([]tensorForm{formWGMMA, formWGMMA8, formMMA, formDMMA90}, formsTested...) {
					if f = f.forArith(a); f == p.form || f.opencl != p.form.opencl || f.runs(a, cc) != nil {
						continue
					}
					t.Run(fmt.Sprintf("%+v", f), func(t *testing.T) {
						o, err := newTensor(dev, a, f)
						if err != nil {
							t.Fatal(err)
						}
						defer o.Close()
						testTensor(t, q, o)
					})
				}
			})
		}
	})
	if !ranCUDA && enginetest.Required("cuda") {
		t.Fatal("PRISM_REQUIRE names cuda, but no CUDA device ran the tensor peaks")
	}
}

// nvidia reports whether dev is an NVIDIA GPU the tensor peaks address: a CUDA device, or a
// device of NVIDIA's OpenCL platform.
func nvidia(dev *engine.Device) bool {
	return dev.Backend() == "cuda" || (dev.Backend() == "opencl" && strings.Contains(dev.Info().Platform, "NVIDIA"))
}

// testTensor runs p over two blocks per multiprocessor, checks every output and that Check
// catches a thread that did one instruction fewer, and logs the launch's rate.
func testTensor(t *testing.T, q *engine.Queue, p *Tensor) {
	blocks := 2 * max(q.Device().Info().ComputeUnits, 1)
	n := blocks * p.Threads()
	out := kerneltest.Guarded(t, q, make([]float32, n))
	if err := p.Run(q, out, blocks); err != nil { // warm-up: the first launch loads the module
		t.Fatal(err)
	}
	d, err := q.Timed(t.Context(), func() error { return p.Run(q, out, blocks) })
	if err != nil {
		t.Fatal(err)
	}
	got := kerneltest.Download(t, q, "tensor peak out", out, n)
	if err := p.Check(got); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s: %.0f GFLOP/s over one launch of %d blocks (%v)", p.Arith(), p.How(), p.Flops(blocks)/d.Seconds()/1e9, blocks, d.Round(time.Microsecond))
	_, _, k := p.form.shape(p.arith)
	got[n/2] -= float32(float64(p.form.regs(p.arith)) * float64(k) * tensorA * tensorB)
	if err := p.Check(got); !errors.Is(err, kernels.ErrVerify) {
		t.Errorf("Check of a sum short by one instruction: %v, want ErrVerify", err)
	}
	short := kerneltest.NewBuffer[float32](t, q.Device(), n-1)
	if err := p.Run(q, short, blocks); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Run into a short output: %v, want ErrInvalidArg", err)
	}
}

// TestTensorRefused checks that every device but NVIDIA's (PoCL, Rusticl here) refuses
// every tensor peak with ErrUnsupported, and an unknown arithmetic with ErrInvalidArg.
func TestTensorRefused(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if nvidia(dev) {
			t.Skip("TestTensorPeak runs the NVIDIA devices")
		}
		for _, a := range TensorAriths() {
			if _, err := NewTensor(dev, a); !errors.Is(err, engine.ErrUnsupported) {
				t.Errorf("NewTensor(%s) on %s: %v, want ErrUnsupported", a, dev.ID(), err)
			}
		}
		if _, err := NewTensor(dev, TensorArith(2)); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewTensor(2): %v, want ErrInvalidArg", err)
		}
	})
	if _, err := NewTensor(nil, TensorFloat16); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("NewTensor(nil): %v, want ErrInvalidArg", err)
	}
}

// TestTensorForms checks the arithmetic of the forms against hand counts: the FLOPs of a
// block, every thread's sum, and which compute capabilities run which form.
func TestTensorForms(t *testing.T) {
	for _, c := range []struct {
		f               tensorForm
		a               TensorArith
		flops, perThrd  float64
		how             string
		sm80, sm89, h90 bool
	}{
		// 2 warpgroups x 256 trips x 4 wgmma of 2*64*256*16 FLOPs; 128 accumulators of
		// 256*4*16*1*2 each.
		{formWGMMA, TensorFloat16, 2 * 256 * 4 * 2 * 64 * 256 * 16, 128 * 256 * 4 * 16 * 2, "wgmma.mma_async m64n256k16", false, false, true},
		// float8: 64 trips (fp8WGMMAIters) of four m64n128k32.
		{formWGMMA8.forArith(TensorFloat8E4M3), TensorFloat8E4M3, 2 * 64 * 4 * 2 * 64 * 128 * 32, 64 * 64 * 4 * 32 * 2, "m64n128k32", false, false, true},
		{formWGMMA, TensorTF32, 2 * 256 * 4 * 2 * 64 * 256 * 8, 128 * 256 * 4 * 8 * 2, "m64n256k8", false, false, true},
		{formWGMMA, TensorFloat64, 0, 0, "", false, false, false},
		// 8 warps x 1024 trips x 8 accumulators x 2*16*8*16 FLOPs; 8 accumulators of 4
		// registers, 1024*16*2 each.
		{formMMA, TensorBFloat16, 8 * 1024 * 8 * 2 * 16 * 8 * 16, 8 * 4 * 1024 * 16 * 2, "mma.sync m16n8k16", true, true, true},
		{formMMA.forArith(TensorFloat8E5M2), TensorFloat8E5M2, 8 * 32 * 8 * 2 * 16 * 8 * 32, 8 * 4 * 32 * 32 * 2, "m16n8k32", false, true, false}, // refused on sm_90: runs
		// DMMA m8n8k4: 2 registers of 1024*4*2 per accumulator.
		{formMMA, TensorFloat64, 8 * 1024 * 8 * 2 * 8 * 8 * 4, 8 * 2 * 1024 * 4 * 2, "mma.sync m8n8k4", true, true, true},
		{formDMMA90, TensorFloat64, 8 * 256 * 8 * 2 * 16 * 8 * 16, 8 * 4 * 256 * 16 * 2, "mma.sync m16n8k16", false, false, true},
	} {
		name := fmt.Sprintf("%s/%s", c.a, c.f.kernel())
		if !c.f.wgmma || c.a != TensorFloat64 {
			if got := c.f.flopsPerBlock(c.a); got != c.flops {
				t.Errorf("%s: %v FLOPs per block, want %v", name, got, c.flops)
			}
			if got := c.f.perThread(c.a); got != c.perThrd {
				t.Errorf("%s: %v per thread, want %v", name, got, c.perThrd)
			}
			if got := c.f.String(c.a); !strings.Contains(got, c.how) {
				t.Errorf("%s: described %q, want %q in it", name, got, c.how)
			}
		}
		// Every accumulator at most 2^14 in float8 on wgmma and 2^11 on mma.sync (its
		// tensor cores keep about 14 bits of the sum), below 2^17 elsewhere, and every
		// thread's sum below 2^24 (exact in float).
		if !c.f.wgmma || c.a != TensorFloat64 {
			_, _, k := c.f.shape(c.a)
			acc, most := float64(c.f.iters)*float64(k)*tensorA*tensorB, float64(1<<17)
			if c.f.wgmma {
				acc *= 4 // four instructions a trip on one accumulator
			}
			switch {
			case (c.a == TensorFloat8E4M3 || c.a == TensorFloat8E5M2) && c.f.wgmma:
				most = 1 << 14
			case c.a == TensorFloat8E4M3 || c.a == TensorFloat8E5M2:
				most = 1 << 11
			}
			if acc > most || c.perThrd >= 1<<24 {
				t.Errorf("%s: accumulators reach %v (at most %v), a thread's sum %v (below 2^24)", name, acc, most, c.perThrd)
			}
		}
		for _, cc := range []struct {
			cc   int
			want bool
		}{{75, false}, {80, c.sm80}, {89, c.sm89}, {90, c.h90}} {
			if err := c.f.runs(c.a, cc.cc); (err == nil) != cc.want {
				t.Errorf("%s on sm_%d: runs = %v, want %v", name, cc.cc, err, cc.want)
			}
		}
	}
}

// BenchmarkTensorPeak reports the rate of every tensor peak form on every CUDA device, over
// launches of 8 blocks per multiprocessor: the figures that chose NewTensor's forms.
func BenchmarkTensorPeak(b *testing.B) {
	kerneltest.ForEachBenchDevice(b, "cuda", func(b *testing.B, id string, dev *engine.Device, q *engine.Queue) {
		cc := dev.Info().ComputeCapability
		for _, a := range TensorAriths() {
			for _, f := range append([]tensorForm{formWGMMA, formMMA, formDMMA90}, formsTested...) {
				if f.runs(a, cc) != nil {
					continue
				}
				b.Run(fmt.Sprintf("%s/%s/%s", id, a, strings.ReplaceAll(f.String(a), " ", "_")), func(b *testing.B) {
					p, err := newTensor(dev, a, f)
					if err != nil {
						b.Fatal(err)
					}
					defer p.Close()
					blocks := 8 * max(dev.Info().ComputeUnits, 1)
					out, err := engine.NewBuffer[float32](dev, blocks*p.Threads())
					if err != nil {
						b.Fatal(err)
					}
					defer out.Close()
					for b.Loop() {
						if err := p.Run(q, out, blocks); err != nil {
							b.Fatal(err)
						}
						if err := q.Finish(b.Context()); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(p.Flops(blocks)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	})
}
