package kernels

import "github.com/prism-compute/prism/engine"

func init() {
	register(Op{
		Name: "layernorm/rows/float32", Family: "layernorm", Type: "float32",
		Doc:     "row-wise layer normalization y = (x - mean)/sqrt(var + 1e-5)*gamma + beta (two-pass, one work-group per row)",
		SizeDoc: rowsSizeDoc, DefaultSize: 1 << 26, QuickSize: 1 << 20,
		Setup: func(q *engine.Queue, p Params) (Instance, error) {
			return setupRowOp[float32](q, "layernorm/rows/float32", p, rowLayerNorm)
		},
	})
}
