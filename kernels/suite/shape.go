package suite

import (
	"slices"

	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/gemm"
)

// Shape is a shape read for an op (kernels.Params.Shape): its canonical spelling, the size
// it counts as the op's SizeDoc counts sizes, whether that size alone gives the shape (a
// square), and the elements of its operands together, to which the memory it needs is in
// proportion.
type Shape struct {
	Canon    string
	Size     int
	Square   bool
	Elements float64
}

// shapeFamilies are the families whose ops take a shape, each with the check of a shape
// for one of its ops. The harness reaches them here, not in the families' packages.
var shapeFamilies = map[string]func(op, text string) (Shape, error){
	"gemm": func(op, text string) (Shape, error) {
		s, err := gemm.CheckShape(op, text)
		if err != nil {
			return Shape{}, err
		}
		return Shape{Canon: s.String(), Size: gemm.ShapeSize(op, s), Square: s.Square(), Elements: gemm.ShapeElements(op, s)}, nil
	},
}

// TakesShape reports whether op takes a shape: the GEMM ops.
func TakesShape(op kernels.Op) bool { return shapeFamilies[op.Family] != nil }

// ShapeFamilies names the families whose ops take a shape, in order, for messages.
func ShapeFamilies() []string {
	var out []string
	for f := range shapeFamilies {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// CheckShape reads text as a shape for op and checks that op can take it; errors wrap
// engine.ErrInvalidArg (or name the family, for an op that takes none: ok is false).
func CheckShape(op kernels.Op, text string) (s Shape, ok bool, err error) {
	check := shapeFamilies[op.Family]
	if check == nil {
		return Shape{}, false, nil
	}
	s, err = check(op.Name, text)
	return s, true, err
}

// ParseShape reads a shape written MxNxK, whatever op takes it, and returns its canonical
// spelling ("4095X4095X4095" is "4095x4095x4095"); errors wrap engine.ErrInvalidArg and
// say what is wrong.
func ParseShape(text string) (string, error) {
	s, err := gemm.ParseShape(text)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}
