package gemm

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Shape is a GEMM's M x N x K as kernels.Params.Shape spells it: "4096x1024x512" is A
// 4096 x 512, B 512 x 1024 and C 4096 x 1024 (of each matrix of the batch, for batched
// GEMM), whatever the layout (op(A) is M x K, op(B) K x N). BetaZero, spelled
// "4096x1024x512:beta=0", makes the op D = alpha op(A) op(B): beta is 0 and C is not read,
// the product alone that torch's matmul and _scaled_mm compute, where the op's own beta is
// drawn nonzero and C read, as BLAS's GEMM and the in-process vendor call compute it.
type Shape struct {
	M, N, K  int
	BetaZero bool
}

// betaZeroOption is the one option a GEMM shape takes, after a colon.
const betaZeroOption = "beta=0"

// String spells s as ParseShape reads it: "4096x1024x512", or "4096x1024x512:beta=0".
func (s Shape) String() string {
	t := fmt.Sprintf("%dx%dx%d", s.M, s.N, s.K)
	if s.BetaZero {
		t += ":" + betaZeroOption
	}
	return t
}

// Square reports whether s is the shape a size gives: M = N = K (round(sqrt(size)) each),
// with the op's own beta (a size never gives beta=0).
func (s Shape) Square() bool { return s.M == s.N && s.N == s.K && !s.BetaZero }

// ParseShape reads a shape written MxNxK: three whole numbers from 1 to the kernels' largest
// dimension, in decimal digits, separated by x (or X), such as "4096x1024x512" or
// "4095x4095x4095", optionally followed by ":beta=0" (Shape.BetaZero). Errors wrap
// engine.ErrInvalidArg and say what is wrong in the user's terms.
func ParseShape(text string) (Shape, error) {
	bad := func(why string) (Shape, error) {
		return Shape{}, fmt.Errorf("kernels: gemm: shape %q: %s: %w", text, why, engine.ErrInvalidArg)
	}
	t, opt, hasOpt := strings.Cut(strings.TrimSpace(text), ":")
	t = strings.TrimSpace(t)
	betaZero := false
	if hasOpt {
		if o := strings.ToLower(strings.ReplaceAll(opt, " ", "")); o != betaZeroOption {
			return bad(fmt.Sprintf("option %q: the one option a shape takes is %s (D = alpha*A*B, C not read), e.g. 8192x8192x8192:%s",
				opt, betaZeroOption, betaZeroOption))
		}
		betaZero = true
	}
	if t == "" {
		return bad("empty; write M x N x K as MxNxK, e.g. 4096x1024x512")
	}
	parts := strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return r == 'x' })
	if len(parts) != 3 || strings.Count(strings.ToLower(t), "x") != 2 {
		return bad(fmt.Sprintf("%d numbers; a shape is three, M x N x K written MxNxK, e.g. 4096x1024x512", len(parts)))
	}
	var d [3]int
	for i, p := range parts {
		name := "MNK"[i : i+1]
		digits := strings.TrimPrefix(p, "-")
		if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
			return bad(fmt.Sprintf("%s %q is not a whole number of decimal digits", name, p))
		}
		n, err := strconv.Atoi(p)
		switch {
		case strings.HasPrefix(p, "-") || n < 1:
			return bad(fmt.Sprintf("%s is %s; every dimension is at least 1", name, p))
		case err != nil || n > maxKernelDim:
			return bad(fmt.Sprintf("%s %s is above %d, the kernels' largest dimension", name, p, maxKernelDim))
		}
		d[i] = n
	}
	return Shape{M: d[0], N: d[1], K: d[2], BetaZero: betaZero}, nil
}

// layoutOf returns the transposes and batch count of the gemm op named name
// ("gemm/nt/float32"): its layout is the second part of its name.
func layoutOf(name string) (ta, tb bool, batch int, ok bool) {
	parts := strings.Split(name, "/")
	if len(parts) != 3 || parts[0] != "gemm" {
		return false, false, 0, false
	}
	for _, l := range gemmLayouts {
		if l.name == parts[1] {
			return l.ta, l.tb, l.batch, true
		}
	}
	return false, false, 0, false
}

