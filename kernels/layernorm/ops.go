package layernorm

import (
	"context"
	_ "embed"
	"errors"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/rowwise"
)

//go:embed layernorm.cl
var source string

// Family returns the layernorm family: its OpenCL C source (layernorm.cl) and its
// operations, rows of up to 1024 and of up to 8192 elements.
func Family() kernels.Family {
	doc := "row-wise layer normalization y = (x - mean)/sqrt(var + 1e-5)*gamma + beta (two-pass, "
	return kernels.Family{Name: "layernorm", Source: source, Ops: []kernels.Op{
		rowwise.NewOp("layernorm/rows/float32", doc+"32 items per row, 8 rows per work-group)", 1024, 1<<26, setup[float32]),
		rowwise.NewOp("layernorm/rows8k/float32", doc+"one work-group per row, 512 items where the device allows)", 8192, 1<<27, setup[float32]),
	}}
}

// part is layernorm's share of a row op's instance: its launcher, or the warp kernels,
// and its gamma and beta (on the host and on the device) and eps.
type part[T kernels.Float] struct {
	ln          *LayerNorm[T]
	warp        *rowwise.Warp // float32; the instance closes it
	gamma, beta []T
	bg, bb      *engine.Buffer[T]
	eps         T
}

// setup sets up layernorm over [rows, cols] (rowwise.SetupFunc): on w where it is not nil,
// else on a LayerNorm compiled now, with eps 1e-5, seeded gamma in [0.5, 1.5) and beta in
// [-0.5, 0.5), uploaded, and the seeded input x, drawn after them: rows with a per-row
// offset in [-4, 4) and spread in (0, 2], so that the mean matters.
func setup[T kernels.Float](ctx context.Context, q *engine.Queue, rows, cols int, seed uint64, w *rowwise.Warp) (_ rowwise.Part[T], cfg Config, x []T, err error) {
	p := &part[T]{warp: w, eps: 1e-5}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if w != nil {
		cfg = w.Config()
	} else {
		if p.ln, err = NewLayerNorm[T](q.Device()); err != nil {
			return nil, Config{}, nil, err
		}
		if cfg, err = p.ln.Config(cols); err != nil {
			return nil, Config{}, nil, err
		}
	}
	rng := kernels.NewRand(seed, 0x1a7e)
	p.gamma, p.beta = kernels.RandFloats[T](rng, cols, 0.5, 1.5), kernels.RandFloats[T](rng, cols, -0.5, 0.5)
	if p.bg, err = engine.Upload(ctx, q, p.gamma); err != nil {
		return nil, Config{}, nil, err
	}
	if p.bb, err = engine.Upload(ctx, q, p.beta); err != nil {
		return nil, Config{}, nil, err
	}
	x = make([]T, rows*cols)
	for r := range rows {
		off, spread := 8*rng.Float64()-4, 2*rng.Float64()+1e-3
		for c := range cols {
			x[r*cols+c] = T(off + spread*(2*rng.Float64()-1))
		}
	}
	return p, cfg, x, nil
}

func (p *part[T]) Run(q *engine.Queue, y, x *engine.Buffer[T], rows, cols int) error {
	if p.warp != nil { // float32: the cuda-warp variant
		f := func(b *engine.Buffer[T]) *engine.Buffer[float32] { return any(b).(*engine.Buffer[float32]) }
		return p.warp.LayerNorm(q, f(y), f(x), f(p.bg), f(p.bb), rows, cols, float32(p.eps))
	}
	return p.ln.Rows(q, y, x, p.bg, p.bb, rows, cols, p.eps)
}

func (p *part[T]) Ref(want []float64, x []T, cfg Config) func(c int) float64 {
	st := layerNormRefRow(want, x, p.gamma, p.beta, float64(p.eps))
	tol := layerNormChainTol[T](cfg.Chain(len(x)), st)
	return func(c int) float64 { return tol(float64(x[c]), float64(p.gamma[c]), float64(p.beta[c])) }
}

// Model: layernorm reads x and writes y once (the cached path, as softmax's) and reads
// gamma and beta once, and counts 8 FLOPs per element (sum; subtract, square, add;
// subtract, two products, add).
func (p *part[T]) Model(rows, cols int) kernels.Model {
	n, e := float64(rows*cols), float64(engine.SizeOf[T]())
	return kernels.Model{Flops: 8 * n, Bytes: (2*n + 2*float64(cols)) * e}
}

func (p *part[T]) Close() error {
	errs := []error{p.bg.Close(), p.bb.Close()}
	if p.ln != nil {
		errs = append(errs, p.ln.Close())
	}
	return errors.Join(errs...)
}
