package montecarlo

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// MonteCarloOp names one operation of the montecarlo family.
type MonteCarloOp string

// The montecarlo operations.
const (
	MCPhilox  MonteCarloOp = "philox"  // raw Philox-4x32-10 words
	MCUniform MonteCarloOp = "uniform" // float32 uniforms in [0, 1)
	MCNormal  MonteCarloOp = "normal"  // float32 standard normals (Box-Muller)
	MCPi      MonteCarloOp = "pi"      // points in the unit quarter circle
	MCOption  MonteCarloOp = "option"  // European call price under Black-Scholes
)

// MonteCarloOps lists the montecarlo operations in their canonical order.
var MonteCarloOps = []MonteCarloOp{MCPhilox, MCUniform, MCNormal, MCPi, MCOption}

// MonteCarloMax is the largest number of outputs (words, points or paths) of one call:
// 2^31 - 8, so that the kernels' int indices (4 per block) cannot overflow.
const MonteCarloMax = math.MaxInt32 - 7

// MonteCarloModel returns the FLOPs and bytes of op over n outputs (words, points or paths).
// The Philox rounds are integer work (per 4 words: 10 rounds of two 32x32->64-bit products
// and four XORs, and 9 key additions of two words) and are not counted as FLOPs. Uniform:
// one multiply per word. Normal: per pair of words two uniforms, log, the product by -2,
// sqrt, the product by 2 pi, cos, sin and two products by r: 10 per pair, 5 per word.
// Pi: the test x*x + y*y < 1, 3 operations per point (done exactly in 64-bit integers, but
// counted as the float arithmetic it replaces). Option: per path half a Box-Muller pair (5),
// drift + vol*z (2), exp, the product by the spot, the subtraction of the strike, the max
// and the accumulation (5): 12. Bytes: what the op writes (its only traffic); pi and
// option write one partial per work-group and one result, counted as 4 bytes.
func MonteCarloModel(op MonteCarloOp, n int) kernels.Model {
	f := float64(n)
	switch op {
	case MCPhilox:
		return kernels.Model{Flops: 0, Bytes: 4 * f}
	case MCUniform:
		return kernels.Model{Flops: f, Bytes: 4 * f}
	case MCNormal:
		return kernels.Model{Flops: 5 * f, Bytes: 4 * f}
	case MCPi:
		return kernels.Model{Flops: 3 * f, Bytes: 4}
	case MCOption:
		return kernels.Model{Flops: 12 * f, Bytes: 4}
	}
	return kernels.Model{}
}

// Philox is a position in a Philox-4x32-10 stream: the key (Seed: low 32 bits key word 0,
// high 32 bits key word 1), one of the 2^64 independent streams of that key (Stream:
// counter words 2 and 3) and the first word to generate (Offset: counter block Offset/4,
// word Offset%4 of it). Word i of a stream is word i%4 of Philox(counter = (i/4 low 32
// bits, i/4 high 32 bits, Stream low, Stream high), key). Generating n words at Offset o
// and then n' words at o+n gives the n+n' words generated at o at once.
type Philox struct {
	Seed, Stream, Offset uint64
}

// Advance returns p moved on by n >= 0 words: where a call that generated n words from p
// ends, and the next one continues.
func (p Philox) Advance(n int) Philox {
	p.Offset += uint64(n)
	return p
}

// philoxArgs are the kernel arguments that name a position: key, stream, first block.
type philoxArgs struct {
	k0, k1, s0, s1, bLo, bHi uint32
	skip                     int32
}

func (p Philox) args() philoxArgs {
	b := p.Offset / 4
	return philoxArgs{k0: uint32(p.Seed), k1: uint32(p.Seed >> 32), s0: uint32(p.Stream), s1: uint32(p.Stream >> 32),
		bLo: uint32(b), bHi: uint32(b >> 32), skip: int32(p.Offset % 4)}
}

// Option is a European call under Black-Scholes: spot price, strike, risk-free rate
// (continuous), volatility and maturity in years.
type Option struct {
	Spot, Strike, Rate, Sigma, T float64
}

// validate checks that the option's parameters are finite, prices and volatility positive,
// and that they fit float32.
func (o Option) validate() error {
	for _, v := range []struct {
		name string
		x    float64
		pos  bool
	}{{"spot", o.Spot, true}, {"strike", o.Strike, true}, {"rate", o.Rate, false}, {"sigma", o.Sigma, true}, {"T", o.T, true}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || math.Abs(v.x) > math.MaxFloat32 || (v.pos && !(v.x > 0)) {
			return fmt.Errorf("kernels: option: %s = %v; must be finite%s: %w", v.name, v.x,
				map[bool]string{true: " and positive", false: ""}[v.pos], engine.ErrInvalidArg)
		}
	}
	return nil
}

