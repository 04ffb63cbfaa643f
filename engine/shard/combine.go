package shard

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/group"
)

// Combine reduces the partial results of the parts of an operation element-wise, with
// op, and leaves the result on every device: parts[i] holds c elements on qs[i]'s device,
// or is nil for a device that computed nothing (its part had no element). It returns a
// Replicated Buffer of c elements that takes the parts over (a nil part is allocated).
//
// With a group g of the same devices in the same order, Combine runs g's all-reduce
// (NCCL where the devices offer it, else staged as engine/group stages it), and a nil
// part is first filled with op's identity. With no group it is an explicit combine on
// the host: the parts read back, reduced in device order in T (as the group's host-staged
// path reduces them), and the result written to every device. Via says which.
func Combine[T group.CollectiveScalar](ctx context.Context, g *group.Group, qs []*engine.Queue, parts []*engine.Buffer[T], op group.ReduceOp) (_ *Buffer[T], err error) {
	if err := checkQueues(qs); err != nil {
		return nil, err
	}
	if len(parts) != len(qs) {
		return nil, fmt.Errorf("shard: combine of %d parts on %d queues: give one per queue (nil where none): %w", len(parts), len(qs), engine.ErrInvalidArg)
	}
	if op < group.ReduceSum || op > group.ReduceMin {
		return nil, fmt.Errorf("shard: combine: unknown reduction %v: %w", op, engine.ErrInvalidArg)
	}
	c := -1
	for i, p := range parts {
		if p == nil {
			continue
		}
		if p.Device() != qs[i].Device() {
			return nil, fmt.Errorf("shard: combine: part %d is on %s, its queue on %s: %w", i, p.Device().ID(), qs[i].Device().ID(), engine.ErrInvalidArg)
		}
		if c >= 0 && p.Len() != c {
			return nil, fmt.Errorf("shard: combine of parts of %d and %d elements: they must match: %w", c, p.Len(), engine.ErrInvalidArg)
		}
		c = p.Len()
	}
	if c < 0 {
		return nil, fmt.Errorf("shard: combine of no part: %w", engine.ErrInvalidArg)
	}
	if g != nil && !slices.Equal(g.Devices(), devicesOf(qs)) {
		return nil, fmt.Errorf("shard: combine on %v through a group of %v: the group's devices must be the parts', in order: %w", ids(devicesOf(qs)), ids(g.Devices()), engine.ErrInvalidArg)
	}
	own := slices.Clone(parts)
	defer func() {
		if err != nil {
			for i, p := range own {
				if parts[i] == nil {
					p.Close()
				}
			}
		}
	}()
	for i, p := range own {
		if p != nil {
			continue
		}
		if own[i], err = engine.NewBuffer[T](qs[i].Device(), c); err != nil {
			return nil, fmt.Errorf("shard: combine: %w", err)
		}
		if g != nil {
			if err := own[i].Fill(qs[i], 0, c, identity[T](op)); err != nil {
				return nil, fmt.Errorf("shard: combine: %w", err)
			}
		}
	}
	if len(qs) == 1 {
		// One part is the result as it is: nothing to combine or to wait for.
	} else if g != nil {
		if err := group.AllReduce(ctx, g, qs, own, own, op); err != nil {
			return nil, fmt.Errorf("shard: combine through the group: %w", err)
		}
	} else if err := hostCombine(ctx, qs, parts, own, op, c); err != nil {
		return nil, err
	}
	b := &Buffer[T]{layout: Replicate(), n: c, parts: make([]Part[T], len(qs))}
	for i, q := range qs {
		b.parts[i] = Part[T]{Queue: q, Buf: own[i], Len: c}
	}
	return b, nil
}

// NewGroup returns a group of devs, in this process, for Combine where the devices offer
// a collective library (NCCL on CUDA devices), so that a combine stays on the devices;
// nil, and no error, where they do not (one device, OpenCL devices): Combine then
// combines on the host, which is what the group would stage. The caller closes it.
func NewGroup(ctx context.Context, devs []*engine.Device) (*Group, error) {
	if len(devs) < 2 {
		return nil, nil
	}
	g, err := group.New(ctx, devs, group.Options{})
	if err != nil {
		return nil, fmt.Errorf("shard: group of %v: %w", ids(devs), err)
	}
	if g.Staged() != "" {
		return nil, g.Close()
	}
	return g, nil
}

