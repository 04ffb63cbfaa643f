package gemm

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// GEMMShape is the shape of one GEMM, or of a strided batch of them, in row-major
// storage: engine.GemmSpec, the one GEMM shape that Prism's kernels and the vendor BLAS
// (engine.Gemm) take. C = alpha*op(A)*op(B) + beta*C with op(A) M x K, op(B) K x N, C
// M x N, op(X) = X^T when TransX; zero leading dimensions and strides take their defaults
// (WithDefaults). Its Validate states the shape's own rules; every kernel of this package
// also checks its own narrower limits (checkShape).
type GEMMShape = engine.GemmSpec

// maxKernelDim is the largest M, N or K the kernels take: room for one tile past the edge
// in their int arithmetic.
const maxKernelDim = math.MaxInt32 - 1024

// maxKernelBatch is the largest batch the kernels take: CUDA's grid limit in the batch
// dimension.
const maxKernelBatch = 65535

// checkShape validates s for this package's kernels: the shape's rules (Validate), then
// the kernels' own limits: dimensions within maxKernelDim, a batch of at most
// maxKernelBatch, and every element index within the int32 range the kernels compute in.
// Errors wrap engine.ErrInvalidArg.
func checkShape(s GEMMShape) error {
	if err := s.Validate(); err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("kernels: gemm: "+format+": %w", append(args, engine.ErrInvalidArg)...)
	}
	d := s.WithDefaults()
	switch {
	case d.M > maxKernelDim || d.N > maxKernelDim || d.K > maxKernelDim:
		return bad("dimensions M=%d N=%d K=%d exceed the kernel's int range", d.M, d.N, d.K)
	case d.Batch > maxKernelBatch:
		return bad("batch %d above %d (CUDA's grid limit in the batch dimension)", d.Batch, maxKernelBatch)
	}
	// Every index the kernel forms is below the span of its buffer; spans must fit int32.
	sa, sb, sc := d.Spans()
	for _, x := range []struct {
		name string
		span float64
	}{{"A", sa}, {"B", sb}, {"C", sc}} {
		if x.span > math.MaxInt32 {
			return bad("%s spans %.0f elements; the kernel's int indices reach 2^31-1", x.name, x.span)
		}
	}
	return nil
}

// GEMMModel returns the work of one GEMM (times the batch): 2*M*N*K FLOPs for the products
// and sums, 3*M*N for alpha*acc + beta*c, and the bytes that must move at least: A, B and C
// read once, C written once.
func GEMMModel(s GEMMShape, elemSize int) kernels.Model {
	return GEMMModelOf(s, elemSize, elemSize)
}

// GEMMModelOf is GEMMModel with inputs A and B of inSize bytes an element and C and D of
// outSize.
func GEMMModelOf(s GEMMShape, inSize, outSize int) kernels.Model {
	s = s.WithDefaults()
	m, n, k, b := float64(s.M), float64(s.N), float64(s.K), float64(s.Batch)
	return kernels.Model{
		Flops: b * (2*m*n*k + 3*m*n),
		Bytes: b * ((m*k+k*n)*float64(inSize) + 2*m*n*float64(outSize)),
	}
}

// GEMM runs general matrix multiplication in element type T on one device: a local-memory
// tiled kernel with register blocking (gemm.cl), compiled once for all four transpose
// combinations. It is safe for concurrent use by goroutines that each use their own Queue.
type GEMM[T kernels.Float] = GEMMOf[T, T]

// GEMMOf is GEMM with inputs A and B of element type In, in a Precision (float16,
// bfloat16, tf32, ...), and C, D, alpha, beta and the arithmetic in Out: the portable
// kernel converts each input to Out as it loads it (NewGEMMOf). Safe for concurrent use
// by goroutines that each use their own Queue.
type GEMMOf[In InputType, Out kernels.Float] struct {
	dev          *engine.Device
	prog         *engine.Program
	kern         *engine.Kernel
	ts, tsk, wpt int
	// loops is the device's limit on a work-item's loop iterations (kernels.LoopLimit), 0
	// for none: RunInto splits a k too long for it into launches of kChunk.
	loops int
}

