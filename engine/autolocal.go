package engine

import "fmt"

// Auto, given as a Range's local size in a dimension, lets the launch choose the
// work-group size there, within the limits of the kernel and its device:
//
//	q.Launch(k, engine.Range1D(n, engine.Auto), x, y, int32(n))
//
// The launch covers exactly the global range given: the size chosen divides the global
// size in every dimension, so the kernel sees get_global_size as asked and no work-item
// runs outside the range (OpenCL 1.2 and CUDA launch whole work-groups only). The rule,
// which Kernel.Resolve applies and reports:
//
//   - A kernel that requires a work-group size (reqd_work_group_size, reported in
//     KernelAttributes.RequiredWorkGroupSize) gets it; a global size that is not a
//     multiple of it is refused with ErrInvalidArg.
//   - Otherwise a work-group of at most 256 work-items, fewer where the compiled kernel
//     allows fewer (Kernel.MaxWorkGroupSize: CL_KERNEL_WORK_GROUP_SIZE, CUDA's
//     maxThreadsPerBlock; Mesa's Rusticl reports 32 for every kernel) or the device's
//     per-dimension limits do (DeviceInfo.MaxWorkItemSizes). It starts from 256, 16x16
//     or 8x8x4 items, halved in its largest dimension (the last of equals) until it
//     fits; each dimension then takes the largest divisor of its global size up to that
//     share, and the dimensions, in order, grow to the largest divisor that still fits
//     the group.
//   - Where the group is not a multiple of the kernel's preferred multiple
//     (KernelAttributes.PreferredMultiple: the warp on NVIDIA GPUs), a group that is and
//     holds at least half as many items is taken instead, changing the first chosen
//     dimension only.
//
// A dimension given a local size keeps it; the others are chosen around it.
//
// A global size without a divisor near the limit (a large prime) gets small work-groups,
// down to one work-item: correct, but slow on a GPU. Where the kernel checks its bounds,
// round such a size up and let Auto choose within it:
//
//	engine.Range1D(engine.RoundUp(n, 64), engine.Auto) // the kernel ignores items >= n
const Auto = 0

// autoItems is the most work-items an Auto work-group holds: a few groups fill a GPU's
// multiprocessor, and it amortizes a CPU device's per-group costs.
const autoItems = 256

// autoShapes are the starting shapes of an Auto work-group, by number of dimensions.
var autoShapes = [4][3]int{{}, {autoItems, 1, 1}, {16, 16, 1}, {8, 8, 4}}

// localLimits are what bounds the work-group of a kernel on its device.
type localLimits struct {
	maxWG    int    // the kernel's largest work-group; 0 for no limit
	maxItems [3]int // the device's limit per dimension; 0 for none
	multiple int    // the preferred multiple of a work-group's size; 0 or 1 for none
	required [3]int // the work-group size the kernel requires; all 0 for none
}

// limits returns k's work-group limits on its device.
func (k *Kernel) limits() localLimits {
	return localLimits{
		maxWG:    k.maxWG,
		maxItems: k.dev.info.MaxWorkItemSizes,
		multiple: k.attrs.PreferredMultiple,
		required: k.attrs.RequiredWorkGroupSize,
	}
}

