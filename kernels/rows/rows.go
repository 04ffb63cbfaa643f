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
//
// The narrow build also holds the kernels for short rows (softmax_rows_multi,
// layernorm_rows_multi: their TPR and NV tunables): rowItems items per row (fewer where the
// work-group is lowered below it), WG/TPR rows per work-group, each item keeping rowVecs
// vectors of 4 elements, so rows of up to rowItems*4*rowVecs = 1024 elements take them. One
// row per work-group of 256 items, with a barrier per tree level, left most items idle at
// such widths (a row of 1024 is 4 elements an item) and reached 0.52-0.62 of the copy roof
// on an H200 at 65536x1024, where a warp per row with 32 elements a lane (rows.cu) reached
// 0.93; the short-row kernels take its shape with local memory for the warp shuffles.
const (
	rowGroup     = 256
	rowCache     = 8
	rowWideGroup = 512
	rowWideCache = 32
	rowItems     = 32
	rowVecs      = 8
)

// Config is a build of a row source as Rows launches it: WorkGroup items, RowItems of
// them per row (WorkGroup/RowItems rows per work-group: the short-row kernels), or all of
// them for one row where RowItems is 0, each keeping Cache row elements in registers.
type Config struct {
	WorkGroup int
	Cache     int
	RowItems  int
}

// PerRow returns the number of work-items that take one row: RowItems, or WorkGroup where
// RowItems is 0.
func (c Config) PerRow() int {
	if c.RowItems > 0 {
		return c.RowItems
	}
	return c.WorkGroup
}

// Rows returns the number of rows one work-group takes.
func (c Config) Rows() int { return c.WorkGroup / c.PerRow() }

// Cached reports whether rows of cols elements take the cached path of the build (the row
// read from memory once): cols <= PerRow()*Cache. The short-row kernels have no other path:
// Rows launches them only for rows they cache.
func (c Config) Cached(cols int) bool { return cols <= c.PerRow()*c.Cache }

// Chain returns the length of the longest chain of additions in a row sum of cols
// elements (the k of the tolerances' gamma_k): ceil(cols/WorkGroup) strided terms per item
// and a tree of log2(WorkGroup) levels for one row per work-group; for the short-row
// kernels, ceil(cols/(4*RowItems)) terms per vector component, 2 levels over the 4
// components and log2(RowItems) over the row's items.
func (c Config) Chain(cols int) int {
	if c.RowItems > 0 {
		return (cols+4*c.RowItems-1)/(4*c.RowItems) + 2 + kernels.Log2Ceil(c.RowItems)
	}
	return (cols+c.WorkGroup-1)/c.WorkGroup + kernels.Log2Ceil(c.WorkGroup)
}

// String returns the tunables as the .cl headers name them ("WG=512 CACHE=32",
// "WG=256 TPR=32 NV=8").
func (c Config) String() string {
	if c.RowItems > 0 {
		return fmt.Sprintf("WG=%d TPR=%d NV=%d", c.WorkGroup, c.RowItems, c.Cache/4)
	}
	return fmt.Sprintf("WG=%d CACHE=%d", c.WorkGroup, c.Cache)
}

// buildRows compiles a row source (softmax.cl, layernorm.cl) with CACHE set to cache and WG
// to the largest power of two up to wg that the device and the compiled kernels allow, and
// returns the build: its one-row-per-work-group kernel, and where multi is set its
// short-row kernel (kernel + "_multi") with TPR = min(rowItems, WG) and NV = rowVecs.
func buildRows[T kernels.Float](dev *engine.Device, src, kernel string, wg, cache int, multi bool) (*rowsBuild, error) {
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	return kernels.Fit(dev, kernel, func(lim kernels.Limits) (*rowsBuild, kernels.Shape, error) {
		cfg := Config{WorkGroup: lim.Group(wg), Cache: cache}
		mcfg := Config{WorkGroup: cfg.WorkGroup, Cache: 4 * rowVecs, RowItems: min(rowItems, cfg.WorkGroup)}
		prog, err := dev.Build(src, append(opts, fmt.Sprintf("-DWG=%d", cfg.WorkGroup), fmt.Sprintf("-DCACHE=%d", cfg.Cache),
			fmt.Sprintf("-DTPR=%d", mcfg.RowItems), fmt.Sprintf("-DNV=%d", rowVecs))...)
		if err != nil {
			return nil, kernels.Shape{}, err
		}
		b := &rowsBuild{prog: prog, cfg: cfg}
		refs := []kernels.Ref{{Dst: &b.k, Name: kernel}}
		if multi {
			b.mcfg = mcfg
			refs = append(refs, kernels.Ref{Dst: &b.mk, Name: kernel + "_multi"})
		}
		ks, err := kernels.LoadKernels(prog, refs...)
		if err != nil {
			b.Close()
			return nil, kernels.Shape{}, err
		}
		return b, kernels.Shape{Items: cfg.WorkGroup, Kernels: ks}, nil
	})
}

// rowsBuild is one build of a row source: its one-row-per-work-group kernel k, and in the
// narrow build the short-row kernel mk (nil in the wide one).
type rowsBuild struct {
	prog      *engine.Program
	k, mk     *engine.Kernel
	cfg, mcfg Config
}

func (b *rowsBuild) Close() error { return errors.Join(b.k.Close(), b.mk.Close(), b.prog.Close()) }

// rowsLaunch is what Rows launches for one width: a kernel and its build's shape.
type rowsLaunch struct {
	k   *engine.Kernel
	cfg Config
}

// multi reports whether the launch is of a short-row kernel (several rows per work-group,
// the rows count as an argument).
func (l rowsLaunch) multi() bool { return l.cfg.RowItems > 0 }

// grid returns the launch of rows rows.
func (l rowsLaunch) grid(rows int) engine.Range {
	wg, per := l.cfg.WorkGroup, l.cfg.Rows()
	return engine.Range1D((rows+per-1)/per*wg, wg)
}

// groups returns the number of work-groups of a launch of rows rows.
func (l rowsLaunch) groups(rows int) int { return (rows + l.cfg.Rows() - 1) / l.cfg.Rows() }

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
	narrow, err := buildRows[T](dev, src, kernel, rowGroup, rowCache, true)
	if err != nil {
		return nil, err
	}
	return &rowsBuilds[T]{dev: dev, op: op, src: src, kernel: kernel, narrow: narrow}, nil
}

// forCols returns the kernel for rows of cols elements: the narrow build's short-row
// kernel where it caches them (up to 1024 elements), else the narrow build's other kernel
// where it caches them, else the wide one's (compiled now if not yet) unless it caches no
// more than the narrow one (a device or kernel that lowered its work-group).
func (b *rowsBuilds[T]) forCols(cols int) (rowsLaunch, error) {
	if b.narrow.mcfg.Cached(cols) {
		return rowsLaunch{b.narrow.mk, b.narrow.mcfg}, nil
	}
	if b.narrow.cfg.Cached(cols) {
		return rowsLaunch{b.narrow.k, b.narrow.cfg}, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return rowsLaunch{}, fmt.Errorf("kernels: %s: closed: %w", b.op, engine.ErrClosed)
	}
	if b.wide == nil {
		w, err := buildRows[T](b.dev, b.src, b.kernel, rowWideGroup, rowWideCache, false)
		if err != nil {
			return rowsLaunch{}, err
		}
		b.wide = w
	}
	n, w := b.narrow.cfg, b.wide.cfg
	if w.WorkGroup*w.Cache <= n.WorkGroup*n.Cache {
		return rowsLaunch{b.narrow.k, n}, nil
	}
	return rowsLaunch{b.wide.k, w}, nil
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