// params returns the float32 kernel arguments: spot, strike, drift (r - sigma^2/2) T and
// vol sigma sqrt(T), each rounded once from its float64 value.
func (o Option) params() (spot, strike, drift, vol float32) {
	return float32(o.Spot), float32(o.Strike), float32((o.Rate - o.Sigma*o.Sigma/2) * o.T), float32(o.Sigma * math.Sqrt(o.T))
}

// MonteCarlo runs the montecarlo family on one device: Philox-4x32-10 words, uniforms and
// normals, and the pi and option estimates. Outputs are float32 (the words uint32). It is
// safe for concurrent use by goroutines that each use their own Queue.
type MonteCarlo struct {
	dev                                           *engine.Device
	prog                                          *engine.Program
	bits, uniform, normal, pi, option, sumU, sumF *engine.Kernel
	wg                                            int
	maxGroups                                     int
}

// NewMonteCarlo compiles the montecarlo family for dev.
func NewMonteCarlo(dev *engine.Device) (*MonteCarlo, error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: montecarlo: nil device: %w", engine.ErrInvalidArg)
	}
	return kernels.Fit(dev, "montecarlo", func(lim kernels.Limits) (*MonteCarlo, kernels.Shape, error) {
		wg := lim.Group(256)
		prog, err := dev.Build(source, fmt.Sprintf("-DWG=%d", wg))
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		// mc_pi's and mc_option's groups: 32 a compute unit, and where the device ends a
		// work-item's loops early (kernels.LoopLimit: Mesa's llvmpipe), as many as keep their
		// grid loops (a block of two points a step, for pi) over MonteCarloMax within it.
		m := &MonteCarlo{dev: dev, prog: prog, wg: wg,
			maxGroups: max(max(dev.Info().ComputeUnits, 1)*32, kernels.GroupsWithin(kernels.LoopLimit(dev), (MonteCarloMax/2+wg-1)/wg, 1, 16))}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &m.bits, Name: "mc_bits"}, kernels.Ref{Dst: &m.uniform, Name: "mc_uniform"},
			kernels.Ref{Dst: &m.normal, Name: "mc_normal"}, kernels.Ref{Dst: &m.pi, Name: "mc_pi"}, kernels.Ref{Dst: &m.option, Name: "mc_option"},
			kernels.Ref{Dst: &m.sumU, Name: "mc_sum_uint"}, kernels.Ref{Dst: &m.sumF, Name: "mc_sum_float"})
		if err != nil {
			m.Close()
			return nil, kernels.Shape{}, err
		}
		return m, kernels.Shape{Items: wg, Kernels: ks}, nil
	})
}

// Close releases the compiled kernels. Idempotent.
func (m *MonteCarlo) Close() error {
	var errs []error
	for _, k := range []*engine.Kernel{m.bits, m.uniform, m.normal, m.pi, m.option, m.sumU, m.sumF} {
		errs = append(errs, k.Close())
	}
	errs = append(errs, m.prog.Close())
	return errors.Join(errs...)
}

// WorkGroup returns the work-group size the family was compiled with on this device.
func (m *MonteCarlo) WorkGroup() int { return m.wg }

// checkMCCount validates a count of outputs (wordsPer words each) and that the stream
// position does not wrap past 2^64 words.
func checkMCCount(op MonteCarloOp, n int, p Philox, wordsPer int) error {
	if n < 1 || n > MonteCarloMax {
		return fmt.Errorf("kernels: montecarlo %s: n = %d; must be in [1, %d]: %w", op, n, MonteCarloMax, engine.ErrInvalidArg)
	}
	if p.Offset > math.MaxUint64-uint64(n)*uint64(wordsPer)-3 {
		return fmt.Errorf("kernels: montecarlo %s: offset %d + %d words passes the end of the stream (2^64 words): %w", op, p.Offset, n*wordsPer, engine.ErrInvalidArg)
	}
	return nil
}

// Bits fills out with the Philox-4x32-10 words of p's stream from p.Offset on.
func (m *MonteCarlo) Bits(q *engine.Queue, out *engine.Buffer[uint32], p Philox) error {
	return mcGenerate(m, q, MCPhilox, m.bits, out, -1, p)
}

