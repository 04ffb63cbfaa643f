package transpose

import (
	_ "embed"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed transpose_tiled.cl
var tiledSource string

// TiledName is the name of the transpose ops' tiled variant (NewTiled).
const TiledName = "tiled"

// TiledTunables are the shape of the tiled kernel (transpose_tiled.cl): a work-group of WG
// items moves one Tile x Tile tile, each item Tile*Tile/WG elements, with Vec-element
// vector stores (and loads, where the input's rows are Vec-aligned).
type TiledTunables struct {
	Tile, WG, Vec int
}

// TiledDefault is the shape the tiled variant runs with unless prism tune chose another for
// the device or one is forced: 64 x 64 tiles moved by 256 items, 16 elements each (all
// loaded before the barrier: 16 KiB of float in flight per work-group, 8 work-groups and
// 128 KiB per H100 multiprocessor), stored as float2 (a warp writes 256 contiguous bytes of
// an output row). Not yet measured against the other candidates: `prism tune` chooses on
// the device.
var TiledDefault = TiledTunables{Tile: 64, WG: 256, Vec: 2}

// tiledCandidates are the shapes prism tune measures: the default first, then 32 x 32
// tiles with the classic 32 x 8 work-group (4 elements per item) and its neighbours, and
// the 64 x 64 tiles with more or fewer items, each with and without vectors.
var tiledCandidates = []TiledTunables{
	TiledDefault,
	{Tile: 64, WG: 256, Vec: 1}, {Tile: 64, WG: 512, Vec: 2}, {Tile: 64, WG: 512, Vec: 1},
	{Tile: 64, WG: 128, Vec: 2}, {Tile: 64, WG: 1024, Vec: 2},
	{Tile: 32, WG: 256, Vec: 1}, {Tile: 32, WG: 256, Vec: 2}, {Tile: 32, WG: 128, Vec: 1},
	{Tile: 32, WG: 128, Vec: 2}, {Tile: 32, WG: 512, Vec: 2},
}

// String spells t as Candidates and Params.Tunables spell it: "TILE=64 WG=256 VEC=2".
func (t TiledTunables) String() string {
	return fmt.Sprintf("TILE=%d WG=%d VEC=%d", t.Tile, t.WG, t.Vec)
}

// ParseTiledTunables reads tunables spelled as String spells them; a key left out keeps
// TiledDefault's value. It returns an error wrapping engine.ErrInvalidArg for an unknown
// or repeated key, or a shape the kernel cannot take (see check).
func ParseTiledTunables(s string) (TiledTunables, error) {
	t := TiledDefault
	if err := kernels.ParseTunableInts("transpose tiled tunables", s, false, kernels.TunableInt{Key: "TILE", Dst: &t.Tile, Min: 1, Max: 128},
		kernels.TunableInt{Key: "WG", Dst: &t.WG, Min: 1, Max: 1024}, kernels.TunableInt{Key: "VEC", Dst: &t.Vec, Min: 1, Max: 2}); err != nil {
		return TiledTunables{}, err
	}
	if err := t.check(); err != nil {
		return TiledTunables{}, fmt.Errorf("kernels: transpose tiled tunables %q: %w", s, err)
	}
	return t, nil
}

// check returns an error wrapping engine.ErrInvalidArg unless Tile (1..128) and WG
// (1..1024) are powers of two, Vec is 1 or 2, at most Tile, and Tile <= WG <= Tile*Tile/Vec
// (every item moves at least one vector a pass, and a scalar pass covers whole rows).
func (t TiledTunables) check() error {
	pow2 := func(n int) bool { return n > 0 && n&(n-1) == 0 }
	if !pow2(t.Tile) || t.Tile > 128 || !pow2(t.WG) || t.WG > 1024 || (t.Vec != 1 && t.Vec != 2) || t.Vec > t.Tile ||
		t.WG < t.Tile || t.WG > t.Tile*t.Tile/t.Vec {
		return fmt.Errorf("%s: TILE (up to 128) and WG (up to 1024) must be powers of two, VEC 1 or 2 and at most TILE, TILE <= WG <= TILE*TILE/VEC: %w", t, engine.ErrInvalidArg)
	}
	return nil
}

// fitTiled returns t lowered to what lim allows for elements of elemSize bytes: fewer items
// per work-group (down to one per tile column) and then smaller tiles until the work-group
// and the local tile (Tile x Tile+1 elements) fit; ok is false when not even a 1 x 1 tile
// does.
func fitTiled(lim kernels.Limits, elemSize int, t TiledTunables) (_ TiledTunables, ok bool) {
	local := func(tile int) int64 { return int64(tile * (tile + 1) * elemSize) }
	for {
		switch {
		case lim.LocalBytes > 0 && local(t.Tile) > lim.LocalBytes:
			if t.Tile == 1 {
				return t, false
			}
			t.Tile /= 2
		case !lim.Fits(t.WG, 1):
			if t.WG > t.Tile {
				t.WG /= 2
				continue
			}
			if t.Tile == 1 {
				return t, false
			}
			t.Tile /= 2
			t.WG = t.Tile
		default:
			return t, true
		}
		t.Vec = min(t.Vec, t.Tile)
		t.WG = max(min(t.WG, t.Tile*t.Tile/t.Vec), t.Tile)
	}
}

// Tiled transposes row-major matrices of element type T on one device through the tiled
// kernel (transpose_tiled.cl), with Transpose.Run's arguments and results. It is safe for
// concurrent use by goroutines that each use their own Queue.
type Tiled[T kernels.Float] struct {
	prog *engine.Program
	k    *engine.Kernel
	t    TiledTunables // as built: fitted to the device
}

// NewTiled compiles the tiled kernel for dev with shape t, lowered where the device or the
// compiled kernel allows fewer items per work-group (items first, then the tile) or its
// local memory does not hold the tile. It returns an error wrapping engine.ErrInvalidArg
// for a shape out of range (see ParseTiledTunables), and wrapping engine.ErrUnsupported
// when T is float64 and the device has no fp64, or when not even a 1 x 1 tile fits.
func NewTiled[T kernels.Float](dev *engine.Device, t TiledTunables) (*Tiled[T], error) {
	if err := t.check(); err != nil {
		return nil, fmt.Errorf("kernels: transpose tiled: tunables %w", err)
	}
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	es := engine.SizeOf[T]()
	return kernels.Fit(dev, "transpose", func(lim kernels.Limits) (*Tiled[T], kernels.Shape, error) {
		ft, ok := fitTiled(lim, es, t)
		if !ok {
			return nil, kernels.Shape{}, kernels.TooSmall("transpose", lim, fmt.Sprintf("a tile of %d bytes of local memory", 2*es))
		}
		prog, err := dev.Build(tiledSource, append(opts, fmt.Sprintf("-DTILE=%d", ft.Tile), fmt.Sprintf("-DWG=%d", ft.WG), fmt.Sprintf("-DVEC=%d", ft.Vec))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		tt := &Tiled[T]{prog: prog, t: ft}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &tt.k, Name: "transpose_2d_tiled"})
		if err != nil {
			tt.Close()
			return nil, kernels.Shape{}, err
		}
		return tt, kernels.Shape{Items: ft.WG, Kernels: ks}, nil
	})
}