// chooseLocal returns r with its Auto local sizes chosen within lim by the rule of Auto.
// A range whose shape is not valid (dimensions, a global size that is not positive, a
// negative local size) comes back as it is, for checkRange to refuse.
func chooseLocal(r Range, lim localLimits) (Range, error) {
	if r.Dims < 1 || r.Dims > 3 {
		return r, nil
	}
	auto := false
	fixed := 1 // the items of the dimensions given a local size
	for i := range r.Dims {
		switch l := r.Local[i]; {
		case r.Global[i] <= 0 || l < 0:
			return r, nil
		case l == Auto:
			auto = true
		default:
			fixed *= l
		}
	}
	if !auto {
		return r, nil
	}
	if lim.required != [3]int{} {
		for i := range r.Dims {
			if r.Local[i] != Auto {
				continue
			}
			req := max(lim.required[i], 1)
			if r.Global[i]%req != 0 {
				return r, fmt.Errorf("range dimension %d: global size %d is not a multiple of %d, the kernel's required work-group size %v (reqd_work_group_size): %w",
					i, r.Global[i], req, lim.required, ErrInvalidArg)
			}
			r.Local[i] = req
		}
		return r, nil
	}

	budget := autoItems
	if lim.maxWG > 0 {
		budget = min(budget, lim.maxWG)
	}
	budget = max(budget/fixed, 1) // the items left for the chosen dimensions
	var (
		limit [3]int // the most a chosen dimension may hold, whatever the others hold
		share [3]int // a chosen dimension's share of the starting shape
	)
	items := 1
	for i := range r.Dims {
		if r.Local[i] != Auto {
			continue
		}
		limit[i] = min(r.Global[i], budget)
		if m := lim.maxItems[i]; m > 0 {
			limit[i] = min(limit[i], m)
		}
		share[i] = autoShapes[r.Dims][i]
		items *= share[i]
	}
	for items > budget {
		big := -1
		for i := range r.Dims {
			if r.Local[i] == Auto && (big < 0 || share[i] >= share[big]) { // the last: dimension 0 stays widest
				big = i
			}
		}
		if share[big] == 1 {
			break
		}
		items /= share[big]
		share[big] /= 2
		items *= share[big]
	}
	local := r.Local
	for i := range r.Dims {
		if r.Local[i] == Auto {
			local[i] = largestDivisor(r.Global[i], min(share[i], limit[i]))
		}
	}
	size := func() int {
		n := 1
		for i := range r.Dims {
			if r.Local[i] == Auto {
				n *= local[i]
			}
		}
		return n
	}
	first := -1
	for i := range r.Dims {
		if r.Local[i] != Auto {
			continue
		}
		if first < 0 {
			first = i
		}
		rest := size() / local[i]
		local[i] = largestDivisor(r.Global[i], min(limit[i], budget/rest))
	}
	if m := lim.multiple; m > 1 && (size()*fixed)%m != 0 {
		n := size() * fixed
		rest := size() / local[first] // the other chosen dimensions' items
		for l := min(limit[first], budget/rest); l >= 1 && 2*l*rest*fixed >= n; l-- {
			if r.Global[first]%l == 0 && (l*rest*fixed)%m == 0 {
				local[first] = l
				break
			}
		}
	}
	r.Local = local
	return r, nil
}

// largestDivisor returns the largest divisor of g (positive) that is at most c, 1 when c
// is below 2.
func largestDivisor(g, c int) int {
	for l := min(c, g); l > 1; l-- {
		if g%l == 0 {
			return l
		}
	}
	return 1
}

// autoShape is the part of a Range that Auto's choice depends on, for a kernel whose
// limits do not change.
type autoShape struct {
	dims          int
	global, local [3]int
}

// autoChoice remembers a kernel's last Auto choice, so that repeated launches of one
// shape choose once; its zero value matches no shape (dims is 0).
type autoChoice struct {
	shape autoShape
	local [3]int
}

// resolve returns r with its Auto local sizes chosen for k, unchecked otherwise.
func (k *Kernel) resolve(r Range) (Range, error) {
	auto := false
	for i := 0; i < r.Dims && i < 3; i++ {
		auto = auto || r.Local[i] == Auto
	}
	if !auto {
		return r, nil
	}
	shape := autoShape{dims: r.Dims, global: r.Global, local: r.Local}
	k.autoMu.Lock()
	last := k.auto
	k.autoMu.Unlock()
	if last.shape == shape {
		r.Local = last.local
		return r, nil
	}
	out, err := chooseLocal(r, k.limits())
	if err != nil {
		return r, err
	}
	k.autoMu.Lock()
	k.auto = autoChoice{shape: shape, local: out.Local}
	k.autoMu.Unlock()
	return out, nil
}

// Resolve returns r as a launch of k runs it: every Auto local size chosen by the rule
// of Auto, and the range checked as Launch checks it against the kernel's and the
// device's limits (ErrInvalidArg) and the device's launch features (ErrUnsupported).
// Tools call it to report or record the work-group size of a launch:
//
//	r, err := k.Resolve(engine.Range2D(w, h, engine.Auto, engine.Auto))
//	fmt.Println(r.Local) // [16 16 1] where the kernel and device allow 256 items
func (k *Kernel) Resolve(r Range) (Range, error) {
	if k == nil {
		return r, fmt.Errorf("engine: resolve a range: nil kernel: %w", ErrInvalidArg)
	}
	if err := k.check(); err != nil {
		return r, err
	}
	out, err := k.resolve(r)
	if err == nil {
		err = checkRange(out, k.maxWG, k.dev.info.MaxWorkItemSizes)
	}
	if err == nil {
		err = checkOptions(out, k, k.dev)
	}
	if err != nil {
		return r, fmt.Errorf("engine: launch %s: %w", k.name, err)
	}
	return out, nil
}
