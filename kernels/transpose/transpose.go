package transpose

import (
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// TransposeModel returns the work of transposing a rows x cols matrix of elemSize-byte
// elements: no FLOPs; every element read once and written once.
func TransposeModel(rows, cols, elemSize int) kernels.Model {
	return kernels.Model{Flops: 0, Bytes: 2 * float64(rows) * float64(cols) * float64(elemSize)}
}

// Transpose transposes row-major matrices of element type T on one device, through
// TILE x TILE local-memory tiles (transpose.cl). It is safe for concurrent use by
// goroutines that each use their own Queue.
type Transpose[T kernels.Float] struct {
	prog        *engine.Program
	k           *engine.Kernel
	tile, perIt int
}

// NewTranspose compiles the transpose family for dev: tile 32 with 8 rows per work-item
// (a 32 x 4 work-group), smaller where the device's work-group limits require it. It
// returns an error wrapping engine.ErrUnsupported when T is float64 and the device has no
// fp64.
func NewTranspose[T kernels.Float](dev *engine.Device) (*Transpose[T], error) {
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	return kernels.Fit(dev, "transpose", func(lim kernels.Limits) (*Transpose[T], kernels.Shape, error) {
		tile, perIt := transposeTile(lim, engine.SizeOf[T](), 32, 8)
		prog, err := dev.Build(source, append(opts, fmt.Sprintf("-DTILE=%d", tile), fmt.Sprintf("-DROWS_PER_ITEM=%d", perIt))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		t := &Transpose[T]{prog: prog, tile: tile, perIt: perIt}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &t.k, Name: "transpose_2d"})
		if err != nil {
			t.Close()
			return nil, kernels.Shape{}, err
		}
		return t, kernels.Shape{Items: tile * tile / perIt, Kernels: ks}, nil
	})
}

// transposeTile returns the tile side and rows per work-item under lim: the wanted ones,
// with more rows per item (a smaller work-group) and then a smaller tile until the
// work-group (tile x tile/perIt) and the local tile (tile x tile+1 elements of elemSize
// bytes) fit.
func transposeTile(lim kernels.Limits, elemSize, tile, perIt int) (int, int) {
	fits := func(tile, perIt int) bool {
		return lim.Fits(tile, tile/perIt) && (lim.LocalBytes <= 0 || int64(tile*(tile+1)*elemSize) <= lim.LocalBytes)
	}
	for tile > 1 && !fits(tile, perIt) {
		if perIt < tile {
			perIt *= 2
		} else {
			tile /= 2
			perIt = tile
		}
	}
	return tile, perIt
}

// Close releases the compiled kernel. Idempotent.
func (t *Transpose[T]) Close() error {
	return errors.Join(t.k.Close(), t.prog.Close())
}

// Tile returns the tile side and the tile rows each work-item moves, as compiled.
func (t *Transpose[T]) Tile() (tile, rowsPerItem int) { return t.tile, t.perIt }

// Run sets out[c*rows + r] = in[r*cols + c] for the row-major rows x cols matrix in: out
// is the cols x rows transpose. Both buffers must hold at least rows*cols elements (they
// may be longer; the rest is untouched) and be distinct (not in place).
func (t *Transpose[T]) Run(q *engine.Queue, out, in *engine.Buffer[T], rows, cols int) error {
	if err := checkRun(out, in, rows, cols); err != nil {
		return err
	}
	tiles := ((rows + t.tile - 1) / t.tile) * ((cols + t.tile - 1) / t.tile)
	ly := t.tile / t.perIt
	return q.Launch(t.k, engine.Range2D(tiles*t.tile, ly, t.tile, ly), out, in, int32(rows), int32(cols))
}
