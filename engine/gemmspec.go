package engine

import (
	"fmt"

	"github.com/prism-compute/prism/engine/driver"
)

// GemmSpec describes one general matrix multiply, or a strided batch of them, in
// row-major storage: C = alpha*op(A)*op(B) + beta*C with op(A) M x K, op(B) K x N and C
// M x N, where op(X) = X^T when TransX. It is the one GEMM shape of Prism: the vendor
// BLAS (Gemm) and the kernel suite's own GEMMs (kernels/gemm, which calls it GEMMShape)
// take it. Zero leading dimensions, batch and strides take their defaults (WithDefaults).
// A GemmSpec is a plain value, safe to copy and to share.
type GemmSpec struct {
	// TransA and TransB select op(A) = A^T (A stored K x M) and op(B) = B^T (B stored N x K).
	TransA, TransB bool
	// M, N and K are the dimensions of op(A) (M x K), op(B) (K x N) and C (M x N); all >= 1.
	M, N, K int
	// LDA, LDB and LDC are the leading dimensions: elements between consecutive rows of the
	// stored matrices. 0 means the row length (K or M for A, N or K for B, N for C); a
	// larger value addresses a sub-matrix of a wider array.
	LDA, LDB, LDC int
	// Batch is the number of products (0 means 1). Matrix z of X starts at element
	// z*StrideX of its buffer.
	Batch int
	// StrideA, StrideB and StrideC are the elements between consecutive matrices of a
	// batch. 0 means packed (rows times leading dimension). Matrices of C may not overlap.
	StrideA, StrideB, StrideC int
}

// WithDefaults returns s with its zero leading dimensions, batch and strides replaced by
// their defaults.
func (s GemmSpec) WithDefaults() GemmSpec {
	rowsA, colsA := s.StoredA()
	rowsB, colsB := s.StoredB()
	if s.LDA == 0 {
		s.LDA = colsA
	}
	if s.LDB == 0 {
		s.LDB = colsB
	}
	if s.LDC == 0 {
		s.LDC = s.N
	}
	if s.Batch == 0 {
		s.Batch = 1
	}
	if s.StrideA == 0 {
		s.StrideA = rowsA * s.LDA
	}
	if s.StrideB == 0 {
		s.StrideB = rowsB * s.LDB
	}
	if s.StrideC == 0 {
		s.StrideC = s.M * s.LDC
	}
	return s
}

// StoredA returns the rows and columns of A as stored (M x K, or K x M when transposed).
func (s GemmSpec) StoredA() (rows, cols int) {
	if s.TransA {
		return s.K, s.M
	}
	return s.M, s.K
}

// StoredB returns the rows and columns of B as stored (K x N, or N x K when transposed).
func (s GemmSpec) StoredB() (rows, cols int) {
	if s.TransB {
		return s.N, s.K
	}
	return s.K, s.N
}

// Lens returns the number of elements the buffers of A, B and C must hold at least: the
// last element of the last matrix, plus one. The spec must be valid (Validate).
func (s GemmSpec) Lens() (a, b, c int) {
	s = s.WithDefaults()
	span := func(rows, cols, ld, stride int) int { return (s.Batch-1)*stride + (rows-1)*ld + cols }
	rowsA, colsA := s.StoredA()
	rowsB, colsB := s.StoredB()
	return span(rowsA, colsA, s.LDA, s.StrideA), span(rowsB, colsB, s.LDB, s.StrideB), span(s.M, s.N, s.LDC, s.StrideC)
}

// Spans returns, for a valid spec (Validate), the elements each of A, B and C spans
// counted as whole rows: (Batch-1)*stride + rows*ld, in float64 (exact far beyond any
// buffer). Lens is the same less the padding of the last row; an implementation that
// indexes in a narrower integer compares these with its range.
func (s GemmSpec) Spans() (a, b, c float64) {
	d := s.WithDefaults()
	rowsA, _ := d.StoredA()
	rowsB, _ := d.StoredB()
	span := func(rows, ld, stride int) float64 {
		return float64(d.Batch-1)*float64(stride) + float64(rows)*float64(ld)
	}
	return span(rowsA, d.LDA, d.StrideA), span(rowsB, d.LDB, d.StrideB), span(d.M, d.LDC, d.StrideC)
}

