package stencil

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed stencil_zmarch.cl
var zmarchSource string

// ZMarchName is the name of the zmarch variant of the 3D stencil ops.
const ZMarchName = "zmarch"

// ZMarchTunables is the shape of the zmarch kernels (stencil_zmarch.cl): work-groups of
// SX x SY items, each item RY consecutive rows of one column of x, so that a work-group
// owns an SX x (SY*RY) tile of columns and marches along z over a chunk of ZC planes.
type ZMarchTunables struct {
	SX, SY, RY, ZC int
	// LM, 27pt only: 1 stages each plane of the tile in local memory (one barrier a plane)
	// and reads the x and y neighbours from there; 0 reads them from global memory
	// (through L1), with no local memory and no barrier.
	LM int
}

// String spells t as its Candidates and Params.Tunables spell it: "SX=32 SY=8 RY=4 ZC=32 LM=0".
func (t ZMarchTunables) String() string {
	return fmt.Sprintf("SX=%d SY=%d RY=%d ZC=%d LM=%d", t.SX, t.SY, t.RY, t.ZC, t.LM)
}

// ParseZMarchTunables reads tunables spelled as String spells them, for stencil kind; a
// key left out keeps kind's default (ZMarchDefault). It returns an error wrapping
// engine.ErrInvalidArg for an unknown key or a value out of range: SX, SY, RY and ZC
// positive (RY at most 16, ZC at most 1024), LM 0 or 1.
func ParseZMarchTunables(kind StencilKind, s string) (ZMarchTunables, error) {
	t := ZMarchDefault(kind)
	err := kernels.ParseTunableInts("stencil zmarch tunables", s, false, kernels.TunableInt{Key: "SX", Dst: &t.SX, Min: 1, Max: 1024},
		kernels.TunableInt{Key: "SY", Dst: &t.SY, Min: 1, Max: 1024}, kernels.TunableInt{Key: "RY", Dst: &t.RY, Min: 1, Max: 16},
		kernels.TunableInt{Key: "ZC", Dst: &t.ZC, Min: 1, Max: 1024}, kernels.TunableInt{Key: "LM", Dst: &t.LM, Min: 0, Max: 1})
	return t, err
}

// check returns an error wrapping engine.ErrInvalidArg when t is out of range.
func (t ZMarchTunables) check() error {
	if t.SX < 1 || t.SY < 1 || t.RY < 1 || t.RY > 16 || t.ZC < 1 || t.ZC > 1024 || t.LM < 0 || t.LM > 1 {
		return fmt.Errorf("%s: SX, SY, RY and ZC must be positive, RY at most 16, ZC at most 1024, LM 0 or 1: %w", t, engine.ErrInvalidArg)
	}
	return nil
}

// ZMarchDefault returns the zmarch shape of stencil kind where neither Params.Tunables nor
// prism tune chose one: the fastest of zmarchCandidates at 512^3 in float32 on an H200,
// through CUDA and through NVIDIA's OpenCL alike.
//
// 7pt: 32 x 8 items (a warp spans one 128-byte row of floats), 4 rows each (tiles of 32 x
// 32 columns), chunks of 32 planes: at 512^3, 16 x 16 tiles x 16 chunks = 4096 work-groups
// of 256 items, with 2/32 of the input read twice (the planes either side of a chunk).
//
// 27pt: 32 x 2 items of 12 rows each (tiles of 32 x 24 columns), chunks of 64 planes, each
// plane of the tile staged in local memory (LM=1). Many rows per item is what makes the
// 27-point stencil fast: every value an item reads from a plane feeds up to nine of its
// sums, so that the reads, index arithmetic and loop overhead per output shrink until the
// 27 FMAs dominate; with the x and y neighbours in local memory the loads of plane p+3,
// issued two steps ahead, are the only global ones. At 512^3: 16 x 22 tiles x 8 chunks =
// 2816 work-groups of 64 items, with 2/64 of the input read twice.
func ZMarchDefault(kind StencilKind) ZMarchTunables {
	if kind == Stencil27pt {
		return ZMarchTunables{SX: 32, SY: 2, RY: 12, ZC: 64, LM: 1}
	}
	return ZMarchTunables{SX: 32, SY: 8, RY: 4, ZC: 32}
}

// zmarchCandidates returns the shapes prism tune measures for stencil kind, its default
// first (LM only for the 27-point stencil).
func zmarchCandidates(kind StencilKind) []ZMarchTunables {
	if kind == Stencil27pt {
		return []ZMarchTunables{ZMarchDefault(kind),
			{SX: 32, SY: 2, RY: 12, ZC: 32, LM: 1}, {SX: 32, SY: 1, RY: 12, ZC: 32, LM: 1}, {SX: 32, SY: 4, RY: 12, ZC: 32, LM: 1},
			{SX: 32, SY: 2, RY: 8, ZC: 64, LM: 1}, {SX: 32, SY: 2, RY: 8, ZC: 32, LM: 1}, {SX: 32, SY: 4, RY: 8, ZC: 32, LM: 1},
			{SX: 32, SY: 2, RY: 16, ZC: 32, LM: 1}, {SX: 32, SY: 4, RY: 4, ZC: 32, LM: 1},
			{SX: 32, SY: 2, RY: 4, ZC: 32}, {SX: 32, SY: 4, RY: 4, ZC: 64}, {SX: 32, SY: 2, RY: 6, ZC: 32}, {SX: 32, SY: 8, RY: 2, ZC: 32},
		}
	}
	return []ZMarchTunables{ZMarchDefault(kind),
		{SX: 32, SY: 2, RY: 4, ZC: 32}, {SX: 32, SY: 8, RY: 2, ZC: 32}, {SX: 32, SY: 4, RY: 2, ZC: 32}, {SX: 64, SY: 4, RY: 2, ZC: 32},
		{SX: 32, SY: 8, RY: 4, ZC: 64}, {SX: 32, SY: 4, RY: 8, ZC: 32}, {SX: 32, SY: 16, RY: 2, ZC: 32}, {SX: 32, SY: 8, RY: 1, ZC: 32},
	}
}

