package conv

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// conv_regtile.cl is a further OpenCL C file of the family: only NewRegtile builds it.
//
//go:embed conv_regtile.cl
var regtileSource string

// RegtileName is the name of the conv/3x3 op's register-tiled variant (NewRegtile).
const RegtileName = "regtile"

// RegtileTunables are the tile sizes of the regtile kernel (conv_regtile.cl's -D
// tunables): a work-group computes BK output channels x TH rows x TW columns of one image,
// each work-item TK channels x TR rows x TP columns, in stages of CC input channels.
type RegtileTunables struct {
	BK, TK int // output channels per work-group and per work-item
	TH, TR int // output rows per work-group and per work-item
	TW, TP int // output columns per work-group and per work-item
	CC     int // input channels per local-memory stage
}

// DefaultRegtileTunables are NewRegtile's tiles where the device allows them: 64 output
// channels x 8 rows x 32 columns per work-group of 32 x 8 items, 8 channels x 2 rows x 4
// columns (64 outputs) per item, stages of 4 input channels (30.4 KiB of local memory in
// float, double-buffered).
var DefaultRegtileTunables = RegtileTunables{BK: 64, TK: 8, TH: 8, TR: 2, TW: 32, TP: 4, CC: 4}

// regtileCandidates are the tunable sets `prism tune` measures: the default first, each
// within the 48 KiB of static local memory CUDA allows in float (NewRegtile would halve CC
// of one over it, measuring the same build twice). None has TP = 8: Rusticl on llvmpipe
// (Mesa, LLVM 15) computes such builds wrongly from a few dozen input channels on, where
// PoCL and Oclgrind match the reference.
var regtileCandidates = []RegtileTunables{
	DefaultRegtileTunables,
	{BK: 64, TK: 8, TH: 8, TR: 2, TW: 32, TP: 4, CC: 2},
	{BK: 64, TK: 8, TH: 8, TR: 2, TW: 32, TP: 4, CC: 6},  // 45.6 KiB: the most stages fit under 48 KiB
	{BK: 64, TK: 8, TH: 4, TR: 1, TW: 32, TP: 4, CC: 4},  // 32 outputs per item
	{BK: 64, TK: 8, TH: 16, TR: 2, TW: 16, TP: 4, CC: 4}, // taller tiles
	{BK: 64, TK: 8, TH: 4, TR: 2, TW: 64, TP: 4, CC: 4},  // wider tiles
	{BK: 32, TK: 4, TH: 8, TR: 2, TW: 32, TP: 4, CC: 4},
	{BK: 64, TK: 16, TH: 8, TR: 2, TW: 32, TP: 4, CC: 4}, // 128 items
	{BK: 32, TK: 8, TH: 8, TR: 2, TW: 32, TP: 4, CC: 8},
}

// String writes t as ParseRegtileTunables reads it.
func (t RegtileTunables) String() string {
	return fmt.Sprintf("BK=%d TK=%d TH=%d TR=%d TW=%d TP=%d CC=%d", t.BK, t.TK, t.TH, t.TR, t.TW, t.TP, t.CC)
}

// Items returns the work-items of a work-group, (TW/TP)*(TH/TR) x BK/TK.
func (t RegtileTunables) Items() (x, y int) { return (t.TW / t.TP) * (t.TH / t.TR), t.BK / t.TK }

// Validate returns an error wrapping engine.ErrInvalidArg when t breaks
// conv_regtile.cl's constraints: TK and TP multiples of 4, BK, TH and TW multiples of TK,
// TR and TP, every value positive, at most 1024 work-items.
func (t RegtileTunables) Validate() error {
	bad := func(why string) error {
		return fmt.Errorf("kernels: conv regtile tunables %q: %s: %w", t.String(), why, engine.ErrInvalidArg)
	}
	switch {
	case t.BK < 1 || t.TK < 1 || t.TH < 1 || t.TR < 1 || t.TW < 1 || t.TP < 1 || t.CC < 1:
		return bad("every value must be positive")
	case t.TK%4 != 0 || t.TP%4 != 0:
		return bad("TK and TP must be multiples of 4")
	case t.BK%t.TK != 0 || t.TH%t.TR != 0 || t.TW%t.TP != 0:
		return bad("BK, TH and TW must be multiples of TK, TR and TP")
	}
	if x, y := t.Items(); x*y > 1024 {
		return bad(fmt.Sprintf("%d work-items, more than 1024", x*y))
	}
	return nil
}

