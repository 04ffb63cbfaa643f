package render

import (
	"math"

	"github.com/prism-compute/prism/bench"
)

// view is a bench.Report with the methods its renderers share.
type view struct{ *bench.Report }

// finite reports whether v is neither infinite nor NaN.
func finite(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }
