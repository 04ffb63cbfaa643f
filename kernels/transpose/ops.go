package transpose

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed transpose.cl
var source string

// Family returns the transpose family: its OpenCL C source (transpose.cl) and its operations, in the
// order listings show them.
func Family() kernels.Family {
	return kernels.Family{Name: "transpose", Source: source, Ops: []kernels.Op{transposeOp[float32]()}}
}

func transposeOp[T kernels.Float]() kernels.Op {
	name := "transpose/2d/" + kernels.TypeName[T]()
	return kernels.Op{
		Name: name, Family: "transpose", Type: kernels.TypeName[T](),
		Doc:         "out[c][r] = in[r][c], row-major, through local-memory tiles",
		SizeDoc:     "rows = round(sqrt(size)), cols = size/rows + 1 (a non-square matrix of about size elements)",
		DefaultSize: 1 << 26, QuickSize: 1 << 20,
		Variants: []kernels.Variant{
			{
				Name:     TiledName,
				Doc:      "TILE x TILE local tiles padded by one column, moved by 1D work-groups of WG items that issue all their loads (clamped at the edges, not guarded) before the barrier, VEC-wide vector stores (and loads where rows are aligned); 64x64 tiles, 256 items and float2 by default (OpenCL C, every backend)",
				Dialect:  engine.DialectOpenCL,
				Tunables: fmt.Sprintf("%s (%d elements an item), or prism tune's", TiledDefault, TiledDefault.Tile*TiledDefault.Tile/TiledDefault.WG),
				Candidates: func(*engine.Device) []string {
					out := make([]string, len(tiledCandidates))
					for i, c := range tiledCandidates {
						out[i] = c.String()
					}
					return out
				},
				Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
					return setupTranspose[T](ctx, q, name, true, p)
				},
			},
			portableVariant(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
				return setupTranspose[T](ctx, q, name, false, p)
			}),
		},
	}
}

// portableVariant is the portable variant (NewTranspose), its doc saying how it moves tiles.
func portableVariant(setup func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error)) kernels.Variant {
	v := kernels.PortableVariant(setup)
	v.Doc = "32x32 local tiles padded by one column, 32x4 work-groups of 8 elements an item, scalar accesses (OpenCL C, every backend)"
	return v
}

// transposeShape maps an op size to the matrix shape of SizeDoc.
func transposeShape(size int) (rows, cols int) {
	rows = max(int(math.Round(math.Sqrt(float64(size)))), 1)
	return rows, size/rows + 1
}

type transposeInstance[T kernels.Float] struct {
	t          *Transpose[T] // the portable variant, else nil
	tl         *Tiled[T]     // the tiled variant, else nil
	tunables   string        // the tiled variant's, with where they came from
	rows, cols int
	x          *kernels.Inputs[T]
	out        *engine.Buffer[T]
}

// setupTranspose sets up the transpose op name; tiled selects the tiled variant (with
// p.Tunables, else the device's tuned set, else TiledDefault).
func setupTranspose[T kernels.Float](ctx context.Context, q *engine.Queue, name string, tiled bool, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	rows, cols := transposeShape(p.Size)
	if rows > math.MaxInt32/cols {
		return nil, fmt.Errorf("kernels: %s: size %d exceeds the family's limit of 2^31-1 elements: %w", name, p.Size, engine.ErrInvalidArg)
	}
	in := &transposeInstance[T]{rows: rows, cols: cols}
	if tiled {
		t, from, err := tiledTunablesFor(q.Device(), name, p.Tunables)
		if err != nil {
			return nil, err
		}
		if in.tl, err = NewTiled[T](q.Device(), t); err != nil {
			return nil, err
		}
		in.tunables = in.tl.Tunables().String() + " (" + from + ")"
	} else if in.t, err = NewTranspose[T](q.Device()); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	n := rows * cols
	rng := kernels.NewRand(p.Seed, 0x7452)
	in.x, err = kernels.NewInputs(ctx, q, p, n*engine.SizeOf[T](), func(int) [][]T { return [][]T{kernels.RandFloats[T](rng, n, -1, 1)} })
	if err != nil {
		return nil, err
	}
	if in.out, err = engine.NewBuffer[T](q.Device(), n); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *transposeInstance[T]) Run(ctx context.Context, q *engine.Queue) error {
	if in.tl != nil {
		return in.tl.Run(q, in.out, in.x.Next()[0], in.rows, in.cols)
	}
	return in.t.Run(q, in.out, in.x.Next()[0], in.rows, in.cols)
}

// Verify compares the whole output with the reference, exactly.
func (in *transposeInstance[T]) Verify(ctx context.Context, q *engine.Queue) error {
	got, err := in.out.Download(ctx, q)
	if err != nil {
		return err
	}
	last, err := in.x.Last(ctx)
	if err != nil {
		return err
	}
	return kernels.CheckEqual("transpose out", got, TransposeRef(last[0], in.rows, in.cols))
}

func (in *transposeInstance[T]) Model() kernels.Model {
	return TransposeModel(in.rows, in.cols, engine.SizeOf[T]())
}

// Tunables reports the tiled variant's shape and where it came from (kernels.
// TunablesReporter); "" for the portable variant.
func (in *transposeInstance[T]) Tunables() string { return in.tunables }

func (in *transposeInstance[T]) Shape() string {
	return fmt.Sprintf("rows=%d cols=%d", in.rows, in.cols)
}

func (in *transposeInstance[T]) Close() error {
	var err error
	if in.t != nil {
		err = in.t.Close()
	}
	return errors.Join(in.out.Close(), in.x.Close(), err, in.tl.Close())
}