// Uniform fills out with the uniforms in [0, 1) of the words of p's stream from p.Offset on:
// (word >> 8) * 2^-24, the same bits on every device.
func (m *MonteCarlo) Uniform(q *engine.Queue, out *engine.Buffer[float32], p Philox) error {
	return mcGenerate(m, q, MCUniform, m.uniform, out, -1, p)
}

// Normal fills out with standard normals by Box-Muller from the words of p's stream from
// p.Offset on: word i gives z = r cos(2 pi u2) when i is even, r sin(2 pi u2) when odd,
// from the words 2*(i/2) (u1) and 2*(i/2)+1 (u2) (see montecarlo.cl). Equal to the float64
// reference within NormalTolerance, not bit for bit: the devices' log, sqrt, sin and cos
// differ by a few ulps.
func (m *MonteCarlo) Normal(q *engine.Queue, out *engine.Buffer[float32], p Philox) error {
	return mcGenerate(m, q, MCNormal, m.normal, out, -1, p)
}

// mcGenerate launches a generator over the first n elements of out (all of it when n < 0).
func mcGenerate[E uint32 | float32](m *MonteCarlo, q *engine.Queue, op MonteCarloOp, k *engine.Kernel, out *engine.Buffer[E], n int, p Philox) error {
	if out == nil {
		return fmt.Errorf("kernels: montecarlo %s: nil output buffer: %w", op, engine.ErrInvalidArg)
	}
	if n < 0 {
		n = out.Len()
	}
	if err := checkMCCount(op, n, p, 1); err != nil {
		return err
	}
	if n > out.Len() {
		return fmt.Errorf("kernels: montecarlo %s: %d outputs into a buffer of %d: %w", op, n, out.Len(), engine.ErrInvalidArg)
	}
	a := p.args()
	nblocks := (int(a.skip) + n + 3) / 4
	return q.Launch(k, engine.Range1D(engine.RoundUp(nblocks, m.wg), m.wg),
		out, int32(n), int32(nblocks), a.skip, a.k0, a.k1, a.s0, a.s1, a.bLo, a.bHi)
}

// reduceGroups returns the work-groups of mc_pi and mc_option over nblocks blocks.
func (m *MonteCarlo) reduceGroups(nblocks int) int {
	return max(min((nblocks+m.wg-1)/m.wg, m.maxGroups), 1)
}

// PiScratch returns the scratch length PiCountInto needs for n points.
func (m *MonteCarlo) PiScratch(n int) int { return m.reduceGroups((n + 1) / 2) }

// OptionScratch returns the scratch length OptionInto needs for n paths.
func (m *MonteCarlo) OptionScratch(n int) int { return m.reduceGroups((n + 3) / 4) }

// OptionChain returns the longest chain of float additions in the sum of n payoffs (per
// item, tree, final sum): the k of the gamma_k bound in OptionTolerance.
func (m *MonteCarlo) OptionChain(n int) int {
	nblocks := (n + 3) / 4
	groups := m.reduceGroups(nblocks)
	perItem := (nblocks + groups*m.wg - 1) / (groups * m.wg)
	return 4*perItem + 2*kernels.Log2Ceil(m.wg) + (groups+m.wg-1)/m.wg
}

// checkScratch validates the output and scratch buffers of pi and option.
func checkScratch[E uint32 | float32](op MonteCarloOp, out, part *engine.Buffer[E], need int) error {
	if out == nil || part == nil {
		return fmt.Errorf("kernels: montecarlo %s: nil output or scratch buffer: %w", op, engine.ErrInvalidArg)
	}
	if part.Len() < need {
		return fmt.Errorf("kernels: montecarlo %s: scratch of %d elements, need %d: %w", op, part.Len(), need, engine.ErrInvalidArg)
	}
	return nil
}

// checkAligned requires a block-aligned offset (pi and option read whole blocks).
func checkAligned(op MonteCarloOp, p Philox) error {
	if p.Offset%4 != 0 {
		return fmt.Errorf("kernels: montecarlo %s: offset %d is not a multiple of 4 (the op starts at a counter block): %w", op, p.Offset, engine.ErrInvalidArg)
	}
	return nil
}

