package conv

import (
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// ConvShape is the shape of a 2D convolution in NCHW layout: N images of C channels of
// H x W pixels, K filters of C x R x R taps, applied with the given stride and zero
// padding of Pad pixels on every side.
type ConvShape struct {
	N, C, H, W int // input [N, C, H, W]
	K, R       int // filters [K, C, R, R], R in 1..7
	Stride     int // >= 1
	Pad        int // >= 0
}

// ConvMaxR is the largest filter side Conv accepts.
const ConvMaxR = 7

// Out returns the output's spatial size: P = (H + 2*Pad - R)/Stride + 1 rows and
// Q = (W + 2*Pad - R)/Stride + 1 columns (meaningful only for a valid shape).
func (s ConvShape) Out() (p, q int) {
	if s.Stride < 1 {
		return 0, 0
	}
	return (s.H+2*s.Pad-s.R)/s.Stride + 1, (s.W+2*s.Pad-s.R)/s.Stride + 1
}

// InLen returns the element count of the input [N, C, H, W].
func (s ConvShape) InLen() int { return s.N * s.C * s.H * s.W }

// FilterLen returns the element count of the filters [K, C, R, R].
func (s ConvShape) FilterLen() int { return s.K * s.C * s.R * s.R }

// OutLen returns the element count of the output [N, K, P, Q].
func (s ConvShape) OutLen() int {
	p, q := s.Out()
	return s.N * s.K * p * q
}

// String describes the shape, output size included.
func (s ConvShape) String() string {
	p, q := s.Out()
	return fmt.Sprintf("N=%d C=%d H=%d W=%d K=%d R=%d stride=%d pad=%d P=%d Q=%d", s.N, s.C, s.H, s.W, s.K, s.R, s.Stride, s.Pad, p, q)
}

// Validate returns an error wrapping engine.ErrInvalidArg when the shape is not one Conv
// runs: a count below 1, R outside 1..ConvMaxR, a stride below 1, a negative padding, an
// image smaller than the filter even padded (no output), or a tensor over 2^31-1 elements.
func (s ConvShape) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("kernels: conv %v: "+format+": %w", append(append([]any{s}, a...), engine.ErrInvalidArg)...)
	}
	switch {
	case s.N < 1 || s.C < 1 || s.H < 1 || s.W < 1 || s.K < 1:
		return bad("N, C, H, W and K must be at least 1")
	case s.R < 1 || s.R > ConvMaxR:
		return bad("filter side %d outside 1..%d", s.R, ConvMaxR)
	case s.Stride < 1:
		return bad("stride must be at least 1")
	case s.Pad < 0:
		return bad("negative padding")
	case s.Stride > math.MaxInt32 || s.Pad > math.MaxInt32/4 || s.H > math.MaxInt32/2 || s.W > math.MaxInt32/2:
		return bad("stride, padding or image too large for int indices")
	case s.H+2*s.Pad < s.R || s.W+2*s.Pad < s.R:
		return bad("padded image %d x %d smaller than the %d x %d filter", s.H+2*s.Pad, s.W+2*s.Pad, s.R, s.R)
	}
	p, q := s.Out()
	for _, d := range []struct {
		what string
		dims []int
	}{{"input", []int{s.N, s.C, s.H, s.W}}, {"filters", []int{s.K, s.C, s.R, s.R}}, {"output", []int{s.N, s.K, p, q}}} {
		n := 1.0
		for _, v := range d.dims {
			n *= float64(v)
		}
		if n > math.MaxInt32 {
			return bad("%s of %.0f elements exceeds the family's limit of 2^31-1", d.what, n)
		}
	}
	return nil
}

// ConvModel returns the work of one convolution of shape s over elemSize-byte elements:
// 2 FLOPs per multiply-add, N*K*P*Q*C*R*R of them (plus one addition per output with a
// bias); the bytes are the input, the filters (and bias) read once and the output written
// once.
func ConvModel(s ConvShape, bias bool, elemSize int) kernels.Model {
	p, q := s.Out()
	outs := float64(s.N) * float64(s.K) * float64(p) * float64(q)
	m := kernels.Model{
		Flops: 2 * outs * float64(s.C) * float64(s.R) * float64(s.R),
		Bytes: (float64(s.InLen()) + float64(s.FilterLen()) + outs) * float64(elemSize),
	}
	if bias {
		m.Flops += outs
		m.Bytes += float64(s.K) * float64(elemSize)
	}
	return m
}

// Conv runs the conv family in element type T on one device: 2D convolution (NCHW, zero
// padding, optional bias) as an implicit GEMM through local-memory tiles (conv.cl). It is
// safe for concurrent use by goroutines that each use their own Queue.
type Conv[T kernels.Float] struct {
	big, small convVariant
	// loops is the device's limit on a work-item's loop iterations (kernels.LoopLimit), 0
	// for none: Run splits a reduction too long for it into launches (convVariant.jChunk).
	loops int
}

