// Package rowwisetest holds the test helpers of the row families (softmax, layernorm):
// the shapes their tests run for a launcher's builds, the builds themselves checked, and
// the inputs whose rows cycle through the kinds that test stability.
package rowwisetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
	"github.com/prism-compute/prism/kernels/internal/rowwise"
)

// Cases returns the [rows, cols] shapes the row-op tests run for the launcher's
// short-row kernel s, narrow build n and wide build w (Configs): widths around the
// short-row kernel's 4-element vectors and their scalar path (1 to 5, 31 to 33, 127), at
// the edges of a row's vectors over its items (4*RowItems) and at its limit (1023, 1024,
// 1025); cols at the narrow build's work-group edges, at each build's cached/online
// boundary WorkGroup*Cache and past it, and the widths of transformers around the
// thresholds (1023 to 16385, the odd prime 12289). Rows 1, 3 and 1000 up to 4097 columns
// (the last gives the cases over a million elements), and for rows the short-row kernel
// takes, one more than it packs into a work-group (so that the last work-group is part
// empty); 1, 4 and 64 beyond (few rows of wide cols: PoCL runs them at a few GB/s); for
// float64 the largest row count only at 1024, 4097 and 16385. Under Small (Oclgrind) 1 and
// 3 rows that the narrow build caches (for float64 only at 5, 1024 and n.WorkGroup+1
// columns) and two work-groups of short rows at 5 and 1024 columns, one row of up to 4097
// columns on the wide build (float64: 4097), and for float32 one row past its boundary
// (16385 where the device takes work-groups of 1024).
func Cases(s, n, w rowwise.Config, double bool) [][2]int {
	scap, ncap, wcap := s.PerRow()*s.Cache, n.WorkGroup*n.Cache, w.WorkGroup*w.Cache
	v := 4 * s.PerRow()
	colsList := []int{1, 2, 3, 4, 5, 7, 31, 32, 33, 127, v - 1, v, v + 1, scap - 1, scap, scap + 1,
		n.WorkGroup - 1, n.WorkGroup, n.WorkGroup + 1, ncap, ncap + 1, 1023, 1024, 1025, 2048,
		3000, 4097, 8192, 12289, 16384, 16385, w.WorkGroup - 1, w.WorkGroup + 1, wcap, wcap + 1}
	slices.Sort(colsList)
	colsList = slices.Compact(colsList)
	var out [][2]int
	for _, c := range colsList {
		if c < 1 {
			continue
		}
		rowsList := []int{1, 3, 1000}
		if c <= scap {
			rowsList = []int{1, 3, s.Rows() + 1, 1000}
		}
		if c > 4097 {
			rowsList = []int{1, 4, 64}
		}
		for _, r := range rowsList {
			// Oclgrind: about 0.25 s per work-group of 256 items, 1 s of 1024.
			small := kerneltest.Small()
			short := c <= scap && r == s.Rows()+1 && r > 3
			switch {
			case small && c > 4097 && (double || r > 1 || c != wcap+1):
				continue
			case small && c > ncap && (r > 1 || (double && c != 4097)):
				continue
			case small && short && c != 5 && c != scap:
				continue
			case small && !short && r > 3:
				continue
			case small && double && c <= ncap && c != 5 && c != scap && c != n.WorkGroup+1:
				continue
			case double && r == 1000 && c != 1024 && c != 4097 && c != 16385:
				continue
			}
			out = append(out, [2]int{r, c})
		}
	}
	return out
}

// Configs returns the short-row kernel's build, the narrow and the wide build of a
// launcher (config(1), config of the first width past the short-row kernel's, and of the
// first past the narrow build's cache), checking that rows of up to RowItems*4*RowVecs elements take the
// short-row kernel where the work-group holds RowItems items (rowwise's constants), and
// that the wide build caches more than the narrow one unless it is the narrow one.
func Configs(t *testing.T, config func(cols int) (rowwise.Config, error)) (s, n, w rowwise.Config) {
	t.Helper()
	s, err := config(1)
	if err != nil {
		t.Fatal(err)
	}
	if s.RowItems < 1 || s.WorkGroup%s.RowItems != 0 || s.Cache != 4*rowwise.RowVecs {
		t.Fatalf("short rows take %v, want the short-row kernel", s)
	}
	if s.RowItems == rowwise.RowItems {
		if c, err := config(rowwise.RowItems * 4 * rowwise.RowVecs); err != nil || c != s {
			t.Fatalf("rows of %d take %v (%v), want %v", rowwise.RowItems*4*rowwise.RowVecs, c, err, s)
		}
	}
	if n, err = config(s.PerRow()*s.Cache + 1); err != nil {
		t.Fatal(err)
	}
	if n.RowItems != 0 {
		t.Fatalf("rows past the short-row kernel's take %v", n)
	}
	// The first width past the narrow build's cache: the wide build's, where it caches more
	// (a longer row could be refused on a device that ends a work-item's loops early).
	if w, err = config(n.PerRow()*n.Cache + 1); err != nil {
		t.Fatal(err)
	}
	if w != n && (w.Cache != rowwise.WideCache || w.WorkGroup*w.Cache <= n.WorkGroup*n.Cache) {
		t.Fatalf("wide build %v caches no more than the narrow one %v", w, n)
	}
	t.Logf("builds: %v, %v, %v", s, n, w)
	return s, n, w
}