// PiCountInto writes into count[0] how many of n points fall in the unit quarter circle:
// point j is (uniform of word 2j, uniform of word 2j+1) of p's stream counted from
// p.Offset, which must be a multiple of 4 (the next call continues at
// p.Advance(2*n) rounded up to a multiple of 4). The test x*x + y*y < 1 is exact, so the
// count equals PiRef on every device. part is scratch of at least PiScratch(n) elements.
func (m *MonteCarlo) PiCountInto(q *engine.Queue, count, part *engine.Buffer[uint32], n int, p Philox) error {
	if err := checkMCCount(MCPi, n, p, 2); err != nil {
		return err
	}
	if err := checkAligned(MCPi, p); err != nil {
		return err
	}
	nblocks := (n + 1) / 2
	groups := m.reduceGroups(nblocks)
	if err := checkScratch(MCPi, count, part, groups); err != nil {
		return err
	}
	a := p.args()
	if err := q.Launch(m.pi, engine.Range1D(groups*m.wg, m.wg), part, int32(n), int32(nblocks), int32(0), int32(groups*m.wg),
		a.k0, a.k1, a.s0, a.s1, a.bLo, a.bHi); err != nil {
		return err
	}
	return q.Launch(m.sumU, engine.Range1D(m.wg, m.wg), count, part, int32(groups))
}

// Pi estimates pi from n points (see PiCountInto): 4 * count / n. It waits for the result,
// or until ctx is done.
func (m *MonteCarlo) Pi(ctx context.Context, q *engine.Queue, n int, p Philox) (float64, error) {
	if err := checkMCCount(MCPi, n, p, 2); err != nil {
		return 0, err
	}
	c, err := scratchRun(ctx, m.dev, q, m.PiScratch(n), func(out, part *engine.Buffer[uint32]) error {
		return m.PiCountInto(q, out, part, n, p)
	})
	return 4 * float64(c) / float64(n), err
}

// OptionInto writes into price[0] the Monte Carlo price of the European call o over n
// paths: exp(-rT) times the mean of max(S_T - K, 0), S_T = S0 exp((r - sigma^2/2) T +
// sigma sqrt(T) z), path j taking z = word j of the normals of p's stream from p.Offset
// (a multiple of 4; see Normal). Computed in float32 with work-group reductions; it equals
// OptionRef within OptionTolerance. part is scratch of at least OptionScratch(n) elements.
func (m *MonteCarlo) OptionInto(q *engine.Queue, price, part *engine.Buffer[float32], n int, o Option, p Philox) error {
	if err := checkMCCount(MCOption, n, p, 1); err != nil {
		return err
	}
	if err := checkAligned(MCOption, p); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	nblocks := (n + 3) / 4
	groups := m.reduceGroups(nblocks)
	if err := checkScratch(MCOption, price, part, groups); err != nil {
		return err
	}
	spot, strike, drift, vol := o.params()
	a := p.args()
	if err := q.Launch(m.option, engine.Range1D(groups*m.wg, m.wg), part, int32(n), int32(nblocks), int32(0), int32(groups*m.wg),
		spot, strike, drift, vol, a.k0, a.k1, a.s0, a.s1, a.bLo, a.bHi); err != nil {
		return err
	}
	scale := float32(math.Exp(-o.Rate*o.T) / float64(n))
	return q.Launch(m.sumF, engine.Range1D(m.wg, m.wg), price, part, int32(groups), scale)
}

// OptionPrice returns the Monte Carlo price of o over n paths (see OptionInto). It waits
// for the result, or until ctx is done.
func (m *MonteCarlo) OptionPrice(ctx context.Context, q *engine.Queue, n int, o Option, p Philox) (float32, error) {
	if err := checkMCCount(MCOption, n, p, 1); err != nil {
		return 0, err
	}
	return scratchRun(ctx, m.dev, q, m.OptionScratch(n), func(out, part *engine.Buffer[float32]) error {
		return m.OptionInto(q, out, part, n, o, p)
	})
}

// scratchRun allocates a one-element output and scratch of parts elements, runs f and
// reads the output.
func scratchRun[E uint32 | float32](ctx context.Context, dev *engine.Device, q *engine.Queue, parts int, f func(out, part *engine.Buffer[E]) error) (E, error) {
	part, err := engine.NewBuffer[E](dev, parts)
	if err != nil {
		return 0, err
	}
	defer part.Close()
	out, err := engine.NewBuffer[E](dev, 1)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	if err := f(out, part); err != nil {
		return 0, err
	}
	var r [1]E
	if err := out.Read(ctx, q, 0, r[:]); err != nil {
		return 0, err
	}
	return r[0], nil
}