// gemmTiles chooses the tunables {TS, TSK, WPT} for a device: the first candidate whose
// work-group ((TS/WPT)^2 items) and two local tiles fit it.
//   - GPUs: 128 x 128 tiles of C, 16 x 16 items of 8 x 8 elements, k step 32: on an H100
//     at M = N = K = 8192 (2026-11-25, BenchmarkGEMMTiles) 28.1 TFLOP/s through CUDA and
//     22.2 through NVIDIA's OpenCL, against 26.7 and 19.1 with a k step of 16 and at most
//     23.1 and 21.2 with 64 x 64 tiles; a k step of 8 was fastest through OpenCL (23.8)
//     and slowest through CUDA (21.0). prism tune chooses per device.
//   - CPUs: 128 x 128 tiles, 8 x 8 items of 16 x 16 elements, k step 32: PoCL runs a
//     work-group as loops over its items, split at barriers, and gains from much work per
//     item (2026-11-21, 2 cores, M=N=K=512, float32: 3.2 GFLOP/s against 0.6 for 64/16/4).
//   - Oclgrind (a simulator reporting a GPU, 10^4 times slower): 32 x 32 tiles, 4 x 4 items
//     of 8 x 8 elements, so that the padded work of the small test problems stays small.
//   - Otherwise the header's defaults: 64 x 64 tiles, 16 x 16 items of 4 x 4 elements.
//
// The candidates must fit lim (kernels.Limits: the device's limits, lowered to what the
// compiled kernel allows).
func gemmTiles[T kernels.Float](info engine.DeviceInfo, lim kernels.Limits) (ts, tsk, wpt int) {
	// The local tiles hold T (the inputs converted as they are loaded).
	cands := [][3]int{{64, 16, 4}, {32, 16, 4}, {32, 16, 8}, {16, 16, 4}, {16, 8, 8}, {8, 8, 8}}
	switch {
	case strings.Contains(info.Platform, "Oclgrind"):
		cands = append([][3]int{{32, 16, 8}}, cands...)
	case info.Kind == engine.KindGPU:
		cands = append([][3]int{{128, 32, 8}, {128, 16, 8}}, cands...)
	case info.Kind == engine.KindCPU:
		cands = append([][3]int{{128, 32, 16}}, cands...)
	}
	for _, c := range cands {
		rts := c[0] / c[2]
		if !lim.Fits(rts, rts) || (lim.LocalBytes > 0 && int64(2*c[1]*(c[0]+1)*engine.SizeOf[T]()) > lim.LocalBytes) {
			continue
		}
		return c[0], c[1], c[2]
	}
	return 0, 0, 0 // nothing fits lim
}

// NewGEMM compiles the GEMM kernel for dev with the tunables gemmTiles chooses for it. It
// returns an error wrapping engine.ErrUnsupported when T is float64 and the device has no
// fp64.
func NewGEMM[T kernels.Float](dev *engine.Device) (*GEMM[T], error) {
	return NewGEMMOf[T, T](dev, precisionOf(kernels.TypeName[T]()))
}

// NewGEMMOf compiles the portable GEMM of precision p (a name of Precisions, or float32 or
// float64) for dev, its inputs of type In and the rest of type Out. In and Out must be
// the precision's: float32 inputs for tf32 and float32x3tf32 (the latter computed in
// float32 directly, its promised accuracy), engine.Half for float16, and so on.
func NewGEMMOf[In InputType, Out kernels.Float](dev *engine.Device, p Precision) (*GEMMOf[In, Out], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: gemm: nil device: %w", engine.ErrInvalidArg)
	}
	if err := p.check(typeNameOf[In](), kernels.TypeName[Out]()); err != nil {
		return nil, err
	}
	return kernels.Fit(dev, "gemm", func(lim kernels.Limits) (*GEMMOf[In, Out], kernels.Shape, error) {
		ts, tsk, wpt := gemmTiles[Out](dev.Info(), lim)
		if ts == 0 {
			return nil, kernels.Shape{}, kernels.TooSmall("gemm", lim, fmt.Sprintf("%d bytes of local memory (8 x 8 tiles)", 2*8*9*engine.SizeOf[Out]()))
		}
		g, err := newGEMM[In, Out](dev, p, ts, tsk, wpt)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		return g, kernels.Shape{Items: (ts / wpt) * (ts / wpt), Kernels: []*engine.Kernel{g.kern}}, nil
	})
}

