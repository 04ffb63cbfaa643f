package enginetest

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// testOccupancy asks each suite kernel's occupancy at block sizes up to its limit: a
// backend that cannot tell answers ErrUnsupported for every one; one that can gives the
// block size asked, at least one resident block (a kernel that launches with the block
// has one), and warps and a fraction consistent with them (a limiter it cannot name is
// logged). A block beyond the kernel's limit is refused with ErrInvalidArg.
func (s *suite) testOccupancy(t *testing.T) {
	for _, name := range slices.Sorted(maps.Keys(suitekernels.NumArgs)) {
		t.Run(name, func(t *testing.T) {
			k := s.kernel(t, name)
			for _, block := range []int{1, 32, 64, k.MaxWorkGroupSize()} {
				if block > k.MaxWorkGroupSize() {
					continue
				}
				o, err := k.Occupancy(block, 0)
				if errors.Is(err, engine.ErrUnsupported) {
					t.Logf("block %d: %v", block, err)
					continue
				}
				if err != nil {
					t.Fatalf("block %d: %v", block, err)
				}
				t.Logf("block %d: %+v", block, o)
				switch {
				case o.BlockSize != block || o.ActiveBlocks < 1:
					t.Errorf("block %d: %+v; want the block size and at least one block", block, o)
				case o.MaxWarps > 0 && (o.ActiveWarps < o.ActiveBlocks || o.ActiveWarps > o.MaxWarps || o.Fraction != float64(o.ActiveWarps)/float64(o.MaxWarps)):
					t.Errorf("block %d: %+v; want 1 to MaxWarps warps and their fraction", block, o)
				case o.Limiter == engine.LimitUnknown:
					t.Logf("block %d: no limiter: the backend's limits do not explain its figure", block)
				}
			}
			if _, err := k.Occupancy(k.MaxWorkGroupSize()+1, 0); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("a block beyond the kernel's limit of %d: %v; want ErrInvalidArg", k.MaxWorkGroupSize(), err)
			}
		})
	}
}