// convVariant is conv.cl compiled with one tile configuration.
type convVariant struct {
	prog               *engine.Program
	k                  *engine.Kernel
	bm, bn, bk, tm, tn int
}

func (v *convVariant) lx() int { return v.bn / v.tn }
func (v *convVariant) ly() int { return v.bm / v.tm }

// convTiers are the tile configurations of the conv family, largest work-group first: a
// big tile for many output channels and a small one for K <= 16, both with as many items
// (CBN/CTN x CBM/CTM), stepping through the reduction CBK indices at a time (conv.cl
// constraints: CBK divides the items, the items divide CBM*CBK).
var convTiers = [][2]convVariant{
	{{bm: 64, bn: 64, bk: 16, tm: 4, tn: 4}, {bm: 16, bn: 64, bk: 16, tm: 1, tn: 4}}, // 16 x 16 items
	{{bm: 32, bn: 32, bk: 16, tm: 4, tn: 4}, {bm: 8, bn: 32, bk: 16, tm: 1, tn: 4}},  // 8 x 8
	{{bm: 16, bn: 32, bk: 16, tm: 4, tn: 4}, {bm: 4, bn: 32, bk: 16, tm: 1, tn: 4}},  // 8 x 4
	{{bm: 16, bn: 16, bk: 16, tm: 4, tn: 4}, {bm: 4, bn: 16, bk: 16, tm: 1, tn: 4}},  // 4 x 4
	{{bm: 8, bn: 8, bk: 8, tm: 2, tn: 4}, {bm: 4, bn: 8, bk: 8, tm: 1, tn: 4}},       // 2 x 4
	{{bm: 4, bn: 8, bk: 4, tm: 2, tn: 4}, {bm: 2, bn: 8, bk: 4, tm: 1, tn: 4}},       // 2 x 2
	{{bm: 4, bn: 4, bk: 1, tm: 4, tn: 4}, {bm: 1, bn: 4, bk: 1, tm: 1, tn: 4}},       // 1 x 1
}

// NewConv compiles the conv family for dev in two tile configurations: 64 x 64 output
// tiles (output channels x pixels) of 4 x 4 outputs per work-item (16 x 16 items), and,
// for K <= 16, 16 x 64 tiles of 1 x 4 outputs per item, which waste less on few output
// channels; both step through the reduction 16 indices at a time. Devices or kernels that
// allow fewer than 256 items per group get the largest smaller pair of convTiers (64 items
// down to 1). It returns an error wrapping engine.ErrUnsupported when T is float64 and the
// device has no fp64.
func NewConv[T kernels.Float](dev *engine.Device) (*Conv[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: conv: nil device: %w", engine.ErrInvalidArg)
	}
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	return kernels.Fit(dev, "conv", func(lim kernels.Limits) (*Conv[T], kernels.Shape, error) {
		c := &Conv[T]{loops: kernels.LoopLimit(dev)}
		for _, t := range convTiers {
			if lim.Fits(t[0].lx(), t[0].ly()) && lim.Fits(t[1].lx(), t[1].ly()) {
				c.big, c.small = t[0], t[1]
				break
			}
		}
		if c.big.bm == 0 {
			return nil, kernels.Shape{}, kernels.TooSmall("conv", lim, "a work-group that its item sizes allow")
		}
		shape := kernels.Shape{Items: max(c.big.lx()*c.big.ly(), c.small.lx()*c.small.ly())}
		for _, v := range []*convVariant{&c.big, &c.small} {
			if v.prog, err = dev.Build(source, append(opts, fmt.Sprintf("-DCBM=%d", v.bm), fmt.Sprintf("-DCBN=%d", v.bn),
				fmt.Sprintf("-DCBK=%d", v.bk), fmt.Sprintf("-DCTM=%d", v.tm), fmt.Sprintf("-DCTN=%d", v.tn))...); err != nil {
				c.Close()
				return nil, kernels.Shape{}, err
			}
			if v.k, err = v.prog.Kernel("conv2d"); err != nil {
				c.Close()
				return nil, kernels.Shape{}, err
			}
			shape.Kernels = append(shape.Kernels, v.k)
		}
		return c, shape, nil
	})
}

// Close releases the compiled kernels. Idempotent.
func (c *Conv[T]) Close() error {
	return errors.Join(c.big.k.Close(), c.big.prog.Close(), c.small.k.Close(), c.small.prog.Close())
}

// Tile returns the output tile (output channels x output pixels) of a work-group for a
// convolution with k output channels.
func (c *Conv[T]) Tile(k int) (channels, pixels int) {
	v := c.variant(k)
	return v.bm, v.bn
}

