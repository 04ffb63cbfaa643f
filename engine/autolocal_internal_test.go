package engine

import (
	"errors"
	"fmt"
	"testing"
)

// TestChooseLocal checks the rule of Auto on shapes and limits chosen to exercise each of
// its steps; every result must also pass checkRange.
func TestChooseLocal(t *testing.T) {
	rusticl := localLimits{maxWG: 32, maxItems: [3]int{1024, 1024, 1024}}
	pocl := localLimits{maxWG: 4096, maxItems: [3]int{4096, 4096, 4096}, multiple: 8}
	gpu := localLimits{maxWG: 1024, maxItems: [3]int{1024, 1024, 64}, multiple: 32}
	for _, c := range []struct {
		name string
		r    Range
		lim  localLimits
		want [3]int
	}{
		{"1D one item", Range1D(1, Auto), gpu, [3]int{1, 1, 1}},
		{"1D small prime", Range1D(7, Auto), gpu, [3]int{7, 1, 1}},
		{"1D prime", Range1D(257, Auto), gpu, [3]int{1, 1, 1}},
		{"1D power of two", Range1D(1<<20, Auto), gpu, [3]int{256, 1, 1}},
		{"1D power of two, Rusticl", Range1D(1<<20, Auto), rusticl, [3]int{32, 1, 1}},
		{"1D 17*241", Range1D(4097, Auto), pocl, [3]int{241, 1, 1}},
		{"1D 17*241, Rusticl", Range1D(4097, Auto), rusticl, [3]int{17, 1, 1}},
		{"1D no limits", Range1D(1000, Auto), localLimits{}, [3]int{250, 1, 1}},
		{"1D a warp multiple at least half as large", Range1D(288, Auto), gpu, [3]int{96, 1, 1}},
		{"1D no warp multiple divides", Range1D(1000, Auto), gpu, [3]int{250, 1, 1}},
		{"1D per-dimension limit", Range1D(4096, Auto), localLimits{maxItems: [3]int{64, 64, 64}}, [3]int{64, 1, 1}},
		{"1D kernel limit", Range1D(4096, Auto), localLimits{maxWG: 100}, [3]int{64, 1, 1}},
		{"2D square", Range2D(4096, 4096, Auto, Auto), gpu, [3]int{16, 16, 1}},
		{"2D square, Rusticl", Range2D(64, 64, Auto, Auto), rusticl, [3]int{8, 4, 1}},
		{"2D one row grows dimension 0", Range2D(1024, 1, Auto, Auto), gpu, [3]int{256, 1, 1}},
		{"2D 1000x1000", Range2D(1000, 1000, Auto, Auto), localLimits{maxWG: 4096}, [3]int{25, 10, 1}},
		{"2D 1000x1000, a multiple of 8", Range2D(1000, 1000, Auto, Auto), pocl, [3]int{20, 10, 1}},
		{"2D prime rows", Range2D(257, 5, Auto, Auto), gpu, [3]int{1, 5, 1}},
		{"2D dimension 1 given", Range2D(256, 6, Auto, 2), gpu, [3]int{128, 2, 1}},
		{"2D dimension 0 given", Range2D(8, 64, 8, Auto), gpu, [3]int{8, 32, 1}},
		{"3D cube", Range3D(64, 64, 64, Auto, Auto, Auto), gpu, [3]int{8, 8, 4}},
		{"3D cube, Rusticl", Range3D(16, 16, 16, Auto, Auto, Auto), rusticl, [3]int{4, 4, 2}},
		{"3D z limited to 1", Range3D(16, 16, 16, Auto, Auto, Auto), localLimits{maxItems: [3]int{256, 256, 1}}, [3]int{16, 16, 1}},
		{"3D primes", Range3D(7, 5, 3, Auto, Auto, Auto), rusticl, [3]int{7, 1, 3}},
		{"required", Range3D(12, 10, 2, Auto, Auto, Auto), localLimits{maxWG: 256, required: [3]int{4, 2, 1}}, [3]int{4, 2, 1}},
		{"no Auto", Range1D(1024, 64), gpu, [3]int{64, 1, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := chooseLocal(c.r, c.lim)
			if err != nil {
				t.Fatalf("chooseLocal(%+v, %+v): %v", c.r, c.lim, err)
			}
			if got.Local != c.want || got.Global != c.r.Global || got.Dims != c.r.Dims {
				t.Errorf("chooseLocal(%+v, %+v) = %+v, want local %v", c.r, c.lim, got, c.want)
			}
			if err := checkRange(got, c.lim.maxWG, c.lim.maxItems); err != nil {
				t.Errorf("the choice %v is refused: %v", got.Local, err)
			}
		})
	}
}

// TestChooseLocalExhaustive checks, for every 1D and 2D global size up to a bound under
// several limits, that the choice divides the global size, fits the limits, and that no
// larger divisor of a 1D size fits (with no preferred multiple).
func TestChooseLocalExhaustive(t *testing.T) {
	for _, lim := range []localLimits{{maxWG: 32}, {maxWG: 256, maxItems: [3]int{64, 64, 64}}, {maxWG: 1024, multiple: 32}} {
		for g := 1; g <= 1100; g++ {
			r, err := chooseLocal(Range1D(g, Auto), lim)
			if err == nil {
				err = checkRange(r, lim.maxWG, lim.maxItems)
			}
			if err != nil {
				t.Fatalf("%+v, global %d: %v", lim, g, err)
			}
			if lim.multiple == 0 {
				limit := min(g, lim.maxWG, autoItems)
				if m := lim.maxItems[0]; m > 0 {
					limit = min(limit, m)
				}
				for l := r.Local[0] + 1; l <= limit; l++ {
					if g%l == 0 {
						t.Fatalf("%+v, global %d: chose %d, %d also fits", lim, g, r.Local[0], l)
					}
				}
			}
		}
		for gx := 1; gx <= 70; gx++ {
			for gy := 1; gy <= 70; gy++ {
				r, err := chooseLocal(Range2D(gx, gy, Auto, Auto), lim)
				if err == nil {
					err = checkRange(r, lim.maxWG, lim.maxItems)
				}
				if err != nil {
					t.Fatalf("%+v, global %dx%d: %v", lim, gx, gy, err)
				}
			}
		}
	}
}

// TestChooseLocalRefuses checks what chooseLocal leaves for checkRange to refuse, and
// what it refuses itself.
func TestChooseLocalRefuses(t *testing.T) {
	lim := localLimits{maxWG: 256}
	for _, r := range []Range{
		Range1D(0, Auto),
		Range1D(-5, Auto),
		Range2D(8, 8, Auto, -1),
		{Dims: 4, Global: [3]int{8, 1, 1}},
		Range2D(64, 512, Auto, 512), // the given dimension alone exceeds the limit
	} {
		t.Run(fmt.Sprintf("%dD/global=%v/local=%v", r.Dims, r.Global, r.Local), func(t *testing.T) {
			got, err := chooseLocal(r, lim)
			if err != nil {
				t.Fatalf("chooseLocal: %v", err)
			}
			if err := checkRange(got, lim.maxWG, lim.maxItems); !errors.Is(err, ErrInvalidArg) {
				t.Errorf("checkRange(%+v) = %v, want ErrInvalidArg", got, err)
			}
		})
	}
	_, err := chooseLocal(Range1D(10, Auto), localLimits{required: [3]int{4, 1, 1}})
	if !errors.Is(err, ErrInvalidArg) {
		t.Errorf("a global size of 10 for a required work-group of 4: %v, want ErrInvalidArg", err)
	}
}
