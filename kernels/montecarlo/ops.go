package montecarlo

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed montecarlo.cl
var source string

// Family returns the montecarlo family: its OpenCL C source (montecarlo.cl) and its operations, in the
// order listings show them.
func Family() kernels.Family {
	var ops []kernels.Op
	for _, op := range MonteCarloOps {
		ops = append(ops, monteCarloOp(op))
	}
	return kernels.Family{Name: "montecarlo", Source: source, Ops: ops}
}

var monteCarloDocs = map[MonteCarloOp]string{
	MCPhilox:  "Philox-4x32-10 counter-based random words, the same bits on every device",
	MCUniform: "uniform float32 in [0, 1) from Philox words, (x >> 8) * 2^-24, bit-exact",
	MCNormal:  "standard normal float32 by Box-Muller from Philox words",
	MCPi:      "pi from points in the unit quarter circle (exact count, work-group reduction)",
	MCOption:  "European call price under Black-Scholes by Monte Carlo (work-group reduction)",
}

var monteCarloSizeDocs = map[MonteCarloOp]string{
	MCPhilox:  "n words",
	MCUniform: "n uniforms",
	MCNormal:  "n normals",
	MCPi:      "n points (2 words each)",
	MCOption:  "n paths (one normal each)",
}

// monteCarloQuick are the quick sizes: 1M outputs, but 256K normals and paths, whose log,
// sqrt, sin, cos (and exp) cost PoCL 3.1 about 170 ns per normal and 250 ns per path on
// two loaded cores (2026-11-21), against 30 ns per Philox word.
var monteCarloQuick = map[MonteCarloOp]int{MCPhilox: 1 << 20, MCUniform: 1 << 20, MCNormal: 1 << 18, MCPi: 1 << 20, MCOption: 1 << 18}

// mcOption is the option the montecarlo/option op prices: at the money, 5% rate, 20%
// volatility, one year.
var mcOption = Option{Spot: 100, Strike: 100, Rate: 0.05, Sigma: 0.2, T: 1}

func monteCarloOp(op MonteCarloOp) kernels.Op {
	typ := "float32"
	if op == MCPhilox {
		typ = "uint32"
	}
	name := "montecarlo/" + string(op) + "/" + typ
	return kernels.Op{
		Name: name, Family: "montecarlo", Type: typ, Doc: monteCarloDocs[op],
		SizeDoc: monteCarloSizeDocs[op], DefaultSize: 1 << 26, QuickSize: monteCarloQuick[op],
		Variants: kernels.Portable(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			if err := kernels.CheckSize(name, p); err != nil {
				return nil, err
			}
			if p.Size > MonteCarloMax {
				return nil, fmt.Errorf("kernels: %s: size %d above %d: %w", name, p.Size, MonteCarloMax, engine.ErrInvalidArg)
			}
			switch op {
			case MCPhilox:
				return setupMCGen[uint32](q, op, p)
			case MCUniform, MCNormal:
				return setupMCGen[float32](q, op, p)
			}
			return setupMCReduce(q, op, p)
		}),
		Split: monteCarloSplit(name, op),
	}
}

// mcStart is where the ops' streams start: the seed is the op's seed, the stream a
// constant per op, the offset 0. The generators have no inputs, so there is nothing to
// rotate.
func mcStart(op MonteCarloOp, p kernels.Params) Philox {
	s := map[MonteCarloOp]uint64{MCPhilox: 1, MCUniform: 2, MCNormal: 3, MCPi: 4, MCOption: 5}[op]
	return Philox{Seed: p.Seed, Stream: s}
}

// mcFullVerify is the largest generator output verified element by element; beyond it
// Verify checks the first and last elements and 4096 seeded random ones (each element is
// computed independently from its counter, so a sample tests any position as well).
const mcFullVerify = 1 << 22

type mcGenInstance[E uint32 | float32] struct {
	op  MonteCarloOp
	m   *MonteCarlo
	at  Philox
	n   int
	out *engine.Buffer[E]
}

