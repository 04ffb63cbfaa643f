package bench

import (
	"errors"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/engine"
)

// Launch is one kernel a case launched, at one work-group shape, with what the backend
// reports of the kernel on its device: its resources and, where the backend can tell
// (CUDA), its theoretical occupancy at that shape. Zero fields were not reported.
type Launch struct {
	// Kernel is the kernel function's name.
	Kernel string `json:"kernel"`
	// Block is the local size (work-group, block) in each dimension of the launch.
	Block []int `json:"block"`
	// DynamicSharedBytes is the dynamic shared memory of each work-group
	// (Range.SharedBytes).
	DynamicSharedBytes int64 `json:"dynamic_shared_bytes,omitempty"`
	// Registers, LocalBytes, PrivateBytes, MaxWorkGroupSize and PreferredMultiple are the
	// kernel's attributes (engine.KernelAttributes): registers per work-item, static
	// local (shared) memory, private memory per work-item beyond registers, the largest
	// work-group it launches with, and the preferred multiple of work-group sizes.
	Registers         int   `json:"registers,omitempty"`
	LocalBytes        int64 `json:"local_bytes,omitempty"`
	PrivateBytes      int64 `json:"private_bytes,omitempty"`
	MaxWorkGroupSize  int   `json:"max_work_group_size,omitempty"`
	PreferredMultiple int   `json:"preferred_multiple,omitempty"`
	// ActiveBlocks is the number of work-groups resident on one multiprocessor at once,
	// Occupancy the fraction of its warps they fill, Limiter the resource that bounds
	// them (engine.Occupancy); absent where the backend cannot tell (OpenCL).
	ActiveBlocks int     `json:"active_blocks_per_sm,omitempty"`
	Occupancy    float64 `json:"occupancy,omitempty"`
	Limiter      string  `json:"limiter,omitempty"`
	// Count is how many launches of the run this entry stands for (a multi-pass op
	// launches one kernel several times); 0 in reports written before it was counted,
	// which count each entry once.
	Count int `json:"count,omitempty"`
}

// launchCount is the launches the entries stand for (an entry without a Count, one).
func launchCount(ls []Launch) int {
	n := 0
	for _, l := range ls {
		n += max(l.Count, 1)
	}
	return n
}

// BlockString formats the block as its dimensions joined by x ("256", "16x16").
func (l Launch) BlockString() string {
	parts := make([]string, len(l.Block))
	for i, n := range l.Block {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, "x")
}

// maxLaunches bounds the launches a result records: an op launches a few kernels, and a
// case beyond this many distinct shapes records the first ones.
const maxLaunches = 64

// LaunchesOf describes the launches a Queue.Timed call recorded (Queue.TimedLaunches):
// one Launch per kernel, block and dynamic shared memory, in the order of their first
// launch (launches that differ only in their global size are one, their Count the
// launches it stands for). Each kernel's
// attributes come from Kernel.Attributes, its occupancy from Kernel.Occupancy, left out
// where the backend does not report it; an error other than ErrUnsupported leaves it out
// too, and is returned (with the launches) for the caller to report.
func LaunchesOf(notes []engine.LaunchNote) ([]Launch, error) {
	type key struct {
		k      *engine.Kernel
		block  [3]int
		shared int64
	}
	var (
		out  []Launch
		errs []error
	)
	seen := map[key]int{} // index in out
	for _, n := range notes {
		if n.Kernel == nil {
			continue
		}
		kk := key{n.Kernel, n.Range.Local, n.Range.SharedBytes}
		if i, ok := seen[kk]; ok {
			out[i].Count++
			continue
		}
		if len(out) >= maxLaunches {
			continue
		}
		seen[kk] = len(out)
		a := n.Kernel.Attributes()
		l := Launch{
			Kernel:             n.Kernel.Name(),
			Block:              append([]int(nil), n.Range.Local[:max(min(n.Range.Dims, 3), 1)]...),
			DynamicSharedBytes: n.Range.SharedBytes,
			Registers:          a.Registers,
			LocalBytes:         a.LocalBytes,
			PrivateBytes:       a.PrivateBytes,
			MaxWorkGroupSize:   a.MaxWorkGroupSize,
			PreferredMultiple:  a.PreferredMultiple,
			Count:              1,
		}
		o, err := n.Occupancy()
		switch {
		case err == nil:
			l.ActiveBlocks, l.Occupancy, l.Limiter = o.ActiveBlocks, o.Fraction, string(o.Limiter)
		case !errors.Is(err, engine.ErrUnsupported):
			errs = append(errs, err)
		}
		out = append(out, l)
	}
	return out, errors.Join(errs...)
}
