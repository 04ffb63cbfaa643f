package rowwise

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
)

//go:embed rows.cu
var warpSource string

// The shape of rows.cu's build: warpRows rows (warps) per block, warpVecs float4 loads per
// lane, so rows of up to warpMaxCols floats are one warp's.
const (
	warpRows    = 8
	warpVecs    = 8
	warpMaxCols = 128 * warpVecs
)

// Warp is the "cuda-warp" variant of the float32 row ops: rows.cu's kernels, one warp per
// row of up to 1024 floats held in registers (16-byte loads where the width is a multiple
// of 4), reduced with warp shuffles (no shared memory, no barrier), softmax and layernorm
// in one program. It runs on CUDA devices only, for rows of up to 1024 elements
// (WarpFits). Safe for concurrent use.
type Warp struct {
	prog    *engine.Program
	sm, ln  *engine.Kernel
	devName string
}

// NewWarp compiles rows.cu for dev (CUDA C++: an error wrapping engine.ErrUnsupported on
// other devices).
func NewWarp(dev *engine.Device) (_ *Warp, err error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: cuda-warp: nil device: %w", engine.ErrInvalidArg)
	}
	opts := []string{fmt.Sprintf("-DROWS=%d", warpRows), fmt.Sprintf("-DVECS=%d", warpVecs)}
	prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: warpSource, Name: "rows.cu"}, opts...)
	if err != nil {
		return nil, err
	}
	w := &Warp{prog: prog, devName: dev.ID()}
	defer func() {
		if err != nil {
			w.Close()
		}
	}()
	if w.sm, err = prog.Kernel("softmax_rows_warp"); err != nil {
		return nil, err
	}
	if w.ln, err = prog.Kernel("layernorm_rows_warp"); err != nil {
		return nil, err
	}
	for _, k := range []*engine.Kernel{w.sm, w.ln} {
		if k.MaxWorkGroupSize() < 32*warpRows {
			return nil, fmt.Errorf("kernels: %s takes %d threads per block on %s, needs %d: %w", k.Name(), k.MaxWorkGroupSize(), dev.ID(), 32*warpRows, engine.ErrUnsupported)
		}
	}
	return w, nil
}

// WarpFits reports whether rows of cols floats take the warp kernels: at most 1024.
func WarpFits(cols int) bool { return cols > 0 && cols <= warpMaxCols }

// Config returns the error model of the warp kernels, the build a tolerance takes: a
// work-group of 32 items that caches the row (32*4*warpVecs elements).
func (w *Warp) Config() Config { return Config{WorkGroup: 32, Cache: 4 * warpVecs} }

// check checks a launch of rows x cols.
func (w *Warp) check(op string, rows, cols int, bufs ...Buf[float32]) error {
	if w == nil {
		return fmt.Errorf("kernels: %s: nil Warp: %w", op, engine.ErrInvalidArg)
	}
	if !WarpFits(cols) {
		return fmt.Errorf("kernels: %s: rows of %d columns: the warp kernels take up to %d: %w", op, cols, warpMaxCols, engine.ErrInvalidArg)
	}
	return Check(op, rows, cols, bufs...)
}

// Softmax enqueues y = softmax of each row of x (rows x cols, row-major; y may be x).
func (w *Warp) Softmax(q *engine.Queue, y, x *engine.Buffer[float32], rows, cols int) error {
	if err := w.check("softmax", rows, cols, Matrix("y", y), Matrix("x", x)); err != nil {
		return err
	}
	return q.Launch(w.sm, w.grid(rows), y, x, int32(rows), int32(cols))
}

// LayerNorm enqueues y = (x - mean)/sqrt(var + eps)*gamma + beta per row (gamma and beta
// of cols elements).
func (w *Warp) LayerNorm(q *engine.Queue, y, x, gamma, beta *engine.Buffer[float32], rows, cols int, eps float32) error {
	if err := w.check("layernorm", rows, cols, Matrix("y", y), Matrix("x", x),
		Vector("gamma", gamma), Vector("beta", beta)); err != nil {
		return err
	}
	return q.Launch(w.ln, w.grid(rows), y, x, gamma, beta, int32(rows), int32(cols), eps)
}

// grid is the launch of rows rows: warpRows per block.
func (w *Warp) grid(rows int) engine.Range {
	return engine.Range1D((rows+warpRows-1)/warpRows*32*warpRows, 32*warpRows)
}

// Close releases the kernels and the program. Idempotent.
func (w *Warp) Close() error {
	if w == nil {
		return nil
	}
	return errors.Join(w.sm.Close(), w.ln.Close(), w.prog.Close())
}
