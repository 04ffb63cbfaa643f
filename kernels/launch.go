package kernels

import (
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
)

// CheckGroups refuses a launch of groups work-groups of wg items when it would exceed 2^32-1
// work-items in all, with an error naming op and wrapping engine.ErrInvalidArg.
func CheckGroups(op string, groups, wg int) error {
	if groups > math.MaxUint32/wg {
		return fmt.Errorf("kernels: %s: %d work-groups of %d items exceed 2^32-1 work-items: %w", op, groups, wg, engine.ErrInvalidArg)
	}
	return nil
}

// LenOf returns b.Len(), or 0 for a nil buffer (for the error that says a scratch buffer is
// missing or short).
func LenOf[T engine.Scalar](b *engine.Buffer[T]) int {
	if b == nil {
		return 0
	}
	return b.Len()
}