// Close releases the compiled kernel. Idempotent; a nil Tiled is fine.
func (t *Tiled[T]) Close() error {
	if t == nil {
		return nil
	}
	return errors.Join(t.k.Close(), t.prog.Close())
}

// Tunables returns the shape t was built with, as fitted to the device.
func (t *Tiled[T]) Tunables() TiledTunables { return t.t }

// Run sets out[c*rows + r] = in[r*cols + c], as Transpose.Run does, with the same checks.
func (t *Tiled[T]) Run(q *engine.Queue, out, in *engine.Buffer[T], rows, cols int) error {
	if err := checkRun(out, in, rows, cols); err != nil {
		return err
	}
	tiles := ((rows + t.t.Tile - 1) / t.t.Tile) * ((cols + t.t.Tile - 1) / t.t.Tile)
	return q.Launch(t.k, engine.Range1D(tiles*t.t.WG, t.t.WG), out, in, int32(rows), int32(cols))
}

// checkRun returns an error wrapping engine.ErrInvalidArg when out and in cannot hold a
// transpose of a rows x cols matrix (nil, the same buffer, too short), or the shape is
// out of the family's range.
func checkRun[T kernels.Float](out, in *engine.Buffer[T], rows, cols int) error {
	switch {
	case out == nil || in == nil:
		return fmt.Errorf("kernels: transpose: nil buffer: %w", engine.ErrInvalidArg)
	case out == in:
		return fmt.Errorf("kernels: transpose: in and out are the same buffer; the transpose is out of place: %w", engine.ErrInvalidArg)
	case rows < 1 || cols < 1:
		return fmt.Errorf("kernels: transpose: %d x %d matrix; rows and cols must be at least 1: %w", rows, cols, engine.ErrInvalidArg)
	case rows > math.MaxInt32/cols:
		return fmt.Errorf("kernels: transpose: %d x %d matrix exceeds the family's limit of 2^31-1 elements: %w", rows, cols, engine.ErrInvalidArg)
	}
	n := rows * cols
	if in.Len() < n || out.Len() < n {
		return fmt.Errorf("kernels: transpose: %d x %d matrix needs %d elements; in has %d, out %d: %w", rows, cols, n, in.Len(), out.Len(), engine.ErrInvalidArg)
	}
	return nil
}

// tiledTunablesFor returns the shape the tiled variant of op runs with on dev and where it
// came from: forced (Params.Tunables), tuned (prism tune's choice), or default.
func tiledTunablesFor(dev *engine.Device, op, forced string) (TiledTunables, string, error) {
	return kernels.TunablesFor(dev, op, TiledName, forced, ParseTiledTunables, TiledDefault, "default")
}
