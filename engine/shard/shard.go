package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/prism-compute/prism/engine"
)

// Kind is how a Buffer's elements are divided among its devices.
type Kind int

// Kinds of layout.
const (
	// Rows gives each device a contiguous range of rows of a row-major array of Cols
	// columns (a 1-D array: rows of one element), in device order; a device may hold none.
	Rows Kind = iota
	// Blocks deals blocks of Block elements to the devices in turn: device d holds blocks
	// d, d+k, d+2k, ... of k devices, one after the other; the last block may be short.
	Blocks
	// Replicated gives every device all of the elements.
	Replicated
)

// Layout is a Kind with its size: the columns of a row for Rows, the elements of a block
// for Blocks.
type Layout struct {
	Kind  Kind
	Cols  int // Rows: elements of a row (0 is taken as 1)
	Block int // Blocks: elements of a block
}

// ByRows is the layout of contiguous ranges of rows of cols elements.
func ByRows(cols int) Layout { return Layout{Kind: Rows, Cols: cols} }

// ByBlocks is the layout of blocks of block elements dealt to the devices in turn.
func ByBlocks(block int) Layout { return Layout{Kind: Blocks, Block: block} }

// Replicate is the layout of a copy of every element on every device.
func Replicate() Layout { return Layout{Kind: Replicated} }

func (l Layout) cols() int { return max(1, l.Cols) }

func (l Layout) String() string {
	switch l.Kind {
	case Rows:
		return fmt.Sprintf("rows of %d", l.cols())
	case Blocks:
		return fmt.Sprintf("blocks of %d", l.Block)
	case Replicated:
		return "replicated"
	}
	return fmt.Sprintf("layout(%d)", int(l.Kind))
}

func (l Layout) check() error {
	switch l.Kind {
	case Rows:
		if l.Cols < 0 {
			return fmt.Errorf("shard: rows of %d columns: must be at least 1: %w", l.Cols, engine.ErrInvalidArg)
		}
	case Blocks:
		if l.Block < 1 {
			return fmt.Errorf("shard: blocks of %d elements: must be at least 1: %w", l.Block, engine.ErrInvalidArg)
		}
	case Replicated:
	default:
		return fmt.Errorf("shard: unknown layout kind %d: %w", int(l.Kind), engine.ErrInvalidArg)
	}
	return nil
}

// Part is what one device holds of a Buffer.
type Part[T engine.Scalar] struct {
	// Queue orders every command on the part (the caller's: Close leaves it open).
	Queue *engine.Queue
	// Buf holds the part's elements; nil when Len is 0.
	Buf *engine.Buffer[T]
	// Off is where the part starts in the whole: its first element (Rows), its first
	// block's first element (Blocks), 0 (Replicated).
	Off int
	// Len is the number of elements the part holds.
	Len int
}

// Buffer is n elements split over devices, each part on its device's queue. Its methods
// are safe for concurrent use with each other except Close; commands on the parts are
// ordered by their queues.
type Buffer[T engine.Scalar] struct {
	layout Layout
	n      int
	parts  []Part[T]
	mu     sync.Mutex
	closed bool
}

// Even divides units among k devices as evenly as possible, the first ones taking one
// more where k does not divide units.
func Even(units, k int) []int {
	if k < 1 || units < 0 {
		return nil
	}
	c := make([]int, k)
	for i := range c {
		c[i] = units / k
		if i < units%k {
			c[i]++
		}
	}
	return c
}

// checkQueues accepts queues that are not nil, each on its own device.
func checkQueues(qs []*engine.Queue) error {
	if len(qs) == 0 {
		return fmt.Errorf("shard: no queue: a sharded buffer needs one queue per device: %w", engine.ErrInvalidArg)
	}
	devs := make([]*engine.Device, len(qs))
	for i, q := range qs {
		if q == nil || q.Device() == nil {
			return fmt.Errorf("shard: queue %d is nil: %w", i, engine.ErrInvalidArg)
		}
		devs[i] = q.Device()
		if j := slices.Index(devs, devs[i]); j != i {
			return fmt.Errorf("shard: queues %d and %d are on one device %s; give each part its own device (open it again for a second part): %w", j, i, devs[i].ID(), engine.ErrInvalidArg)
		}
	}
	return nil
}

