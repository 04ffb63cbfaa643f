package alloc

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed alloc.cl
var source string

// Path is the way an op allocates: through engine's memory pool, or the driver's own call.
type Path string

// The paths: Pool is engine.NewBuffer and Buffer.Close with the pool on (a hit is a mutex
// and a list operation; a miss goes to the driver, or the driver's own pool on CUDA),
// Raw the backend's Alloc and Close, as engine calls them with PRISM_POOL=off
// (cuMemAlloc and cuMemFree on CUDA, clCreateBuffer and clReleaseMemObject on OpenCL).
const (
	Pool Path = "pool"
	Raw  Path = "raw"
)

// Family returns the alloc family: its OpenCL C source (alloc.cl, the kernel that checks
// pooled memory) and its operations, in the order listings show them: pooled, raw.
func Family() kernels.Family {
	return kernels.Family{Name: "alloc", Source: source, Ops: []kernels.Op{allocOp(Pool), allocOp(Raw)}}
}

var allocDocs = map[Path]string{
	Pool: "allocate and free a buffer through engine's memory pool (NewBuffer, Close): the latency of a reuse, host-timed",
	Raw:  "allocate and free a buffer through the driver (Driver().Alloc, Close), bypassing the pool: host-timed",
}

func allocOp(path Path) kernels.Op {
	name := "alloc/" + string(path) + "/uint8"
	return kernels.Op{
		Name: name, Family: "alloc", Type: "uint8", Doc: allocDocs[path],
		SizeDoc: "n bytes a buffer", DefaultSize: 1 << 20, QuickSize: 64 << 10,
		Variants: []kernels.Variant{{
			Name: kernels.PortableName, Doc: "engine's and the backend's allocations, on every backend (the OpenCL C kernel only checks the memory)",
			Dialect: engine.DialectOpenCL,
			Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
				return setupAlloc(ctx, q, name, path, p)
			},
		}},
	}
}

// allocInstance allocates and frees n bytes a Run. It enqueues nothing, so Queue.Timed
// measures the host time of the calls; its Model is zero, a latency. before holds the
// pool's figures at the end of Setup or of the last Verify, runs the Runs since.
type allocInstance struct {
	a      *Alloc // Pool: the kernel that checks the memory
	path   Path
	dev    *engine.Device
	n      int
	s      uint32 // the pattern's seed
	runs   int64
	before engine.PoolStats
}

func setupAlloc(ctx context.Context, q *engine.Queue, name string, path Path, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	if p.Size > math.MaxInt32 {
		return nil, fmt.Errorf("kernels: %s: size %d exceeds the family's limit of 2^31-1 bytes: %w", name, p.Size, engine.ErrInvalidArg)
	}
	dev := q.Device()
	in := &allocInstance{path: path, dev: dev, n: p.Size, s: uint32(p.Seed) ^ uint32(p.Seed>>32)}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	if path == Pool {
		if !dev.PoolStats().Enabled {
			return nil, fmt.Errorf("kernels: %s: the memory pool of %s is off (PRISM_POOL=off): %w", name, dev.ID(), engine.ErrUnsupported)
		}
		if in.a, err = NewAlloc(dev); err != nil {
			return nil, err
		}
		// Queues with commands in flight keep a freed block from reuse: finish q, then
		// allocate and free once, so that every Run finds the block cached.
		if err := q.Finish(ctx); err != nil {
			return nil, err
		}
		if err := in.Run(ctx, q); err != nil {
			return nil, err
		}
		in.runs = 0
	}
	in.before = dev.PoolStats()
	return in, nil
}

// Run allocates n bytes and frees them.
func (in *allocInstance) Run(ctx context.Context, q *engine.Queue) error {
	if in.path == Pool {
		b, err := engine.NewBuffer[uint8](in.dev, in.n)
		if err != nil {
			return err
		}
		in.runs++
		return b.Close()
	}
	b, err := in.dev.Driver().Alloc(int64(in.n))
	if err != nil {
		return fmt.Errorf("kernels: alloc raw: %d bytes on %s: %w", in.n, in.dev.ID(), err)
	}
	in.runs++
	if err := b.Close(); err != nil {
		return fmt.Errorf("kernels: alloc raw: free %d bytes on %s: %w", in.n, in.dev.ID(), err)
	}
	return nil
}

// ends is how many bytes at each end of an allocation Verify reads back.
const ends = 4096