// Input returns a [rows, cols] input whose rows cycle through kinds: uniform in
// [-1, 1); wide, uniform in [-80, 80) (exp spans e^160: stability, underflow to 0); offset,
// 1000 plus [-80, 80); constant (every element equal).
func Input[T kernels.Float](rng *rand.Rand, rows, cols int) []T {
	x := make([]T, rows*cols)
	for r := range rows {
		off, mag := 0.0, 1.0
		switch r % 4 {
		case 1:
			mag = 80
		case 2:
			off, mag = 1000, 80
		case 3:
			off, mag = 4*rng.Float64()-2, 0
		}
		for c := range cols {
			x[r*cols+c] = T(off + mag*(2*rng.Float64()-1))
		}
	}
	return x
}

// ShortRows is what ShortRowsSmallGroups needs of a row family on one device: its
// short-row kernels' Config (as the launcher's Config(1) gives it), a run of rows x cols
// float32 rows x (guarded, against the float64 reference, with whatever else the family
// draws from rng), and the launcher's Close.
type ShortRows struct {
	Config rowwise.Config
	Check  func(t *testing.T, q *engine.Queue, rng *rand.Rand, x []float32, rows, cols int)
	Close  func() error
}

// ShortRowsSmallGroups runs a row family's short-row kernels as devices with fewer
// work-items per group would build them (kernels.EnvMaxWorkGroup): 1 and 2 items per row
// (the scalar trees of the row partials), 8, and 32 in a work-group of one row. Each item
// then keeps the same 4*RowVecs elements, so fewer columns take the short-row kernels; the
// widths straddle the 4-element vectors, the items' vectors and that limit, with row counts
// that leave the last work-group part empty. On the first device only (the other runs the
// same code; each limit is a build of its own, slow for CPU compilers). open makes the
// family's launcher on dev under the limit in force.
func ShortRowsSmallGroups(t *testing.T, open func(t *testing.T, dev *engine.Device) ShortRows) {
	t.Helper()
	for _, wg := range []int{1, 2, 8, 32} {
		t.Run(fmt.Sprintf("wg=%d", wg), func(t *testing.T) {
			t.Setenv(kernels.EnvMaxWorkGroup, fmt.Sprint(wg))
			first := true
			kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
				if !first {
					t.Skip("the limited work-groups run on the first device")
				}
				first = false
				f := open(t, dev)
				defer f.Close()
				cfg := f.Config
				if cfg.RowItems != min(wg, rowwise.RowItems) || cfg.WorkGroup != wg {
					t.Fatalf("short rows take %v under a limit of %d items", cfg, wg)
				}
				limit := cfg.PerRow() * cfg.Cache
				rng := kernels.NewRand(11, 0x5e7)
				colsList := []int{1, 3, 4, 5, 4*cfg.PerRow() + 1, limit - 1, limit, limit + 1}
				rowsList := []int{1, cfg.Rows() + 1, 2*cfg.Rows() + 1}
				if kerneltest.Small() {
					colsList, rowsList = []int{5, limit}, []int{cfg.Rows() + 1}
				}
				for _, cols := range colsList {
					for _, rows := range rowsList {
						t.Run(fmt.Sprintf("rows=%d,cols=%d", rows, cols), func(t *testing.T) {
							f.Check(t, q, rng, Input[float32](rng, rows, cols), rows, cols)
						})
					}
				}
			})
		})
	}
}

// LoopLimit checks a row family against dev's loop limit (kernels.LoopLimit) with rows of
// cols elements, whose walks pass it on Mesa's llvmpipe: there config(cols) and run (the
// family's Rows on one such row) are refused with engine.ErrUnsupported naming the limit,
// before anything is launched, and config(16384) is taken; on a device without a limit,
// config(cols) is taken.
func LoopLimit(t *testing.T, dev *engine.Device, cols int, config func(cols int) (rowwise.Config, error), run func() error) {
	t.Helper()
	_, err := config(cols)
	limit := kernels.LoopLimit(dev)
	if limit == 0 {
		if err != nil {
			t.Errorf("Config(%d) without a loop limit: %v", cols, err)
		}
		return
	}
	want := func(what string, err error) {
		if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "llvmpipe") || !strings.Contains(err.Error(), fmt.Sprint(limit)) {
			t.Errorf("%s: %v; want ErrUnsupported naming llvmpipe's limit %d", what, err, limit)
		}
	}
	want(fmt.Sprintf("Config(%d)", cols), err)
	want(fmt.Sprintf("Rows(1 x %d)", cols), run())
	if _, err := config(16384); err != nil {
		t.Errorf("Config(16384): %v", err)
	}
}
