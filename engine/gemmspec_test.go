package engine_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// TestGemmSpecValidate checks the one GEMM shape rule on shapes that are valid, at the
// edges of each rule, and invalid, each refused with ErrInvalidArg and a message that
// names the problem.
func TestGemmSpecValidate(t *testing.T) {
	const big = 1 << 40
	for _, c := range []struct {
		name string
		s    engine.GemmSpec
		msg  string // empty: valid
	}{
		{"1x1x1", engine.GemmSpec{M: 1, N: 1, K: 1}, ""},
		{"rectangular", engine.GemmSpec{M: 7, N: 5, K: 3}, ""},
		{"every transpose", engine.GemmSpec{TransA: true, TransB: true, M: 7, N: 5, K: 3}, ""},
		{"lda = K", engine.GemmSpec{M: 8, N: 5, K: 6, LDA: 6}, ""},
		{"wider lda", engine.GemmSpec{M: 8, N: 5, K: 6, LDA: 100, LDB: 9, LDC: 7}, ""},
		{"lda = M transA", engine.GemmSpec{TransA: true, M: 8, N: 5, K: 6, LDA: 8}, ""},
		{"ldb = K transB", engine.GemmSpec{TransB: true, M: 8, N: 5, K: 6, LDB: 6}, ""},
		{"packed batch", engine.GemmSpec{M: 8, N: 5, K: 6, Batch: 3}, ""},
		{"C just apart", engine.GemmSpec{M: 8, N: 5, K: 6, Batch: 2, StrideC: 40}, ""},
		{"A and B shared by the batch", engine.GemmSpec{M: 8, N: 5, K: 6, Batch: 4, StrideA: 0, StrideB: 0}, ""},
		{"batch 65536", engine.GemmSpec{M: 1, N: 1, K: 1, Batch: 65536}, ""},
		{"beyond 32-bit indices", engine.GemmSpec{M: 50000, N: 50000, K: 50000}, ""},
		{"a column of 2^40 rows", engine.GemmSpec{M: 1 << 40, N: 1, K: 1}, ""},
		{"a row of 2^40 columns, transposed", engine.GemmSpec{TransA: true, TransB: true, M: 1, N: 1 << 40, K: 1}, ""},
		{"batch 1 with a stride", engine.GemmSpec{M: 2, N: 2, K: 2, Batch: 1, StrideC: 1}, ""},

		{"M=0", engine.GemmSpec{N: 5, K: 6}, "M=0"},
		{"N=0", engine.GemmSpec{M: 8, K: 6}, "N=0"},
		{"K=0", engine.GemmSpec{M: 8, N: 5}, "K=0"},
		{"M<0", engine.GemmSpec{M: -1, N: 5, K: 6}, "M=-1"},
		{"K<0", engine.GemmSpec{M: 8, N: 5, K: -6}, "K=-6"},
		{"negative lda", engine.GemmSpec{M: 8, N: 5, K: 6, LDA: -6}, "negative"},
		{"negative ldc", engine.GemmSpec{M: 8, N: 5, K: 6, LDC: -1}, "negative"},
		{"negative batch", engine.GemmSpec{M: 8, N: 5, K: 6, Batch: -1}, "negative batch -1"},
		{"negative stride", engine.GemmSpec{M: 8, N: 5, K: 6, Batch: 2, StrideA: -1}, "negative"},
		{"lda<K", engine.GemmSpec{M: 8, N: 5, K: 6, LDA: 5}, "lda 5 below the row length 6"},
		{"lda<M transA", engine.GemmSpec{TransA: true, M: 8, N: 5, K: 6, LDA: 6}, "lda 6 below the row length 8"},
		{"ldb<N", engine.GemmSpec{M: 8, N: 5, K: 6, LDB: 4}, "ldb 4 below the row length 5"},
		{"ldb<K transB", engine.GemmSpec{TransB: true, M: 8, N: 5, K: 6, LDB: 5}, "ldb 5 below the row length 6"},
		{"ldc<N", engine.GemmSpec{M: 8, N: 5, K: 6, LDC: 4}, "ldc 4 below N=5"},
		{"overlapping C", engine.GemmSpec{M: 8, N: 5, K: 6, Batch: 2, StrideC: 39}, "overlap (need at least 40)"},
		{"M*K overflows", engine.GemmSpec{M: big, N: 1, K: big}, "too large"},
		{"M*N overflows", engine.GemmSpec{M: big, N: big, K: 1}, "too large"},
		{"K*N overflows", engine.GemmSpec{M: 1, N: big, K: big}, "too large"},
		{"rows*lda overflows", engine.GemmSpec{M: 1 << 20, N: 1, K: 1, LDA: 1 << 40}, "too large"},
		{"dimension beyond int64 products", engine.GemmSpec{M: math.MaxInt, N: 1, K: 1}, "too large"},
		{"lda beyond int64 products", engine.GemmSpec{M: 2, N: 1, K: 1, LDA: math.MaxInt}, "too large"},
		{"batch span overflows", engine.GemmSpec{M: 1, N: 1, K: 1, Batch: 1 << 30, StrideA: 1 << 30}, "A spans"},
		{"batch of C spans too far", engine.GemmSpec{M: 1 << 20, N: 1 << 10, K: 1, Batch: 1 << 30}, "C spans"},
		{"batch beyond 2^53", engine.GemmSpec{M: 1, N: 1, K: 1, Batch: 1 << 54}, "too large"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.s.Validate()
			if c.msg == "" {
				if err != nil {
					t.Errorf("Validate(%+v) = %v, want nil", c.s, err)
				}
				return
			}
			if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("Validate(%+v) = %v, want ErrInvalidArg saying %q", c.s, err, c.msg)
			}
		})
	}
}

// TestGemmSpecSpans checks the spans of each buffer, counted as whole rows, beside Lens.
func TestGemmSpecSpans(t *testing.T) {
	for _, c := range []struct {
		s          engine.GemmSpec
		sa, sb, sc float64
		la, lb, lc int
	}{
		{engine.GemmSpec{M: 3, N: 5, K: 7}, 21, 35, 15, 21, 35, 15},
		{engine.GemmSpec{TransA: true, M: 3, N: 5, K: 7, Batch: 2}, 42, 70, 30, 42, 70, 30},
		{engine.GemmSpec{M: 3, N: 5, K: 7, LDA: 10, LDC: 6, Batch: 2, StrideB: 40}, 60, 75, 36, 57, 75, 35},
	} {
		sa, sb, sc := c.s.Spans()
		la, lb, lc := c.s.Lens()
		if sa != c.sa || sb != c.sb || sc != c.sc || la != c.la || lb != c.lb || lc != c.lc {
			t.Errorf("%v: Spans %v, %v, %v and Lens %d, %d, %d; want %v, %v, %v and %d, %d, %d", c.s, sa, sb, sc, la, lb, lc, c.sa, c.sb, c.sc, c.la, c.lb, c.lc)
		}
	}
}
