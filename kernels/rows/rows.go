package rows

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// The two builds of softmax.cl and layernorm.cl (their WG and CACHE tunables). The narrow
// build, made by NewSoftmax and NewLayerNorm, takes work-groups of rowGroup items keeping
// rowCache elements each: rows of up to 2048 elements are read once. The wide build, made on
// first use by a wider row, takes rowWideGroup items where the device and the compiled kernel
// allow it, keeping rowWideCache elements each: rows of up to 16384 elements are read once.
// CACHE is the number of registers (elements of T) each work-item holds the row in, so it
// stays at rowWideCache where the work-group is lowered: rows past WG*CACHE take the
// kernels' second path, which reads the row again, rather than spilling registers. 512
// items of 32 rather than 1024 of 16: at 1024 threads a block's items get at most 64
// registers each, and the CUDA build of layernorm then ran at 0.39 of the copy roof at
// 16384x8192, against 0.74 at 512 (H200, softmax 0.61 and 0.71; docs/PERFORMANCE.md).
const (
	rowGroup     = 256
	rowCache     = 8
	rowWideGroup = 512
	rowWideCache = 32
)

// Config is a build of a row source as Rows launches it: WorkGroup items per row, each
// keeping Cache row elements in registers.
type Config struct {
	WorkGroup int
	Cache     int
}

// Cached reports whether rows of cols elements take the cached path of the build (the row
// read from memory once): cols <= WorkGroup*Cache.
func (c Config) Cached(cols int) bool { return cols <= c.WorkGroup*c.Cache }

// String returns the tunables as the .cl headers name them ("WG=512 CACHE=32").
func (c Config) String() string { return fmt.Sprintf("WG=%d CACHE=%d", c.WorkGroup, c.Cache) }

// buildRows compiles a one-work-group-per-row source (softmax.cl, layernorm.cl) with CACHE
// set to cache and WG to the largest power of two up to wg that the device and the compiled
// kernel allow, and returns the build.
func buildRows[T kernels.Float](dev *engine.Device, src, kernel string, wg, cache int) (*rowsBuild, error) {
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	return kernels.Fit(dev, kernel, func(lim kernels.Limits) (*rowsBuild, kernels.Shape, error) {
		cfg := Config{WorkGroup: lim.Group(wg), Cache: cache}
		prog, err := dev.Build(src, append(opts, fmt.Sprintf("-DWG=%d", cfg.WorkGroup), fmt.Sprintf("-DCACHE=%d", cfg.Cache))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		b := &rowsBuild{prog: prog, cfg: cfg}
		ks, err := kernels.LoadKernels(prog, kernels.Ref{Dst: &b.k, Name: kernel})
		if err != nil {
			b.Close()
			return nil, kernels.Shape{}, err
		}
		return b, kernels.Shape{Items: cfg.WorkGroup, Kernels: ks}, nil
	})
}

// rowsBuild is one build of a row source.
type rowsBuild struct {
	prog *engine.Program
	k    *engine.Kernel
	cfg  Config
}

func (b *rowsBuild) Close() error { return errors.Join(b.k.Close(), b.prog.Close()) }

// rowsBuilds are the builds of one row source on one device: the narrow one, made at
// construction, and the wide one, made on first use by rows the narrow one does not cache.
// Safe for concurrent use.
type rowsBuilds[T kernels.Float] struct {
	dev         *engine.Device
	op          string // "softmax", "layernorm", for errors
	src, kernel string
	narrow      *rowsBuild
	mu          sync.Mutex
	wide        *rowsBuild
	closed      bool
}

func newRowsBuilds[T kernels.Float](dev *engine.Device, op, src, kernel string) (*rowsBuilds[T], error) {
	narrow, err := buildRows[T](dev, src, kernel, rowGroup, rowCache)
	if err != nil {
		return nil, err
	}
	return &rowsBuilds[T]{dev: dev, op: op, src: src, kernel: kernel, narrow: narrow}, nil
}

// forCols returns the build for rows of cols elements: the narrow one where it caches them,
// else the wide one (compiled now if not yet) unless it caches no more than the narrow one
// (a device or kernel that lowered its work-group).
func (b *rowsBuilds[T]) forCols(cols int) (*rowsBuild, error) {
	if b.narrow.cfg.Cached(cols) {
		return b.narrow, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("kernels: %s: closed: %w", b.op, engine.ErrClosed)
	}
	if b.wide == nil {
		w, err := buildRows[T](b.dev, b.src, b.kernel, rowWideGroup, rowWideCache)
		if err != nil {
			return nil, err
		}
		b.wide = w
	}
	n, w := b.narrow.cfg, b.wide.cfg
	if w.WorkGroup*w.Cache <= n.WorkGroup*n.Cache {
		return b.narrow, nil
	}
	return b.wide, nil
}

// Close releases both builds. Idempotent.
func (b *rowsBuilds[T]) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	err := b.narrow.Close()
	if b.wide != nil {
		err = errors.Join(err, b.wide.Close())
		b.wide = nil
	}
	return err
}

// rowBuf is one buffer argument of a row operation: a [rows, cols] matrix, or a vector of
// cols elements (gamma, beta).
type rowBuf[T kernels.Float] struct {
	name string
	b    *engine.Buffer[T]
	vec  bool
}

// checkRows validates a [rows, cols] row operation: positive dims, rows*cols within int32,
// no nil buffer, matrices at least rows*cols long and vectors at least cols long. Errors
// wrap engine.ErrInvalidArg.
func checkRows[T kernels.Float](op string, rows, cols int, bufs ...rowBuf[T]) error {
	if rows < 1 || cols < 1 {
		return fmt.Errorf("kernels: %s: shape [%d, %d]; rows and cols must be at least 1: %w", op, rows, cols, engine.ErrInvalidArg)
	}
	if rows > math.MaxInt32/cols {
		return fmt.Errorf("kernels: %s: shape [%d, %d] has more than 2^31-1 elements: %w", op, rows, cols, engine.ErrInvalidArg)
	}
	for _, a := range bufs {
		n := rows * cols
		if a.vec {
			n = cols
		}
		if a.b == nil {
			return fmt.Errorf("kernels: %s: nil buffer %s: %w", op, a.name, engine.ErrInvalidArg)
		}
		if a.b.Len() < n {
			return fmt.Errorf("kernels: %s: buffer %s holds %d elements, shape [%d, %d] needs %d: %w", op, a.name, a.b.Len(), rows, cols, n, engine.ErrInvalidArg)
		}
	}
	return nil
}
