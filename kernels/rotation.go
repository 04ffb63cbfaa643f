package kernels

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"unsafe"

	"github.com/prism-compute/prism/engine"
)

// RotateBytes is the most input footprint that rotation reaches: four times the 50 MB L2 of
// an H100 and above the 60 MB of an H200, so that no input set is still cached when its turn
// comes again.
const RotateBytes = 256 << 20

// RotationBytes returns the input footprint rotation reaches on dev: four times its
// last-level cache where it reports one, at most RotateBytes. On a CPU device, whose device
// memory is host memory, this keeps the sets to what defeats its cache (128 MiB for a 32 MiB
// L3) instead of a GPU's figure.
func RotationBytes(dev *engine.Device) int {
	if c := dev.Info().CacheBytes; c > 0 && 4*c < RotateBytes {
		return int(4 * c)
	}
	return RotateBytes
}

// RotationSets returns how many input sets of setBytes each an instance allocates on dev: 1
// unless p.Rotate, else enough to reach RotationBytes(dev), at most 8.
func RotationSets(dev *engine.Device, p Params, setBytes int) int {
	if !p.Rotate || setBytes <= 0 {
		return 1
	}
	target := RotationBytes(dev)
	return min(max((target+setBytes-1)/setBytes, 1), 8)
}

// Inputs are the input sets of an Instance: in each set one or more arrays on the device.
// Successive Runs take the sets in turn (Next), so that with Params.Rotate no run finds its
// inputs in a cache, and Verify checks the set of the last Run (Last) against the float64
// reference. Only one set is held on the host at a time (the first, as generated, until a
// later one is asked for and downloaded), so that rotation multiplies device memory, not
// host memory. Not safe for concurrent use, as the Instance holding it.
type Inputs[T Number] struct {
	q          *engine.Queue
	host       [][]T                 // the host arrays of set held
	held       int                   // the set host holds
	dev        [][]*engine.Buffer[T] // dev[set][array]
	sums       [][]uint64            // sums[set][array]: hashes of the arrays as generated
	seed       maphash.Seed
	next, last int
}

// NewInputs makes RotationSets(q.Device(), p, setBytes) input sets and uploads them with q, which Last
// uses later. gen returns the host arrays of set number set; it is called for sets 0, 1, ...
// in turn, so that a seeded generator gives the same sets on every device. On error, ctx
// done included, the arrays uploaded so far are released.
func NewInputs[T Number](ctx context.Context, q *engine.Queue, p Params, setBytes int, gen func(set int) [][]T) (*Inputs[T], error) {
	in := &Inputs[T]{q: q, seed: maphash.MakeSeed()}
	for set := range RotationSets(q.Device(), p, setBytes) {
		arrays := gen(set)
		if set == 0 {
			in.host = arrays
		}
		sums := make([]uint64, len(arrays))
		for i, a := range arrays {
			sums[i] = hashOf(in.seed, a)
		}
		in.sums = append(in.sums, sums)
		bufs := make([]*engine.Buffer[T], 0, len(arrays))
		in.dev = append(in.dev, bufs)
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
// Next): the inputs Verify checks the output of the last Run against. A set other than the
// one held is downloaded and then held instead; its hash must match the one taken when it
// was generated, or the error (wrapping ErrVerify) says that the input changed on the
// device: a kernel wrote where it only reads.
func (in *Inputs[T]) Last(ctx context.Context) ([][]T, error) {
	if in.last == in.held && in.host != nil {
		return in.host, nil
	}
	arrays := make([][]T, len(in.dev[in.last]))
	in.host = nil // the old set can go before the new one arrives
	for i, b := range in.dev[in.last] {
		a, err := b.Download(ctx, in.q)
		if err != nil {
			return nil, err
		}
		if hashOf(in.seed, a) != in.sums[in.last][i] {
			return nil, fmt.Errorf("%w: input array %d of set %d changed on the device since it was uploaded", ErrVerify, i, in.last)
		}
		arrays[i] = a
	}
	in.host, in.held = arrays, in.last
	return arrays, nil
}

// LastBuffers returns the device arrays of the set Next returned last (the first set before
// any Next), for a Verify that must run again on the inputs of the last Run.
func (in *Inputs[T]) LastBuffers() []*engine.Buffer[T] { return in.dev[in.last] }

// hashOf returns the hash of the bytes of a.
func hashOf[T Number](seed maphash.Seed, a []T) uint64 {
	if len(a) == 0 {
		return maphash.Bytes(seed, nil)
	}
	return maphash.Bytes(seed, unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), len(a)*int(unsafe.Sizeof(a[0]))))
}

// Sets returns the number of input sets.
func (in *Inputs[T]) Sets() int { return len(in.dev) }

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
