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
// inputs in a cache, and Verify checks the set of the last Run (Last, or LastChunks a
// chunk at a time) against the float64 reference. At most one set is held on the host at a
// time (with NewInputs the first, as generated, until a later one is asked for and
// downloaded; with NewInputsChunked none until Last is called), so that rotation
// multiplies device memory, not host memory. Not safe for concurrent use, as the Instance
// holding it.
type Inputs[T engine.Scalar] struct {
	q          *engine.Queue
	host       [][]T                 // the host arrays of set held; nil when none is
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
func NewInputs[T engine.Scalar](ctx context.Context, q *engine.Queue, p Params, setBytes int, gen func(set int) [][]T) (*Inputs[T], error) {
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

// NewInputsChunked makes input sets as NewInputs does, each of arrays arrays of n elements,
// without ever holding an array whole on the host: fill(set, array, lo, dst) sets dst to
// elements lo to lo+len(dst)-1 of that array of that set, and each chunk is uploaded
// before the next is filled. fill is called for sets 0, 1, ... in turn, within a set for
// its arrays in order, within an array for its chunks in order, so that a generator that
// draws element after element (FillRand) gives the arrays that NewInputs gives with gen
// drawing each array whole in the same order. No set is held on the host afterwards:
// LastChunks reads the last one a chunk at a time, Last downloads it whole. On error, ctx
// done included, the arrays uploaded so far are released.
func NewInputsChunked[T engine.Scalar](ctx context.Context, q *engine.Queue, p Params, arrays, n int, fill func(set, array, lo int, dst []T)) (*Inputs[T], error) {
	if arrays < 1 || n < 1 {
		return nil, fmt.Errorf("kernels: input sets of %d arrays of %d elements; both must be at least 1: %w", arrays, n, engine.ErrInvalidArg)
	}
	in := &Inputs[T]{q: q, seed: maphash.MakeSeed()}
	chunk := make([]T, min(n, chunkLen))
	for set := range RotationSets(q.Device(), p, arrays*n*engine.SizeOf[T]()) {
		sums := make([]uint64, arrays)
		in.sums = append(in.sums, sums)
		bufs := make([]*engine.Buffer[T], 0, arrays)
		in.dev = append(in.dev, bufs)
		for a := range arrays {
			b, err := engine.NewBuffer[T](q.Device(), n)
			if err != nil {
				return nil, errors.Join(err, in.Close())
			}
			bufs = append(bufs, b)
			in.dev[set] = bufs
			var h maphash.Hash
			h.SetSeed(in.seed)
			for lo := 0; lo < n; lo += len(chunk) {
				c := chunk[:min(len(chunk), n-lo)]
				fill(set, a, lo, c)
				h.Write(bytesOf(c))
				if err := b.Write(ctx, q, lo, c); err != nil {
					return nil, errors.Join(err, in.Close())
				}
			}
			sums[a] = h.Sum64()
		}
	}
	return in, nil
}

// Next returns the device arrays of the set the next Run uses, in the order gen returned
// them (NewInputsChunked: in the order of fill's array numbers), and makes that set the
// last.
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

// LastChunks calls f for successive chunks of the set Next returned last (the first set
// before any Next), whose arrays must have one length: f(lo, x) with x[a] holding elements
// lo to lo+len(x[a])-1 of array a, x[a] of the same length for every a, the chunks in
// order from lo = 0. The slices are valid until f returns. A set held on the host is read
// from there; any other is read from the device a chunk at a time, never held whole, and
// its hash is checked as Last checks it, once every chunk is read: an input changed on the
// device is an error wrapping ErrVerify that takes precedence over one of f's that wraps
// ErrVerify (a mismatch found on the changed input). Another error of f's ends the reading
// and is returned at once.
func (in *Inputs[T]) LastChunks(ctx context.Context, f func(lo int, x [][]T) error) error {
	n, err := in.lastLen()
	if err != nil {
		return err
	}
	set := in.dev[in.last]
	x := make([][]T, len(set))
	if in.last == in.held && in.host != nil {
		for lo := 0; lo < n; lo += chunkLen {
			hi := min(lo+chunkLen, n)
			for a, h := range in.host {
				x[a] = h[lo:hi]
			}
			if err := f(lo, x); err != nil {
				return err
			}
		}
		return nil
	}
	c := min(n, chunkLen)
	bufs := make([][]T, len(set))
	hs := make([]maphash.Hash, len(set))
	for a := range set {
		bufs[a] = make([]T, c)
		hs[a].SetSeed(in.seed)
	}
	var mismatch error // the first error of f's, which wraps ErrVerify
	for lo := 0; lo < n; lo += c {
		m := min(c, n-lo)
		for a, b := range set {
			x[a] = bufs[a][:m]
			if err := b.Read(ctx, in.q, lo, x[a]); err != nil {
				return err
			}
			hs[a].Write(bytesOf(x[a]))
		}
		if mismatch == nil {
			if err := f(lo, x); err != nil {
				if !errors.Is(err, ErrVerify) {
					return err
				}
				mismatch = err
			}
		}
	}
	for a := range set {
		if hs[a].Sum64() != in.sums[in.last][a] {
			return fmt.Errorf("%w: input array %d of set %d changed on the device since it was uploaded", ErrVerify, a, in.last)
		}
	}
	return mismatch
}

// lastLen returns the length of the arrays of the set Next returned last, or an error
// wrapping engine.ErrInvalidArg when they differ.
func (in *Inputs[T]) lastLen() (int, error) {
	set := in.dev[in.last]
	n := set[0].Len()
	for a, b := range set[1:] {
		if b.Len() != n {
			return 0, fmt.Errorf("kernels: input set %d: array %d has %d elements, array 0 %d; a chunked read needs one length: %w", in.last, a+1, b.Len(), n, engine.ErrInvalidArg)
		}
	}
	return n, nil
}

// LastBuffers returns the device arrays of the set Next returned last (the first set before
// any Next), for a Verify that must run again on the inputs of the last Run.
func (in *Inputs[T]) LastBuffers() []*engine.Buffer[T] { return in.dev[in.last] }

// hashOf returns the hash of the bytes of a: the sum of a maphash.Hash with that seed
// after writes of the bytes of a's parts in order, however a is cut.
func hashOf[T engine.Scalar](seed maphash.Seed, a []T) uint64 {
	return maphash.Bytes(seed, bytesOf(a))
}

// bytesOf returns the bytes of a (nil when a is empty).
func bytesOf[T engine.Scalar](a []T) []byte {
	if len(a) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), len(a)*int(unsafe.Sizeof(a[0])))
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
func Rotated[T engine.Scalar](x []T, shift int) []T {
	shift %= len(x)
	if shift == 0 {
		return x
	}
	return append(append(make([]T, 0, len(x)), x[shift:]...), x[:shift]...)
}
