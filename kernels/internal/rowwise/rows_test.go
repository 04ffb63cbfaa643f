package rowwise

import (
	"errors"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// TestConfig checks the shape arithmetic of the builds: rows per work-group, the cached
// width, the chain of additions the tolerances take and the tunables as the .cl headers
// name them.
func TestConfig(t *testing.T) {
	for _, c := range []struct {
		cfg                Config
		perRow, rows, cols int // cols: the widest cached row
		chain              int // Chain(cols)
		str                string
	}{
		{Config{WorkGroup: 256, Cache: 8}, 256, 1, 2048, 8 + 8, "WG=256 CACHE=8"},
		{Config{WorkGroup: 512, Cache: 32}, 512, 1, 16384, 32 + 9, "WG=512 CACHE=32"},
		{Config{WorkGroup: 256, Cache: 4 * RowVecs, RowItems: RowItems}, 32, 8, 1024, 8 + 2 + 5, "WG=256 TPR=32 NV=8"},
		{Config{WorkGroup: 8, Cache: 4 * RowVecs, RowItems: 8}, 8, 1, 256, 8 + 2 + 3, "WG=8 TPR=8 NV=8"},
	} {
		if got := c.cfg.PerRow(); got != c.perRow {
			t.Errorf("%v: PerRow %d, want %d", c.cfg, got, c.perRow)
		}
		if got := c.cfg.Rows(); got != c.rows {
			t.Errorf("%v: Rows %d, want %d", c.cfg, got, c.rows)
		}
		if !c.cfg.Cached(c.cols) || c.cfg.Cached(c.cols+1) {
			t.Errorf("%v: Cached(%d) %v, Cached(%d) %v, want true, false", c.cfg, c.cols, c.cfg.Cached(c.cols), c.cols+1, c.cfg.Cached(c.cols+1))
		}
		if got := c.cfg.Chain(c.cols); got != c.chain {
			t.Errorf("%v: Chain(%d) %d, want %d", c.cfg, c.cols, got, c.chain)
		}
		if got := c.cfg.String(); got != c.str {
			t.Errorf("String %q, want %q", got, c.str)
		}
	}
}

// TestShape checks the [rows, cols] of a size: cols capped at the op's widest row, rows
// rounded down but at least 1.
func TestShape(t *testing.T) {
	for _, c := range []struct{ size, maxCols, rows, cols int }{
		{1, 1024, 1, 1},
		{1000, 1024, 1, 1000},
		{1 << 20, 1024, 1024, 1024},
		{1<<20 + 1023, 1024, 1024, 1024},
		{1 << 27, 8192, 16384, 8192},
	} {
		if r, cl := Shape(c.size, c.maxCols); r != c.rows || cl != c.cols {
			t.Errorf("Shape(%d, %d) = [%d, %d], want [%d, %d]", c.size, c.maxCols, r, cl, c.rows, c.cols)
		}
	}
}

// TestCheck checks the refusals that need no device: a shape below 1 or past 2^31-1
// elements and a nil buffer, each wrapping engine.ErrInvalidArg.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name       string
		rows, cols int
		bufs       []Buf[float32]
	}{
		{"rows=0", 0, 4, nil},
		{"cols<0", 3, -1, nil},
		{"over 2^31 elements", 1 << 16, 1 << 16, nil},
		{"nil matrix", 3, 4, []Buf[float32]{Matrix[float32]("x", nil)}},
		{"nil vector", 3, 4, []Buf[float32]{Vector[float32]("gamma", nil)}},
	} {
		if err := Check("softmax", c.rows, c.cols, c.bufs...); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%s: %v, want ErrInvalidArg", c.name, err)
		}
	}
	if err := Check[float32]("softmax", 3, 4); err != nil {
		t.Errorf("a valid shape without buffers: %v", err)
	}
}
