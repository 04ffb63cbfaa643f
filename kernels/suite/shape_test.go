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

// TestShapeRefused: every variant that fits the device, of every op outside the GEMM
// family, refuses a shape (kernels.Params.Shape) by its family's name with ErrUnsupported,
// before any work; the GEMM ops take it.
func TestShapeRefused(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		checked := 0
		for _, op := range suite.Ops() {
			for _, v := range op.Variants {
				if v.Fits(dev) != nil || op.Family == "gemm" {
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
	})
}
