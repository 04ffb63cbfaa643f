package gemm

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestParseShape reads good shapes and names what is wrong with bad ones.
func TestParseShape(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Shape
	}{
		{"4096x1024x512", Shape{M: 4096, N: 1024, K: 512}},
		{"4095X4095X4095", Shape{M: 4095, N: 4095, K: 4095}},
		{" 8192x128x8192 ", Shape{M: 8192, N: 128, K: 8192}},
		{"1x1x1", Shape{M: 1, N: 1, K: 1}},
		{"007x1x1", Shape{M: 7, N: 1, K: 1}},
		{"8192x8192x8192:beta=0", Shape{M: 8192, N: 8192, K: 8192, BetaZero: true}},
		{" 64x32x16 : BETA = 0 ", Shape{M: 64, N: 32, K: 16, BetaZero: true}},
	} {
		got, err := ParseShape(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseShape(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if back, err := ParseShape(got.String()); err != nil || back != got {
			t.Errorf("ParseShape(%q) = %v, %v; want %v back", got.String(), back, err, got)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "empty"},
		{"4096", "1 numbers; a shape is three"},
		{"4096x4096", "2 numbers; a shape is three"},
		{"4096x4096x", "2 numbers"},
		{"1x2x3x4", "4 numbers"},
		{"1xx2x3", "3 numbers; a shape is three"}, // three numbers, but three x's
		{"0x64x64", "M is 0; every dimension is at least 1"},
		{"64x-5x64", "N is -5; every dimension is at least 1"},
		{"64x64x+5", `K "+5" is not a whole number`},
		{"64x64x1.5", `K "1.5" is not a whole number`},
		{"4Kx4Kx4K", `M "4k" is not a whole number`},
		{"64x99999999999999999999x64", "N 99999999999999999999 is above 2147482623"},
		{"64x64x2147482624", "K 2147482624 is above 2147482623"},
		{"64x64x64:beta=1", `option "beta=1": the one option a shape takes is beta=0`},
		{"64x64x64:", `option "": the one option`},
		{"64x64x64:alpha=2", `option "alpha=2"`},
		{"64x0x64:beta=0", "N is 0"},
	} {
		_, err := ParseShape(c.in)
		if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseShape(%q) = %v; want an error wrapping ErrInvalidArg with %q", c.in, err, c.want)
		}
	}
}

// TestCheckShapeOp checks shapes against each layout's buffers: a shape whose A, B or C
// (over the batch of gemm/batched) would span more than the kernels' int32 indices is
// refused, naming the matrix; sizes and element counts follow the layout's batch.
func TestCheckShapeOp(t *testing.T) {
	if _, err := CheckShape("gemm/nn/float32", "46340x46340x46340"); err != nil {
		t.Errorf("46340^2 elements fit int32: %v", err)
	}
	for _, c := range []struct{ op, shape, want string }{
		{"gemm/nn/float32", "65536x16x65536", "A spans 4294967296 elements"},
		{"gemm/nt/bfloat16", "16x100000x100000", "B spans 10000000000 elements"},
		{"gemm/batched/float32", "20000x20000x1", "C spans 3200000000 elements"}, // 8 matrices of 4e8
		{"stream/triad/float32", "2x2x2", "not an op of the gemm family"},
		{"gemm/nn/float32", "2x2", "2 numbers"},
	} {
		_, err := CheckShape(c.op, c.shape)
		if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckShape(%s, %s) = %v; want an error wrapping ErrInvalidArg with %q", c.op, c.shape, err, c.want)
		}
	}
	if !(Shape{M: 8, N: 8, K: 8}).Square() || (Shape{M: 8, N: 8, K: 8, BetaZero: true}).Square() {
		t.Errorf("Square: 8x8x8 is the shape of size 64; 8x8x8:beta=0 is no size's shape")
	}
	s := Shape{M: 4096, N: 1024, K: 512}
	if got := ShapeSize("gemm/nn/float32", s); got != 4096*1024 {
		t.Errorf("size of %v = %d; want M*N", s, got)
	}
	if got := ShapeSize("gemm/batched/float32", s); got != 8*4096*1024 {
		t.Errorf("batched size of %v = %d; want 8*M*N", s, got)
	}
	if got := ShapeElements("gemm/nn/float32", s); got != 4096*512+512*1024+4096*1024 {
		t.Errorf("elements of %v = %v", s, got)
	}
}