// ParseRegtileTunables parses String's form: every key once, each in 1..256 (CC 1..64),
// within Validate's constraints.
func ParseRegtileTunables(s string) (RegtileTunables, error) {
	var t RegtileTunables
	f := func(key string, dst *int, hi int) kernels.TunableInt {
		return kernels.TunableInt{Key: key, Dst: dst, Min: 1, Max: hi}
	}
	if err := kernels.ParseTunableInts("conv regtile tunables", s, true, f("BK", &t.BK, 256), f("TK", &t.TK, 32),
		f("TH", &t.TH, 256), f("TR", &t.TR, 16), f("TW", &t.TW, 256), f("TP", &t.TP, 32), f("CC", &t.CC, 64)); err != nil {
		return RegtileTunables{}, err
	}
	return t, t.Validate()
}

// regtileTunablesFor returns the regtile variant's tunables for op on dev: forced (Params.
// Tunables), else `prism tune`'s for the device, else the defaults, and which it was.
func regtileTunablesFor(dev *engine.Device, op, forced string) (RegtileTunables, string, error) {
	return kernels.TunablesFor(dev, op, RegtileName, forced, ParseRegtileTunables, DefaultRegtileTunables, "default")
}

// localBytes returns the static local memory of conv_regtile.cl built with t, filter side
// r and elemSize-byte elements (its header's formula).
func (t RegtileTunables) localBytes(r, elemSize int) int64 {
	nv := (t.TP + r - 1 + 3) / 4
	iw := (t.TW/4 - t.TP/4 + nv) * 4
	return int64(2*(t.CC*(t.TH+r-1)*iw+t.CC*r*r*(t.BK+4))) * int64(elemSize)
}

// shrink returns t with half as many work-items (fewer output channels per group, then
// fewer rows, then fewer columns), or false when t has one item.
func (t RegtileTunables) shrink() (RegtileTunables, bool) {
	half := func(v, unit int) int { return max(unit, v/2/unit*unit) }
	switch {
	case t.BK > t.TK:
		t.BK = half(t.BK, t.TK)
	case t.TH > t.TR:
		t.TH = half(t.TH, t.TR)
	case t.TW > t.TP:
		t.TW = half(t.TW, t.TP)
	default:
		return t, false
	}
	return t, true
}

// Regtile is the "regtile" variant of the conv family's stride-1 convolutions:
// conv_regtile.cl, a direct convolution register-tiled as a SIMT SGEMM (TK output
// channels x TR x TP output pixels per work-item, input tiles with their halo and filter
// slices double-buffered in local memory), built for one filter side. It has Conv's
// semantics for the shapes it accepts, and is safe for concurrent use by goroutines that
// each use their own Queue.
type Regtile[T kernels.Float] struct {
	prog *engine.Program
	k    *engine.Kernel
	r    int
	t    RegtileTunables
}

