package kernels

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/engine"
)

// Limits are what a family's launch shapes must fit on one device: the device's limits at
// first, lowered by Fit to what the compiled kernels allow. Families derive their work-group
// sizes, tiles and local-memory use from a Limits, never from constants alone.
type Limits struct {
	// Device is the device the family is built for.
	Device *engine.Device
	// WorkGroup is the most work-items one work-group may have (0: no limit known).
	WorkGroup int
	// ItemSizes are the most work-items per dimension (0: no limit known).
	ItemSizes [3]int
	// LocalBytes is the local (shared) memory one work-group may use without an opt-in
	// (0: not reported).
	LocalBytes int64
	// LimitedBy names the compiled kernel whose own limit lowered WorkGroup below the
	// device's ("" while WorkGroup is the device's).
	LimitedBy string
}

// The environment variables that lower the limits Prism assumes for every device, to run
// the suite as a device with fewer work-items per group or less local memory would (the
// tests use them to cover the small shapes on any device). They only lower limits.
const (
	EnvMaxWorkGroup  = "PRISM_MAX_WORK_GROUP"
	EnvMaxLocalBytes = "PRISM_MAX_LOCAL_MEMORY"
)

// DeviceLimits returns the limits of dev as it reports them, lowered by
// PRISM_MAX_WORK_GROUP and PRISM_MAX_LOCAL_MEMORY (bytes) where they are set to a positive
// integer. Any other value is ignored here (and said in the trace): CheckEnv reports it,
// and the prism command refuses it before any device work.
func DeviceLimits(dev *engine.Device) Limits {
	info := dev.Info()
	l := Limits{Device: dev, WorkGroup: info.MaxWorkGroupSize, ItemSizes: info.MaxWorkItemSizes, LocalBytes: info.LocalMemBytes}
	if n := envLimit(EnvMaxWorkGroup); n > 0 && (l.WorkGroup <= 0 || n < int64(l.WorkGroup)) {
		l.WorkGroup = int(n)
		for i := range l.ItemSizes {
			if l.ItemSizes[i] <= 0 || l.ItemSizes[i] > l.WorkGroup {
				l.ItemSizes[i] = l.WorkGroup
			}
		}
	}
	if n := envLimit(EnvMaxLocalBytes); n > 0 && (l.LocalBytes <= 0 || n < l.LocalBytes) {
		l.LocalBytes = n
	}
	return l
}

// envLimit returns the positive integer in the environment variable name, or 0 where it
// is unset, empty or not one (said in the trace).
func envLimit(name string) int64 {
	n, err := parseEnvLimit(name)
	if err != nil {
		engine.Tracef("%v: ignored", err)
	}
	return n
}

// parseEnvLimit returns the positive integer in the environment variable name, 0 where it
// is unset or empty, and an error wrapping engine.ErrInvalidArg, naming the variable and
// its value, where it holds anything else.
func parseEnvLimit(name string) (int64, error) {
	v := os.Getenv(name)
	if strings.TrimSpace(v) == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("kernels: %s=%q: want a positive whole number (it lowers the limit every device reports): %w", name, v, engine.ErrInvalidArg)
	}
	return n, nil
}

// CheckEnv returns an error wrapping engine.ErrInvalidArg, naming the variable and its
// value, when PRISM_MAX_WORK_GROUP or PRISM_MAX_LOCAL_MEMORY is set to anything but a
// positive whole number: DeviceLimits would ignore it, and the limits the user meant to
// lower would stay as the device reports them.
func CheckEnv() error {
	for _, name := range []string{EnvMaxWorkGroup, EnvMaxLocalBytes} {
		if _, err := parseEnvLimit(name); err != nil {
			return err
		}
	}
	return nil
}

// Group returns the work-group size a family uses under l: want, halved until l allows it
// (a power of two when want is one), at least 1.
func (l Limits) Group(want int) int {
	wg := want
	for l.WorkGroup > 0 && wg > l.WorkGroup {
		wg /= 2
	}
	return max(wg, 1)
}

// Fits reports whether a work-group of x by y items fits l.
func (l Limits) Fits(x, y int) bool {
	if l.WorkGroup > 0 && x*y > l.WorkGroup {
		return false
	}
	if m := l.ItemSizes; (m[0] > 0 && x > m[0]) || (m[1] > 0 && y > m[1]) {
		return false
	}
	return true
}

