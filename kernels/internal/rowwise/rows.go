package rowwise

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// The two builds of a row source (softmax.cl, layernorm.cl: their WG and CACHE tunables).
// The narrow build, made by NewBuilds, takes work-groups of rowGroup items keeping
// rowCache elements each: rows of up to 2048 elements are read once. The wide build, made on
// first use by a wider row, takes rowWideGroup items where the device and the compiled kernel
// allow it, keeping WideCache elements each: rows of up to 16384 elements are read once.
// CACHE is the number of registers (elements of T) each work-item holds the row in, so it
// stays at WideCache where the work-group is lowered: rows past WG*CACHE take the
// kernels' second path, which reads the row again, rather than spilling registers. 512
// items of 32 rather than 1024 of 16: at 1024 threads a block's items get at most 64
// registers each, and the CUDA build of layernorm then ran at 0.39 of the copy roof at
// 16384x8192, against 0.74 at 512 (H200, softmax 0.61 and 0.71; docs/PERFORMANCE.md).
//
// The narrow build also holds the kernels for short rows (softmax_rows_multi,
// layernorm_rows_multi: their TPR and NV tunables): RowItems items per row (fewer where the
// work-group is lowered below it), WG/TPR rows per work-group, each item keeping RowVecs
// vectors of 4 elements, so rows of up to RowItems*4*RowVecs = 1024 elements take them. One
// row per work-group of 256 items, with a barrier per tree level, left most items idle at
// such widths (a row of 1024 is 4 elements an item) and reached 0.52-0.62 of the copy roof
// on an H200 at 65536x1024, where a warp per row with 32 elements a lane (rows.cu) reached
// 0.93; the short-row kernels take its shape with local memory for the warp shuffles.
const (
	rowGroup     = 256
	rowCache     = 8
	rowWideGroup = 512
	WideCache    = 32 // CACHE of the wide build
	RowItems     = 32 // TPR of the short-row kernels where the work-group allows it
	RowVecs      = 8  // NV of the short-row kernels
)

