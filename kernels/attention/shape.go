package attention

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Shape is an attention's batch x heads x seq x dim as kernels.Params.Shape spells it:
// "4x32x4096x128" is Q, K, V and O of [4, 32, 4096, 128] each (batch 4, 32 heads, 4096
// queries and keys, head dimension 128).
type Shape struct{ Batch, Heads, Seq, Dim int }

// String spells s as ParseShape reads it: "4x32x4096x128".
func (s Shape) String() string { return fmt.Sprintf("%dx%dx%dx%d", s.Batch, s.Heads, s.Seq, s.Dim) }

// tensors returns the AttentionShape of s.
func (s Shape) tensors() AttentionShape {
	return AttentionShape{Batch: s.Batch, Heads: s.Heads, Seq: s.Seq, Dim: s.Dim}
}

// shapeExample ends every message about a shape's spelling.
const shapeExample = "batch x heads x seq x dim written BxHxSxD, e.g. 4x32x4096x128"

// ParseShape reads a shape written BxHxSxD: four whole numbers of decimal digits, each at
// least 1 and at most 2^31-1, separated by x (or X), such as "4x32x4096x128". Errors wrap
// engine.ErrInvalidArg and say what is wrong in the user's terms; the dimensions an op
// takes are CheckShape's.
func ParseShape(text string) (Shape, error) {
	bad := func(why string) (Shape, error) {
		return Shape{}, fmt.Errorf("kernels: attention: shape %q: %s: %w", text, why, engine.ErrInvalidArg)
	}
	t := strings.ToLower(strings.TrimSpace(text))
	if t == "" {
		return bad("empty; write " + shapeExample)
	}
	parts := strings.Split(t, "x")
	if len(parts) != 4 {
		n := len(strings.FieldsFunc(t, func(r rune) bool { return r == 'x' }))
		return bad(fmt.Sprintf("%d numbers; an attention shape is four, %s", n, shapeExample))
	}
	names := [4]string{"batch", "heads", "seq", "dim"}
	var d [4]int
	for i, p := range parts {
		digits := strings.TrimPrefix(p, "-")
		if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
			return bad(fmt.Sprintf("%s %q is not a whole number of decimal digits", names[i], p))
		}
		n, err := strconv.Atoi(p)
		switch {
		case strings.HasPrefix(p, "-") || (err == nil && n < 1):
			return bad(fmt.Sprintf("%s is %s; every dimension is at least 1", names[i], p))
		case err != nil || n > math.MaxInt32:
			return bad(fmt.Sprintf("%s %s is above 2^31-1", names[i], p))
		}
		d[i] = n
	}
	return Shape{Batch: d[0], Heads: d[1], Seq: d[2], Dim: d[3]}, nil
}

// opTypes are the storage types of the family's ops, with the dims their variants take
// besides the portable kernel's (any dim from 1 to AttentionMaxDim), for messages.
var opTypes = map[string]string{
	"float32":    FlashName + " and the portable kernel take any dim from 1 to 256",
	"float16":    "the portable kernel takes any dim from 1 to 256, cuda-mma 64 and 128, cuda-wgmma 64, 128 and 256",
	"bfloat16":   "the portable kernel takes any dim from 1 to 256, cuda-mma 64 and 128, cuda-wgmma 64, 128 and 256",
	"float8e4m3": "the portable kernel takes any dim from 1 to 256, cuda-wgmma 64, 128 and 256",
}

// opType returns the storage type of the attention op named name ("attention/full/bfloat16");
// false for a name outside the family.
func opType(name string) (string, bool) {
	parts := strings.Split(name, "/")
	if len(parts) != 3 || parts[0] != "attention" || (parts[1] != "full" && parts[1] != "causal") {
		return "", false
	}
	_, ok := opTypes[parts[2]]
	return parts[2], ok
}

