package stencil

import (
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// StencilKind names one stencil of the stencil family.
type StencilKind string

// The stencils: a 2D 5-point, a 3D 7-point (faces) and a 3D 27-point (full 3x3x3 cube)
// stencil. stencil.cl documents the order of their weights.
const (
	Stencil5pt  StencilKind = "5pt"
	Stencil7pt  StencilKind = "7pt"
	Stencil27pt StencilKind = "27pt"
)

// StencilKinds lists the stencils in their canonical order.
var StencilKinds = []StencilKind{Stencil5pt, Stencil7pt, Stencil27pt}

// Points returns the number of weights (terms) of the stencil: 5, 7 or 27; 0 for an
// unknown kind.
func (k StencilKind) Points() int {
	switch k {
	case Stencil5pt:
		return 5
	case Stencil7pt:
		return 7
	case Stencil27pt:
		return 27
	}
	return 0
}

// Dims returns 2 for the 2D stencil and 3 for the 3D ones (0 for an unknown kind).
func (k StencilKind) Dims() int {
	switch k {
	case Stencil5pt:
		return 2
	case Stencil7pt, Stencil27pt:
		return 3
	}
	return 0
}

// StencilModel returns the work of one sweep of stencil k over an nx x ny x nz grid (nz = 1
// in 2D) of elemSize-byte elements: 2*points-1 FLOPs (points products, points-1 sums) per
// interior point; each input element read once and each output written once.
func StencilModel(k StencilKind, nx, ny, nz, elemSize int) kernels.Model {
	interior := float64(max(nx-2, 0)) * float64(max(ny-2, 0))
	if k.Dims() == 3 {
		interior *= float64(max(nz-2, 0))
	}
	n := float64(nx) * float64(ny) * float64(nz)
	return kernels.Model{Flops: interior * float64(2*k.Points()-1), Bytes: 2 * n * float64(elemSize)}
}

// Stencil runs the stencil family in element type T on one device: one sweep of a
// weighted stencil, interior points only, boundary points copied (Dirichlet; see
// stencil.cl). It is safe for concurrent use by goroutines that each use their own Queue.
type Stencil[T kernels.Float] struct {
	prog             *engine.Program
	k5, k7, k27      *engine.Kernel
	sx, sy, sry, zbk int
}

// NewStencil compiles the stencil family for dev: work-groups of 32 x 8 items (fewer rows
// where the device allows fewer items), 2D tiles of 32 x 32 outputs, 3D columns of 32 x 8
// points by 32 planes. It returns an error wrapping engine.ErrUnsupported when T is
// float64 and the device has no fp64.
func NewStencil[T kernels.Float](dev *engine.Device) (*Stencil[T], error) {
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	return kernels.Fit(dev, "stencil", func(lim kernels.Limits) (*Stencil[T], kernels.Shape, error) {
		wg := lim.Group(256)
		sx := min(32, wg)
		if m := lim.ItemSizes[0]; m > 0 && sx > m {
			sx = m
		}
		sy := max(wg/sx, 1)
		if m := lim.ItemSizes[1]; m > 0 && sy > m {
			sy = m
		}
		s := &Stencil[T]{sx: sx, sy: sy, sry: max(32/sy, 1), zbk: 32}
		prog, err := dev.Build(source, append(opts, fmt.Sprintf("-DWG=%d", sx*sy), fmt.Sprintf("-DSX=%d", sx),
			fmt.Sprintf("-DSY=%d", sy), fmt.Sprintf("-DSRY=%d", s.sry), fmt.Sprintf("-DZBLOCK=%d", s.zbk))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		s.prog = prog
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &s.k5, Name: "stencil_5pt"}, kernels.Ref{Dst: &s.k7, Name: "stencil_7pt"},
			kernels.Ref{Dst: &s.k27, Name: "stencil_27pt"})
		if err != nil {
			s.Close()
			return nil, kernels.Shape{}, err
		}
		return s, kernels.Shape{Items: sx * sy, Kernels: ks}, nil
	})
}

// Close releases the compiled kernels. Idempotent.
func (s *Stencil[T]) Close() error {
	return errors.Join(s.k5.Close(), s.k7.Close(), s.k27.Close(), s.prog.Close())
}

// WorkGroup returns the work-group shape (x, y) the family was compiled with.
func (s *Stencil[T]) WorkGroup() (x, y int) { return s.sx, s.sy }

// Tile returns the output tile of a 2D work-group (x, y) and the z planes of a 3D one.
func (s *Stencil[T]) Tile() (x, y, zPlanes int) { return s.sx, s.sy * s.sry, s.zbk }

