package kernels

import (
	"embed"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strings"

	"github.com/prism-compute/prism/engine"
)

//go:embed *.cl
var sources embed.FS

// Source returns the OpenCL C text of a kernel family ("stream").
func Source(family string) (string, error) {
	b, err := sources.ReadFile(family + ".cl")
	if err != nil {
		return "", fmt.Errorf("kernels: no family %q (have %s): %w", family, strings.Join(Families(), ", "), engine.ErrNotFound)
	}
	return string(b), nil
}

// Families lists the kernel families, sorted.
func Families() []string {
	names, _ := fs.Glob(sources, "*.cl")
	for i, n := range names {
		names[i] = strings.TrimSuffix(n, ".cl")
	}
	sort.Strings(names)
	return names
}

// build compiles a family with options and returns the program.
func build(dev *engine.Device, family string, opts ...string) (*engine.Program, error) {
	src, err := Source(family)
	if err != nil {
		return nil, err
	}
	return dev.Build(src, opts...)
}

// workGroup returns the work-group size a family uses on dev: want, halved until the device
// allows it (always a power of two).
func workGroup(dev *engine.Device, want int) int {
	wg := want
	for m := dev.Info().MaxWorkGroupSize; m > 0 && wg > m; {
		wg /= 2
	}
	return max(wg, 1)
}

// CheckGroups refuses a launch of groups work-groups of wg items when it would exceed 2^32-1
// work-items in all, with an error naming op and wrapping engine.ErrInvalidArg.
func CheckGroups(op string, groups, wg int) error {
	if groups > math.MaxUint32/wg {
		return fmt.Errorf("kernels: %s: %d work-groups of %d items exceed 2^32-1 work-items: %w", op, groups, wg, engine.ErrInvalidArg)
	}
	return nil
}

// Model is the work an operation must do: floating-point operations and bytes moved to and
// from device memory. The benchmark divides them by time for GFLOP/s and GB/s.
type Model struct {
	Flops float64
	Bytes float64
}

// Header returns the header comment a family's .cl file opens with (purpose, arguments,
// tunables with defaults, variants, launch), without the comment markers.
func Header(family string) (string, error) {
	src, err := Source(family)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "//") {
			break
		}
		line = strings.TrimPrefix(strings.TrimPrefix(line, "//"), " ")
		b.WriteString(line + "\n")
	}
	return b.String(), nil
}

// HeaderSection returns the section of a family's header that starts with name ("Tunables",
// "Variants"): its first line and the lines indented under it.
func HeaderSection(family, name string) string {
	h, err := Header(family)
	if err != nil {
		return ""
	}
	var out []string
	in := false
	for _, line := range strings.Split(h, "\n") {
		switch {
		case strings.HasPrefix(line, name):
			in = true
		case in && (line == "" || !strings.HasPrefix(line, " ")):
			in = false
		}
		if in {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