// check checks s against what the attention op named name takes: a head dimension up to
// AttentionMaxDim (the variants that take fewer say so at Setup, with ErrUnsupported), and
// every element of a tensor within the int32 range the kernels index in. Errors wrap
// engine.ErrInvalidArg.
func (s Shape) check(name string) error {
	typ, ok := opType(name)
	if !ok {
		return fmt.Errorf("kernels: %s is not an op of the attention family: %w", name, engine.ErrInvalidArg)
	}
	if s.Dim > AttentionMaxDim {
		return fmt.Errorf("kernels: %s: shape %s: dim %d is above %d, the largest head dimension its kernels take (%s): %w",
			name, s, s.Dim, AttentionMaxDim, opTypes[typ], engine.ErrInvalidArg)
	}
	if e := float64(s.Batch) * float64(s.Heads) * float64(s.Seq) * float64(s.Dim); e > math.MaxInt32 {
		return fmt.Errorf("kernels: %s: shape %s: %.0f elements a tensor, above 2^31-1, the range the kernels index in: %w",
			name, s, e, engine.ErrInvalidArg)
	}
	return nil
}

// CheckShape reads text (ParseShape) and checks that the attention op named name can take
// it: a head dimension from 1 to AttentionMaxDim, which the portable kernel (and, for
// float32, flash-simt) takes; the tensor-core variants take fewer (cuda-mma 64 and 128,
// cuda-wgmma 64, 128 and 256) and refuse the others when set up, with an error wrapping
// engine.ErrUnsupported. Every element of Q, K, V and O must be within the int32 range the
// kernels index in. It returns the shape read; errors wrap engine.ErrInvalidArg. The
// device's own limits (its largest buffer, its memory) are checked when the op is set up.
func CheckShape(name, text string) (Shape, error) {
	s, err := ParseShape(text)
	if err != nil {
		return Shape{}, err
	}
	if err := s.check(name); err != nil {
		return Shape{}, err
	}
	return s, nil
}

// ShapeSize returns the size of shape s for the attention op named name as Op.SizeDoc
// counts sizes: the elements of one tensor, batch*heads*seq*dim.
func ShapeSize(name string, s Shape) int { return s.Batch * s.Heads * s.Seq * s.Dim }

// ShapeElements returns the elements of Q, K, V and O together of shape s: the memory a
// case of that shape needs is in proportion to them.
func ShapeElements(name string, s Shape) float64 {
	return 4 * float64(s.Batch) * float64(s.Heads) * float64(s.Seq) * float64(s.Dim)
}

// SizeShape returns the shape the attention op named name sets up at size (Op.SizeDoc's
// rule): for float32, batch 1, 8 heads of dimension 64, seq = size/512 (at least 1); for
// float16, bfloat16 and float8e4m3, batch 4, 32 heads of dimension 128, seq = size/16384, and below
// 16384 batch 1, size/128 heads (1 to 32) and seq 1. A shape is its size's case exactly
// when SizeShape(name, ShapeSize(name, s)) is s: it runs and reports as that size does.
func SizeShape(name string, size int) Shape {
	if typ, _ := opType(name); typ == "float32" {
		return Shape{Batch: 1, Heads: attnOpHeads, Seq: max(size/(attnOpHeads*attnOpDim), 1), Dim: attnOpDim}
	}
	if size < precOpBatch*precOpHeads*precOpDim { // less than one query per head: fewer heads
		return Shape{Batch: 1, Heads: min(max(size/precOpDim, 1), precOpHeads), Seq: 1, Dim: precOpDim}
	}
	return Shape{Batch: precOpBatch, Heads: precOpHeads, Seq: size / (precOpBatch * precOpHeads * precOpDim), Dim: precOpDim}
}

// shapeOf returns the shape that p asks of the attention op named name: p.Shape where set
// (CheckShape), else SizeShape of p.Size (at least 1). Errors name the op; a shape's wrap
// engine.ErrInvalidArg.
func shapeOf(name string, p kernels.Params) (AttentionShape, error) {
	if p.Shape != "" {
		s, err := ParseShape(p.Shape)
		if err != nil {
			return AttentionShape{}, fmt.Errorf("kernels: %s: %w", name, err)
		}
		if err := s.check(name); err != nil {
			return AttentionShape{}, err
		}
		return s.tensors(), nil
	}
	if err := kernels.CheckSize(name, p); err != nil {
		return AttentionShape{}, err
	}
	return SizeShape(name, p.Size).tensors(), nil
}