// NewRegtile builds conv_regtile.cl for dev, filter side r (1..ConvMaxR) and stride 1,
// with the tiles t, shrunk where the device (or the compiled kernel: kernels.Fit) allows
// fewer work-items or less local memory: first fewer input channels per stage (local
// memory), then fewer output channels, rows and columns per work-group, down to one
// work-item. Tunables that break the kernel's constraints give an error wrapping
// engine.ErrInvalidArg; a device without fp64 for float64, or whose local memory holds no
// stage of one work-item, engine.ErrUnsupported.
func NewRegtile[T kernels.Float](dev *engine.Device, r int, t RegtileTunables) (*Regtile[T], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: conv regtile: nil device: %w", engine.ErrInvalidArg)
	}
	if r < 1 || r > ConvMaxR {
		return nil, fmt.Errorf("kernels: conv regtile: filter side %d outside 1..%d: %w", r, ConvMaxR, engine.ErrInvalidArg)
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	elem := engine.SizeOf[T]()
	return kernels.Fit(dev, "conv regtile", func(lim kernels.Limits) (*Regtile[T], kernels.Shape, error) {
		tt := t
		for lim.LocalBytes > 0 && tt.localBytes(r, elem) > lim.LocalBytes && tt.CC > 1 {
			tt.CC /= 2
		}
		for {
			x, y := tt.Items()
			if lim.Fits(x, y) && (lim.LocalBytes <= 0 || tt.localBytes(r, elem) <= lim.LocalBytes) {
				break
			}
			var ok bool
			if tt, ok = tt.shrink(); !ok {
				return nil, kernels.Shape{}, kernels.TooSmall("conv regtile", lim, fmt.Sprintf("%d bytes of local memory for one work-item", tt.localBytes(r, elem)))
			}
		}
		c := &Regtile[T]{r: r, t: tt}
		if c.prog, err = dev.BuildSource(engine.Source{Dialect: engine.DialectOpenCL, Text: regtileSource, Name: "conv_regtile.cl"},
			append(opts, fmt.Sprintf("-DCR=%d", r), fmt.Sprintf("-DBK=%d", tt.BK), fmt.Sprintf("-DTK=%d", tt.TK),
				fmt.Sprintf("-DTH=%d", tt.TH), fmt.Sprintf("-DTR=%d", tt.TR), fmt.Sprintf("-DTW=%d", tt.TW),
				fmt.Sprintf("-DTP=%d", tt.TP), fmt.Sprintf("-DCC=%d", tt.CC))...); err != nil {
			return nil, kernels.Shape{}, err
		}
		if c.k, err = c.prog.Kernel("conv2d_regtile"); err != nil {
			c.Close()
			return nil, kernels.Shape{}, err
		}
		x, y := tt.Items()
		return c, kernels.Shape{Items: x * y, Kernels: []*engine.Kernel{c.k}}, nil
	})
}

// Close releases the compiled kernel. Idempotent.
func (c *Regtile[T]) Close() error { return errors.Join(c.k.Close(), c.prog.Close()) }

// Tunables returns the tiles c was built with (NewRegtile's, shrunk to the device).
func (c *Regtile[T]) Tunables() RegtileTunables { return c.t }

// R returns the filter side c was built for.
func (c *Regtile[T]) R() int { return c.r }

// Supports returns nil when c runs shape s (stride 1, filter side c.R()), else an error
// wrapping engine.ErrInvalidArg that says why.
func (c *Regtile[T]) Supports(s ConvShape) error {
	if s.Stride != 1 || s.R != c.r {
		return fmt.Errorf("kernels: conv regtile built for %d x %d filters of stride 1; shape %v: %w", c.r, c.r, s, engine.ErrInvalidArg)
	}
	return nil
}

// Run computes the convolution of shape s as Conv.Run does; s must have stride 1 and
// filter side c.R() (Supports).
func (c *Regtile[T]) Run(q *engine.Queue, out, in, filt, bias *engine.Buffer[T], s ConvShape) error {
	if err := checkConvArgs(out, in, filt, bias, s); err != nil {
		return err
	}
	if err := c.Supports(s); err != nil {
		return err
	}
	hasBias, b := int32(1), bias
	if bias == nil {
		hasBias, b = 0, filt // never read
	}
	p, qq := s.Out()
	t := c.t
	tiles := s.N * ((p + t.TH - 1) / t.TH) * ((qq + t.TW - 1) / t.TW) * ((s.K + t.BK - 1) / t.BK)
	lx, ly := t.Items()
	return q.Launch(c.k, engine.Range2D(tiles*lx, ly, lx, ly), out, in, filt, b,
		int32(s.N), int32(s.C), int32(s.H), int32(s.W), int32(s.K), int32(s.Pad), int32(p), int32(qq), hasBias)
}
