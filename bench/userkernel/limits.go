package userkernel

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// The checks of this file hold what the user declared (buffer sizes, the global size)
// against what the host and the device have, before anything of that size is made or
// launched, and say which argument or dimension asked for how much, and the limit.

// hostCopies is how many host copies of a buffer a run holds at most: its initial values,
// and for an output the copy read back after the first run.
func hostCopies(kind string) int64 {
	if kind == Out || kind == InOut {
		return 2
	}
	return 1
}

// hostAvailable returns the host memory available to new allocations
// (bench.HostAvailable). A variable, for tests.
var hostAvailable = bench.HostAvailable

// checkHost refuses a buffer of n elements of a kind whose host copies, with reserved
// bytes of the buffers before it, exceed the host's available memory. The error names
// the size asked and the limit and wraps engine.ErrOutOfMemory.
func checkHost(kind string, n, size int, reserved int64) error {
	need := int64(n) * int64(size) * hostCopies(kind)
	avail := hostAvailable()
	if avail <= 0 || reserved+need <= avail {
		return nil
	}
	what := "its initial values"
	if hostCopies(kind) > 1 {
		what = "its initial values and the copy read back"
	}
	if reserved > 0 {
		return fmt.Errorf("%s elements need %s of host memory (%s) beside the %s of the buffers before it; %s is available: %w",
			bench.FormatSize(n), bench.FormatBytes(need), what, bench.FormatBytes(reserved), bench.FormatBytes(avail), engine.ErrOutOfMemory)
	}
	return fmt.Errorf("%s elements need %s of host memory (%s); %s is available: %w",
		bench.FormatSize(n), bench.FormatBytes(need), what, bench.FormatBytes(avail), engine.ErrOutOfMemory)
}

// CheckDevice refuses, before any buffer is made on dev, arguments that dev cannot hold:
// a buffer above the device's largest allocation, or buffers together above its global
// memory less what is allocated on it already. The error names the argument, the size
// asked and the limit, and wraps engine.ErrOutOfMemory. Run calls it; a caller that opens
// devices after parsing its arguments may call it first, to refuse before a build.
func CheckDevice(dev *engine.Device, args []*Arg) error {
	info := dev.Info()
	var total int64
	for _, a := range args {
		if a.Kind != Buf && a.Kind != Out && a.Kind != InOut {
			continue
		}
		b := int64(a.Len) * int64(a.Type.Size)
		if m := info.MaxAllocBytes; m > 0 && b > m {
			return &ArgError{a.Index, a.Spec, fmt.Errorf("%s of %s is above the largest buffer %s (%s) allocates, %s: %w",
				bench.FormatBytes(b), a.Type.Name, dev.ID(), info.Name, bench.FormatBytes(m), engine.ErrOutOfMemory)}
		}
		total += b
		if g := info.GlobalMemBytes - dev.AllocatedBytes(); info.GlobalMemBytes > 0 && total > g {
			return &ArgError{a.Index, a.Spec, fmt.Errorf("the buffers up to this one need %s of device memory; %s (%s) has %s free of %s: %w",
				bench.FormatBytes(total), dev.ID(), info.Name, bench.FormatBytes(max(g, 0)), bench.FormatBytes(info.GlobalMemBytes), engine.ErrOutOfMemory)}
		}
	}
	return nil
}

// maxOpenCLGroups is the most work-groups one OpenCL launch may have: PoCL (3.1, its
// pthread scheduler) and Mesa's llvmpipe (22.3) count a launch's work-groups in 32 bits;
// more wrap around, and the launch aborts inside PoCL (an assertion) or does nothing at
// all (Mesa, and PoCL where the count wraps to zero) while the call succeeds.
const maxOpenCLGroups = math.MaxUint32

// CheckRange refuses a launch range, its local size chosen (Kernel.Resolve), that dev
// cannot run as asked: more work-items than a 64-bit size_t counts (get_global_size and
// get_global_linear_id would wrap) or, on OpenCL, more than 2^32-1 work-groups. The error
// gives the numbers and is a *FitError (the range given, not the device, is at fault).
func CheckRange(dev *engine.Device, r engine.Range) error {
	items, groups := uint64(1), uint64(1)
	var itemsOver, groupsOver bool
	for i := 0; i < r.Dims; i++ {
		g, l := uint64(r.Global[i]), uint64(max(r.Local[i], 1))
		hi, lo := bits.Mul64(items, g)
		itemsOver = itemsOver || hi != 0 || lo > math.MaxInt64
		items = lo
		hi, lo = bits.Mul64(groups, g/l)
		groupsOver = groupsOver || hi != 0
		groups = lo
	}
	global, local := dimsText(r.Global[:r.Dims]), dimsText(r.Local[:r.Dims])
	switch {
	case itemsOver:
		return &FitError{fmt.Errorf("userkernel: global size %s is %s work-items, more than a 64-bit size_t counts (2^63): %w",
			global, powerText(r.Global[:r.Dims], nil), engine.ErrInvalidArg)}
	case dev.Backend() == "opencl" && (groupsOver || groups > maxOpenCLGroups):
		return &FitError{fmt.Errorf("userkernel: global size %s in work-groups of %s is %s work-groups; %s (%s) runs at most %d (4G-1) in one launch: a larger --local or a smaller --global: %w",
			global, local, powerText(r.Global[:r.Dims], r.Local[:r.Dims]), dev.ID(), dev.Info().Name, uint64(maxOpenCLGroups), engine.ErrInvalidArg)}
	}
	return nil
}

// dimsText formats dimensions as 2147483648x2147483648.
func dimsText(d []int) string {
	s := make([]string, len(d))
	for i, v := range d {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, "x")
}

// powerText formats the product of the dimensions d (each divided by local's where
// given) exactly where it fits 64 bits, else as a power of two (about 2^90).
func powerText(d, local []int) string {
	p, log2 := uint64(1), 0.0
	over := false
	for i, v := range d {
		if local != nil {
			v /= max(local[i], 1)
		}
		hi, lo := bits.Mul64(p, uint64(v))
		over = over || hi != 0
		p = lo
		log2 += math.Log2(float64(v))
	}
	if over {
		return fmt.Sprintf("about 2^%.0f", log2)
	}
	return strconv.FormatUint(p, 10)
}
