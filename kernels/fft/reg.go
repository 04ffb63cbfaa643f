package fft

import (
	_ "embed"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed fft_reg.cl
var regSource string

// RegName is the name of the fft ops' regradix variant (NewRegFFT).
const RegName = "regradix"

// RegTunables are the shape of the regradix variant (fft_reg.cl): work-groups of WG items,
// each holding 16 complex points in registers (WG * 16 points a work-group, the longest
// one-pass transform), and MinC, the fewest consecutive columns a work-group of a
// multi-pass transform loads and stores (its passes are at most WG * 16 / MinC points).
type RegTunables struct {
	WG, MinC int
}

// RegDefault is the shape the regradix variant runs with unless prism tune chose another
// for the device or one is forced: 256 items (4096 points: 1024-point transforms 4 to a
// work-group, 2^24 in three passes of 256 = 16 x 16, each two register stages and one
// local exchange) and runs of 16 columns (128 bytes of float2), as the portable kernel.
// Not yet measured against the other candidates on a GPU: `prism tune` chooses there.
var RegDefault = RegTunables{WG: 256, MinC: 16}

// regCandidates are the shapes prism tune measures: the default first, then fewer items
// (fewer points per work-group, more work-groups per multiprocessor) and shorter runs of
// columns (longer passes: 2^20 in two passes of 1024 with MINC=4, 32-byte runs).
var regCandidates = []RegTunables{
	RegDefault,
	{WG: 128, MinC: 16}, {WG: 64, MinC: 16},
	{WG: 256, MinC: 8}, {WG: 256, MinC: 4}, {WG: 128, MinC: 8},
}

// String spells t as Candidates and Params.Tunables spell it: "WG=256 MINC=16".
func (t RegTunables) String() string { return fmt.Sprintf("WG=%d MINC=%d", t.WG, t.MinC) }

// ParseRegTunables reads tunables spelled as String spells them; a key left out keeps
// RegDefault's value. It returns an error wrapping engine.ErrInvalidArg for an unknown or
// repeated key or a value out of range: WG a power of two from 1 to 256 (WG * 16 points
// must not exceed the 4096-entry twiddle table), MINC a power of two from 1 to 4096.
func ParseRegTunables(s string) (RegTunables, error) {
	t := RegDefault
	if err := kernels.ParseTunableInts("fft regradix tunables", s, false,
		kernels.TunableInt{Key: "WG", Dst: &t.WG, Min: 1, Max: 256},
		kernels.TunableInt{Key: "MINC", Dst: &t.MinC, Min: 1, Max: 4096}); err != nil {
		return RegTunables{}, err
	}
	if err := t.check(); err != nil {
		return RegTunables{}, fmt.Errorf("kernels: fft regradix tunables %q: %w", s, err)
	}
	return t, nil
}

// check returns an error wrapping engine.ErrInvalidArg unless WG (1..256) and MinC
// (1..4096) are powers of two.
func (t RegTunables) check() error {
	if !isPow2(t.WG) || t.WG > 256 || !isPow2(t.MinC) || t.MinC > 4096 {
		return fmt.Errorf("%s: WG (up to 256) and MINC (up to 4096) must be powers of two: %w", t, engine.ErrInvalidArg)
	}
	return nil
}

// regLocalLen is fft_reg.cl's LDS_N: the complex elements of local memory a work-group of
// wg items uses.
func regLocalLen(wg int) int { n := 16 * wg; return n + n/16 + n/32 }

// NewRegFFT compiles the regradix variant for dev with shape t: an FFT whose passes run
// fft_reg.cl (16 points per work-item in registers, radix-16 stages, one local exchange
// between two stages) instead of fft_block, with the same methods, layouts and results.
// The real-input post-pass is fft.cl's, built beside it. WG is lowered where the device
// or the compiled kernel allows fewer items or its local memory does not hold
// regLocalLen(WG) elements. It returns an error wrapping engine.ErrInvalidArg for
// tunables out of range, and engine.ErrUnsupported when T is float64 and the device has
// no fp64.
func NewRegFFT[T kernels.Float](dev *engine.Device, t RegTunables) (*FFT[T], error) {
	if err := t.check(); err != nil {
		return nil, fmt.Errorf("kernels: fft regradix: tunables %w", err)
	}
	f, err := NewFFT[T](dev) // fft_r2c_post, and the state every FFT keeps
	if err != nil {
		return nil, err
	}
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		f.Close()
		return nil, err
	}
	size := int64(2 * engine.SizeOf[T]())
	r, err := kernels.Fit(dev, "fft", func(lim kernels.Limits) (*regBuild, kernels.Shape, error) {
		wg := lim.Group(t.WG)
		for lim.LocalBytes > 0 && int64(regLocalLen(wg))*size > lim.LocalBytes {
			if wg == 1 {
				return nil, kernels.Shape{}, kernels.TooSmall("fft", lim, fmt.Sprintf("%d bytes of local memory", int64(regLocalLen(1))*size))
			}
			wg /= 2
		}
		b := &regBuild{wg: wg}
		var err error
		if b.prog, err = dev.Build(commonSource+regSource, append(opts, fmt.Sprintf("-DWG=%d", wg))...); err != nil {
			return nil, kernels.Shape{}, err
		}
		ks, err := kernels.LoadKernels(b.prog, kernels.Ref{Dst: &b.k, Name: "fft_reg"})
		if err != nil {
			b.Close()
			return nil, kernels.Shape{}, err
		}
		return b, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	f.regProg, f.reg, f.regWG = r.prog, r.k, r.wg
	f.regOpts = append(opts, fmt.Sprintf("-DWG=%d", r.wg))
	f.regSpecialize = dev.Info().Kind != engine.KindCPU
	f.lgLoc = kernels.Log2Ceil(16 * r.wg)
	f.lgMinC = kernels.Log2Ceil(t.MinC)
	f.regTun = RegTunables{WG: r.wg, MinC: t.MinC}
	return f, nil
}

// regBuilds makes the specialized builds of fft_reg.cl that the passes ps need and
// regPass lacks (one per pass shape), where the FFT specializes. A shape whose build
// allows fewer work-items than the generic one Fit chose the work-group for keeps the
// generic kernel (an empty regBuild). Called with f.mu held.
func (f *FFT[T]) regBuilds(ps []fftPass, inv bool) error {
	if f.reg == nil || !f.regSpecialize {
		return nil
	}
	for _, p := range ps {
		if err := f.regBuild(p.shape(inv)); err != nil {
			return err
		}
	}
	return nil
}

// regBuild makes the specialized build of fft_reg.cl for pass shape sh unless regPass has
// it. Called with f.mu held.
func (f *FFT[T]) regBuild(sh passShape) error {
	if f.regPass[sh] != nil {
		return nil
	}
	b := &regBuild{wg: f.regWG}
	opts := append(f.regOpts[:len(f.regOpts):len(f.regOpts)],
		fmt.Sprintf("-DPASS_LGL=%d", sh.lgL), fmt.Sprintf("-DPASS_LGC=%d", sh.lgC),
		fmt.Sprintf("-DPASS_LGPIN=%d", sh.lgPin), fmt.Sprintf("-DPASS_LGPOUT=%d", sh.lgPout),
		fmt.Sprintf("-DPASS_LGI=%d", sh.lgI), fmt.Sprintf("-DPASS_LGNS=%d", sh.lgNs), fmt.Sprintf("-DPASS_INV=%d", b2i(sh.inv)))
	if sh.r2c {
		opts = append(opts, "-DPASS_R2C")
	}
	var err error
	b.prog, err = f.dev.Build(commonSource+regSource, opts...)
	if err == nil {
		b.k, err = b.prog.Kernel("fft_reg")
	}
	if err != nil {
		b.Close()
		return fmt.Errorf("kernels: fft regradix: the build for passes of 2^%d points: %w", sh.lgL, err)
	}
	if m := b.k.MaxWorkGroupSize(); m > 0 && m < f.regWG {
		// This shape's build takes more of the device (registers) than the generic
		// one: its passes run the generic kernel, as the work-group was fitted to it.
		if err := b.Close(); err != nil {
			return err
		}
		b = &regBuild{}
	}
	if f.regPass == nil {
		f.regPass = map[passShape]*regBuild{}
	}
	f.regPass[sh] = b
	return nil
}

// regBuild is one build of fft_reg.cl, for Fit.
type regBuild struct {
	prog *engine.Program
	k    *engine.Kernel
	wg   int
}

func (b *regBuild) Close() error {
	var err error
	if b.k != nil {
		err = b.k.Close()
	}
	if b.prog != nil {
		if e := b.prog.Close(); err == nil {
			err = e
		}
	}
	return err
}

// RegTunables returns the shape the regradix variant was built with, as fitted to the
// device; the zero value for the portable FFT.
func (f *FFT[T]) RegTunables() RegTunables { return f.regTun }

// regTunablesFor returns the shape the regradix variant of op runs with on dev and where
// it came from: forced (Params.Tunables), tuned (prism tune's choice), or default.
func regTunablesFor(dev *engine.Device, op, forced string) (RegTunables, string, error) {
	return kernels.TunablesFor(dev, op, RegName, forced, ParseRegTunables, RegDefault, "default")
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
