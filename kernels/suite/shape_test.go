package suite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
	"github.com/prism-compute/prism/kernels/suite"
)

// TestShapeRefused: every variant that fits the device, of every op outside the GEMM and
// attention families, refuses a shape (kernels.Params.Shape) by its family's name with
// ErrUnsupported, before any work; the GEMM and attention ops take it.
func TestShapeRefused(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		checked := 0
		for _, op := range suite.Ops() {
			for _, v := range op.Variants {
				if v.Fits(dev) != nil || suite.TakesShape(op) {
					continue
				}
				in, err := v.Setup(t.Context(), q, kernels.Params{Size: 1, Shape: "2x2x2", Variant: v.Name})
				if err == nil {
					in.Close()
				}
				want := "the " + op.Family + " family takes a size, not a shape"
				if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), want) {
					t.Errorf("%s %s with a shape: %v; want ErrUnsupported with %q", op.Name, v.Name, err, want)
				}
				checked++
			}
		}
		if checked < 50 {
			t.Errorf("%d variants checked; want the suite's", checked)
		}
		op, err := suite.Lookup("gemm/tn/float32")
		if err != nil {
			t.Fatal(err)
		}
		in, err := op.Setup(t.Context(), q, kernels.Params{Shape: "2x3x4", Portable: true})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		if in.Shape() != "M=2 N=3 K=4" {
			t.Errorf("gemm/tn/float32 at 2x3x4: %s", in.Shape())
		}
		op, err = suite.Lookup("attention/causal/bfloat16")
		if err != nil {
			t.Fatal(err)
		}
		at, err := op.Setup(t.Context(), q, kernels.Params{Shape: "2x3x5x80", Portable: true})
		if err != nil {
			t.Fatal(err)
		}
		defer at.Close()
		if at.Shape() != "batch=2 heads=3 seq=5 dim=80 causal" {
			t.Errorf("attention/causal/bfloat16 at 2x3x5x80: %s", at.Shape())
		}
	})
}

// TestCheckShapeFamilies: the GEMM and attention families take shapes, each in its own
// spelling; CheckShape gives each shape's canonical spelling, size, elements, the size
// whose memory it needs, and whether its size alone gives it (then it is that size's
// case); a shape in the other family's spelling is refused naming the op and the spelling
// it takes; ParseShape reads both spellings and names both for any other.
func TestCheckShapeFamilies(t *testing.T) {
	if got := suite.ShapeFamilies(); strings.Join(got, ",") != "attention,gemm" {
		t.Errorf("ShapeFamilies() = %v", got)
	}
	for _, c := range []struct {
		op, text string
		want     suite.Shape
	}{
		{"gemm/nn/float32", "64X64x64", suite.Shape{Canon: "64x64x64", Size: 4096, Square: true, Elements: 3 * 4096, Like: 4096}},
		{"gemm/nn/float32", "96x32x128", suite.Shape{Canon: "96x32x128", Size: 96 * 32, Elements: 96*128 + 128*32 + 96*32, Like: 6486}},
		// The float16 and bfloat16 ops' size 64M is 4x32x4096x128; dim 64 and 256 are cases of their own.
		{"attention/full/bfloat16", "4x32x4096x128", suite.Shape{Canon: "4x32x4096x128", Size: 1 << 26, Square: true, Elements: 4 << 26, Like: 1 << 26}},
		{"attention/full/bfloat16", "4x32x4096x64", suite.Shape{Canon: "4x32x4096x64", Size: 1 << 25, Elements: 4 << 25, Like: 1 << 25}},
		{"attention/causal/float16", "4X32X4096X256", suite.Shape{Canon: "4x32x4096x256", Size: 1 << 27, Elements: 4 << 27, Like: 1 << 27}},
		{"attention/full/float16", "1x3x1x128", suite.Shape{Canon: "1x3x1x128", Size: 384, Square: true, Elements: 4 * 384, Like: 384}},
		// The float32 ops' size 2M is 1x8x4096x64.
		{"attention/full/float32", "1x8x4096x64", suite.Shape{Canon: "1x8x4096x64", Size: 1 << 21, Square: true, Elements: 4 << 21, Like: 1 << 21}},
		{"attention/full/float32", "4x32x4096x128", suite.Shape{Canon: "4x32x4096x128", Size: 1 << 26, Elements: 4 << 26, Like: 1 << 26}},
	} {
		op, err := suite.Lookup(c.op)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := suite.CheckShape(op, c.text)
		if !ok || err != nil || got != c.want {
			t.Errorf("CheckShape(%s, %s) = %+v, %v, %v; want %+v", c.op, c.text, got, ok, err, c.want)
		}
	}
	for _, c := range []struct{ op, text, want string }{
		{"attention/full/bfloat16", "4096x4096x4096", `kernels: attention/full/bfloat16: shape "4096x4096x4096": 3 numbers, the gemm family's spelling (M x N x K written MxNxK); the attention ops take batch x heads x seq x dim written BxHxSxD, e.g. 4x32x4096x128`},
		{"gemm/nn/float32", "4x32x4096x128", `kernels: gemm/nn/float32: shape "4x32x4096x128": 4 numbers, the attention family's spelling (batch x heads x seq x dim written BxHxSxD); the gemm ops take M x N x K written MxNxK, e.g. 4096x1024x512`},
		{"attention/full/float32", "1x1x1x300", "dim 300 is above 256"},
		{"attention/full/float32", "1x1x1", "3 numbers"},
		{"attention/full/float32", "1x1", "2 numbers; an attention shape is four"},
	} {
		op, err := suite.Lookup(c.op)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := suite.CheckShape(op, c.text); !ok || !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckShape(%s, %s) = %v, %v; want ErrInvalidArg with %q", c.op, c.text, ok, err, c.want)
		}
	}
	op, err := suite.Lookup("fft/c2c/float32")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := suite.CheckShape(op, "1x1x1x1"); ok || err != nil {
		t.Errorf("fft: ok %v, %v; want an op that takes no shape", ok, err)
	}
	for in, want := range map[string]string{"4095X4095X4095": "4095x4095x4095", " 4X32x4096x128 ": "4x32x4096x128"} {
		if got, err := suite.ParseShape(in); err != nil || got != want {
			t.Errorf("ParseShape(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"64x64":       `kernels: shape "64x64": 2 numbers; a shape is batch x heads x seq x dim written BxHxSxD (attention, e.g. 4x32x4096x128) or M x N x K written MxNxK (gemm, e.g. 4096x1024x512)`,
		"1x2x3x4x5":   "5 numbers; a shape is",
		"0x32x64x128": "batch is 0",
		"0x64x64":     "M is 0",
	} {
		if _, err := suite.ParseShape(in); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseShape(%q) = %v; want ErrInvalidArg with %q", in, err, want)
		}
	}
}