// TestOpShapes runs each layout's portable variant at shapes that are no tile's multiple,
// skinny and degenerate, given through Params.Shape (Size not given), and checks every
// element against the float64 reference, the shape reported and the model's FLOPs.
func TestOpShapes(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, name := range []string{"gemm/nn/float32", "gemm/nt/float32", "gemm/tn/float32", "gemm/batched/float32"} {
			op := opNamed(t, name)
			shapes := []string{"17x33x5", "64x1x300", "1x1x1", "3x70x129", "17x33x5:beta=0"}
			if kerneltest.Small() {
				// Under Oclgrind (small sizes) the long K of the skinny shapes took 3 to 9 s a
				// layout for the same loop over K tiles: K = 40 and 33 still cross the K tile
				// of every device's tunables (16 or 32) and end in a partial one, as TestGEMM's
				// K = 33 does, with N = 1 and M = 3 kept.
				shapes = []string{"17x33x5", "64x1x40", "1x1x1", "3x70x33", "17x33x5:beta=0"}
			}
			for _, shape := range shapes {
				if kerneltest.Small() && name == "gemm/batched/float32" && (shape == "64x1x40" || shape == "3x70x33") {
					// The batched kernel, nn's with a batch index, takes longest under Oclgrind;
					// the skinny shapes run unbatched above and TestGEMM runs batches.
					continue
				}
				t.Run(name+"/"+shape, func(t *testing.T) {
					s, err := ParseShape(shape)
					if err != nil {
						t.Fatal(err)
					}
					in, err := op.Setup(t.Context(), q, kernels.Params{Shape: shape, Seed: 5, Portable: true})
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
					batch := 1
					want := fmt.Sprintf("M=%d N=%d K=%d", s.M, s.N, s.K)
					if s.Square() {
						want = fmt.Sprintf("M=N=K=%d", s.M)
					}
					if name == "gemm/batched/float32" {
						batch = gemmOpBatch
						want = fmt.Sprintf("batch=%d %s", batch, want)
					}
					m, n, k := float64(s.M), float64(s.N), float64(s.K)
					flops, bytes := float64(batch)*(2*m*n*k+3*m*n), float64(batch)*4*(m*k+k*n+2*m*n)
					if s.BetaZero { // D = alpha*A*B: C neither read nor scaled
						want += " beta=0"
						flops, bytes = float64(batch)*(2*m*n*k+m*n), float64(batch)*4*(m*k+k*n+m*n)
					}
					if got := in.Shape(); got != want {
						t.Errorf("Shape() = %q; want %q", got, want)
					}
					if got := in.Model(); got.Flops != flops || got.Bytes != bytes {
						t.Errorf("model %v FLOPs, %v bytes; want %v, %v", got.Flops, got.Bytes, flops, bytes)
					}
				})
			}
		}
	})
}

// TestShapeRefused checks that a bad shape fails Setup with ErrInvalidArg naming the op,
// that a size alone still gives its square, and that another family refuses a shape by
// name with ErrUnsupported.
func TestShapeRefused(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		op := opNamed(t, "gemm/nn/float32")
		_, err := op.Setup(t.Context(), q, kernels.Params{Shape: "0x4x4", Portable: true})
		if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "gemm/nn/float32") || !strings.Contains(err.Error(), "M is 0") {
			t.Errorf("shape 0x4x4: %v; want ErrInvalidArg naming the op and M", err)
		}
		in, err := op.Setup(t.Context(), q, kernels.Params{Size: 100, Portable: true})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		if got := in.Shape(); got != "M=N=K=10" {
			t.Errorf("size 100: shape %q; want M=N=K=10", got)
		}
	})
	err := kernels.CheckSize("stream/triad/float32", kernels.Params{Size: 8, Shape: "2x2x2"})
	if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "the stream family takes a size, not a shape") {
		t.Errorf("a shape given to stream: %v; want ErrUnsupported naming the family", err)
	}
}