// FivePoint applies the 2D 5-point stencil with weights w (5 elements: centre, x-1, x+1,
// y-1, y+1) to the row-major nx x ny grid in (in[y*nx + x]) and writes out.
func (s *Stencil[T]) FivePoint(q *engine.Queue, out, in, w *engine.Buffer[T], nx, ny int) error {
	return s.Run(q, Stencil5pt, out, in, w, nx, ny, 1)
}

// SevenPoint applies the 3D 7-point stencil with weights w (7 elements: centre, x-1, x+1,
// y-1, y+1, z-1, z+1) to the nx x ny x nz grid in (in[(z*ny + y)*nx + x]) and writes out.
func (s *Stencil[T]) SevenPoint(q *engine.Queue, out, in, w *engine.Buffer[T], nx, ny, nz int) error {
	return s.Run(q, Stencil7pt, out, in, w, nx, ny, nz)
}

// TwentySevenPoint applies the 3D 27-point stencil with weights w (27 elements, the weight
// of neighbour (x+dx, y+dy, z+dz) at (dz+1)*9 + (dy+1)*3 + dx+1) to the nx x ny x nz grid in
// and writes out.
func (s *Stencil[T]) TwentySevenPoint(q *engine.Queue, out, in, w *engine.Buffer[T], nx, ny, nz int) error {
	return s.Run(q, Stencil27pt, out, in, w, nx, ny, nz)
}

// Run applies stencil kind to the grid in of nx x ny x nz points (nz must be 1 for the 2D
// 5-point stencil) with weights w, writing out: interior points get the weighted sum,
// boundary points a copy of the input. in and out must be distinct and hold at least
// nx*ny*nz elements, w at least kind.Points(); longer buffers are fine (the rest is
// untouched).
func (s *Stencil[T]) Run(q *engine.Queue, kind StencilKind, out, in, w *engine.Buffer[T], nx, ny, nz int) error {
	if err := checkRun(kind, out, in, w, nx, ny, nz); err != nil {
		return err
	}
	tilesX := (nx + s.sx - 1) / s.sx
	if kind == Stencil5pt {
		groups := tilesX * ((ny + s.sy*s.sry - 1) / (s.sy * s.sry))
		return q.Launch(s.k5, engine.Range2D(groups*s.sx, s.sy, s.sx, s.sy), out, in, w, int32(nx), int32(ny))
	}
	groups := tilesX * ((ny + s.sy - 1) / s.sy) * ((nz + s.zbk - 1) / s.zbk)
	k := s.k7
	if kind == Stencil27pt {
		k = s.k27
	}
	return q.Launch(k, engine.Range2D(groups*s.sx, s.sy, s.sx, s.sy), out, in, w, int32(nx), int32(ny), int32(nz))
}

// checkRun returns an error wrapping engine.ErrInvalidArg when the arguments of a sweep of
// stencil kind are invalid (see Run); nil when they are fine.
func checkRun[T kernels.Float](kind StencilKind, out, in, w *engine.Buffer[T], nx, ny, nz int) error {
	pts := kind.Points()
	switch {
	case pts == 0:
		return fmt.Errorf("kernels: stencil: unknown kind %q (have 5pt, 7pt, 27pt): %w", kind, engine.ErrInvalidArg)
	case out == nil || in == nil || w == nil:
		return fmt.Errorf("kernels: stencil %s: nil buffer: %w", kind, engine.ErrInvalidArg)
	case out == in:
		return fmt.Errorf("kernels: stencil %s: in and out are the same buffer; the sweep is out of place: %w", kind, engine.ErrInvalidArg)
	case nx < 1 || ny < 1 || nz < 1:
		return fmt.Errorf("kernels: stencil %s: grid %d x %d x %d; every dimension must be at least 1: %w", kind, nx, ny, nz, engine.ErrInvalidArg)
	case kind.Dims() == 2 && nz != 1:
		return fmt.Errorf("kernels: stencil %s: 2D stencil on a grid with nz = %d: %w", kind, nz, engine.ErrInvalidArg)
	case nx > math.MaxInt32/ny || nx*ny > math.MaxInt32/nz:
		return fmt.Errorf("kernels: stencil %s: grid %d x %d x %d exceeds the family's limit of 2^31-1 points: %w", kind, nx, ny, nz, engine.ErrInvalidArg)
	}
	n := nx * ny * nz
	if in.Len() < n || out.Len() < n {
		return fmt.Errorf("kernels: stencil %s: grid %d x %d x %d needs %d elements; in has %d, out %d: %w", kind, nx, ny, nz, n, in.Len(), out.Len(), engine.ErrInvalidArg)
	}
	if w.Len() < pts {
		return fmt.Errorf("kernels: stencil %s: %d weights, need %d: %w", kind, w.Len(), pts, engine.ErrInvalidArg)
	}
	return nil
}
