package fft

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed fft.cl
var source string

// commonSource is what fft.cl and fft_reg.cl share (types, twiddle layout, complex
// product): every build of either has it first.
//
//go:embed fft_common.clh
var commonSource string

// Family returns the fft family: its OpenCL C source (fft.cl) and its operations, in the
// order listings show them.
func Family() kernels.Family {
	return kernels.Family{Name: "fft", Source: source, Ops: []kernels.Op{
		fftOp[float32](fftC2C, "forward FFT of n complex points (Stockham, local-memory passes)",
			"n = Size rounded down to a power of two, at most 2^24 complex points", 1<<24, 1<<16),
		fftOp[float32](fftBatched, "batched forward FFTs of 1024 complex points",
			"batch = Size/1024 transforms of 1024 complex points (at least 1; Size counts points)", 1<<24, 1<<16),
		fftOp[float32](fftInverse, "unnormalized inverse FFT of n complex points",
			"n = Size rounded down to a power of two, at most 2^24 complex points", 1<<24, 1<<16),
		fftOp[float32](fft2D, "2D forward FFT of a rows x cols complex matrix (row FFTs, then column FFTs)",
			"rows*cols = Size rounded down to a power of two (at most 2^28), cols = rows or 2*rows", 1<<24, 1<<16),
		fftOp[float32](fftR2C, "forward FFT of n real points to n/2+1 complex bins (complex FFT of n/2 + post-pass)",
			"n = Size rounded down to a power of two, 2 to 2^24 real points", 1<<24, 1<<17),
	}}
}

// fftKind names one operation of the fft family.
type fftKind string

const (
	fftC2C     fftKind = "c2c"
	fftBatched fftKind = "batched"
	fftInverse fftKind = "inverse"
	fft2D      fftKind = "2d"
	fftR2C     fftKind = "r2c"
)

// fftBatchLen is the transform length of fft/batched.
const fftBatchLen = 1024

func fftOp[T kernels.Float](kind fftKind, doc, sizeDoc string, def, quick int) kernels.Op {
	name := "fft/" + string(kind) + "/" + kernels.TypeName[T]()
	return kernels.Op{
		Name: name, Family: "fft", Type: kernels.TypeName[T](), Doc: doc, SizeDoc: sizeDoc,
		DefaultSize: def, QuickSize: quick,
		Variants: append(vendorVariants[T](name, kind), regVariant[T](name, kind), portableVariant[T](name, kind)),
		Split:    fftSplit[T](name, kind),
	}
}

// regNeeds refuses CPUs (the regradix variant's Needs): its 16 points per work-item in
// registers are shaped for SIMT GPUs; Mesa's Rusticl (32 items a group) ran it 4x slower
// than the portable kernel (1.52 s against 0.36 s for a 2^20-point transform on 2 cores,
// 2026-11-26), PoCL about as fast (87 against 99 ms). The package's tests run it on CPUs
// too (NewRegFFT).
func regNeeds(info engine.DeviceInfo) error {
	if info.Kind == engine.KindCPU {
		return errors.New("needs a GPU or accelerator (16 points per work-item in registers, shaped for SIMT); on CPUs the portable kernel is as fast or faster")
	}
	return nil
}

// regVariant is the regradix variant of an fft op (NewRegFFT), before the portable one.
func regVariant[T kernels.Float](name string, kind fftKind) kernels.Variant {
	return kernels.Variant{
		Name:     RegName,
		Needs:    regNeeds,
		Doc:      "16 complex points per work-item in registers: radix-16 stages (4 x 4, unrolled) with one local-memory exchange between two, loads and stores straight from registers, 4096 points a work-group (a 1024-point transform is 16 x 16 x 4, a 256-point pass 16 x 16), twiddles from the coarse/fine tables (OpenCL C, every backend; GPUs and accelerators)",
		Dialect:  engine.DialectOpenCL,
		Tunables: RegDefault.String() + " (items of 16 points each, fewer where the device or its local memory allows fewer; fewest consecutive columns a work-group of a multi-pass transform moves), or prism tune's",
		Candidates: func(*engine.Device) []string {
			out := make([]string, len(regCandidates))
			for i, c := range regCandidates {
				out[i] = c.String()
			}
			return out
		},
		Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			return setupFFT[T](ctx, q, name, kind, true, p)
		},
	}
}