// variant returns the tile configuration for k output channels: the small tiles when
// they cover k.
func (c *Conv[T]) variant(k int) *convVariant {
	if k <= c.small.bm {
		return &c.small
	}
	return &c.big
}

// Run computes the convolution of shape s: out[n][k][p][q] = bias[k] + sum over c, r, t of
// filt[k][c][r][t] * in[n][c][p*Stride - Pad + r][q*Stride - Pad + t], with zero padding.
// bias may be nil (no bias); otherwise it holds at least K elements. in, filt and out
// hold at least s.InLen(), s.FilterLen() and s.OutLen() elements (longer is fine: the rest
// of out is untouched); out must not be an input.
func (c *Conv[T]) Run(q *engine.Queue, out, in, filt, bias *engine.Buffer[T], s ConvShape) error {
	if err := checkConvArgs(out, in, filt, bias, s); err != nil {
		return err
	}
	hasBias, b := int32(1), bias
	if bias == nil {
		hasBias, b = 0, filt // never read
	}
	p, qq := s.Out()
	v := c.variant(s.K)
	tiles := ((s.N*p*qq + v.bn - 1) / v.bn) * ((s.K + v.bm - 1) / v.bm)
	lx, ly := v.lx(), v.ly()
	crr := s.C * s.R * s.R
	chunk := v.jChunk(c.loops)
	if chunk <= 0 {
		chunk = crr
	}
	// The reduction in one launch, or where the device ends a work-item's loops early, in
	// ranges of chunk, each after the first adding to out.
	for j0, accum := 0, int32(0); j0 < crr; j0, accum = j0+chunk, 1 {
		if err := q.Launch(v.k, engine.Range2D(tiles*lx, ly, lx, ly), out, in, filt, b,
			int32(s.N), int32(s.C), int32(s.H), int32(s.W), int32(s.K), int32(s.R), int32(s.Stride), int32(s.Pad),
			int32(p), int32(qq), hasBias, int32(j0), int32(min(j0+chunk, crr)), accum); err != nil {
			return err
		}
	}
	return nil
}

// loopsPerStep bounds the loop iterations a work-item of conv.cl runs per step of CBK
// reduction indices, counting every loop's iterations, the constant ones too: the filter
// and input stages and the products over the step's CBK rows with their CTM and CTN loops.
// On Rusticl (16 x 32 tiles of 4 x 4, CBK 16) it gives 495 where a counting loop after the
// kernel's own measured 113 (2026-12-01): a bound, not an estimate.
func (v *convVariant) loopsPerStep() int {
	items := v.lx() * v.ly()
	aRows, bRows := max(items/v.bk, 1), max(items/v.lx(), 1)
	return (v.bm+aRows-1)/aRows + 1 + ((v.bk+bRows-1)/bRows)*(v.tn+1) + 1 + v.bk*(1+v.tm+v.tn+v.tm*(v.tn+1)) + 1
}

// jChunk returns the most reduction indices one launch of v sums where the device ends a
// work-item's loops after limit iterations (kernels.LoopLimit: Mesa's llvmpipe, where a 3 x
// 3 convolution over 1,030 channels or more gave wrong sums), within 90% of it, in whole
// steps of CBK; 0 where limit is 0.
func (v *convVariant) jChunk(limit int) int {
	return kernels.UnitsWithin(limit, v.loopsPerStep(), 64) * v.bk
}

// checkConvArgs returns an error wrapping engine.ErrInvalidArg when Run's arguments are
// not valid for shape s (Conv.Run's rules).
func checkConvArgs[T kernels.Float](out, in, filt, bias *engine.Buffer[T], s ConvShape) error {
	if err := s.Validate(); err != nil {
		return err
	}
	switch {
	case out == nil || in == nil || filt == nil:
		return fmt.Errorf("kernels: conv: nil buffer: %w", engine.ErrInvalidArg)
	case out == in || out == filt || out == bias:
		return fmt.Errorf("kernels: conv: the output buffer is also an input: %w", engine.ErrInvalidArg)
	case in.Len() < s.InLen() || filt.Len() < s.FilterLen() || out.Len() < s.OutLen():
		return fmt.Errorf("kernels: conv %v: buffers of %d (in), %d (filters), %d (out) elements; need %d, %d, %d: %w",
			s, in.Len(), filt.Len(), out.Len(), s.InLen(), s.FilterLen(), s.OutLen(), engine.ErrInvalidArg)
	case bias != nil && bias.Len() < s.K:
		return fmt.Errorf("kernels: conv: bias of %d elements for K = %d: %w", bias.Len(), s.K, engine.ErrInvalidArg)
	}
	return nil
}
