package fft

import (
	"fmt"
	"math"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// fracName names fixed fractions in a subtest's name, or "measured" for nil.
func fracName(f []float64) string {
	if f == nil {
		return "measured"
	}
	return fmt.Sprint(f)
}

// batchedOp returns fft/batched/float32 and checks that it is the only fft op with a
// Split.
func batchedOp(t *testing.T) kernels.Op {
	t.Helper()
	var op kernels.Op
	for _, o := range Family().Ops {
		switch {
		case o.Name == "fft/batched/float32":
			op = o
		case o.Split != nil:
			t.Errorf("%s has a Split: only the batched op is split", o.Name)
		}
	}
	if op.Split == nil {
		t.Fatal("fft/batched/float32 has no Split")
	}
	return op
}

// TestFFTSplit splits fft/batched across the devices found, with fixed and measured
// shares, at odd batches, and checks every transform against the reference.
func TestFFTSplit(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	op := batchedOp(t)
	fractions := append(kerneltest.SplitFractions(len(devs)), nil) // nil: measured
	batches := []int{1, 7, 13}
	if kerneltest.Small() { // Oclgrind: one batch, split in halves and by measure
		batches = []int{3}
	}
	for bi, b := range batches {
		for fi, f := range fractions {
			if b != 13 && !kerneltest.Small() && fi != bi%len(fractions) {
				continue // the small batches with one share each
			}
			if kerneltest.Small() && fi != 0 && f != nil {
				continue // Oclgrind: halves and measured
			}
			t.Run(fmt.Sprintf("batch=%d/f=%s", b, fracName(f)), func(t *testing.T) {
				in, err := op.Split(t.Context(), devs, kernels.Params{Size: b*fftBatchLen + 5, Seed: uint64(b)}, kernels.SplitOptions{Fractions: f})
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				kerneltest.CheckShares(t, in.Shares(), b, f)
				for range 2 {
					if err := in.Run(t.Context()); err != nil {
						t.Fatal(err)
					}
				}
				if err := in.Verify(t.Context()); err != nil {
					t.Fatal(err)
				}
				if f != nil {
					kerneltest.CheckRecheck(t, in) // the transforms laid out for one device and back
				}
				if in.Model().Flops != 5*1024*10*float64(b) {
					t.Errorf("Model %+v", in.Model())
				}
			})
		}
	}
}

// TestFFTSplitSameAsOneDevice checks that a split draws the one-device op's input, reports
// its shape, and on devices that compute alike gives its output bit for bit.
func TestFFTSplitSameAsOneDevice(t *testing.T) {
	devs := kerneltest.SplitDevices(t, true)
	op := batchedOp(t)
	q, err := devs[0].NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	p := kernels.Params{Size: 5*fftBatchLen + 100, Seed: 3, Portable: true}
	if kerneltest.Small() { // Oclgrind
		p.Size = 2*fftBatchLen + 100
	}
	one, err := op.Setup(t.Context(), q, p)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if err := one.Run(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	want := one.(*fftInstance[float32])
	wantOut, err := want.out.Download(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	wantX, err := want.x.Last(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	in, err := op.Split(t.Context(), devs, p, kernels.SplitOptions{Fractions: kerneltest.SplitFractions(len(devs))[1]})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := in.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := in.(*fftSplitInstance[float32])
	if in.Shape() != one.Shape() || in.Model() != one.Model() {
		t.Errorf("shape %q, model %+v; one device %q, %+v", in.Shape(), in.Model(), one.Shape(), one.Model())
	}
	if err := kernels.CheckEqual("input", got.x, wantX[0]); err != nil {
		t.Fatal(err)
	}
	bits := func(x []float32) []uint32 {
		b := make([]uint32, len(x))
		for i, v := range x {
			b[i] = math.Float32bits(v)
		}
		return b
	}
	if err := kernels.CheckEqual("output bits", bits(got.out), bits(wantOut)); err != nil {
		t.Fatal(err)
	}
}

func TestFFTSplitInvalid(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	op := batchedOp(t)
	ok := kernels.Params{Size: 2048, Seed: 1}
	kerneltest.CheckSplitRefusals(t, op, append(kerneltest.PlacementRefusals(devs, ok), []kerneltest.SplitRefusal{
		{Name: "size 0", Devs: devs, P: kernels.Params{}, Want: engine.ErrInvalidArg},
		{Name: "size negative", Devs: devs, P: kernels.Params{Size: -4}, Want: engine.ErrInvalidArg},
		{Name: "tunables", Devs: devs, P: kernels.Params{Size: 2048, Tunables: "EPT=8"}, Want: engine.ErrInvalidArg},
		{Name: "vendor variant", Devs: devs, P: kernels.Params{Size: 2048, Variant: "clFFT"}, Want: engine.ErrUnsupported},
	}...))
	in, err := op.Split(t.Context(), devs, ok, kernels.SplitOptions{Fractions: kerneltest.SplitFractions(len(devs))[0]})
	if err != nil {
		t.Fatal(err)
	}
	kerneltest.CheckSplitLifecycle(t, in, "a wrong element of transform 1, the second part's", func() {
		in.(*fftSplitInstance[float32]).out[2*fftBatchLen+6] += 1
	})
}
