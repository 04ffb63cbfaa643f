package conv

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// convOpShapes are the registered convolutions: filter side, stride, padding.
var convOpShapes = []struct {
	name           string
	r, stride, pad int
	doc            string
}{
	{"3x3", 3, 1, 1, "3x3 convolution, stride 1, pad 1, NCHW, bias; register-tiled direct convolution (regtile), or implicit GEMM through local-memory tiles (portable)"},
	{"5x5s2", 5, 2, 2, "5x5 convolution, stride 2, pad 2, NCHW, bias; implicit GEMM through local-memory tiles"},
	{"1x1", 1, 1, 0, "1x1 (pointwise) convolution, NCHW, bias; implicit GEMM through local-memory tiles"},
}

//go:embed conv.cl
var source string

// Family returns the conv family: its OpenCL C source (conv.cl) and its operations, in the
// order listings show them.
func Family() kernels.Family {
	var ops []kernels.Op
	for _, c := range convOpShapes {
		ops = append(ops, convOp[float32](c.name, c.r, c.stride, c.pad, c.doc))
	}
	return kernels.Family{Name: "conv", Source: source, Ops: ops}
}

// convOpN and convOpC are the batch and the channels (in and out) of the registered ops.
const convOpN, convOpC = 8, 64

func convOp[T kernels.Float](op string, r, stride, pad int, doc string) kernels.Op {
	name := "conv/" + op + "/" + kernels.TypeName[T]()
	return kernels.Op{
		Name: name, Family: "conv", Type: kernels.TypeName[T](), Doc: doc,
		SizeDoc:     "input elements: N = 8, C = K = 64, H = W = round(sqrt(size/512)); below 32768 (H = W < 8: tiny test sizes) N = 1, C = K = 4, H = W = round(sqrt(size/4)) clamped to 1..8",
		DefaultSize: 1 << 24, QuickSize: 1 << 16, // quick: H = W = 11, 71 MFLOP for 3x3: PoCL runs this kernel at a few GFLOP/s
		Variants: convVariants[T](name, r, stride, pad),
	}
}

// regtileNeeds refuses CPUs (the regtile variant's Needs): its 64 accumulators per
// work-item are shaped for SIMT GPUs, and PoCL runs it 4x slower than the portable kernel
// (1.10 s against 276 ms for conv/3x3/float32 at size 1M on 2 cores). The package's tests
// run it on CPUs too.
func regtileNeeds(info engine.DeviceInfo) error {
	if info.Kind == engine.KindCPU {
		return errors.New("needs a GPU or accelerator (register tiles shaped for SIMT); on CPUs the portable kernel is faster")
	}
	return nil
}

// convVariants returns the variants of the conv op name in priority order: the regtile
// kernel for stride-1 3x3 convolutions, then the portable one.
func convVariants[T kernels.Float](name string, r, stride, pad int) []kernels.Variant {
	portable := kernels.PortableVariant(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
		return setupConv[T](ctx, q, name, convOpShape(p.Size, r, stride, pad), false, p)
	})
	portable.Doc = "implicit GEMM (im2col gathered into local memory), 64 x 64 tiles of 4 x 4 outputs per work-item, 16 x 64 of 1 x 4 for K <= 16 (OpenCL C, every backend)"
	if r != 3 || stride != 1 {
		return []kernels.Variant{portable}
	}
	return []kernels.Variant{{
		Name: RegtileName, Doc: "direct convolution register-tiled as a SIMT SGEMM: 8 output channels x 2 x 4 pixels per work-item, input tile with halo and filter slice double-buffered in local memory per 4 input channels, 3x3 taps unrolled, 16-byte local reads (OpenCL C, every backend; GPUs and accelerators)",
		Dialect:    engine.DialectOpenCL,
		Needs:      regtileNeeds,
		Tunables:   DefaultRegtileTunables.String() + " (shrunk to the device's work-group and local-memory limits), or prism tune's",
		Candidates: kernels.CandidatesOf(regtileCandidates),
		Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			return setupConv[T](ctx, q, name, convOpShape(p.Size, r, stride, pad), true, p)
		},
	}, portable}
}

// convOpShape maps an op size to the shape of SizeDoc. Tiny sizes (the package's tests
// under Oclgrind, which simulates about 10^4 times slower than a CPU runs) get 4 channels
// instead of 64 and at most 8 x 8 pixels: one work-group's tile.
func convOpShape(size, r, stride, pad int) ConvShape {
	if size < convOpN*convOpC*8*8 {
		hw := min(max(int(math.Round(math.Sqrt(float64(size)/4))), 1), 8)
		return ConvShape{N: 1, C: 4, H: hw, W: hw, K: 4, R: r, Stride: stride, Pad: pad}
	}
	hw := max(int(math.Round(math.Sqrt(float64(size)/(convOpN*convOpC)))), 1)
	return ConvShape{N: convOpN, C: convOpC, H: hw, W: hw, K: convOpC, R: r, Stride: stride, Pad: pad}
}

