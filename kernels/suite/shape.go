package suite

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/attention"
	"github.com/prism-compute/prism/kernels/gemm"
)

// Shape is a shape read for an op (kernels.Params.Shape): its canonical spelling, the size
// it counts as the op's SizeDoc counts sizes, whether that size alone gives the shape (a
// square GEMM; the attention shape of the op's size, such as 4x32x4096x128 for the float16
// and bfloat16 ops), the elements of its operands together, to which the memory it needs
// is in proportion, and Like, the size whose own shape has as many (the memory a case of
// the shape needs is about that size's).
type Shape struct {
	Canon    string
	Size     int
	Square   bool
	Elements float64
	Like     int
}

// shapeFamily is how the ops of a family take a shape: its spelling (how many numbers,
// what they are, an example) and the check of a shape for one of its ops.
type shapeFamily struct {
	numbers       int
	form, example string
	check         func(op, text string) (Shape, error)
}

// shapeFamilies are the families whose ops take a shape. The harness reaches them here,
// not in the families' packages.
var shapeFamilies = map[string]shapeFamily{
	"gemm": {3, "M x N x K written MxNxK", "4096x1024x512", func(op, text string) (Shape, error) {
		s, err := gemm.CheckShape(op, text)
		if err != nil {
			return Shape{}, err
		}
		e := gemm.ShapeElements(op, s)
		// A square's operands are 3 x its size.
		return Shape{Canon: s.String(), Size: gemm.ShapeSize(op, s), Square: s.Square(), Elements: e, Like: int(math.Ceil(e / 3))}, nil
	}},
	"attention": {4, "batch x heads x seq x dim written BxHxSxD", "4x32x4096x128", func(op, text string) (Shape, error) {
		s, err := attention.CheckShape(op, text)
		if err != nil {
			return Shape{}, err
		}
		size := attention.ShapeSize(op, s)
		// Every shape's Q, K, V and O are 4 x its size, as its size's own shape's are.
		return Shape{Canon: s.String(), Size: size, Square: attention.SizeShape(op, size) == s, Elements: attention.ShapeElements(op, s), Like: size}, nil
	}},
}

// TakesShape reports whether op takes a shape: the GEMM and attention ops.
func TakesShape(op kernels.Op) bool { _, ok := shapeFamilies[op.Family]; return ok }

// ShapeFamilies names the families whose ops take a shape, in order, for messages.
func ShapeFamilies() []string {
	var out []string
	for f := range shapeFamilies {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// numbers counts the numbers of a shape's spelling: one more than its x's.
func numbers(text string) int { return strings.Count(strings.ToLower(text), "x") + 1 }

// CheckShape reads text as a shape for op and checks that op can take it; errors wrap
// engine.ErrInvalidArg (or name the family, for an op that takes none: ok is false). A
// shape spelled as another family's (MxNxK for an attention op) is refused naming the op
// and the spelling it takes.
func CheckShape(op kernels.Op, text string) (s Shape, ok bool, err error) {
	f, ok := shapeFamilies[op.Family]
	if !ok {
		return Shape{}, false, nil
	}
	if n := numbers(text); n != f.numbers {
		for name, other := range shapeFamilies {
			if other.numbers == n {
				return Shape{}, true, fmt.Errorf("kernels: %s: shape %q: %d numbers, the %s family's spelling (%s); the %s ops take %s, e.g. %s: %w",
					op.Name, text, n, name, other.form, op.Family, f.form, f.example, engine.ErrInvalidArg)
			}
		}
	}
	s, err = f.check(op.Name, text)
	return s, true, err
}

// ParseShape reads a shape of either family's spelling, whatever op takes it: MxNxK
// (GEMM, three numbers) or BxHxSxD (attention, four), and returns its canonical spelling
// ("4095X4095X4095" is "4095x4095x4095"); errors wrap engine.ErrInvalidArg and say what is
// wrong. Whether an op takes the shape is CheckShape's.
func ParseShape(text string) (string, error) {
	switch numbers(text) {
	case shapeFamilies["gemm"].numbers:
		s, err := gemm.ParseShape(text)
		if err != nil {
			return "", err
		}
		return s.String(), nil
	case shapeFamilies["attention"].numbers:
		s, err := attention.ParseShape(text)
		if err != nil {
			return "", err
		}
		return s.String(), nil
	}
	var forms []string
	for _, name := range ShapeFamilies() {
		f := shapeFamilies[name]
		forms = append(forms, fmt.Sprintf("%s (%s, e.g. %s)", f.form, name, f.example))
	}
	return "", fmt.Errorf("kernels: shape %q: %d numbers; a shape is %s: %w",
		text, len(strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r == 'x' })), strings.Join(forms, " or "), engine.ErrInvalidArg)
}
