package scan

import (
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// ScanElem is the set of element types the scan family computes in. int32 and uint32 sums
// wrap modulo 2^32.
type ScanElem interface{ int32 | uint32 | float32 }

// scanDefines returns the -D options that select element type T in scan.cl: an int32 scan
// accumulates in uint (wrapping without undefined behaviour).
func scanDefines[T ScanElem](dev *engine.Device) ([]string, error) {
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err == nil && kernels.TypeName[T]() == "int32" {
		opts = append(opts, "-DACC=uint")
	}
	return opts, err
}

// Scan runs the scan family (inclusive and exclusive prefix sums) in element type T on one
// device. It is safe for concurrent use by goroutines that each use their own Queue.
type Scan[T ScanElem] struct {
	dev          *engine.Device
	prog         *engine.Program
	reduce, down *engine.Kernel
	wg, ipt      int
	maxGroups    int
	replay       kernels.Replay // the two kernels of a multi-group scan as one graph
}

// NewScan compiles the scan family for dev: work-groups of up to 256 items, 16 elements
// (four 16-byte vectors of float32) per item per tile.
func NewScan[T ScanElem](dev *engine.Device) (*Scan[T], error) {
	return newScan[T](dev, 256, 16)
}

// newScan compiles with a work-group of up to want items and ipt elements per item, a
// positive multiple of 4 (tests use small tiles).
func newScan[T ScanElem](dev *engine.Device, want, ipt int) (*Scan[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: scan: nil device: %w", engine.ErrInvalidArg)
	}
	if ipt < 4 || ipt%4 != 0 {
		return nil, fmt.Errorf("kernels: scan: %d elements per item; must be a positive multiple of 4: %w", ipt, engine.ErrInvalidArg)
	}
	opts, err := scanDefines[T](dev)
	if err != nil {
		return nil, err
	}
	return kernels.Fit(dev, "scan", func(lim kernels.Limits) (*Scan[T], kernels.Shape, error) {
		wg := lim.Group(want)
		prog, err := dev.Build(source, append(opts, fmt.Sprintf("-DWG=%d", wg), fmt.Sprintf("-DIPT=%d", ipt))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		// 16 groups per compute unit: enough to fill a GPU (8 groups of 256 per H100 SM and
		// more in flight), while the chunks stay long enough that the offsets cost little.
		// Where the device ends a work-item's loops early (kernels.LoopLimit: Mesa's llvmpipe),
		// as many as keep scan_down's walk over its chunk's tiles (about log2(WG) + 2
		// iterations a tile, 7 at 32 items measured on Rusticl) within it for 2^31-1 elements.
		s := &Scan[T]{dev: dev, prog: prog, wg: wg, ipt: ipt,
			maxGroups: max(max(dev.Info().ComputeUnits, 1)*16, kernels.GroupsWithin(kernels.LoopLimit(dev), (math.MaxInt32+wg*ipt-1)/(wg*ipt), kernels.Log2Ceil(wg)+2, 16))}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &s.reduce, Name: "scan_reduce"}, kernels.Ref{Dst: &s.down, Name: "scan_down"})
		if err != nil {
			s.Close()
			return nil, kernels.Shape{}, err
		}
		return s, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
}

// Close releases the compiled kernels. Idempotent.
func (s *Scan[T]) Close() error {
	if s == nil {
		return nil
	}
	return errors.Join(s.replay.Close(), s.reduce.Close(), s.down.Close(), s.prog.Close())
}

// WorkGroup returns the work-group size the family was compiled with on this device.
func (s *Scan[T]) WorkGroup() int { return s.wg }

// Tile returns the number of elements a work-group scans at a time (WG * IPT).
func (s *Scan[T]) Tile() int { return s.wg * s.ipt }

// split returns the chunk length and the number of groups (chunks) for n elements: at most
// maxGroups chunks, each a whole number of tiles (except a single chunk near 2^31).
func (s *Scan[T]) split(n int) (chunk, groups int) {
	tile := s.Tile()
	g := min((n+tile-1)/tile, s.maxGroups)
	g = max(g, 1)
	chunk = min(engine.RoundUp((n+g-1)/g, tile), math.MaxInt32)
	return chunk, (n + chunk - 1) / chunk
}

// Scratch returns the number of elements of scratch space (the chunk sums) that a scan of n
// elements needs: Into's part.
func (s *Scan[T]) Scratch(n int) int {
	_, g := s.split(max(n, 1))
	return g
}

// Chain returns the longest chain of float additions by which a scan of n elements
// accumulates any one input into any one output (scan.cl, "Arithmetic"; L = log2(WG), V =
// IPT/4 vectors per item, T = ceil(chunk/TILE) tiles per chunk): 2V + L + 3 from an
// earlier vector of the same tile (its total, the rake, the Hillis-Steele scan, the
// prefixes of the run, the carry and the in-vector sum), V + L + T + 3 from an earlier tile
// (its total and the carry), and with G > 1 chunks ceil(chunk/(4 WG)) + ceil(G/WG) + 2L +
// T + 3 from an earlier chunk (the lanes and tree of its sum, the chunk's offset, the
// carry). ScanTolerance turns it into an error bound.
func (s *Scan[T]) Chain(n int) int {
	chunk, g := s.split(max(n, 1))
	l, v := kernels.Log2Ceil(s.wg), s.ipt/4
	tiles := (chunk + s.Tile() - 1) / s.Tile()
	c := max(2*v+l+3, v+l+tiles+3)
	if g > 1 {
		c = max(c, (chunk+4*s.wg-1)/(4*s.wg)+(g+s.wg-1)/s.wg+2*l+tiles+3)
	}
	return c
}

// Into writes the prefix sums of x[0:n) to y[0:n): inclusive (y[i] = x[0] + ... + x[i]) or
// exclusive (y[i] = x[0] + ... + x[i-1], y[0] = 0). part is scratch space of at least
// Scratch(n) elements (unused, and may be nil, when Scratch(n) is 1). y may be x. Buffers
// are the caller's, so repeated calls allocate nothing.
func (s *Scan[T]) Into(q *engine.Queue, y, x, part *engine.Buffer[T], n int, exclusive bool) error {
	if x == nil || y == nil {
		return fmt.Errorf("kernels: scan: nil input or output buffer: %w", engine.ErrInvalidArg)
	}
	switch {
	case n < 1:
		return fmt.Errorf("kernels: scan: n = %d; must be at least 1: %w", n, engine.ErrInvalidArg)
	case n > x.Len() || n > y.Len():
		return fmt.Errorf("kernels: scan: n = %d but the input holds %d and the output %d elements: %w", n, x.Len(), y.Len(), engine.ErrInvalidArg)
	case n > math.MaxInt32:
		return fmt.Errorf("kernels: scan: n = %d exceeds the family's limit of 2^31-1: %w", n, engine.ErrInvalidArg)
	}
	chunk, g := s.split(n)
	if g > 1 && (part == nil || part.Len() < g) {
		return fmt.Errorf("kernels: scan: scratch of %d elements, need %d (Scratch): %w", kernels.LenOf(part), g, engine.ErrInvalidArg)
	}
	r := engine.Range1D(g*s.wg, s.wg)
	excl := int32(0)
	if exclusive {
		excl = 1
	}
	if g == 1 {
		return q.Launch(s.down, r, y, x, x, int32(n), int32(chunk), excl) // part not read by one group
	}
	// Two kernels: from the second scan of the same buffers and length on, one graph
	// (kernels.Replay), so that small scans do not wait for the host between them.
	return s.replay.Run(q, scanKey{y, x, part, n, exclusive}, func() error {
		if err := q.Launch(s.reduce, r, part, x, int32(n), int32(chunk)); err != nil {
			return err
		}
		return q.Launch(s.down, r, y, x, part, int32(n), int32(chunk), excl)
	})
}

// scanKey identifies a scan's commands for Replay.
type scanKey struct {
	y, x, part any
	n          int
	exclusive  bool
}

// Inclusive writes the inclusive prefix sums of all of x to y (at least as long as x),
// allocating its scratch space.
func (s *Scan[T]) Inclusive(q *engine.Queue, y, x *engine.Buffer[T]) error {
	return s.scan(q, y, x, false)
}

// Exclusive writes the exclusive prefix sums of all of x to y (at least as long as x),
// allocating its scratch space.
func (s *Scan[T]) Exclusive(q *engine.Queue, y, x *engine.Buffer[T]) error {
	return s.scan(q, y, x, true)
}

func (s *Scan[T]) scan(q *engine.Queue, y, x *engine.Buffer[T], exclusive bool) error {
	if x == nil || y == nil {
		return fmt.Errorf("kernels: scan: nil input or output buffer: %w", engine.ErrInvalidArg)
	}
	if y.Len() < x.Len() {
		return fmt.Errorf("kernels: scan: output of %d elements for an input of %d: %w", y.Len(), x.Len(), engine.ErrInvalidArg)
	}
	var part *engine.Buffer[T]
	if g := s.Scratch(x.Len()); g > 1 {
		var err error
		if part, err = engine.NewBuffer[T](s.dev, g); err != nil {
			return err
		}
		defer part.Close()
	}
	return s.Into(q, y, x, part, x.Len(), exclusive)
}