// convRunner is what an instance runs: Conv (portable) or Regtile.
type convRunner[T kernels.Float] interface {
	Run(q *engine.Queue, out, in, filt, bias *engine.Buffer[T], s ConvShape) error
	Close() error
}

type convInstance[T kernels.Float] struct {
	c            convRunner[T]
	tunables     string // the regtile variant's, with where they came from; "" for the portable
	s            ConvShape
	seed         uint64
	filt, bias   []T
	bfilt, bbias *engine.Buffer[T]
	x            *kernels.Inputs[T]
	out          *engine.Buffer[T]
}

// setupConv sets up a conv op of shape s; regtile selects the regtile variant (with
// p.Tunables, else the device's tuned set, else the defaults).
func setupConv[T kernels.Float](ctx context.Context, q *engine.Queue, name string, s ConvShape, regtile bool, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("kernels: %s: size %d: %w", name, p.Size, err)
	}
	var c convRunner[T]
	tunables := ""
	if regtile {
		t, from, err := regtileTunablesFor(q.Device(), name, p.Tunables)
		if err != nil {
			return nil, err
		}
		rt, err := NewRegtile[T](q.Device(), s.R, t)
		if err != nil {
			return nil, err
		}
		c, tunables = rt, rt.Tunables().String()+" ("+from+")"
	} else if c, err = NewConv[T](q.Device()); err != nil {
		return nil, err
	}
	in := &convInstance[T]{c: c, tunables: tunables, s: s, seed: p.Seed}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	rng := kernels.NewRand(p.Seed, 0x436f)
	// Filters scaled by 1/sqrt(C*R*R), as common initializations do, so outputs stay O(1).
	scale := 1 / math.Sqrt(float64(s.C*s.R*s.R))
	in.filt = kernels.RandFloats[T](rng, s.FilterLen(), -scale, scale)
	in.bias = kernels.RandFloats[T](rng, s.K, -1, 1)
	if in.bfilt, err = engine.Upload(ctx, q, in.filt); err != nil {
		return nil, err
	}
	if in.bbias, err = engine.Upload(ctx, q, in.bias); err != nil {
		return nil, err
	}
	in.x, err = kernels.NewInputs(ctx, q, p, s.InLen()*engine.SizeOf[T](), func(int) [][]T { return [][]T{kernels.RandFloats[T](rng, s.InLen(), -1, 1)} })
	if err != nil {
		return nil, err
	}
	if in.out, err = engine.NewBuffer[T](q.Device(), s.OutLen()); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *convInstance[T]) Run(ctx context.Context, q *engine.Queue) error {
	return in.c.Run(q, in.out, in.x.Next()[0], in.bfilt, in.bbias, in.s)
}

// convVerifyFullMax bounds the multiply-adds of a full reference; above it Verify checks
// a seeded sample of outputs (VerifyIndices), as the default (GPU) sizes need.
const convVerifyFullMax = 1 << 24

// Verify checks the output against the float64 reference: all of it when that costs at
// most convVerifyFullMax multiply-adds, else the first, the last and 4096 seeded random
// outputs.
func (in *convInstance[T]) Verify(ctx context.Context, q *engine.Queue) error {
	got, err := in.out.Download(ctx, q)
	if err != nil {
		return err
	}
	n := in.s.OutLen()
	full := float64(n)*float64(in.s.C*in.s.R*in.s.R) <= convVerifyFullMax
	last, err := in.x.Last(ctx)
	if err != nil {
		return err
	}
	a := last[0]
	for _, i := range kernels.VerifyIndices(n, full, in.seed) {
		want, mag := ConvRefAt(a, in.filt, in.bias, in.s, i)
		tol := ConvTolerance[T](in.s, true, mag)
		if d := math.Abs(float64(got[i]) - want); !(d <= tol) {
			return fmt.Errorf("%w: conv out: element %d = %v, want %v (|diff| %.3g > tolerance %.3g)", kernels.ErrVerify, i, got[i], want, d, tol)
		}
	}
	return nil
}

func (in *convInstance[T]) Model() kernels.Model { return ConvModel(in.s, true, engine.SizeOf[T]()) }

func (in *convInstance[T]) Shape() string { return in.s.String() }

// Tunables reports the regtile variant's tiles and where they came from ("" for the
// portable variant).
func (in *convInstance[T]) Tunables() string { return in.tunables }

func (in *convInstance[T]) Close() error {
	return errors.Join(in.out.Close(), in.bfilt.Close(), in.bbias.Close(), in.x.Close(), in.c.Close())
}