// spec returns the GEMMShape of s for the op named name and checks it against the
// kernels' limits (checkShape: every index within int32).
func (s Shape) spec(name string) (GEMMShape, error) {
	ta, tb, batch, ok := layoutOf(name)
	if !ok {
		return GEMMShape{}, fmt.Errorf("kernels: %s is not an op of the gemm family: %w", name, engine.ErrInvalidArg)
	}
	g := GEMMShape{TransA: ta, TransB: tb, M: s.M, N: s.N, K: s.K, Batch: batch}.WithDefaults()
	if err := checkShape(g); err != nil {
		return GEMMShape{}, fmt.Errorf("kernels: %s: shape %s: %w", name, s, err)
	}
	return g, nil
}

// CheckShape reads text (ParseShape) and checks that the gemm op named name can take it:
// every element of A, B and C, over the batch of gemm/batched, within the int32 range
// the kernels index in. It returns the shape read; errors wrap engine.ErrInvalidArg. The
// device's own limits (its largest buffer, its memory) are checked when the op is set
// up.
func CheckShape(name, text string) (Shape, error) {
	s, err := ParseShape(text)
	if err != nil {
		return Shape{}, err
	}
	if _, err := s.spec(name); err != nil {
		return Shape{}, err
	}
	return s, nil
}

// ShapeSize returns the size of shape s, as CheckShape returned it, for the gemm op named
// name as Op.SizeDoc counts sizes: the elements of C over the batch (M*N times the batch
// count). A square shape's size gives that shape back, so `--sizes` and `--shapes` meet
// on squares.
func ShapeSize(name string, s Shape) int {
	_, _, batch, ok := layoutOf(name)
	if !ok {
		batch = 1
	}
	return s.M * s.N * batch
}

// ShapeElements returns the elements of A, B and C together of shape s for the gemm op
// named name, over its batch: the memory a case of that shape needs is in proportion to
// them (a size's square shape has 3*size).
func ShapeElements(name string, s Shape) float64 {
	_, _, batch, ok := layoutOf(name)
	if !ok {
		batch = 1
	}
	m, n, k := float64(s.M), float64(s.N), float64(s.K)
	return float64(batch) * (m*k + k*n + m*n)
}

// shapeOf returns the GEMM shape that p asks for: p.Shape where set, else M = N = K =
// round(sqrt(p.Size / batch)); and whether beta is 0 (Shape.BetaZero). Errors wrap
// engine.ErrInvalidArg and name the op.
func shapeOf(name string, ta, tb bool, batch int, p kernels.Params) (GEMMShape, bool, error) {
	if p.Shape != "" {
		s, err := ParseShape(p.Shape)
		if err != nil {
			return GEMMShape{}, false, fmt.Errorf("kernels: %s: %w", name, err)
		}
		g := GEMMShape{TransA: ta, TransB: tb, M: s.M, N: s.N, K: s.K, Batch: batch}.WithDefaults()
		if err := checkShape(g); err != nil {
			return GEMMShape{}, false, fmt.Errorf("kernels: %s: shape %s: %w", name, s, err)
		}
		return g, s.BetaZero, nil
	}
	if err := kernels.CheckSize(name, p); err != nil {
		return GEMMShape{}, false, err
	}
	n := max(int(math.Round(math.Sqrt(float64(p.Size)/float64(batch)))), 1)
	g := GEMMShape{TransA: ta, TransB: tb, M: n, N: n, K: n, Batch: batch}.WithDefaults()
	if err := checkShape(g); err != nil {
		return GEMMShape{}, false, fmt.Errorf("kernels: %s: size %d: %w", name, p.Size, err)
	}
	return g, false, nil
}

// shapeText describes shape s as Instance.Shape does: "M=N=K=1024" where square (the
// shapes sizes give), else "M=4096 N=1024 K=512"; "batch=8 " before either for a batch,
// " beta=0" after it where beta is 0.
func shapeText(s GEMMShape, betaZero bool) string {
	t := fmt.Sprintf("M=%d N=%d K=%d", s.M, s.N, s.K)
	if s.M == s.N && s.N == s.K {
		t = fmt.Sprintf("M=N=K=%d", s.M)
	}
	if s.Batch > 1 {
		t = fmt.Sprintf("batch=%d %s", s.Batch, t)
	}
	if betaZero {
		t += " " + betaZeroOption
	}
	return t
}
