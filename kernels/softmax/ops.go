package softmax

import (
	"context"
	_ "embed"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/rowwise"
)

//go:embed softmax.cl
var source string

// Family returns the softmax family: its OpenCL C source (softmax.cl) and its operations,
// rows of up to 1024 and of up to 8192 elements.
func Family() kernels.Family {
	doc := "row-wise stable softmax: y = exp(x - rowmax) / rowsum ("
	return kernels.Family{Name: "softmax", Source: source, Ops: []kernels.Op{
		rowwise.NewOp("softmax/rows/float32", doc+"32 items per row, 8 rows per work-group)", 1024, 1<<26, setup[float32]),
		rowwise.NewOp("softmax/rows8k/float32", doc+"one work-group per row, 512 items where the device allows)", 8192, 1<<27, setup[float32]),
	}}
}

// part is softmax's share of a row op's instance: its launcher, or the warp kernels.
type part[T kernels.Float] struct {
	sm   *Softmax[T]
	warp *rowwise.Warp // float32; the instance closes it
}

// setup sets up softmax over [rows, cols] (rowwise.SetupFunc): on w where it is not nil,
// else on a Softmax compiled now, with the seeded input x, uniform in [-8, 8) (a range over
// which exp spans e^16).
func setup[T kernels.Float](ctx context.Context, q *engine.Queue, rows, cols int, seed uint64, w *rowwise.Warp) (_ rowwise.Part[T], cfg Config, x []T, err error) {
	p := &part[T]{warp: w}
	if w != nil {
		cfg = w.Config()
	} else {
		if p.sm, err = NewSoftmax[T](q.Device()); err != nil {
			return nil, Config{}, nil, err
		}
		if cfg, err = p.sm.Config(cols); err != nil {
			p.Close()
			return nil, Config{}, nil, err
		}
	}
	rng := kernels.NewRand(seed, 0x50f7)
	return p, cfg, kernels.RandFloats[T](rng, rows*cols, -8, 8), nil
}

func (p *part[T]) Run(q *engine.Queue, y, x *engine.Buffer[T], rows, cols int) error {
	if p.warp != nil { // float32: the cuda-warp variant
		return p.warp.Softmax(q, any(y).(*engine.Buffer[float32]), any(x).(*engine.Buffer[float32]), rows, cols)
	}
	return p.sm.Rows(q, y, x, rows, cols)
}

func (p *part[T]) Ref(want []float64, x []T, cfg Config) func(c int) float64 {
	hi, lo := softmaxRefRow(want, x)
	tol := softmaxChainTol[T](cfg.Chain(len(x)), !cfg.Cached(len(x)), hi, lo)
	return func(c int) float64 { return tol(float64(x[c]), want[c]) }
}

// Model: softmax reads x and writes y once (the cached path, which the launcher's builds
// take at cols = 1024, and at 8192 where the device allows work-groups of 512 items) and
// counts 4 FLOPs per element (subtract, exp, add, divide).
func (p *part[T]) Model(rows, cols int) kernels.Model {
	n, e := float64(rows*cols), float64(engine.SizeOf[T]())
	return kernels.Model{Flops: 4 * n, Bytes: 2 * n * e}
}

func (p *part[T]) Close() error {
	if p.sm == nil {
		return nil
	}
	return p.sm.Close()
}
