package kernels

import (
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
)

func init() {
	register(
		sortOp[uint32]("keys", "stable ascending LSD radix sort of uint32 keys (4-bit digits, 8 passes)", false, Ascending),
		sortOp[float32]("keys", "stable ascending LSD radix sort of float32 keys (order-preserving bit map; 8 passes)", false, Ascending),
		sortOp[uint32]("pairs", "stable ascending LSD radix sort of uint32 keys with uint32 values (the input indices)", true, Ascending),
		sortOp[float32]("desc", "stable descending LSD radix sort of float32 keys", false, Descending),
	)
}

// sortStream is the NewRand stream constant of the sort family's inputs ("sort").
const sortStream = 0x736f7274

func sortOp[K SortKey](op, doc string, pairs bool, order SortOrder) Op {
	typ := TypeName[K]()
	name := "sort/" + op + "/" + typ
	return Op{
		Name: name, Family: "sort", Type: typ, Doc: doc,
		SizeDoc: "n keys (and n uint32 values for pairs)", DefaultSize: 1 << 24, QuickSize: 1 << 18,
		Setup: func(q *engine.Queue, p Params) (Instance, error) { return setupSort[K](q, name, pairs, order, p) },
	}
}

// sortInstance sorts one of its input sets into out (the inputs stay untouched, so every
// Run sorts the same data).
type sortInstance[K SortKey] struct {
	s          *Sorter[K]
	pairs      bool
	order      SortOrder
	keys       [][]K
	bkeys      []*engine.Buffer[K]
	bvals      []*engine.Buffer[uint32] // 0..n-1, one copy per set (rotation)
	out        *engine.Buffer[K]
	vout       *engine.Buffer[uint32]
	next, last int
}

func setupSort[K SortKey](q *engine.Queue, name string, pairs bool, order SortOrder, p Params) (_ Instance, err error) {
	if err := checkSize(name, p); err != nil {
		return nil, err
	}
	if p.Size > MaxSortLen {
		return nil, fmt.Errorf("kernels: %s: size %d above the sort's limit of %d: %w", name, p.Size, MaxSortLen, engine.ErrInvalidArg)
	}
	s, err := NewSorter[K](q.Device())
	if err != nil {
		return nil, err
	}
	n := p.Size
	in := &sortInstance[K]{s: s, pairs: pairs, order: order}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	rng := NewRand(p.Seed, sortStream)
	setBytes := 4 * n
	var idx []uint32
	if pairs {
		setBytes *= 2
		idx = make([]uint32, n)
		for i := range idx {
			idx[i] = uint32(i)
		}
	}
	for range RotationSets(p, setBytes) {
		keys := make([]K, n)
		for i := range keys {
			switch k := any(&keys[i]).(type) {
			case *uint32: // the full range: every pass sees every digit
				*k = rng.Uint32()
			case *float32: // negatives and positives over many binades
				*k = float32(math.Ldexp(2*rng.Float64()-1, int(rng.IntN(40))-20))
			}
		}
		b, err := engine.Upload(q, keys)
		if err != nil {
			return nil, err
		}
		in.keys, in.bkeys = append(in.keys, keys), append(in.bkeys, b)
		if pairs {
			v, err := engine.Upload(q, idx)
			if err != nil {
				return nil, err
			}
			in.bvals = append(in.bvals, v)
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

func (in *sortInstance[K]) Run(q *engine.Queue) error {
	i := in.next
	in.next, in.last = (i+1)%len(in.bkeys), i
	n := len(in.keys[i])
	if in.pairs {
		return in.s.Pairs(q, in.out, in.bkeys[i], in.vout, in.bvals[i], n, in.order)
	}
	return in.s.Keys(q, in.out, in.bkeys[i], n, in.order)
}

// Verify compares the whole output with the host radix sort (O(n), exact).
func (in *sortInstance[K]) Verify(q *engine.Queue) error {
	got, err := in.out.Download(q)
	if err != nil {
		return err
	}
	keys := in.keys[in.last]
	var idx []uint32
	if in.pairs {
		idx = make([]uint32, len(keys))
		for i := range idx {
			idx[i] = uint32(i)
		}
	}
	wantK, wantV := SortPairsRef(keys, idx, in.order)
	if err := CheckSortedKeys("sort keys", got, wantK); err != nil {
		return err
	}
	if in.pairs {
		gotV, err := in.vout.Download(q)
		if err != nil {
			return err
		}
		return CheckEqual("sort values", gotV, wantV)
	}
	return nil
}

func (in *sortInstance[K]) Model() Model { return SortModel(len(in.keys[0]), in.pairs) }

func (in *sortInstance[K]) Shape() string {
	return fmt.Sprintf("n=%d %s", len(in.keys[0]), in.order)
}

func (in *sortInstance[K]) Close() error {
	errs := []error{in.out.Close(), in.vout.Close()}
	for _, b := range in.bkeys {
		errs = append(errs, b.Close())
	}
	for _, b := range in.bvals {
		errs = append(errs, b.Close())
	}
	return errors.Join(append(errs, in.s.Close())...)
}