// ranges returns where each of k parts starts in the whole and how many elements it
// holds, for n elements laid out by l with counts (rows per device, for Rows).
func ranges(l Layout, n int, counts []int, k int) (off, size []int) {
	off, size = make([]int, k), make([]int, k)
	switch l.Kind {
	case Rows:
		at := 0
		for i, c := range counts {
			off[i], size[i] = at, c*l.cols()
			at += size[i]
		}
	case Blocks:
		blocks := (n + l.Block - 1) / l.Block
		for i := range k {
			off[i] = i * l.Block
			for b := i; b < blocks; b += k {
				size[i] += min(l.Block, n-b*l.Block)
			}
		}
	case Replicated:
		for i := range size {
			size[i] = n
		}
	}
	return off, size
}

// pieces calls f for each contiguous piece of part i: its start in the whole, its start
// in the part, and its length.
func (b *Buffer[T]) pieces(i int, f func(whole, local, n int) error) error {
	p := b.parts[i]
	if b.layout.Kind != Blocks {
		if p.Len == 0 {
			return nil
		}
		return f(p.Off, 0, p.Len)
	}
	k, bs, local := len(b.parts), b.layout.Block, 0
	for at := i * bs; at < b.n; at += k * bs {
		m := min(bs, b.n-at)
		if err := f(at, local, m); err != nil {
			return err
		}
		local += m
	}
	return nil
}

// Scatter makes a Buffer of host's elements laid out by l over the devices of qs, one
// part per queue, copying each part to its device (the parts concurrently). counts gives
// the rows of each device for Rows (one per queue, summing to len(host)/Cols; Even makes
// even ones) and must be nil for Blocks and Replicated.
func Scatter[T engine.Scalar](ctx context.Context, qs []*engine.Queue, host []T, l Layout, counts []int) (*Buffer[T], error) {
	if err := checkQueues(qs); err != nil {
		return nil, err
	}
	if err := l.check(); err != nil {
		return nil, err
	}
	n := len(host)
	if n == 0 {
		return nil, fmt.Errorf("shard: scatter of no element: %w", engine.ErrInvalidArg)
	}
	if l.Kind == Rows {
		if n%l.cols() != 0 {
			return nil, fmt.Errorf("shard: scatter of %d elements in rows of %d: not whole rows: %w", n, l.cols(), engine.ErrInvalidArg)
		}
		if len(counts) != len(qs) {
			return nil, fmt.Errorf("shard: %d row counts for %d devices: give one per device: %w", len(counts), len(qs), engine.ErrInvalidArg)
		}
		sum := 0
		for _, c := range counts {
			if c < 0 {
				return nil, fmt.Errorf("shard: row counts %v: a count below 0: %w", counts, engine.ErrInvalidArg)
			}
			sum += c
		}
		if sum != n/l.cols() {
			return nil, fmt.Errorf("shard: row counts %v sum to %d rows; the data holds %d: %w", counts, sum, n/l.cols(), engine.ErrInvalidArg)
		}
	} else if counts != nil {
		return nil, fmt.Errorf("shard: row counts given for a layout of %s: %w", l, engine.ErrInvalidArg)
	}
	b, err := alloc[T](qs, l, n, counts)
	if err != nil {
		return nil, err
	}
	err = b.each(func(i int) error {
		p := b.parts[i]
		if b.layout.Kind != Blocks {
			return b.pieces(i, func(whole, local, m int) error {
				return p.Buf.Write(ctx, p.Queue, local, host[whole:whole+m])
			})
		}
		// A part of blocks is put together on the host and written whole: one transfer
		// rather than one a block, and the device sees a buffer written at once.
		if p.Len == 0 {
			return nil
		}
		part := make([]T, p.Len)
		b.pieces(i, func(whole, local, m int) error {
			copy(part[local:local+m], host[whole:whole+m])
			return nil
		})
		return p.Buf.Write(ctx, p.Queue, 0, part)
	})
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("shard: scatter: %w", err)
	}
	return b, nil
}