// newGEMMTiles compiles the portable kernel with the given tiles (prism tune's, or forced):
// an error wrapping engine.ErrUnsupported when they do not fit dev or the compiled kernel.
func newGEMMTiles[In InputType, Out kernels.Float](dev *engine.Device, p Precision, ts, tsk, wpt int) (*GEMMOf[In, Out], error) {
	lim := kernels.DeviceLimits(dev)
	if !tilesFit[Out](lim, [3]int{ts, tsk, wpt}) {
		return nil, fmt.Errorf("kernels: gemm tiles %s do not fit %s (%d work-items of %d, %d bytes of local memory): %w",
			tilesString(ts, tsk, wpt), dev.ID(), (ts/wpt)*(ts/wpt), dev.Info().MaxWorkGroupSize, 2*tsk*(ts+1)*engine.SizeOf[Out](), engine.ErrUnsupported)
	}
	g, err := newGEMM[In, Out](dev, p, ts, tsk, wpt)
	if err != nil {
		return nil, err
	}
	if m := g.kern.MaxWorkGroupSize(); m < (ts/wpt)*(ts/wpt) {
		g.Close()
		return nil, fmt.Errorf("kernels: gemm tiles %s need %d work-items; the compiled kernel allows %d on %s: %w",
			tilesString(ts, tsk, wpt), (ts/wpt)*(ts/wpt), m, dev.ID(), engine.ErrUnsupported)
	}
	return g, nil
}