// Via says how Combine combines with g: through the group's all-reduce and its library,
// or on the host where there is no group.
func Via(g *group.Group) string {
	if g == nil {
		return "host combine (no group)"
	}
	return "all-reduce through " + g.Library().String()
}

// hostCombine reads the parts that hold results, reduces them in device order in T and
// writes the result to every device's buffer of own.
func hostCombine[T group.CollectiveScalar](ctx context.Context, qs []*engine.Queue, parts, own []*engine.Buffer[T], op group.ReduceOp, c int) error {
	vals := make([][]T, len(parts))
	b := &Buffer[T]{parts: make([]Part[T], len(qs))}
	for i, q := range qs {
		b.parts[i].Queue = q
	}
	// In device order from the caller, as Finish: the first read waits for its device,
	// the others' work has run meanwhile.
	err := b.InTurnDevice(func(i int) error {
		if parts[i] == nil {
			return nil
		}
		vals[i] = make([]T, c)
		return parts[i].Read(ctx, qs[i], 0, vals[i])
	})
	if err != nil {
		return fmt.Errorf("shard: host combine: %w", err)
	}
	var r []T
	for _, v := range vals {
		if v == nil {
			continue
		}
		if r == nil {
			r = slices.Clone(v)
			continue
		}
		for j := range r {
			r[j] = reduce(op, r[j], v[j])
		}
	}
	if err := b.InTurnDevice(func(i int) error { return own[i].Write(ctx, qs[i], 0, r) }); err != nil {
		return fmt.Errorf("shard: host combine: %w", err)
	}
	return nil
}

// reduce applies op to a and b as the group's host-staged path does (Go's min and max: a
// NaN wins).
func reduce[T group.CollectiveScalar](op group.ReduceOp, a, b T) T {
	switch op {
	case group.ReduceSum:
		return a + b
	case group.ReduceProd:
		return a * b
	case group.ReduceMax:
		return max(a, b)
	}
	return min(a, b)
}

// identity is op's identity in T: what a part without elements contributes.
func identity[T group.CollectiveScalar](op group.ReduceOp) T {
	var z T
	switch op {
	case group.ReduceProd:
		return 1
	case group.ReduceMax, group.ReduceMin:
		lo, hi := limits[T]()
		if op == group.ReduceMax {
			return lo
		}
		return hi
	}
	return z
}

// limits returns the least and greatest values of T (the infinities for floats).
func limits[T group.CollectiveScalar]() (T, T) {
	var lo, hi T
	switch p := any(&lo).(type) {
	case *float32:
		*p, *(any(&hi).(*float32)) = float32(math.Inf(-1)), float32(math.Inf(1))
	case *float64:
		*p, *(any(&hi).(*float64)) = math.Inf(-1), math.Inf(1)
	case *int32:
		*p, *(any(&hi).(*int32)) = math.MinInt32, math.MaxInt32
	case *uint32:
		*(any(&hi).(*uint32)) = math.MaxUint32
	case *int64:
		*p, *(any(&hi).(*int64)) = math.MinInt64, math.MaxInt64
	case *uint64:
		*(any(&hi).(*uint64)) = math.MaxUint64
	}
	return lo, hi
}

func devicesOf(qs []*engine.Queue) []*engine.Device {
	d := make([]*engine.Device, len(qs))
	for i, q := range qs {
		d[i] = q.Device()
	}
	return d
}

func ids(ds []*engine.Device) []string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.ID()
	}
	return s
}

// Group is engine/group's group, named here so that the packages that take sharded data
// need no other import to combine it.
type Group = group.Group

// ReduceOp is the reduction of Combine (engine/group's).
type ReduceOp = group.ReduceOp

// Reductions of Combine.
const (
	Sum = group.ReduceSum
	Max = group.ReduceMax
	Min = group.ReduceMin
)