// alloc makes a Buffer of uninitialised parts.
func alloc[T engine.Scalar](qs []*engine.Queue, l Layout, n int, counts []int) (*Buffer[T], error) {
	off, size := ranges(l, n, counts, len(qs))
	b := &Buffer[T]{layout: l, n: n, parts: make([]Part[T], len(qs))}
	for i, q := range qs {
		b.parts[i] = Part[T]{Queue: q, Off: off[i], Len: size[i]}
		if size[i] == 0 {
			continue
		}
		buf, err := engine.NewBuffer[T](q.Device(), size[i])
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("shard: part %d of %d elements on %s: %w", i, size[i], q.Device().ID(), err)
		}
		b.parts[i].Buf = buf
	}
	return b, nil
}

// FromBuffers makes a Buffer of the buffers already on the devices, bufs[i] on qs[i]'s
// device (nil for a part of no element; for Replicated every one of one length), laid
// out by l. The Buffer takes them over: its Close releases them.
func FromBuffers[T engine.Scalar](qs []*engine.Queue, bufs []*engine.Buffer[T], l Layout) (*Buffer[T], error) {
	if err := checkQueues(qs); err != nil {
		return nil, err
	}
	if err := l.check(); err != nil {
		return nil, err
	}
	if len(bufs) != len(qs) {
		return nil, fmt.Errorf("shard: %d buffers for %d queues: give one per queue (nil for an empty part): %w", len(bufs), len(qs), engine.ErrInvalidArg)
	}
	n, lens := 0, make([]int, len(bufs))
	for i, buf := range bufs {
		if buf != nil && buf.Device() != qs[i].Device() {
			return nil, fmt.Errorf("shard: buffer %d is on %s, its queue on %s: %w", i, buf.Device().ID(), qs[i].Device().ID(), engine.ErrInvalidArg)
		}
		lens[i] = buf.Len()
		n += lens[i]
	}
	var counts []int
	switch l.Kind {
	case Rows:
		counts = make([]int, len(bufs))
		for i, m := range lens {
			if m%l.cols() != 0 {
				return nil, fmt.Errorf("shard: buffer %d holds %d elements: not whole rows of %d: %w", i, m, l.cols(), engine.ErrInvalidArg)
			}
			counts[i] = m / l.cols()
		}
	case Replicated:
		n = lens[0]
		for i, m := range lens {
			if m != n || m == 0 {
				return nil, fmt.Errorf("shard: replicated buffers of %v elements: every device holds the same, at least one: %w", lens, engine.ErrInvalidArg)
			}
			_ = i
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("shard: buffers of no element: %w", engine.ErrInvalidArg)
	}
	off, size := ranges(l, n, counts, len(qs))
	if !slices.Equal(size, lens) {
		return nil, fmt.Errorf("shard: buffers of %v elements; %s over %d devices holds %v of %d: %w", lens, l, len(qs), size, n, engine.ErrInvalidArg)
	}
	b := &Buffer[T]{layout: l, n: n, parts: make([]Part[T], len(qs))}
	for i, q := range qs {
		b.parts[i] = Part[T]{Queue: q, Buf: bufs[i], Off: off[i], Len: size[i]}
	}
	return b, nil
}

// Like makes a Buffer laid out as x, on x's queues, its contents undefined: the output
// of an operation on x.
func Like[T engine.Scalar](x *Buffer[T]) (*Buffer[T], error) {
	if err := x.check(); err != nil {
		return nil, err
	}
	return LikeOf[T](x)
}

// LikeOf makes a Buffer of element type T laid out as x (of any element type), on x's
// queues, its contents undefined.
func LikeOf[T, U engine.Scalar](x *Buffer[U]) (*Buffer[T], error) {
	if err := x.check(); err != nil {
		return nil, err
	}
	var counts []int
	if x.layout.Kind == Rows {
		counts = make([]int, len(x.parts))
		for i, p := range x.parts {
			counts[i] = p.Len / x.layout.cols()
		}
	}
	return alloc[T](x.Queues(), x.layout, x.n, counts)
}

func (b *Buffer[T]) check() error {
	if b == nil {
		return fmt.Errorf("shard: nil sharded buffer: %w", engine.ErrInvalidArg)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("shard: sharded buffer of %d elements: %w", b.n, engine.ErrClosed)
	}
	return nil
}

// Check returns an error wrapping engine.ErrClosed after Close, engine.ErrInvalidArg for
// a nil Buffer, else nil.
func (b *Buffer[T]) Check() error { return b.check() }

// Len is the number of elements of the whole.
func (b *Buffer[T]) Len() int {
	if b == nil {
		return 0
	}
	return b.n
}

// Layout says how the elements are divided.
func (b *Buffer[T]) Layout() Layout { return b.layout }

// Parts returns each device's part, in device order (a copy).
func (b *Buffer[T]) Parts() []Part[T] { return slices.Clone(b.parts) }

// Queues returns the parts' queues in device order.
func (b *Buffer[T]) Queues() []*engine.Queue {
	qs := make([]*engine.Queue, len(b.parts))
	for i, p := range b.parts {
		qs[i] = p.Queue
	}
	return qs
}

// Devices returns the parts' devices in device order.
func (b *Buffer[T]) Devices() []*engine.Device {
	ds := make([]*engine.Device, len(b.parts))
	for i, p := range b.parts {
		ds[i] = p.Queue.Device()
	}
	return ds
}

// Counts returns the elements each device holds.
func (b *Buffer[T]) Counts() []int {
	c := make([]int, len(b.parts))
	for i, p := range b.parts {
		c[i] = p.Len
	}
	return c
}

// SameLayout returns nil when a and b have one layout, one length and their parts on the
// same queues holding the same ranges: an element-wise operation may pair them part by
// part.
func SameLayout[T, U engine.Scalar](a *Buffer[T], b *Buffer[U]) error {
	if err := a.check(); err != nil {
		return err
	}
	if err := b.check(); err != nil {
		return err
	}
	if a.layout.Kind != b.layout.Kind || (a.layout.Kind == Rows && a.layout.cols() != b.layout.cols()) ||
		(a.layout.Kind == Blocks && a.layout.Block != b.layout.Block) {
		return fmt.Errorf("shard: layouts %s and %s differ: %w", a.layout, b.layout, engine.ErrInvalidArg)
	}
	if a.n != b.n || len(a.parts) != len(b.parts) {
		return fmt.Errorf("shard: %d elements over %d devices and %d over %d: they must match: %w", a.n, len(a.parts), b.n, len(b.parts), engine.ErrInvalidArg)
	}
	for i := range a.parts {
		pa, pb := a.parts[i], b.parts[i]
		if pa.Queue != pb.Queue || pa.Off != pb.Off || pa.Len != pb.Len {
			return fmt.Errorf("shard: part %d: %d elements from %d on %s, %d from %d on %s: they must match: %w", i, pa.Len, pa.Off, pa.Queue.Device().ID(), pb.Len, pb.Off, pb.Queue.Device().ID(), engine.ErrInvalidArg)
		}
	}
	return nil
}

// Gather reads the whole back to the host after what each part's queue holds (the parts
// concurrently); a replicated Buffer is read from its first device.
func (b *Buffer[T]) Gather(ctx context.Context) ([]T, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	out := make([]T, b.n)
	if err := b.GatherInto(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// GatherInto reads the whole into dst, which holds Len elements.
func (b *Buffer[T]) GatherInto(ctx context.Context, dst []T) error {
	if err := b.check(); err != nil {
		return err
	}
	if len(dst) != b.n {
		return fmt.Errorf("shard: gather of %d elements into %d: %w", b.n, len(dst), engine.ErrInvalidArg)
	}
	if b.layout.Kind == Replicated {
		p := b.parts[0]
		return p.Buf.Read(ctx, p.Queue, 0, dst)
	}
	err := b.each(func(i int) error {
		p := b.parts[i]
		return b.pieces(i, func(whole, local, m int) error {
			return p.Buf.Read(ctx, p.Queue, local, dst[whole:whole+m])
		})
	})
	if err != nil {
		return fmt.Errorf("shard: gather: %w", err)
	}
	return nil
}

// Finish waits for every part's queue, in device order from the calling goroutine: the
// waits overlap all the same, as the queues run on their own, and a wait started in a
// goroutine of its own can start tens of microseconds late, once the Go scheduler hands
// it a thread, where the caller's next wait returns at once.
func (b *Buffer[T]) Finish(ctx context.Context) error {
	return b.InTurnDevice(func(i int) error { return b.parts[i].Queue.Finish(ctx) })
}

// EachDevice calls f for every part, with elements or none (a device that holds nothing
// may still have work, as a sort's receiving of its range), each in its own goroutine, and
// returns once all have returned: nil, or their errors joined in device order, each naming
// its device.
func (b *Buffer[T]) EachDevice(f func(i int) error) error {
	if err := b.check(); err != nil {
		return err
	}
	return b.each(f)
}

// each is EachDevice without the check.
func (b *Buffer[T]) each(f func(i int) error) error {
	errs := make([]error, len(b.parts))
	var wg sync.WaitGroup
	for i := range b.parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(i); err != nil {
				errs[i] = fmt.Errorf("%s: %w", b.parts[i].Queue.Device().ID(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Each calls f for every part with elements, each in its own goroutine, and returns once
// all have returned: nil, or their errors joined in device order, each naming its device.
// It is how an operation runs its parts concurrently.
func (b *Buffer[T]) Each(f func(i int, p Part[T]) error) error {
	if err := b.check(); err != nil {
		return err
	}
	return b.each(func(i int) error {
		if b.parts[i].Len == 0 {
			return nil
		}
		return f(i, b.parts[i])
	})
}

// InTurn calls f for every part with elements, in device order, from the calling
// goroutine, and returns nil or their errors joined in device order, each naming its
// device; a part's error does not stop the parts after it. It is for work that only
// enqueues (launches, copies behind them): done in turn, the devices' work starts within
// the launches' own time, where Each's goroutines may start tens of microseconds apart
// (a goroutine started beside another's blocking call waited 10-80 us for a thread on
// two H200).
func (b *Buffer[T]) InTurn(f func(i int, p Part[T]) error) error {
	return b.InTurnDevice(func(i int) error {
		if b.parts[i].Len == 0 {
			return nil
		}
		return f(i, b.parts[i])
	})
}

// InTurnDevice is EachDevice done as InTurn does: f for every part, with elements or none,
// in device order from the calling goroutine, for steps that only enqueue.
func (b *Buffer[T]) InTurnDevice(f func(i int) error) error {
	if err := b.check(); err != nil {
		return err
	}
	errs := make([]error, len(b.parts))
	for i, p := range b.parts {
		if err := f(i); err != nil {
			errs[i] = fmt.Errorf("%s: %w", p.Queue.Device().ID(), err)
		}
	}
	return errors.Join(errs...)
}

// Close releases every part's buffer (the queues stay the caller's). Idempotent; a nil
// Buffer has nothing to release.
func (b *Buffer[T]) Close() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	var errs []error
	for _, p := range b.parts {
		errs = append(errs, p.Buf.Close())
	}
	return errors.Join(errs...)
}
