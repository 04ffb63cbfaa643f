package kernels

import (
	"context"
	"errors"

	"github.com/prism-compute/prism/engine"
)

// RotateBytes is the input footprint that rotation reaches: four times the 50 MB L2 of an
// H100 and above the 60 MB of an H200, so that no input set is still cached when its turn
// comes again.
const RotateBytes = 256 << 20

// RotationSets returns how many input sets of setBytes each an instance allocates: 1 unless
// p.Rotate, else enough to reach RotateBytes, at most 8.
func RotationSets(p Params, setBytes int) int {
	if !p.Rotate || setBytes <= 0 {
		return 1
	}
	return min(max((RotateBytes+setBytes-1)/setBytes, 1), 8)
}

// Inputs are the input sets of an Instance: in each set one or more host arrays and their
// device copies. Successive Runs take the sets in turn (Next), so that with Params.Rotate
// no run finds its inputs in a cache, and Verify checks the set of the last Run (Last)
// against the float64 reference. Not safe for concurrent use, as the Instance holding it.
type Inputs[T Number] struct {
	host       [][][]T               // host[set][array]
	dev        [][]*engine.Buffer[T] // dev[set][array]
	next, last int
}

// NewInputs makes RotationSets(p, setBytes) input sets and uploads them with q. gen returns
// the host arrays of set number set; it is called for sets 0, 1, ... in turn, so that a
// seeded generator gives the same sets on every device. On error, ctx done included, the
// arrays uploaded so far are released.
func NewInputs[T Number](ctx context.Context, q *engine.Queue, p Params, setBytes int, gen func(set int) [][]T) (*Inputs[T], error) {
	in := &Inputs[T]{}
	for set := range RotationSets(p, setBytes) {
		arrays := gen(set)
		bufs := make([]*engine.Buffer[T], 0, len(arrays))
		in.host, in.dev = append(in.host, arrays), append(in.dev, bufs)
		for _, a := range arrays {
			b, err := engine.Upload(ctx, q, a)
			if err != nil {
				return nil, errors.Join(err, in.Close())
			}
			bufs = append(bufs, b)
			in.dev[set] = bufs
		}
	}
	return in, nil
}

// Next returns the device arrays of the set the next Run uses, in the order gen returned
// them, and makes that set the last.
func (in *Inputs[T]) Next() []*engine.Buffer[T] {
	i := in.next
	in.next, in.last = (i+1)%len(in.dev), i
	return in.dev[i]
}

// Last returns the host arrays of the set Next returned last (the first set before any
// Next): the inputs Verify checks the output of the last Run against.
func (in *Inputs[T]) Last() [][]T { return in.host[in.last] }

// LastBuffers returns the device arrays of the set Next returned last (the first set before
// any Next), for a Verify that must run again on the inputs of the last Run.
func (in *Inputs[T]) LastBuffers() []*engine.Buffer[T] { return in.dev[in.last] }

// Sets returns the number of input sets.
func (in *Inputs[T]) Sets() int { return len(in.host) }

// Close releases the device arrays. Idempotent; a nil *Inputs has nothing to release.
func (in *Inputs[T]) Close() error {
	if in == nil {
		return nil
	}
	var errs []error
	for _, set := range in.dev {
		for _, b := range set {
			errs = append(errs, b.Close())
		}
	}
	return errors.Join(errs...)
}

// Rotated returns x rotated left by shift elements (x itself for a shift of 0 mod len(x)):
// input sets after the first can be the first one shifted, distinct inputs in distinct
// memory at a fraction of the cost of drawing them.
func Rotated[T Number](x []T, shift int) []T {
	shift %= len(x)
	if shift == 0 {
		return x
	}
	return append(append(make([]T, 0, len(x)), x[shift:]...), x[:shift]...)
}