// portableVariant is the portable variant (NewFFT), its doc saying how it computes.
func portableVariant[T kernels.Float](name string, kind fftKind) kernels.Variant {
	v := kernels.PortableVariant(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
		return setupFFT[T](ctx, q, name, kind, false, p)
	})
	v.Doc = "Stockham passes in local memory: radix-4 stages with two barriers each, 16 points per work-item, 4096 points a work-group (OpenCL C, every backend)"
	return v
}

// pow2Floor returns the largest power of two <= n (n >= 1).
func pow2Floor(n int) int { return 1 << (bits.Len(uint(n)) - 1) }

// fftInstance runs one fft op over sets of inputs.
type fftInstance[T kernels.Float] struct {
	kind       fftKind
	f          *FFT[T]
	n, batch   int // points per transform (real points for r2c), transforms
	rows, cols int // 2d
	x          *kernels.Inputs[T]
	out        *engine.Buffer[T]
	tunables   string // the regradix variant's, with where they came from; "" otherwise
}

// setupFFT sets up an fft op through Prism's kernels: the regradix variant when reg (with
// p.Tunables, else the device's tuned set, else RegDefault), else the portable one.
func setupFFT[T kernels.Float](ctx context.Context, q *engine.Queue, name string, kind fftKind, reg bool, p kernels.Params) (kernels.Instance, error) {
	if !reg {
		return newFFTInstance[T](ctx, q, name, kind, p, true)
	}
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	t, from, err := regTunablesFor(q.Device(), name, p.Tunables)
	if err != nil {
		return nil, err
	}
	f, err := NewRegFFT[T](q.Device(), t)
	if err != nil {
		return nil, err
	}
	in, err := newFFTInstance[T](ctx, q, name, kind, p, false)
	if err != nil {
		f.Close()
		return nil, err
	}
	in.f = f
	in.tunables = f.RegTunables().String() + " (" + from + ")"
	return in, nil
}

// Tunables reports the regradix variant's shape and where it came from (kernels.
// TunablesReporter); "" for the portable variant.
func (in *fftInstance[T]) Tunables() string { return in.tunables }

