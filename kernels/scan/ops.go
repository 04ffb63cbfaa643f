package scan

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed scan.cl
var source string

// Family returns the scan family: its OpenCL C source (scan.cl) and its operations, in the
// order listings show them.
func Family() kernels.Family {
	return kernels.Family{Name: "scan", Source: source, Ops: []kernels.Op{
		scanOp[int32](false), scanOp[uint32](true), scanOp[float32](false), scanOp[float32](true),
	}}
}

func scanOp[T ScanElem](exclusive bool) kernels.Op {
	kind, doc := "inclusive", "y[i] = x[0] + ... + x[i]"
	if exclusive {
		kind, doc = "exclusive", "y[i] = x[0] + ... + x[i-1], y[0] = 0"
	}
	tn := kernels.TypeName[T]()
	if tn != "float32" {
		doc += "; wraps modulo 2^32"
	}
	name := "scan/" + kind + "/" + tn
	return kernels.Op{
		Name: name, Family: "scan", Type: tn, Doc: doc, SizeDoc: "n elements",
		DefaultSize: 1 << 25, QuickSize: 1 << 20,
		Variants: []kernels.Variant{
			{
				Name: "cuda-lookback", Doc: "one pass, one launch: tiles scanned in shared memory, each tile's offset from its predecessors' published sums (decoupled look-back; CUDA C++)",
				Dialect: engine.DialectCUDA, Backend: "cuda", MinCompute: 70,
				Tunables:   fmt.Sprintf("%s on sm_80 and newer, else %s (tile %d), or prism tune's", lookbackPersistDefault, lookbackDefault, lookbackTile),
				Candidates: func(dev *engine.Device) []string { return kernels.CandidatesOf(lookbackCandidatesFor(dev))(dev) },
				Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
					return setupScan[T](ctx, q, name, exclusive, true, p)
				},
			},
			portableVariant(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
				return setupScan[T](ctx, q, name, exclusive, false, p)
			}),
		},
	}
}

// portableVariant is scan.cl's variant, its doc saying how it scans.
func portableVariant(setup func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error)) kernels.Variant {
	v := kernels.PortableVariant(setup)
	v.Doc = "reduce-then-scan, three passes over memory: chunk sums, then tiles scanned in registers with 16-byte accesses, item totals through local memory, and a carry (OpenCL C, every backend)"
	return v
}

// scanInstance runs one scan over rotating input sets.
type scanInstance[T ScanElem] struct {
	s         *Scan[T]
	lb        *Lookback[T] // the cuda-lookback variant, else nil (and s is the portable scan)
	exclusive bool
	n         int
	x         *kernels.Inputs[T]
	y, part   *engine.Buffer[T]
	tunables  string // the cuda-lookback variant's, and where they came from
}

// Tunables reports the cuda-lookback variant's tunables ("" for the portable scan, which
// has none).
func (in *scanInstance[T]) Tunables() string { return in.tunables }

// scanInputs returns n seeded inputs: integers uniform over their whole range (the sums
// wrap), floats uniform in [0, 1), so that the prefix sums grow and the relative tolerance
// stays meaningful (with signs mixed the sums would be small next to the sum of |x|).
func scanInputs[T ScanElem](rng *rand.Rand, n int) []T {
	x := make([]T, n)
	var z T
	for i := range x {
		switch any(z).(type) {
		case float32:
			x[i] = T(rng.Float32())
		default:
			x[i] = T(rng.Uint32())
		}
	}
	return x
}

// setupScan sets up a scan op; lookback selects the cuda-lookback variant.
func setupScan[T ScanElem](ctx context.Context, q *engine.Queue, name string, exclusive, lookback bool, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	n := p.Size
	in := &scanInstance[T]{exclusive: exclusive, n: n}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	if lookback {
		sh, from, err := kernels.TunablesFor(q.Device(), name, "cuda-lookback", p.Tunables, parseLookbackShape, defaultLookback(q.Device()), "table")
		if err != nil {
			return nil, err
		}
		if in.lb, err = newLookback[T](q.Device(), sh); err != nil {
			return nil, err
		}
		in.tunables = sh.String() + " (" + from + ")"
	} else {
		in.s, err = NewScan[T](q.Device())
	}
	if err != nil {
		return nil, err
	}
	rng := kernels.NewRand(p.Seed, 0x7363616e) // "scan"
	in.x, err = kernels.NewInputs(ctx, q, p, n*engine.SizeOf[T](), func(int) [][]T { return [][]T{scanInputs[T](rng, n)} })
	if err != nil {
		return nil, err
	}
	if in.y, err = engine.NewBuffer[T](q.Device(), n); err != nil {
		return nil, err
	}
	if in.s != nil {
		if g := in.s.Scratch(n); g > 1 {
			if in.part, err = engine.NewBuffer[T](q.Device(), g); err != nil {
				return nil, err
			}
		}
	}
	return in, nil
}

func (in *scanInstance[T]) Run(ctx context.Context, q *engine.Queue) error {
	if in.lb != nil {
		return in.lb.Into(q, in.y, in.x.Next()[0], in.n, in.exclusive)
	}
	return in.s.Into(q, in.y, in.x.Next()[0], in.part, in.n, in.exclusive)
}

// Verify compares every output element with the reference (one pass on the host).
func (in *scanInstance[T]) Verify(ctx context.Context, q *engine.Queue) error {
	got, err := in.y.Download(ctx, q)
	if err != nil {
		return err
	}
	last, err := in.x.Last(ctx)
	if err != nil {
		return err
	}
	x := last[0]
	chain := 0
	if in.lb != nil {
		chain = in.lb.Chain(len(x))
	} else {
		chain = in.s.Chain(len(x))
	}
	return checkScan("scan", x, in.exclusive, chain, got)
}

// checkScan compares the device prefix sums got of x with the reference, element by
// element, within ScanTolerance.
func checkScan[T ScanElem](what string, x []T, exclusive bool, chain int, got []T) error {
	if exclusive {
		what += " exclusive"
	} else {
		what += " inclusive"
	}
	if len(got) < len(x) {
		return fmt.Errorf("%w: %s: %d elements, want %d", kernels.ErrVerify, what, len(got), len(x))
	}
	want, abs := ScanRef(x, exclusive), ScanAbsPrefix(x)
	for i, w := range want {
		g := float64(got[i])
		tol := ScanTolerance[T](chain, abs[i])
		if d := math.Abs(g - w); !(d <= tol) {
			return fmt.Errorf("%w: %s: element %d of %d = %v, want %v (|diff| %.3g > tolerance %.3g)", kernels.ErrVerify, what, i, len(x), got[i], w, d, tol)
		}
	}
	return nil
}

// Model: x read once and y written once (the minimum; the implementation reads x twice).
// One addition per element.
func (in *scanInstance[T]) Model() kernels.Model {
	n := float64(in.n)
	return kernels.Model{Flops: n, Bytes: 2 * n * float64(engine.SizeOf[T]())}
}

func (in *scanInstance[T]) Shape() string { return fmt.Sprintf("n=%d", in.n) }

func (in *scanInstance[T]) Close() error {
	return errors.Join(in.y.Close(), in.part.Close(), in.x.Close(), in.s.Close(), in.lb.Close())
}
