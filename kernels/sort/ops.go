package sort

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed sort.cl
var source string

// Family returns the sort family: its OpenCL C source (sort.cl) and its operations, in the
// order listings show them.
func Family() kernels.Family {
	return kernels.Family{Name: "sort", Source: source, Ops: []kernels.Op{
		sortOp[uint32]("keys", "stable ascending LSD radix sort of uint32 keys", false, Ascending),
		sortOp[float32]("keys", "stable ascending LSD radix sort of float32 keys (order-preserving bit map)", false, Ascending),
		sortOp[uint32]("pairs", "stable ascending LSD radix sort of uint32 keys with uint32 values (the input indices)", true, Ascending),
		sortOp[float32]("desc", "stable descending LSD radix sort of float32 keys", false, Descending),
	}}
}

// sortStream is the NewRand stream constant of the sort family's inputs ("sort").
const sortStream = 0x736f7274

func sortOp[K SortKey](op, doc string, pairs bool, order SortOrder) kernels.Op {
	typ := kernels.TypeName[K]()
	name := "sort/" + op + "/" + typ
	return kernels.Op{
		Name: name, Family: "sort", Type: typ, Doc: doc,
		SizeDoc: "n keys (and n uint32 values for pairs)", DefaultSize: 1 << 24, QuickSize: 1 << 18,
		Variants: []kernels.Variant{
			{
				Name: "cuda-onesweep", Doc: "8-bit digits: one histogram pass, then one pass per digit that ranks tiles with warp matches in shared memory and places them by decoupled look-back (CUDA C++)",
				Dialect: engine.DialectCUDA, Backend: "cuda", MinCompute: onesweepMinCompute,
				Tunables:   fmt.Sprintf("BLOCK=%d, and %s (tile %d), or prism tune's; 4 passes", onesweepBlock, onesweepDefault, onesweepTile),
				Candidates: kernels.CandidatesOf(onesweepCandidates),
				Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
					t, from, err := kernels.TunablesFor(q.Device(), name, "cuda-onesweep", p.Tunables, ParseOnesweepTunables, onesweepDefault, "table")
					if err != nil {
						return nil, err
					}
					in, err := setupSort(ctx, q, name, pairs, order, p, func(dev *engine.Device) (sorter[K], error) {
						return newOnesweep[K](dev, t)
					})
					if err != nil {
						return nil, err
					}
					in.(*sortInstance[K]).tunables = t.String() + " (" + from + ")"
					return in, nil
				},
			},
			kernels.PortableVariant(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
				return setupSort(ctx, q, name, pairs, order, p, func(dev *engine.Device) (sorter[K], error) { return NewSorter[K](dev) })
			}),
		},
		Split: sortSplit[K](name, pairs, order),
	}
}

// sorter is a sort of the family: Sorter (sort.cl) or Onesweep (onesweep.cu).
type sorter[K SortKey] interface {
	Keys(q *engine.Queue, dst, src *engine.Buffer[K], n int, order SortOrder) error
	Pairs(q *engine.Queue, dstKeys, srcKeys *engine.Buffer[K], dstVals, srcVals *engine.Buffer[uint32], n int, order SortOrder) error
	Reserve(n int, pairs bool) error
	Close() error
}

// sortInstance sorts one of its input sets into out (the inputs stay untouched, so every
// Run sorts the same data).
type sortInstance[K SortKey] struct {
	s     sorter[K]
	pairs bool
	order SortOrder
	n     int
	keys  *kernels.Inputs[K]
	vals  *kernels.Inputs[uint32] // pairs: 0..n-1, one copy per set (rotation)
	out   *engine.Buffer[K]
	vout  *engine.Buffer[uint32]
	// tunables are the cuda-onesweep variant's, and where they came from.
	tunables string
}

// Tunables reports the cuda-onesweep variant's tunables ("" for the portable sort, which
// has none).
func (in *sortInstance[K]) Tunables() string { return in.tunables }

func setupSort[K SortKey](ctx context.Context, q *engine.Queue, name string, pairs bool, order SortOrder, p kernels.Params,
	newSorter func(*engine.Device) (sorter[K], error)) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	if p.Size > MaxSortLen {
		return nil, fmt.Errorf("kernels: %s: size %d above the sort's limit of %d: %w", name, p.Size, MaxSortLen, engine.ErrInvalidArg)
	}
	s, err := newSorter(q.Device())
	if err != nil {
		return nil, err
	}
	n := p.Size
	in := &sortInstance[K]{s: s, pairs: pairs, order: order, n: n}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	rng := kernels.NewRand(p.Seed, sortStream)
	setBytes := 4 * n
	var idx []uint32
	if pairs {
		setBytes *= 2
		idx = make([]uint32, n)
		for i := range idx {
			idx[i] = uint32(i)
		}
	}
	in.keys, err = kernels.NewInputs(ctx, q, p, setBytes, func(int) [][]K {
		keys := make([]K, n)
		for i := range keys {
			switch k := any(&keys[i]).(type) {
			case *uint32: // the full range: every pass sees every digit
				*k = rng.Uint32()
			case *float32: // negatives and positives over many binades
				*k = float32(math.Ldexp(2*rng.Float64()-1, int(rng.IntN(40))-20))
			}
		}
		return [][]K{keys}
	})
	if err != nil {
		return nil, err
	}
	if pairs {
		if in.vals, err = kernels.NewInputs(ctx, q, p, setBytes, func(int) [][]uint32 { return [][]uint32{idx} }); err != nil {
			return nil, err
		}
	}
	if in.out, err = engine.NewBuffer[K](q.Device(), n); err != nil {
		return nil, err
	}
	if pairs {
		if in.vout, err = engine.NewBuffer[uint32](q.Device(), n); err != nil {
			return nil, err
		}
	}
	if err = s.Reserve(n, pairs); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *sortInstance[K]) Run(ctx context.Context, q *engine.Queue) error {
	keys := in.keys.Next()[0]
	if in.pairs {
		return in.s.Pairs(q, in.out, keys, in.vout, in.vals.Next()[0], in.n, in.order)
	}
	return in.s.Keys(q, in.out, keys, in.n, in.order)
}

// Verify compares the whole output with the host radix sort (O(n), exact).
func (in *sortInstance[K]) Verify(ctx context.Context, q *engine.Queue) error {
	got, err := in.out.Download(ctx, q)
	if err != nil {
		return err
	}
	ks, err := in.keys.Last(ctx)
	if err != nil {
		return err
	}
	keys := ks[0]
	var idx []uint32
	if in.pairs {
		vs, err := in.vals.Last(ctx)
		if err != nil {
			return err
		}
		idx = vs[0]
	}
	wantK, wantV := SortPairsRef(keys, idx, in.order)
	if err := CheckSortedKeys("sort keys", got, wantK); err != nil {
		return err
	}
	if in.pairs {
		gotV, err := in.vout.Download(ctx, q)
		if err != nil {
			return err
		}
		return kernels.CheckEqual("sort values", gotV, wantV)
	}
	return nil
}

func (in *sortInstance[K]) Model() kernels.Model {
	if _, ok := in.s.(*Onesweep[K]); ok {
		return OnesweepModel(in.n, in.pairs)
	}
	return SortModel(in.n, in.pairs)
}

func (in *sortInstance[K]) Shape() string {
	return fmt.Sprintf("n=%d %s", in.n, in.order)
}

func (in *sortInstance[K]) Close() error {
	return errors.Join(in.out.Close(), in.vout.Close(), in.keys.Close(), in.vals.Close(), in.s.Close())
}