// newGEMM compiles the kernel with the given tunables (tests run every device's choices).
func newGEMM[In InputType, Out kernels.Float](dev *engine.Device, p Precision, ts, tsk, wpt int) (*GEMMOf[In, Out], error) {
	opts, err := kernels.TypeOf[Out]().Defines(dev)
	if err != nil {
		return nil, err
	}
	if p.clIn != "" && p.clIn != kernels.TypeOf[Out]().OpenCL {
		opts = append(opts, "-DIN="+p.clIn)
	}
	src := source
	if p.conv != "" {
		// The conversions (kernels/convert.cl) in front: float32 and float64 build gemm.cl alone.
		src = kernels.ConvertSource + source
		opts = append(opts, "-DCONV="+p.conv)
	}
	opts = append(opts, fmt.Sprintf("-DTS=%d", ts), fmt.Sprintf("-DTSK=%d", tsk), fmt.Sprintf("-DWPT=%d", wpt))
	prog, err := dev.Build(src, opts...)
	if err != nil {
		return nil, err
	}
	g := &GEMMOf[In, Out]{dev: dev, prog: prog, ts: ts, tsk: tsk, wpt: wpt, loops: kernels.LoopLimit(dev)}
	if g.kern, err = prog.Kernel("gemm"); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// Close releases the compiled kernel. Idempotent.
func (g *GEMMOf[In, Out]) Close() error {
	if g == nil {
		return nil
	}
	return errors.Join(g.kern.Close(), g.prog.Close())
}

// Tiles returns the tunables the kernel was compiled with on this device: the TS x TS tile
// of C per work-group, the depth TSK of the k step, and the WPT x WPT elements per item.
func (g *GEMMOf[In, Out]) Tiles() (ts, tsk, wpt int) { return g.ts, g.tsk, g.wpt }

// grid returns the launch range of shape s (with defaults).
func (g *GEMMOf[In, Out]) grid(s GEMMShape) engine.Range {
	rts := g.ts / g.wpt
	tiles := func(n int) int { return (n + g.ts - 1) / g.ts }
	return engine.Range3D(tiles(s.N)*rts, tiles(s.M)*rts, s.Batch, rts, rts, 1)
}

// Run computes C = alpha*op(A)*op(B) + beta*C in place for shape s (one matrix or a strided
// batch). When beta is 0, C is not read. The buffers must hold at least s.Lens() elements.
func (g *GEMMOf[In, Out]) Run(q *engine.Queue, s GEMMShape, alpha Out, a, b *engine.Buffer[In], beta Out, c *engine.Buffer[Out]) error {
	return g.RunInto(q, s, alpha, a, b, beta, c, c)
}

// RunInto computes D = alpha*op(A)*op(B) + beta*C for shape s, with C and D laid out alike
// (ldc, strideC). d may be c (Run); it may not overlap a or b.
func (g *GEMMOf[In, Out]) RunInto(q *engine.Queue, s GEMMShape, alpha Out, a, b *engine.Buffer[In], beta Out, c, d *engine.Buffer[Out]) error {
	s, err := checkCall(q, s, a, b, c, d)
	if err != nil {
		return err
	}
	if (s.M+g.ts-1)/g.ts > 65535 {
		return fmt.Errorf("kernels: gemm: M=%d needs more than 65535 tiles of %d rows (CUDA's grid limit): %w", s.M, g.ts, engine.ErrInvalidArg)
	}
	flag := func(b bool) int32 {
		if b {
			return 1
		}
		return 0
	}
	// Each launch sums k over [k0, k1): one launch, or where the device ends a work-item's
	// loops early, ranges of kChunk, the first with the caller's C and beta, the next ones
	// adding to D (each element read and written by the same work-item, as in place).
	chunk := g.kChunk()
	if chunk <= 0 {
		chunk = s.K
	}
	for k0 := 0; ; k0 += chunk {
		k1 := min(k0+chunk, s.K)
		if err := q.Launch(g.kern, g.grid(s), d, c, a, b, alpha, beta,
			int32(s.M), int32(s.N), int32(k1), int32(s.LDA), int32(s.LDB), int32(s.LDC),
			int32(s.StrideA), int32(s.StrideB), int32(s.StrideC), flag(s.TransA), flag(s.TransB), int32(k0)); err != nil {
			return err
		}
		if k1 >= s.K {
			return nil
		}
		c, beta = d, 1
	}
}

// loopsPerStep returns the loop iterations a work-item of gemm.cl runs per k step (TSK of
// k): its two tile loads of LPT elements, the TSK products and the step's loop itself, with
// three to spare (on Rusticl at TS 32, TSK 16, WPT 8, 84 a step, measured with a counting
// loop after the kernel's own: 84 * ceil(K/16) + 13 in all).
func (g *GEMMOf[In, Out]) loopsPerStep() int {
	rts := g.ts / g.wpt
	lpt := g.ts * g.tsk / (rts * rts)
	return 2*lpt + g.tsk + 4
}

// kChunk returns the most of k one launch sums where the device ends a work-item's loops
// after g.loops iterations (kernels.LoopLimit: Mesa's llvmpipe, where a longer k gave wrong
// sums from about 12,500 on), keeping to 90% of the limit, in whole k steps; 0 where the
// device has no limit.
func (g *GEMMOf[In, Out]) kChunk() int {
	return kernels.UnitsWithin(g.loops, g.loopsPerStep(), 32) * g.tsk
}

// Multiply computes C = A*B for an m x k matrix A and a k x n matrix B, packed row-major.
func (g *GEMMOf[In, Out]) Multiply(q *engine.Queue, m, n, k int, a, b *engine.Buffer[In], c *engine.Buffer[Out]) error {
	return g.Run(q, GEMMShape{M: m, N: n, K: k}, 1, a, b, 0, c)
}

// checkCall validates a GEMM call of every implementation (the portable kernel, mma.cu,
// sgemm.cu): a queue, the four buffers, a valid shape, and buffers that hold what the
// shape addresses. It returns the shape with its defaults.
func checkCall[In InputType, Out kernels.Float](q *engine.Queue, s GEMMShape, a, b *engine.Buffer[In], c, d *engine.Buffer[Out]) (GEMMShape, error) {
	if a == nil || b == nil || c == nil || d == nil {
		return s, fmt.Errorf("kernels: gemm: nil buffer (a %v, b %v, c %v, d %v): %w", a != nil, b != nil, c != nil, d != nil, engine.ErrInvalidArg)
	}
	if q == nil {
		return s, fmt.Errorf("kernels: gemm: nil queue: %w", engine.ErrInvalidArg)
	}
	if err := checkShape(s); err != nil {
		return s, err
	}
	s = s.WithDefaults()
	la, lb, lc := s.Lens()
	for _, x := range []struct {
		name string
		have int
		need int
	}{{"A", a.Len(), la}, {"B", b.Len(), lb}, {"C", c.Len(), lc}, {"D", d.Len(), lc}} {
		if x.have < x.need {
			return s, fmt.Errorf("kernels: gemm %v: %s holds %d elements, the shape needs %d: %w", s, x.name, x.have, x.need, engine.ErrInvalidArg)
		}
	}
	return s, nil
}