// Config is a build of a row source as a family's Rows launches it: WorkGroup items, RowItems of
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
// Builds.For gives them only for rows they cache.
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
// short-row kernel (kernel + "_multi") with TPR = min(RowItems, WG) and NV = RowVecs.
func buildRows[T kernels.Float](dev *engine.Device, src, kernel string, wg, cache int, multi bool) (*rowsBuild, error) {
	opts, err := kernels.TypeOf[T]().Defines(dev)
	if err != nil {
		return nil, err
	}
	return kernels.Fit(dev, kernel, func(lim kernels.Limits) (*rowsBuild, kernels.Shape, error) {
		cfg := Config{WorkGroup: lim.Group(wg), Cache: cache}
		mcfg := Config{WorkGroup: cfg.WorkGroup, Cache: 4 * RowVecs, RowItems: min(RowItems, cfg.WorkGroup)}
		prog, err := dev.Build(src, append(opts, fmt.Sprintf("-DWG=%d", cfg.WorkGroup), fmt.Sprintf("-DCACHE=%d", cfg.Cache),
			fmt.Sprintf("-DTPR=%d", mcfg.RowItems), fmt.Sprintf("-DNV=%d", RowVecs))...)
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

// Launch is what a family's Rows launches for one width: a kernel and its build's shape.
type Launch struct {
	Kernel *engine.Kernel
	Config Config
}

// Multi reports whether the launch is of a short-row kernel (several rows per work-group,
// the rows count as an argument).
func (l Launch) Multi() bool { return l.Config.RowItems > 0 }

// Grid returns the launch of rows rows.
func (l Launch) Grid(rows int) engine.Range {
	wg, per := l.Config.WorkGroup, l.Config.Rows()
	return engine.Range1D((rows+per-1)/per*wg, wg)
}

// Groups returns the number of work-groups of a launch of rows rows.
func (l Launch) Groups(rows int) int { return (rows + l.Config.Rows() - 1) / l.Config.Rows() }

// Builds are the builds of one row source on one device: the narrow one, made at
// construction, and the wide one, made on first use by rows the narrow one does not cache.
// Safe for concurrent use.
type Builds[T kernels.Float] struct {
	dev         *engine.Device
	op          string // "softmax", "layernorm", for errors
	src, kernel string
	narrow      *rowsBuild
	mu          sync.Mutex
	wide        *rowsBuild
	closed      bool
	// passes is the online path's walks over a row it does not cache (softmax 2, layernorm
	// 3), loops the device's limit on a work-item's loop iterations (kernels.LoopLimit, 0
	// for none): For refuses rows whose walks would pass 90% of it.
	passes, loops int
}

// NewBuilds compiles the narrow build of the row source src for dev: its kernel named
// kernel, one row per work-group, and its short-row kernel kernel + "_multi". op names the
// family in errors ("softmax"); passes is how many times the kernel walks a row it does
// not cache. The wide build of the same source is compiled by For, on first use by a row
// the narrow one does not cache.
func NewBuilds[T kernels.Float](dev *engine.Device, op, src, kernel string, passes int) (*Builds[T], error) {
	narrow, err := buildRows[T](dev, src, kernel, rowGroup, rowCache, true)
	if err != nil {
		return nil, err
	}
	return &Builds[T]{dev: dev, op: op, src: src, kernel: kernel, narrow: narrow, passes: passes, loops: kernels.LoopLimit(dev)}, nil
}

// For returns the kernel for rows of cols elements: the narrow build's short-row kernel
// where it caches them (up to 1024 elements), else the narrow build's other kernel where
// it caches them, else the wide one's (compiled now if not yet) unless it caches no more
// than the narrow one (a device or kernel that lowered its work-group). After Close it
// returns an error wrapping engine.ErrClosed for rows the narrow build does not cache; where
// the device ends a work-item's loops early (kernels.LoopLimit: Mesa's llvmpipe), one
// wrapping engine.ErrUnsupported for rows whose walks would loop past 90% of its limit.
func (b *Builds[T]) For(cols int) (Launch, error) {
	l, err := b.launchFor(cols)
	if err != nil || b.loops <= 0 || l.Config.Cached(cols) {
		return l, err
	}
	// Each work-item walks the row passes times, WorkGroup elements apart (on Rusticl, 32
	// work-items: softmax 2*ceil(cols/32) + 11 iterations, layernorm 3*ceil(cols/32) + 17,
	// measured with a counting loop after the kernel's own).
	n := b.passes*((cols+l.Config.WorkGroup-1)/l.Config.WorkGroup) + 32
	if err := kernels.CheckLoops(b.loops, n, "%s: rows of %d elements (%d walks of %d work-items)", b.op, cols, b.passes, l.Config.WorkGroup); err != nil {
		return Launch{}, err
	}
	return l, nil
}

// launchFor is For without the loop limit's check.
func (b *Builds[T]) launchFor(cols int) (Launch, error) {
	if b.narrow.mcfg.Cached(cols) {
		return Launch{b.narrow.mk, b.narrow.mcfg}, nil
	}
	if b.narrow.cfg.Cached(cols) {
		return Launch{b.narrow.k, b.narrow.cfg}, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return Launch{}, fmt.Errorf("kernels: %s: closed: %w", b.op, engine.ErrClosed)
	}
	if b.wide == nil {
		w, err := buildRows[T](b.dev, b.src, b.kernel, rowWideGroup, WideCache, false)
		if err != nil {
			return Launch{}, err
		}
		b.wide = w
	}
	n, w := b.narrow.cfg, b.wide.cfg
	if w.WorkGroup*w.Cache <= n.WorkGroup*n.Cache {
		return Launch{b.narrow.k, n}, nil
	}
	return Launch{b.wide.k, w}, nil
}

// Close releases both builds. Idempotent.
func (b *Builds[T]) Close() error {
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

// Buf is one buffer argument of a row operation: a [rows, cols] matrix (Matrix), or a
// vector of cols elements (Vector: gamma, beta).
type Buf[T kernels.Float] struct {
	name string
	b    *engine.Buffer[T]
	vec  bool
}

// Matrix is the [rows, cols] matrix argument name held in b.
func Matrix[T kernels.Float](name string, b *engine.Buffer[T]) Buf[T] {
	return Buf[T]{name: name, b: b}
}

// Vector is the argument name of cols elements (one per column) held in b.
func Vector[T kernels.Float](name string, b *engine.Buffer[T]) Buf[T] {
	return Buf[T]{name: name, b: b, vec: true}
}

// Check validates a [rows, cols] row operation op: positive dims, rows*cols within int32,
// no nil buffer, matrices at least rows*cols long and vectors at least cols long. Errors
// wrap engine.ErrInvalidArg.
func Check[T kernels.Float](op string, rows, cols int, bufs ...Buf[T]) error {
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