// Verify checks that the Runs since Setup (or the last Verify) took the path measured,
// from the pool's figures: each pooled one a hit and none a miss, no raw one through the
// pool. Then it allocates the same way once more and checks that the memory is usable: a
// pooled buffer is written whole by alloc_fill and its ends read back; a raw allocation is
// at least n bytes, and its ends are written and read back through the driver's queue.
func (in *allocInstance) Verify(ctx context.Context, q *engine.Queue) error {
	s := in.dev.PoolStats()
	hits, misses := s.Hits-in.before.Hits, s.Misses-in.before.Misses
	switch {
	case in.path == Pool && (misses > 0 || hits < in.runs):
		return fmt.Errorf("%w: alloc pool: of the %d allocations since setup, %d missed the pool and went to the driver (%d hits; the pool backs onto %s)",
			kernels.ErrVerify, in.runs, misses, hits, s.Backing)
	case in.path == Raw && hits+misses > 0:
		return fmt.Errorf("%w: alloc raw: the pool served %d allocations during %d raw ones, which must bypass it", kernels.ErrVerify, hits+misses, in.runs)
	}
	var err error
	if in.path == Pool {
		err = in.verifyPooled(ctx, q)
	} else {
		err = in.verifyRaw()
	}
	in.runs, in.before = 0, in.dev.PoolStats()
	return err
}

// span returns the offsets and lengths of the two ends of n bytes that Verify checks
// (one span when they meet).
func span(n int) [][2]int {
	if n <= 2*ends {
		return [][2]int{{0, n}}
	}
	return [][2]int{{0, ends}, {n - ends, ends}}
}

// check compares got, bytes off to off+len(got)-1, with the pattern of s.
func check(what string, got []byte, off int, s uint32) error {
	for j, b := range got {
		if want := PatternByte(off+j, s); b != want {
			return fmt.Errorf("%w: %s: byte %d = %#02x, want %#02x", kernels.ErrVerify, what, off+j, b, want)
		}
	}
	return nil
}

func (in *allocInstance) verifyPooled(ctx context.Context, q *engine.Queue) error {
	b, err := engine.NewBuffer[uint8](in.dev, in.n)
	if err != nil {
		return err
	}
	defer b.Close()
	if err := in.a.Fill(q, b, in.n, in.s); err != nil {
		return err
	}
	for _, sp := range span(in.n) {
		got := make([]byte, sp[1])
		if err := b.Read(ctx, q, sp[0], got); err != nil {
			return err
		}
		if err := check("alloc pool (written by alloc_fill)", got, sp[0], in.s); err != nil {
			return err
		}
	}
	return nil
}

func (in *allocInstance) verifyRaw() error {
	drv := in.dev.Driver()
	b, err := drv.Alloc(int64(in.n))
	if err != nil {
		return fmt.Errorf("kernels: alloc raw: %d bytes on %s: %w", in.n, in.dev.ID(), err)
	}
	defer b.Close()
	if got := b.Size(); got < int64(in.n) {
		return fmt.Errorf("%w: alloc raw: the driver gave %d bytes for %d", kernels.ErrVerify, got, in.n)
	}
	dq, err := drv.NewQueue()
	if err != nil {
		return fmt.Errorf("kernels: alloc raw: a queue on %s: %w", in.dev.ID(), err)
	}
	defer dq.Close()
	for _, sp := range span(in.n) {
		off, m := sp[0], sp[1]
		src, got := make([]byte, m), make([]byte, m)
		for j := range src {
			src[j] = PatternByte(off+j, in.s)
		}
		if err := dq.Write(b, int64(off), unsafe.Pointer(&src[0]), int64(m)); err != nil {
			return fmt.Errorf("kernels: alloc raw: write %d bytes at %d on %s: %w", m, off, in.dev.ID(), err)
		}
		if err := dq.Read(b, int64(off), unsafe.Pointer(&got[0]), int64(m)); err != nil {
			return fmt.Errorf("kernels: alloc raw: read %d bytes at %d on %s: %w", m, off, in.dev.ID(), err)
		}
		if err := check("alloc raw (written and read through the driver)", got, off, in.s); err != nil {
			return err
		}
	}
	return nil
}

// Model is zero: the op's time, a latency, is its figure.
func (in *allocInstance) Model() kernels.Model { return kernels.Model{} }

// Shape gives the bytes and where they come from: the pool and what backs it, or the
// driver.
func (in *allocInstance) Shape() string {
	if in.path == Pool {
		return fmt.Sprintf("n=%d pool-backing=%s", in.n, in.dev.PoolStats().Backing)
	}
	return fmt.Sprintf("n=%d driver", in.n)
}

func (in *allocInstance) Close() error {
	return errors.Join(in.a.Close())
}
