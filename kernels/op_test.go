package kernels_test

import (
	"slices"
	"testing"

	"github.com/prism-compute/prism/kernels"
)

// TestAliasedNames: common spellings of element types become the names ops use, so that a
// suggestion for gemm/nn/fp32 is gemm/nn/float32, not the nearer tf32.
func TestAliasedNames(t *testing.T) {
	for _, c := range []struct {
		name string
		want []string
	}{
		{"gemm/nn/fp32", []string{"gemm/nn/float32"}},
		{"gemm/nn/FP64", []string{"gemm/nn/float64"}},
		{"stream/copy/f32", []string{"stream/copy/float32"}},
		{"gemm/nn/half", []string{"gemm/nn/float16"}},
		{"gemm/nn/fp16", []string{"gemm/nn/float16"}},
		{"gemm/nn/bf16", []string{"gemm/nn/bfloat16"}},
		{"gemm/nn/fp8", []string{"gemm/nn/float8e4m3", "gemm/nn/float8e5m2"}},
		{"gemm/nn/e5m2", []string{"gemm/nn/float8e5m2"}},
		{"fp32", []string{"float32"}},
		{"gemm/nn/float32", nil},
		{"gemm/nn/tf32", nil},
		{"gemm", nil},
	} {
		if got := kernels.AliasedNames(c.name); !slices.Equal(got, c.want) {
			t.Errorf("AliasedNames(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