// String describes the spec, e.g. "nt M=64 N=64 K=32 lda=32 ldb=32 ldc=64" (and the batch
// and strides when Batch > 1).
func (s GemmSpec) String() string {
	s = s.WithDefaults()
	t := func(b bool) string {
		if b {
			return "t"
		}
		return "n"
	}
	out := fmt.Sprintf("%s%s M=%d N=%d K=%d lda=%d ldb=%d ldc=%d", t(s.TransA), t(s.TransB), s.M, s.N, s.K, s.LDA, s.LDB, s.LDC)
	if s.Batch > 1 {
		out += fmt.Sprintf(" batch=%d strides=%d,%d,%d", s.Batch, s.StrideA, s.StrideB, s.StrideC)
	}
	return out
}

// maxSpan bounds the element count of any buffer a spec describes, so that spans computed
// in int cannot overflow (no device holds 2^53 elements anyway).
const maxSpan = 1 << 53

// Validate checks the spec alone (not the buffers): dimensions >= 1, leading dimensions at
// least the stored row length, batch and strides >= 0 (0 = default), the matrices of C
// not overlapping, and every matrix and buffer span below 2^53 elements, so that no
// product of dimensions overflows. Errors wrap ErrInvalidArg and name the problem.
//
// These are the rules of the shape itself. An implementation with narrower limits checks
// them on its own: cuBLAS takes 32-bit dimensions, and Prism's GEMM kernels index in
// 32-bit integers and launch one grid row per matrix of a batch.
func (s GemmSpec) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("engine: gemm: "+format+": %w", append(args, ErrInvalidArg)...)
	}
	if s.M < 1 || s.N < 1 || s.K < 1 {
		return bad("dimensions M=%d N=%d K=%d; all must be at least 1", s.M, s.N, s.K)
	}
	if s.Batch < 0 || s.StrideA < 0 || s.StrideB < 0 || s.StrideC < 0 || s.LDA < 0 || s.LDB < 0 || s.LDC < 0 {
		return bad("negative batch %d, strides %d,%d,%d or leading dimensions %d,%d,%d", s.Batch, s.StrideA, s.StrideB, s.StrideC, s.LDA, s.LDB, s.LDC)
	}
	// Every product below is computed in float64 first: exact far beyond maxSpan.
	for _, v := range []int{s.M, s.N, s.K, s.LDA, s.LDB, s.LDC, s.Batch, s.StrideA, s.StrideB, s.StrideC} {
		if v > maxSpan {
			return bad("%d is too large", v)
		}
	}
	rowsA, colsA := s.StoredA()
	rowsB, colsB := s.StoredB()
	for _, x := range []struct {
		rows, ld int
	}{{rowsA, max(s.LDA, colsA)}, {rowsB, max(s.LDB, colsB)}, {s.M, max(s.LDC, s.N)}} {
		if float64(x.rows)*float64(x.ld) > maxSpan {
			return bad("a matrix of %d rows of %d elements is too large", x.rows, x.ld)
		}
	}
	d := s.WithDefaults()
	switch {
	case d.LDA < colsA:
		return bad("lda %d below the row length %d of A as stored (transA=%v)", d.LDA, colsA, d.TransA)
	case d.LDB < colsB:
		return bad("ldb %d below the row length %d of B as stored (transB=%v)", d.LDB, colsB, d.TransB)
	case d.LDC < d.N:
		return bad("ldc %d below N=%d", d.LDC, d.N)
	case d.Batch > 1 && d.StrideC < (d.M-1)*d.LDC+d.N:
		return bad("strideC %d makes the matrices of C overlap (need at least %d)", d.StrideC, (d.M-1)*d.LDC+d.N)
	}
	sa, sb, sc := d.Spans()
	for _, x := range []struct {
		name string
		span float64
	}{{"A", sa}, {"B", sb}, {"C", sc}} {
		if x.span > maxSpan {
			return bad("%s spans %.0f elements", x.name, x.span)
		}
	}
	return nil
}

// driverArgs returns the backend's arguments for the spec (with its defaults resolved) in
// element type typ, on buffers a, b and c.
func (s GemmSpec) driverArgs(typ driver.ElemType, alpha, beta float64, a, b, c driver.Buffer) driver.GemmArgs {
	d := s.WithDefaults()
	return driver.GemmArgs{
		Type: typ, TransA: d.TransA, TransB: d.TransB, M: d.M, N: d.N, K: d.K,
		Alpha: alpha, Beta: beta,
		A: a, B: b, C: c,
		LDA: d.LDA, LDB: d.LDB, LDC: d.LDC,
		Batch: d.Batch, StrideA: int64(d.StrideA), StrideB: int64(d.StrideB), StrideC: int64(d.StrideC),
	}
}