// newFFTInstance sets up the shape, input sets and output of an fft op; kernel compiles
// Prism's portable FFT (the regradix variant sets its own in.f; vendor variants run a
// library instead).
func newFFTInstance[T kernels.Float](ctx context.Context, q *engine.Queue, name string, kind fftKind, p kernels.Params, kernel bool) (_ *fftInstance[T], err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	in := &fftInstance[T]{kind: kind, batch: 1}
	switch kind {
	case fftC2C, fftInverse:
		in.n = pow2Floor(min(p.Size, FFTMaxLen))
	case fftR2C:
		in.n = pow2Floor(min(max(p.Size, 2), FFTMaxLen))
	case fftBatched:
		in.n, in.batch = fftBatchLen, min(max(p.Size/fftBatchLen, 1), 1<<19)
	case fft2D:
		total := pow2Floor(min(p.Size, 1<<28))
		lg := bits.Len(uint(total)) - 1
		in.cols = 1 << ((lg + 1) / 2)
		in.rows = total / in.cols
		in.n = total
	}
	inLen, outLen := 2*in.n*in.batch, 2*in.n*in.batch
	if kind == fftR2C {
		inLen, outLen = in.n, in.n+2
	}
	if kernel {
		if in.f, err = NewFFT[T](q.Device()); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	rng := kernels.NewRand(p.Seed, 0xff7)
	in.x, err = kernels.NewInputs(ctx, q, p, inLen*engine.SizeOf[T](), func(int) [][]T { return [][]T{kernels.RandFloats[T](rng, inLen, -1, 1)} })
	if err != nil {
		return nil, err
	}
	if in.out, err = engine.NewBuffer[T](q.Device(), outLen); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *fftInstance[T]) Run(ctx context.Context, q *engine.Queue) error {
	src := in.x.Next()[0]
	switch in.kind {
	case fftInverse:
		return in.f.Inverse(q, in.out, src, in.n, in.batch)
	case fft2D:
		return in.f.Forward2D(q, in.out, src, in.rows, in.cols)
	case fftR2C:
		return in.f.RealForward(q, in.out, src, in.n, in.batch)
	default:
		return in.f.Forward(q, in.out, src, in.n, in.batch)
	}
}

// Verify computes the full float64 reference (an O(n log n) four-step FFT on the host, spread
// over the cores: about 3 CPU-seconds at 2^24 points, so no sampling is needed) and checks every transform's 2-norm error
// against FFTTolerance (RealFFTTolerance for r2c), see CheckFFT.
func (in *fftInstance[T]) Verify(ctx context.Context, q *engine.Queue) error {
	got, err := in.out.Download(ctx, q)
	if err != nil {
		return err
	}
	last, err := in.x.Last(ctx)
	if err != nil {
		return err
	}
	x := last[0]
	what := "fft " + string(in.kind)
	switch in.kind {
	case fftInverse:
		return CheckFFT(what, got, FFTRef(x, in.n, 1, true), in.n, FFTTolerance[T](in.n))
	case fft2D:
		return CheckFFT(what, got, FFT2DRef(x, in.rows, in.cols, false), in.n, FFTTolerance[T](in.n))
	case fftR2C:
		return CheckFFT(what, got, RealFFTRef(x, in.n, 1), in.n/2+1, RealFFTTolerance[T](in.n))
	default:
		return CheckFFT(what, got, FFTRef(x, in.n, in.batch, false), in.n, FFTTolerance[T](in.n))
	}
}

// Model counts 5 n log2 n real FLOPs per complex transform of n points (the usual
// convention for FFT GFLOP/s, from radix-2 Cooley-Tukey: n/2 log2 n butterflies of 10
// FLOPs), 2.5 n log2 n for a real-input transform; and the minimum traffic: the input read
// once and the output written once (each global pass really moves both, see Passes).
func (in *fftInstance[T]) Model() kernels.Model {
	e := float64(engine.SizeOf[T]())
	n, b := float64(in.n), float64(in.batch)
	lg := math.Log2(n)
	if in.kind == fftR2C {
		return kernels.Model{Flops: 2.5 * n * lg * b, Bytes: (n + 2*(n/2+1)) * e * b}
	}
	return kernels.Model{Flops: 5 * n * lg * b, Bytes: 2 * 2 * n * e * b}
}

func (in *fftInstance[T]) Shape() string {
	passes := func(n int) string {
		var s []string
		for _, l := range in.f.Passes(n) {
			s = append(s, fmt.Sprint(l))
		}
		return strings.Join(s, "x")
	}
	switch in.kind {
	case fft2D:
		return fmt.Sprintf("rows=%d cols=%d passes=%s+%s", in.rows, in.cols, passes(in.cols), passes(in.rows))
	case fftBatched:
		return fmt.Sprintf("n=%d batch=%d passes=%s", in.n, in.batch, passes(in.n))
	case fftR2C:
		return fmt.Sprintf("n=%d real passes=%s+post", in.n, passes(in.n/2))
	}
	return fmt.Sprintf("n=%d passes=%s", in.n, passes(in.n))
}

func (in *fftInstance[T]) Close() error {
	return errors.Join(in.out.Close(), in.x.Close(), in.f.Close())
}
