package gemm

import (
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
)

// ShardedGEMM computes D = alpha*A*op(B) + beta*C on data sharded over devices
// (engine/shard): A, C and D by rows, B replicated on every device. Each device runs the
// one-device GEMM on its rows where they lie, on its part's queue, and leaves its rows of
// D there, so that the next op takes them with no host round trip. Every element of D is
// computed by its device's one-device GEMM with K in the same order, so each row is bit
// for bit what that GEMM gives for the whole problem on that device. It holds one GEMM
// per device. Not safe for concurrent use.
type ShardedGEMM[In InputType, Out kernels.Float] struct {
	devs []*engine.Device
	gs   []Runner[In, Out]
	own  bool // Close releases gs
}

// NewShardedGEMM readies the fastest GEMM of precision p (New) on every device of devs
// (those of the shards it will multiply).
func NewShardedGEMM[In InputType, Out kernels.Float](devs []*engine.Device, p Precision) (_ *ShardedGEMM[In, Out], err error) {
	s := &ShardedGEMM[In, Out]{own: true}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	for _, d := range devs {
		g, err := New[In, Out](d, p)
		if err != nil {
			return nil, err
		}
		s.devs, s.gs = append(s.devs, d), append(s.gs, g)
	}
	return s, nil
}

// shardedOf is a ShardedGEMM of GEMMs readied elsewhere (a split's parts), which its
// Close leaves open.
func shardedOf[In InputType, Out kernels.Float](devs []*engine.Device, gs []Runner[In, Out]) *ShardedGEMM[In, Out] {
	return &ShardedGEMM[In, Out]{devs: devs, gs: gs}
}

// Run enqueues D = alpha*A*op(B) + beta*C for shape s on every part with rows, each on
// its part's queue; it returns once all are enqueued (Gather or Finish waits). s gives N,
// K, TransB and the leading dimensions (0: packed); its M must be the rows of A, and A
// may not be transposed nor the shape batched. A is sharded by rows of LDA elements, C
// and D by rows of LDC with A's rows on A's queues (shard.SameLayout for C and D), B
// replicated on the same queues. The padding of a row past K (A) or N (D) is neither read
// nor written.
func (s *ShardedGEMM[In, Out]) Run(shape GEMMShape, alpha Out, a, b *shard.Buffer[In], beta Out, c, d *shard.Buffer[Out]) error {
	shape, err := s.check(shape, a, b, c, d)
	if err != nil {
		return fmt.Errorf("kernels: sharded gemm: %w", err)
	}
	bp, cp, dp := b.Parts(), c.Parts(), d.Parts()
	err = a.InTurn(func(i int, p shard.Part[In]) error {
		g := s.on(p.Queue.Device())
		if g == nil {
			return fmt.Errorf("no GEMM for %s (give it to NewShardedGEMM): %w", p.Queue.Device().ID(), engine.ErrInvalidArg)
		}
		part := shape
		part.M, part.StrideA, part.StrideB, part.StrideC = p.Len/shape.LDA, 0, 0, 0
		return g.RunInto(p.Queue, part.WithDefaults(), alpha, p.Buf, bp[i].Buf, beta, cp[i].Buf, dp[i].Buf)
	})
	if err != nil {
		return fmt.Errorf("kernels: sharded gemm %v: %w", shape, err)
	}
	return nil
}

// Apply returns D = alpha*A*op(B) + beta*C in a new Buffer laid out as C, which the
// caller closes.
func (s *ShardedGEMM[In, Out]) Apply(shape GEMMShape, alpha Out, a, b *shard.Buffer[In], beta Out, c *shard.Buffer[Out]) (*shard.Buffer[Out], error) {
	d, err := shard.Like(c)
	if err != nil {
		return nil, fmt.Errorf("kernels: sharded gemm: %w", err)
	}
	if err := s.Run(shape, alpha, a, b, beta, c, d); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// check validates a call of Run and returns the shape with its defaults.
func (s *ShardedGEMM[In, Out]) check(shape GEMMShape, a, b *shard.Buffer[In], c, d *shard.Buffer[Out]) (GEMMShape, error) {
	for _, err := range []error{a.Check(), b.Check(), c.Check(), d.Check()} {
		if err != nil {
			return shape, err
		}
	}
	if shape.TransA || shape.Batch > 1 {
		return shape, fmt.Errorf("%v: A sharded by rows is not transposed and the shape not batched: %w", shape, engine.ErrUnsupported)
	}
	if err := checkShape(shape); err != nil {
		return shape, err
	}
	shape = shape.WithDefaults()
	la, lc := a.Layout(), c.Layout()
	if la.Kind != shard.Rows || max(1, la.Cols) != shape.LDA {
		return shape, fmt.Errorf("%v: A is laid out as %s; give it in rows of lda=%d: %w", shape, la, shape.LDA, engine.ErrInvalidArg)
	}
	if lc.Kind != shard.Rows || max(1, lc.Cols) != shape.LDC {
		return shape, fmt.Errorf("%v: C is laid out as %s; give it in rows of ldc=%d: %w", shape, lc, shape.LDC, engine.ErrInvalidArg)
	}
	if a.Len() != shape.M*shape.LDA {
		return shape, fmt.Errorf("%v: A holds %d rows of %d; the shape has M=%d: %w", shape, a.Len()/shape.LDA, shape.LDA, shape.M, engine.ErrInvalidArg)
	}
	if err := shard.SameLayout(c, d); err != nil {
		return shape, fmt.Errorf("C and D: %w", err)
	}
	if b.Layout().Kind != shard.Replicated {
		return shape, fmt.Errorf("%v: B is laid out as %s; give it replicated on every device: %w", shape, b.Layout(), engine.ErrInvalidArg)
	}
	_, lb, _ := shape.Lens()
	if b.Len() < lb {
		return shape, fmt.Errorf("%v: B holds %d elements, the shape needs %d: %w", shape, b.Len(), lb, engine.ErrInvalidArg)
	}
	ap, bp, cp := a.Parts(), b.Parts(), c.Parts()
	if len(bp) != len(ap) || len(cp) != len(ap) {
		return shape, fmt.Errorf("A over %d devices, B over %d, C over %d: they must match: %w", len(ap), len(bp), len(cp), engine.ErrInvalidArg)
	}
	for i, p := range ap {
		if bp[i].Queue != p.Queue || cp[i].Queue != p.Queue {
			return shape, fmt.Errorf("part %d: A on %s, B on %s, C on %s: each device's parts must share its queue: %w", i, p.Queue.Device().ID(), bp[i].Queue.Device().ID(), cp[i].Queue.Device().ID(), engine.ErrInvalidArg)
		}
		if p.Len/shape.LDA != cp[i].Len/shape.LDC {
			return shape, fmt.Errorf("part %d on %s: %d rows of A, %d of C: they must match: %w", i, p.Queue.Device().ID(), p.Len/shape.LDA, cp[i].Len/shape.LDC, engine.ErrInvalidArg)
		}
	}
	return shape, nil
}

func (s *ShardedGEMM[In, Out]) on(d *engine.Device) Runner[In, Out] {
	for i, x := range s.devs {
		if x == d {
			return s.gs[i]
		}
	}
	return nil
}

// Close releases the GEMMs it readied. Idempotent.
func (s *ShardedGEMM[In, Out]) Close() error {
	var errs []error
	if s.own {
		for _, g := range s.gs {
			errs = append(errs, g.Close())
		}
	}
	s.devs, s.gs = nil, nil
	return errors.Join(errs...)
}