// Shape is what one build of a family launches: the most work-items of any of its
// work-groups, and the kernels launched with it.
type Shape struct {
	Items   int
	Kernels []*engine.Kernel
}

// Fit builds a family with the shapes build derives from the limits it is given, starting
// from DeviceLimits(dev). When a compiled kernel allows fewer work-items per group than
// the shape uses (its registers, or an implementation's per-kernel limit, as Mesa's Rusticl
// reports 32 for every kernel), Fit closes that build and builds again under the lower
// limit, until the shape fits. build returns an error wrapping engine.ErrUnsupported,
// naming the limit, when no shape of the family fits the limits it is given; Fit returns
// it, and its own such error when the kernels refuse even the smallest shape.
func Fit[F interface{ Close() error }](dev *engine.Device, family string, build func(Limits) (F, Shape, error)) (F, error) {
	var zero F
	if dev == nil {
		return zero, fmt.Errorf("kernels: %s: nil device: %w", family, engine.ErrInvalidArg)
	}
	lim := DeviceLimits(dev)
	for {
		f, shape, err := build(lim)
		if err != nil {
			return zero, err
		}
		least, name := 0, ""
		var local int64
		localName := ""
		for _, k := range shape.Kernels {
			if m := k.MaxWorkGroupSize(); m > 0 && (least == 0 || m < least) {
				least, name = m, k.Name()
			}
			if b := k.Attributes().LocalBytes; b > local {
				local, localName = b, k.Name()
			}
		}
		localFits := lim.LocalBytes <= 0 || local <= lim.LocalBytes
		if (least == 0 || least >= shape.Items) && localFits {
			return f, nil
		}
		if err := f.Close(); err != nil {
			return zero, err
		}
		if !localFits {
			// Local arrays sized by the work-group: build again with half as many items.
			if shape.Items <= 1 {
				return zero, TooSmall(family, lim, fmt.Sprintf("%d bytes of local memory in %s", local, localName))
			}
			lim.WorkGroup, lim.LimitedBy = shape.Items/2, localName+"'s local memory"
			continue
		}
		if lim.WorkGroup > 0 && least >= lim.WorkGroup {
			// The kernel allows what the limits allowed, yet the shape used more: the
			// family's shape ignores its limits.
			return zero, fmt.Errorf("kernels: %s: a work-group of %d items exceeds the limit of %d it was built for: %w", family, shape.Items, lim.WorkGroup, engine.ErrInvalidArg)
		}
		lim.WorkGroup = least
		for i := range lim.ItemSizes {
			if lim.ItemSizes[i] <= 0 || lim.ItemSizes[i] > least {
				lim.ItemSizes[i] = least
			}
		}
		lim.LimitedBy = name
	}
}

// TooSmall returns the error of a family whose smallest shape does not fit lim: it names
// the device, what the family needs and the limit that stops it, and wraps
// engine.ErrUnsupported.
func TooSmall(family string, lim Limits, need string) error {
	id := "the device"
	if lim.Device != nil {
		id = lim.Device.ID()
	}
	return fmt.Errorf("kernels: %s: %s allows %s; the family needs %s: %w", family, id, lim.describe(), need, engine.ErrUnsupported)
}

// describe says what l allows, for errors.
func (l Limits) describe() string {
	s := "work-groups of any size"
	if l.WorkGroup > 0 {
		s = fmt.Sprintf("work-groups of %d items", l.WorkGroup)
		if l.LimitedBy != "" {
			s += " (the limit of its compiled " + l.LimitedBy + ")"
		}
	}
	if l.LocalBytes > 0 {
		s += fmt.Sprintf(" and %d bytes of local memory", l.LocalBytes)
	}
	return s
}

// Ref is a kernel of a program to look up by name, and where to keep it.
type Ref struct {
	Dst  **engine.Kernel
	Name string
}

// LoadKernels looks each kernel of refs up in prog, stores it through its Dst and returns
// them in order (for Shape.Kernels). On error the kernels found so far stay stored, for the
// caller's Close.
func LoadKernels(prog *engine.Program, refs ...Ref) ([]*engine.Kernel, error) {
	out := make([]*engine.Kernel, 0, len(refs))
	for _, r := range refs {
		k, err := prog.Kernel(r.Name)
		if err != nil {
			return nil, err
		}
		*r.Dst = k
		out = append(out, k)
	}
	return out, nil
}
