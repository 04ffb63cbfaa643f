package fft

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// FFTMaxLen is the longest transform the fft family computes: 2^24 complex points (and 2^24
// real points for RealForward). The twiddle tables are built for it.
const FFTMaxLen = 1 << 24

// fftLgMax and fftLgFine describe the two twiddle tables (fft.cl): coarse[c] =
// e^{-2 pi i c / 2^12} and fine[f] = e^{-2 pi i f / 2^24}, 4096 entries each.
const (
	fftLgMax  = 24
	fftLgFine = 12
)

// FFT computes complex float FFTs of power-of-two length on one device: batched 1D,
// 2D and real-input transforms of interleaved complex data (element k of a transform is
// re = buf[2k], im = buf[2k+1]). Forward is X[k] = sum_j x[j] e^{-2 pi i jk/n}; Inverse uses
// e^{+2 pi i jk/n} and is unnormalized, as in FFTW and cuFFT: Inverse(Forward(x)) = n*x.
//
// An FFT owns one scratch buffer (grown on demand to the largest transform it has run) and
// its twiddle tables, uploaded on first use: it is safe for concurrent use only through one
// queue at a time (a mutex serializes the enqueueing); make one FFT per queue for
// independent streams.
type FFT[T kernels.Float] struct {
	dev            *engine.Device
	prog           *engine.Program
	block, r2c     *engine.Kernel
	wg, ept, lgLoc int
	lgMinC         int // log2 of the fewest columns a work-group of a multi-pass transform moves

	// The regradix variant (NewRegFFT): its program and kernel run the passes in place of
	// block, with regWG items per work-group; nil for the portable FFT.
	regProg *engine.Program
	reg     *engine.Kernel
	regWG   int
	regTun  RegTunables // as built
	// regOpts are the build options of fft_reg.cl; where regSpecialize (GPUs), each pass
	// shape gets its own build (PASS_* defined), made before the first transform that
	// takes it and kept in regPass.
	regOpts       []string
	regSpecialize bool
	regPass       map[passShape]*regBuild

	mu           sync.Mutex
	coarse, fine *engine.Buffer[T]
	stw          *engine.Buffer[T] // the regradix variant's stage twiddles (stageTwiddles)
	work         *engine.Buffer[T]
	closed       bool
	replay       kernels.Replay // the passes of a transform as one graph
}

// NewFFT compiles the fft family for dev. It returns an error wrapping
// engine.ErrUnsupported when T is float64 and the device has no fp64.
func NewFFT[T kernels.Float](dev *engine.Device) (*FFT[T], error) {
	ept := 16
	if engine.SizeOf[T]() == 8 {
		ept = 8 // 2048 double2 = 32 KiB: CUDA's static shared memory stops at 48 KiB
	}
	return newFFT[T](dev, 256, ept, 4)
}