// ZMarch runs one 3D stencil (7-point or 27-point) in element type T through a zmarch
// kernel of stencil_zmarch.cl: work-items marching along z with their columns in
// registers, planes read ahead of their use, the x and y neighbours read through L1 (7pt,
// and 27pt with LM=0; no local memory, no barrier) or from a plane tile in local memory
// (27pt with LM=1). Same arguments, weights, boundary rule and results (within
// StencilTolerance) as Stencil.Run. It is safe for concurrent use by goroutines that each
// use their own Queue.
type ZMarch[T kernels.Float] struct {
	kind StencilKind
	prog *engine.Program
	k    *engine.Kernel
	t    ZMarchTunables // as built: SX and SY fitted to the device
}

// NewZMarch compiles the zmarch kernel of the 3D stencil kind for dev with shape t (SX and
// SY lowered, SY first, where the device or the compiled kernel allows fewer items per
// work-group, or local memory does not hold the LM tile; RY, ZC and LM as given). It
// returns an error wrapping engine.ErrInvalidArg for a 2D kind, tunables out of range or
// LM=1 with the 7-point stencil, and wrapping engine.ErrUnsupported when T is float64 and
// the device has no fp64.
func NewZMarch[T kernels.Float](dev *engine.Device, kind StencilKind, t ZMarchTunables) (*ZMarch[T], error) {
	if kind.Dims() != 3 {
		return nil, fmt.Errorf("kernels: stencil zmarch: kind %q is not a 3D stencil (have 7pt, 27pt): %w", kind, engine.ErrInvalidArg)
	}
	if err := t.check(); err != nil {
		return nil, fmt.Errorf("kernels: stencil zmarch: tunables %w", err)
	}
	if t.LM != 0 && kind != Stencil27pt {
		return nil, fmt.Errorf("kernels: stencil zmarch: tunables %s: LM is the 27-point stencil's alone: %w", t, engine.ErrInvalidArg)
	}
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	name := "stencil_" + string(kind) + "_zmarch"
	if t.LM == 1 {
		name += "_lm"
	}
	return kernels.Fit(dev, "stencil", func(lim kernels.Limits) (*ZMarch[T], kernels.Shape, error) {
		wg := lim.Group(t.SX * t.SY)
		sx := min(t.SX, wg)
		if m := lim.ItemSizes[0]; m > 0 && sx > m {
			sx = m
		}
		sy := max(min(t.SY, wg/sx), 1)
		if m := lim.ItemSizes[1]; m > 0 && sy > m {
			sy = m
		}
		z := &ZMarch[T]{kind: kind, t: ZMarchTunables{SX: sx, SY: sy, RY: t.RY, ZC: t.ZC, LM: t.LM}}
		prog, err := dev.Build(zmarchSource, append(opts, fmt.Sprintf("-DSX=%d", sx), fmt.Sprintf("-DSY=%d", sy),
			fmt.Sprintf("-DRY=%d", t.RY), fmt.Sprintf("-DZC=%d", t.ZC))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		z.prog = prog
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &z.k, Name: name})
		if err != nil {
			z.Close()
			return nil, kernels.Shape{}, err
		}
		return z, kernels.Shape{Items: sx * sy, Kernels: ks}, nil
	})
}

// Close releases the compiled kernel. Idempotent; a nil ZMarch is fine.
func (z *ZMarch[T]) Close() error {
	if z == nil {
		return nil
	}
	return errors.Join(z.k.Close(), z.prog.Close())
}

// Kind returns the stencil z runs.
func (z *ZMarch[T]) Kind() StencilKind { return z.kind }

// Tunables returns the shape z was built with (SX and SY as fitted to the device).
func (z *ZMarch[T]) Tunables() ZMarchTunables { return z.t }

// Tile returns the x-y tile of columns of one work-group and its chunk of z planes.
func (z *ZMarch[T]) Tile() (x, y, zPlanes int) { return z.t.SX, z.t.SY * z.t.RY, z.t.ZC }

// Run applies z's stencil to the nx x ny x nz grid in with weights w, writing out, with the
// arguments and results of Stencil.Run.
func (z *ZMarch[T]) Run(q *engine.Queue, out, in, w *engine.Buffer[T], nx, ny, nz int) error {
	if err := checkRun(z.kind, out, in, w, nx, ny, nz); err != nil {
		return err
	}
	tx, ty, tz := z.Tile()
	groups := ((nx + tx - 1) / tx) * ((ny + ty - 1) / ty) * ((nz + tz - 1) / tz)
	return q.Launch(z.k, engine.Range2D(groups*z.t.SX, z.t.SY, z.t.SX, z.t.SY), out, in, w, int32(nx), int32(ny), int32(nz))
}

// zmarchTunables returns the shape the zmarch variant of op runs with on dev and where it
// came from: forced (Params.Tunables), tuned (prism tune's choice), or default.
func zmarchTunables(dev *engine.Device, kind StencilKind, op, forced string) (ZMarchTunables, string, error) {
	parse := func(s string) (ZMarchTunables, error) { return ParseZMarchTunables(kind, s) }
	return kernels.TunablesFor(dev, op, ZMarchName, forced, parse, ZMarchDefault(kind), "default")
}