func setupMCGen[E uint32 | float32](q *engine.Queue, op MonteCarloOp, p kernels.Params) (_ kernels.Instance, err error) {
	m, err := NewMonteCarlo(q.Device())
	if err != nil {
		return nil, err
	}
	in := &mcGenInstance[E]{op: op, m: m, at: mcStart(op, p), n: p.Size}
	if in.out, err = engine.NewBuffer[E](q.Device(), p.Size); err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

func (in *mcGenInstance[E]) Run(ctx context.Context, q *engine.Queue) error {
	switch out := any(in.out).(type) {
	case *engine.Buffer[uint32]:
		return in.m.Bits(q, out, in.at)
	case *engine.Buffer[float32]:
		if in.op == MCUniform {
			return in.m.Uniform(q, out, in.at)
		}
		return in.m.Normal(q, out, in.at)
	}
	return fmt.Errorf("kernels: montecarlo %s: no buffer: %w", in.op, engine.ErrInvalidArg)
}

func (in *mcGenInstance[E]) Verify(ctx context.Context, q *engine.Queue) error {
	what := "montecarlo " + string(in.op)
	if in.n <= mcFullVerify { // everything, against the block-wise references
		got, err := in.out.Download(ctx, q)
		if err != nil {
			return err
		}
		switch g := any(got).(type) {
		case []uint32:
			return kernels.CheckEqual(what, g, PhiloxRef(in.at, in.n))
		case []float32:
			if in.op == MCUniform {
				return kernels.CheckEqual(what, g, UniformRef(in.at, in.n))
			}
			want, tol := NormalRef(in.at, in.n)
			return kernels.CheckClose(what, g, want, func(i int) float64 { return tol[i] })
		}
	}
	// A sample: the first, the last and 4096 seeded random elements.
	got := make([]E, 1)
	for _, i := range kernels.SampleIndices(in.n, kernels.NewRand(in.at.Seed, 0x6d63)) {
		if err := in.out.Read(ctx, q, i, got); err != nil {
			return err
		}
		var want, tol float64
		switch in.op {
		case MCPhilox:
			want = float64(in.at.Word(i))
		case MCUniform:
			want = float64(Uniform24(in.at.Word(i)))
		default:
			want, tol = NormalAt(in.at, i)
		}
		if d := math.Abs(float64(got[0]) - want); !(d <= tol) { // exact (tol 0) for words and uniforms
			return fmt.Errorf("%w: %s: element %d = %v, want %v (|diff| %.3g > tolerance %.3g)", kernels.ErrVerify, what, i, got[0], want, d, tol)
		}
	}
	return nil
}

func (in *mcGenInstance[E]) Model() kernels.Model { return MonteCarloModel(in.op, in.n) }

func (in *mcGenInstance[E]) Shape() string { return fmt.Sprintf("n=%d", in.n) }

func (in *mcGenInstance[E]) Close() error {
	return errors.Join(in.out.Close(), in.m.Close())
}

// mcReduceInstance runs pi or option: a count (uint32) or a price (float32) in out[0].
type mcReduceInstance struct {
	op           MonteCarloOp
	m            *MonteCarlo
	at           Philox
	n            int
	count, partU *engine.Buffer[uint32]
	price, partF *engine.Buffer[float32]
}

func setupMCReduce(q *engine.Queue, op MonteCarloOp, p kernels.Params) (_ kernels.Instance, err error) {
	m, err := NewMonteCarlo(q.Device())
	if err != nil {
		return nil, err
	}
	in := &mcReduceInstance{op: op, m: m, at: mcStart(op, p), n: p.Size}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	dev := q.Device()
	if op == MCPi {
		if in.partU, err = engine.NewBuffer[uint32](dev, m.PiScratch(in.n)); err == nil {
			in.count, err = engine.NewBuffer[uint32](dev, 1)
		}
	} else {
		if in.partF, err = engine.NewBuffer[float32](dev, m.OptionScratch(in.n)); err == nil {
			in.price, err = engine.NewBuffer[float32](dev, 1)
		}
	}
	if err != nil {
		return nil, err
	}
	return in, nil
}

func (in *mcReduceInstance) Run(ctx context.Context, q *engine.Queue) error {
	if in.op == MCPi {
		return in.m.PiCountInto(q, in.count, in.partU, in.n, in.at)
	}
	return in.m.OptionInto(q, in.price, in.partF, in.n, mcOption, in.at)
}

func (in *mcReduceInstance) Verify(ctx context.Context, q *engine.Queue) error {
	if in.op == MCPi {
		var got [1]uint32
		if err := in.count.Read(ctx, q, 0, got[:]); err != nil {
			return err
		}
		return kernels.CheckEqual("montecarlo pi count", got[:], []uint32{PiRef(in.at, in.n)})
	}
	var got [1]float32
	if err := in.price.Read(ctx, q, 0, got[:]); err != nil {
		return err
	}
	e := OptionRef(mcOption, in.n, in.at)
	tol := OptionTolerance(e, mcOption, in.m.OptionChain(in.n))
	return kernels.CheckClose("montecarlo option price", got[:], []float64{e.Price}, func(int) float64 { return tol })
}

func (in *mcReduceInstance) Model() kernels.Model { return MonteCarloModel(in.op, in.n) }

func (in *mcReduceInstance) Shape() string {
	if in.op == MCPi {
		return fmt.Sprintf("points=%d", in.n)
	}
	return fmt.Sprintf("paths=%d", in.n)
}

func (in *mcReduceInstance) Close() error {
	return errors.Join(in.count.Close(), in.partU.Close(), in.price.Close(), in.partF.Close(), in.m.Close())
}