// newFFT compiles the family with work-group size wg (at most; the device may lower it),
// ept complex elements per work-item and radix 2 or 4 (the tests use small local lengths to
// exercise the multi-pass path on small data).
func newFFT[T kernels.Float](dev *engine.Device, wg, ept, radix int) (*FFT[T], error) {
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	size := 2 * engine.SizeOf[T]() // bytes per complex element
	wantWG, wantEPT := wg, ept
	// Registers, or the implementation, may allow fewer work-items than asked: Fit builds
	// again smaller.
	return kernels.Fit(dev, "fft", func(lim kernels.Limits) (*FFT[T], kernels.Shape, error) {
		wg, ept := lim.Group(wantWG), wantEPT
		// Fit local memory: halve the elements per item, then the work-group.
		for lm := lim.LocalBytes; lm > 0 && int64(wg*ept*size) > lm; {
			if ept > 4 {
				ept /= 2
			} else if wg > 1 {
				wg /= 2
			} else {
				return nil, kernels.Shape{}, kernels.TooSmall("fft", lim, fmt.Sprintf("%d bytes of local memory", ept*size))
			}
		}
		f := &FFT[T]{dev: dev, wg: wg, ept: ept, lgLoc: kernels.Log2Ceil(wg * ept), lgMinC: 4}
		var err error
		f.prog, err = dev.Build(commonSource+source, append(opts, fmt.Sprintf("-DWG=%d", wg), fmt.Sprintf("-DEPT=%d", ept), fmt.Sprintf("-DRADIX=%d", radix))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		ks, err := kernels.LoadKernels(f.prog, kernels.Ref{Dst: &f.block, Name: "fft_block"}, kernels.Ref{Dst: &f.r2c, Name: "fft_r2c_post"})
		if err != nil {
			f.Close()
			return nil, kernels.Shape{}, err
		}
		return f, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
}

// Close releases the kernels, tables and scratch. Idempotent.
func (f *FFT[T]) Close() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	errs := []error{f.replay.Close()}
	for _, b := range []*engine.Buffer[T]{f.coarse, f.fine, f.stw, f.work} {
		if b != nil {
			errs = append(errs, b.Close())
		}
	}
	for _, b := range f.regPass {
		errs = append(errs, b.Close())
	}
	for _, k := range []*engine.Kernel{f.block, f.r2c, f.reg} {
		if k != nil {
			errs = append(errs, k.Close())
		}
	}
	for _, p := range []*engine.Program{f.prog, f.regProg} {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	return errors.Join(errs...)
}

// WorkGroup returns the work-group size of the pass kernel on this device (fft_block's, or
// fft_reg's for the regradix variant).
func (f *FFT[T]) WorkGroup() int {
	if f.reg != nil {
		return f.regWG
	}
	return f.wg
}

// LocalLen returns the longest transform done in one pass, in one work-group (WG * EPT
// complex points, WG * 16 for the regradix variant: 4096 for float32 on most devices).
func (f *FFT[T]) LocalLen() int { return 1 << f.lgLoc }

// Passes returns the lengths of the Stockham passes a transform of n points takes (their
// product is n): one pass up to LocalLen, else 2 or 3 passes of at most LocalLen/16 points
// (LocalLen/MINC for the regradix variant), so that every work-group moves at least 16
// (MINC) consecutive complex elements per row.
func (f *FFT[T]) Passes(n int) []int {
	var out []int
	for _, lg := range fftPlan(kernels.Log2Ceil(n), f.lgLoc, f.lgMinC) {
		out = append(out, 1<<lg)
	}
	return out
}

// fftPlan splits a transform of 2^lgN points into passes of 2^lg points each: one pass of
// up to 2^lgLoc points, else passes of at most 2^(lgLoc-lgMinC), as even as they divide.
func fftPlan(lgN, lgLoc, lgMinC int) []int {
	if lgN <= lgLoc {
		return []int{lgN}
	}
	most := max(lgLoc-lgMinC, 1)
	k := (lgN + most - 1) / most
	out := make([]int, k)
	for i := range out {
		out[i] = lgN / k
		if i < lgN%k {
			out[i]++
		}
	}
	return out
}

// fftPass is one launch of fft_block.
type fftPass struct {
	lgL, lgC, lgPin, lgPout, lgI, lgNs int
	cols                               int
}

// passShape is a pass without its column count, with its direction and whether it is a
// whole real-input transform: what a specialized build of fft_reg.cl fixes (PASS_*).
type passShape struct {
	lgL, lgC, lgPin, lgPout, lgI, lgNs int
	inv                                bool
	r2c                                bool // the whole real-input transform (PASS_R2C)
}

func (p fftPass) shape(inv bool) passShape {
	return passShape{lgL: p.lgL, lgC: p.lgC, lgPin: p.lgPin, lgPout: p.lgPout, lgI: p.lgI, lgNs: p.lgNs, inv: inv}
}

// passes appends the passes of batch transforms of 2^lgN points with 2^lgI transforms
// interleaved (element e of transform (b, i) at (b*N + e)*I + i). Interleaved transforms
// (the columns of a 2D transform) take passes short enough for a work-group to hold
// min(2^lgMinC, I) of them, so that its loads and stores are runs of consecutive columns
// even where the whole transform would fit one work-group (one column of 4096 points a
// group reads 8 bytes of every 32 KiB row of a 4096 x 4096 matrix: the 2D transform took
// 577 us on an H200, cuFFT 215 us).
func (f *FFT[T]) passes(ps []fftPass, lgN, batch, lgI int) []fftPass {
	lgNs := 0
	plan := fftPlan(lgN, f.lgLoc, f.lgMinC)
	if lgI > 0 {
		plan = fftPlan(lgN, f.lgLoc-min(f.lgMinC, lgI), 0)
	}
	for _, lgL := range plan {
		lgS := lgN - lgL
		cols := batch << (lgS + lgI)
		lgC := min(f.lgLoc-lgL, kernels.Log2Ceil(cols))
		ps = append(ps, fftPass{lgL: lgL, lgC: lgC, lgPin: lgS + lgI, lgPout: lgNs + lgI, lgI: lgI, lgNs: lgNs, cols: cols})
		lgNs += lgL
	}
	return ps
}

// isPow2 reports whether n is a power of two (1 included).
func isPow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// checkFFT validates the shape and the buffers of a transform of batch*n complex points
// (inLen, outLen: the T elements src and dst must hold).
func (f *FFT[T]) checkFFT(op string, dst, src *engine.Buffer[T], n, batch, inLen, outLen int) error {
	switch {
	case dst == nil || src == nil:
		return fmt.Errorf("kernels: fft %s: nil buffer: %w", op, engine.ErrInvalidArg)
	case !isPow2(n) || n > FFTMaxLen:
		return fmt.Errorf("kernels: fft %s: length %d; must be a power of two from 1 to 2^24: %w", op, n, engine.ErrInvalidArg)
	case batch < 1:
		return fmt.Errorf("kernels: fft %s: batch %d; must be at least 1: %w", op, batch, engine.ErrInvalidArg)
	case batch > math.MaxInt32 || inLen > math.MaxInt32 || outLen > math.MaxInt32 || 2*n*batch > math.MaxInt32:
		return fmt.Errorf("kernels: fft %s: %d transforms of %d points exceed the family's limit of 2^31-1 elements: %w", op, batch, n, engine.ErrInvalidArg)
	case src.Len() < inLen:
		return fmt.Errorf("kernels: fft %s: source of %d elements; %d transforms of %d points need %d: %w", op, src.Len(), batch, n, inLen, engine.ErrInvalidArg)
	case dst.Len() < outLen:
		return fmt.Errorf("kernels: fft %s: destination of %d elements; %d transforms of %d points need %d: %w", op, dst.Len(), batch, n, outLen, engine.ErrInvalidArg)
	}
	return nil
}

// Forward computes batch forward FFTs of n complex points: src and dst hold batch
// contiguous transforms of n interleaved (re, im) pairs, 2*n*batch elements at least.
// n is a power of two up to FFTMaxLen. dst may be src (in place, through the scratch).
func (f *FFT[T]) Forward(q *engine.Queue, dst, src *engine.Buffer[T], n, batch int) error {
	return f.transform(q, "forward", dst, src, n, batch, false)
}

// Inverse computes batch unnormalized inverse FFTs (exponent +2 pi i jk/n) of n complex
// points, laid out as for Forward: Inverse(Forward(x)) = n*x.
func (f *FFT[T]) Inverse(q *engine.Queue, dst, src *engine.Buffer[T], n, batch int) error {
	return f.transform(q, "inverse", dst, src, n, batch, true)
}

func (f *FFT[T]) transform(q *engine.Queue, op string, dst, src *engine.Buffer[T], n, batch int, inv bool) error {
	if err := f.checkFFT(op, dst, src, n, batch, 2*n*batch, 2*n*batch); err != nil {
		return err
	}
	ps := f.passes(nil, kernels.Log2Ceil(n), batch, 0)
	return f.run(q, ps, dst, src, nil, 2*n*batch, inv)
}

// Forward2D computes the 2D forward FFT of a rows x cols complex matrix stored row-major
// (element (r, c) at complex index r*cols + c): FFTs of every row, then of every column.
// rows and cols are powers of two up to FFTMaxLen each. dst may be src.
func (f *FFT[T]) Forward2D(q *engine.Queue, dst, src *engine.Buffer[T], rows, cols int) error {
	return f.transform2D(q, "2d forward", dst, src, rows, cols, false)
}

// Inverse2D computes the unnormalized 2D inverse FFT, laid out as for Forward2D:
// Inverse2D(Forward2D(x)) = rows*cols*x.
func (f *FFT[T]) Inverse2D(q *engine.Queue, dst, src *engine.Buffer[T], rows, cols int) error {
	return f.transform2D(q, "2d inverse", dst, src, rows, cols, true)
}

func (f *FFT[T]) transform2D(q *engine.Queue, op string, dst, src *engine.Buffer[T], rows, cols int, inv bool) error {
	if !isPow2(rows) || rows > FFTMaxLen {
		return fmt.Errorf("kernels: fft %s: %d rows; must be a power of two from 1 to 2^24: %w", op, rows, engine.ErrInvalidArg)
	}
	if err := f.checkFFT(op, dst, src, cols, rows, 2*rows*cols, 2*rows*cols); err != nil {
		return err
	}
	ps := f.passes(nil, kernels.Log2Ceil(cols), rows, 0)                 // rows: batch of contiguous transforms
	ps = f.passes(ps, kernels.Log2Ceil(rows), 1, kernels.Log2Ceil(cols)) // columns: cols interleaved transforms
	return f.run(q, ps, dst, src, nil, 2*rows*cols, inv)
}

// RealForward computes batch FFTs of n real points each: src holds batch contiguous
// transforms of n values (n*batch elements at least), dst receives n/2+1 complex bins per
// transform (X[0..n/2] interleaved, batch*(n+2) elements at least; the other bins are the
// conjugates X[n-k] = conj X[k]). n is a power of two from 2 to FFTMaxLen. It runs the
// complex FFT of length n/2 of z[k] = x[2k] + i x[2k+1] (src read as complex), then a
// post-processing pass that separates the spectra of the even and odd samples; where the
// regradix variant builds per pass shape (GPUs) and n/2 fits one pass (LocalLen), that
// post-processing runs in the same pass, so the transform is one launch. dst must not
// overlap src.
func (f *FFT[T]) RealForward(q *engine.Queue, dst, src *engine.Buffer[T], n, batch int) error {
	if n < 2 {
		return fmt.Errorf("kernels: fft real forward: length %d; must be a power of two from 2 to 2^24: %w", n, engine.ErrInvalidArg)
	}
	if err := f.checkFFT("real forward", dst, src, n, batch, n*batch, (n+2)*batch); err != nil {
		return err
	}
	if dst == src {
		return fmt.Errorf("kernels: fft real forward: dst and src are the same buffer: %w", engine.ErrInvalidArg)
	}
	h := n / 2
	ps := f.passes(nil, kernels.Log2Ceil(h), batch, 0)
	return f.run(q, ps, dst, src, &realPost{lgH: kernels.Log2Ceil(h), total: (h + 1) * batch}, n*batch, false)
}

// realPost is the post-processing pass of RealForward.
type realPost struct{ lgH, total int }

// run enqueues the passes from src to dst (or, with post, from src into the scratch and
// then post from the scratch into dst) ping-ponging with the scratch. elems is the
// element count of one full intermediate result.
func (f *FFT[T]) run(q *engine.Queue, ps []fftPass, dst, src *engine.Buffer[T], post *realPost, elems int, inv bool) error {
	if q == nil {
		return fmt.Errorf("kernels: fft: nil queue: %w", engine.ErrInvalidArg)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("kernels: fft: closed: %w", engine.ErrClosed)
	}
	if err := f.tables(q); err != nil {
		return err
	}
	if post != nil {
		if done, err := f.realOnePass(q, ps, dst, src, elems); done || err != nil {
			return err
		}
	}
	k := len(ps)
	if k > 1 || dst == src || post != nil {
		if err := f.scratch(q, elems); err != nil {
			return err
		}
	}
	outs := make([]*engine.Buffer[T], k)
	final := dst
	if post != nil {
		final = f.work
	}
	other := f.work
	if post != nil {
		other = dst // dst holds (h+1)*batch >= h*batch complex: a fine second buffer
	}
	copyBack := false
	switch {
	case dst != src || post != nil:
		for i := k - 1; i >= 0; i-- {
			if (k-1-i)%2 == 0 {
				outs[i] = final
			} else {
				outs[i] = other
			}
		}
	case k == 1: // one pass reads and writes the same elements per work-group: in place is safe
		outs[0] = dst
	default:
		for i := range outs {
			if i%2 == 0 {
				outs[i] = f.work
			} else {
				outs[i] = dst
			}
		}
		copyBack = outs[k-1] != dst
	}
	if err := f.regBuilds(ps, inv); err != nil {
		return err
	}
	// From the second transform of the same buffers and plan on, its commands run as one
	// graph (kernels.Replay).
	key := fftKey{dst: dst, src: src, plan: fmt.Sprint(ps, elems, inv, copyBack)}
	if post != nil {
		key.post = *post
	}
	return f.replay.Run(q, key, func() error { return f.enqueue(q, ps, outs, dst, src, post, elems, inv, copyBack) })
}

// realOnePass runs a real-input transform whose complex transform is one pass (ps) as
// that pass alone: the specialized build with PASS_R2C post-processes in the work-group
// that transformed, with no scratch and no second pass. It reports false, having done
// nothing, where the FFT does not build per shape (CPUs, the portable FFT) or the
// transform takes several passes. Called with f.mu held.
func (f *FFT[T]) realOnePass(q *engine.Queue, ps []fftPass, dst, src *engine.Buffer[T], elems int) (bool, error) {
	if f.reg == nil || !f.regSpecialize || len(ps) != 1 {
		return false, nil
	}
	p := ps[0]
	sh := p.shape(false)
	sh.r2c = true
	if err := f.regBuild(sh); err != nil {
		return false, err
	}
	b := f.regPass[sh]
	if b.k == nil { // the shape runs the generic kernel, then the post-pass
		return false, nil
	}
	key := fftKey{dst: dst, src: src, plan: fmt.Sprint(ps, elems, "r2c")}
	return true, f.replay.Run(q, key, func() error {
		groups := (p.cols + 1<<p.lgC - 1) >> p.lgC
		return q.Launch(b.k, engine.Range1D(groups*f.regWG, f.regWG), dst, src, f.coarse, f.fine, f.stw,
			int32(stageTwiddleBase(p.lgL)), int32(p.cols), int32(p.lgL), int32(p.lgC), int32(p.lgPin),
			int32(p.lgPout), int32(p.lgI), int32(p.lgNs), int32(0))
	})
}

// fftKey identifies a transform's commands for Replay.
type fftKey struct {
	dst, src any
	post     realPost
	plan     string
}

// enqueue enqueues run's commands: the passes into outs, the copy back, the real-input post-processing.
func (f *FFT[T]) enqueue(q *engine.Queue, ps []fftPass, outs []*engine.Buffer[T], dst, src *engine.Buffer[T], post *realPost, elems int, inv, copyBack bool) error {
	invArg := int32(0)
	if inv {
		invArg = 1
	}
	block, bwg := f.block, f.wg
	if f.reg != nil {
		block, bwg = f.reg, f.regWG
	}
	in := src
	for i, p := range ps {
		k := block
		if b := f.regPass[p.shape(inv)]; b != nil && b.k != nil {
			k = b.k
		}
		groups := (p.cols + 1<<p.lgC - 1) >> p.lgC
		shape := []any{int32(p.cols), int32(p.lgL), int32(p.lgC), int32(p.lgPin), int32(p.lgPout), int32(p.lgI), int32(p.lgNs), invArg}
		var err error
		if f.reg != nil {
			err = q.Launch(k, engine.Range1D(groups*bwg, bwg), append([]any{outs[i], in, f.coarse, f.fine, f.stw, int32(stageTwiddleBase(p.lgL))}, shape...)...)
		} else {
			err = q.Launch(k, engine.Range1D(groups*bwg, bwg), append([]any{outs[i], in, f.coarse, f.fine}, shape...)...)
		}
		if err != nil {
			return err
		}
		in = outs[i]
	}
	if copyBack {
		if err := dst.CopyFrom(q, 0, f.work, 0, elems); err != nil {
			return err
		}
	}
	if post != nil {
		wg := f.wg
		items := min(engine.RoundUp(post.total, wg), 1<<24)
		return q.Launch(f.r2c, engine.Range1D(items, wg), dst, f.work, f.coarse, f.fine, int32(post.lgH), int32(post.total))
	}
	return nil
}

// scratch grows the scratch buffer to at least elems elements. Called with f.mu held.
//
// On Oclgrind the new buffer is written once from the host: Oclgrind 21.10's
// uninitialized-memory check keeps the shadow of a released buffer for the next buffer in
// its slot until the host writes that one, so the passes' stores into a scratch larger than
// the buffer released before it were lost to the check, and the real-input post-pass was
// reported reading them when the suite's GEMMs ran before it in one process (the same
// cause as the histogram's counts, see kernels/histogram/ops.go).
func (f *FFT[T]) scratch(q *engine.Queue, elems int) error {
	if f.work != nil && f.work.Len() >= elems {
		return nil
	}
	if f.work != nil {
		f.work.Close()
		f.work = nil
	}
	var w *engine.Buffer[T]
	var err error
	if strings.Contains(f.dev.Info().Platform, "Oclgrind") {
		w, err = engine.Upload(context.Background(), q, make([]T, elems))
	} else {
		w, err = engine.NewBuffer[T](f.dev, elems)
	}
	if err != nil {
		return err
	}
	f.work = w
	return nil
}

// tables uploads the twiddle tables on first use. Called with f.mu held.
func (f *FFT[T]) tables(q *engine.Queue) error {
	if f.coarse != nil {
		return nil
	}
	c, fi := FFTTwiddles[T]()
	// A few kilobytes uploaded once, inside calls that otherwise only enqueue and so take
	// no context.
	ctx := context.Background()
	coarse, err := engine.Upload(ctx, q, c)
	if err != nil {
		return err
	}
	fine, err := engine.Upload(ctx, q, fi)
	if err != nil {
		coarse.Close()
		return err
	}
	f.coarse, f.fine = coarse, fine
	if f.reg != nil {
		if f.stw, err = engine.Upload(ctx, q, stageTwiddles[T]()); err != nil {
			return err
		}
	}
	return nil
}

// stageLgMax is the longest pass the stage twiddles cover: 2^12 points, fft_reg.cl's
// largest work-group (NPG <= 4096).
const stageLgMax = 12

// stageRadices returns log2 of the radix of each stage of a fft_reg.cl pass of 2^lgL
// points: 4 (radix 16) while they fit, then the remainder 1, 2 or 3 (lgL = 0: one stage,
// a copy).
func stageRadices(lgL int) []int {
	var out []int
	for ; lgL >= 4; lgL -= 4 {
		out = append(out, 4)
	}
	if lgL > 0 || len(out) == 0 {
		out = append(out, lgL)
	}
	return out
}

// stageTwiddleBase returns where the stage twiddles of a pass of 2^lgL points start in
// stageTwiddles' table, in complex entries.
func stageTwiddleBase(lgL int) int {
	base := 0
	for l := range lgL {
		base += stageTwiddleLen(l)
	}
	return base
}

// stageTwiddleLen returns the complex entries of the stage twiddles of a pass of 2^lgL
// points: R*ns for each stage s >= 1 (ns = 16^s).
func stageTwiddleLen(lgL int) int {
	n := 0
	for s, lgR := range stageRadices(lgL) {
		if s > 0 {
			n += 1 << (lgR + 4*s)
		}
	}
	return n
}

// stageTwiddles returns fft_reg.cl's stage twiddles for every pass length 2^lgL up to
// 2^stageLgMax, interleaved (re, im), the passes in increasing length from
// stageTwiddleBase(lgL): for each stage s >= 1 of radix R and span ns = 16^s, R*ns entries
// w_{R ns}^{t r} = e^{-2 pi i t r / (R ns)} at t*ns + r, computed in float64 and rounded
// to T (within u, as the coarse table).
func stageTwiddles[T kernels.Float]() []T {
	var out []T
	for lgL := 0; lgL <= stageLgMax; lgL++ {
		for s, lgR := range stageRadices(lgL) {
			if s == 0 {
				continue
			}
			r, ns := 1<<lgR, 1<<(4*s)
			for t := range r {
				for j := range ns {
					sn, cs := sincosTurns(t*j, r*ns)
					out = append(out, T(cs), T(-sn))
				}
			}
		}
	}
	return out
}

// FFTTwiddles returns the two twiddle tables of fft.cl, interleaved (re, im): coarse[c] =
// e^{-2 pi i c/4096} and fine[f] = e^{-2 pi i f/2^24}, c, f < 4096, computed in float64 and
// rounded to T, so each entry is within u (the unit roundoff of T) of the exact value.
func FFTTwiddles[T kernels.Float]() (coarse, fine []T) {
	const m = 1 << fftLgFine
	coarse, fine = make([]T, 2*m), make([]T, 2*m)
	for i := range m {
		s, c := sincosTurns(i, m)
		coarse[2*i], coarse[2*i+1] = T(c), T(-s)
		s, c = sincosTurns(i, 1<<fftLgMax)
		fine[2*i], fine[2*i+1] = T(c), T(-s)
	}
	return coarse, fine
}

// sincosTurns returns sin and cos of 2 pi k/n, reducing k/n to the first octant first so
// that the float64 result is accurate to a few ulps for every k.
func sincosTurns(k, n int) (s, c float64) {
	k %= n
	if k < 0 {
		k += n
	}
	// Octant reduction on exact integers: 8k/n in [0, 8).
	oct := (8 * k) / n
	r := float64(8*k-oct*n) / float64(n) // in [0, 1): fraction of the octant
	a := r * math.Pi / 4
	sa, ca := math.Sincos(a)
	// angle = oct*pi/4 + a
	switch oct {
	case 0:
		return sa, ca
	case 1: // pi/4 + a = pi/2 - (pi/4 - a)
		sb, cb := math.Sincos(math.Pi/4 - a)
		return cb, sb
	case 2:
		return ca, -sa
	case 3:
		sb, cb := math.Sincos(math.Pi/4 - a)
		return sb, -cb
	case 4:
		return -sa, -ca
	case 5:
		sb, cb := math.Sincos(math.Pi/4 - a)
		return -cb, -sb
	case 6:
		return -ca, sa
	default:
		sb, cb := math.Sincos(math.Pi/4 - a)
		return -sb, cb
	}
}
