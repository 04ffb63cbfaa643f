package cuda

import (
	"fmt"
	"strings"

	"github.com/prism-compute/prism/engine/driver"
)

// clOptions maps the OpenCL build options a kernel may be given to NVRTC's: an empty list
// drops the option. OpenCL-only options are never passed through.
var clOptions = map[string][]string{
	"-cl-mad-enable":                {}, // NVRTC contracts a*b+c by default (--fmad=true)
	"-cl-fast-relaxed-math":         {"--use_fast_math"},
	"-cl-unsafe-math-optimizations": {"--use_fast_math"},
	"-cl-finite-math-only":          {},
	"-cl-no-signed-zeros":           {},
	"-cl-denorms-are-zero":          {"--ftz=true"},
	"-cl-single-precision-constant": {}, // literals stay double: more precise, never wrong
	"-cl-opt-disable":               {"-G"},
	"-cl-strict-aliasing":           {},
	"-cl-kernel-arg-info":           {},
	"-cl-uniform-work-group-size":   {},
	"-cl-no-subgroup-ifp":           {},
	"-w":                            {"-w"},
	"-Werror":                       {}, // NVRTC warns about constructs OpenCL accepts silently
	"-g":                            {"-lineinfo"},
}

// translateOptions turns the OpenCL build options of a Build call into NVRTC options.
// Each element may hold several options separated by spaces ("-DWG=256 -DT=float"). The
// table clOptions translates or drops OpenCL's; -cl-std=* is dropped; -D and -I (joined to
// their value or followed by it) pass through as one option; an -arch option is refused,
// since the architecture comes from the device; any other -cl- option is refused, and
// anything else is passed to NVRTC, which rejects what it does not know.
func translateOptions(options []string) ([]string, error) {
	return splitOptions(options, func(f string) ([]string, error) {
		switch {
		case strings.HasPrefix(f, "-cl-std="):
			return nil, nil // the dialect is fixed by the prelude
		case strings.HasPrefix(f, "-cl-"):
			if tr, ok := clOptions[f]; ok {
				return tr, nil
			}
			return nil, fmt.Errorf("cuda: unknown OpenCL build option %q: %w", f, driver.ErrInvalidArg)
		}
		if tr, ok := clOptions[f]; ok {
			return tr, nil
		}
		return []string{f}, nil
	})
}

// cudaOptions checks the NVRTC options of a CUDA C++ build: each element may hold several,
// separated by spaces; -D, -I and -U followed by their value become one option; an -arch
// option is refused, since the architecture comes from the device; anything else is passed
// to NVRTC, which rejects what it does not know.
func cudaOptions(options []string) ([]string, error) {
	return splitOptions(options, func(f string) ([]string, error) { return []string{f}, nil })
}

// splitOptions splits options at spaces, joins -D, -I and -U to their values, refuses
// -arch, and passes every other option through each.
func splitOptions(options []string, each func(string) ([]string, error)) ([]string, error) {
	var fields []string
	for _, o := range options {
		fields = append(fields, strings.Fields(o)...)
	}
	var out []string
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case f == "-D" || f == "-I" || f == "-U":
			if i+1 >= len(fields) {
				return nil, fmt.Errorf("cuda: build option %s without a value: %w", f, driver.ErrInvalidArg)
			}
			out = append(out, f+fields[i+1])
			i++
		case strings.HasPrefix(f, "-D") || strings.HasPrefix(f, "-I") || strings.HasPrefix(f, "-U"):
			out = append(out, f)
		case strings.HasPrefix(f, "-arch") || strings.HasPrefix(f, "--gpu-architecture"):
			return nil, fmt.Errorf("cuda: build option %q: the architecture comes from the device: %w", f, driver.ErrInvalidArg)
		default:
			tr, err := each(f)
			if err != nil {
				return nil, err
			}
			out = append(out, tr...)
		}
	}
	return out, nil
}

// fixedOptions are given to every compilation of OpenCL C, before the translated ones:
// -default-device makes a .cl file's plain functions device functions (the prelude's
// clang path does the same with a pragma), -lineinfo keeps source lines for
// compute-sanitizer and profilers at no cost in speed, and the language standard is pinned
// so that an NVRTC upgrade cannot change it.
var fixedOptions = []string{"-default-device", "-std=c++17", "-lineinfo"}

// cudaFixedOptions are given to every compilation of CUDA C++, before the caller's: the
// language standard, pinned, and -lineinfo. CUDA C++ marks its device functions itself.
var cudaFixedOptions = []string{"-std=c++17", "-lineinfo"}

// target is what NVRTC compiles for: its -arch option, whether the output is CUBIN (else
// PTX, which the driver compiles when it loads it), and the virtual architecture the code
// is written against ("compute_90a").
type target struct {
	option  string
	cubin   bool
	virtual string
}

// archSpecific reports whether compute capability cc has an architecture-specific ("a")
// target: every one from 9.0 on (sm_90a, sm_100a, sm_103a, sm_120a, ...). Code compiled for
// it may use the instructions of that architecture alone (wgmma and setmaxnreg on sm_90a)
// and runs only on devices of exactly that compute capability.
func archSpecific(cc int) bool { return cc >= 90 }

// chooseArch picks NVRTC's target for a device of compute capability cc (90 for sm_90):
// the device's own architecture as CUBIN when NVRTC supports it and can emit CUBIN;
// otherwise PTX for the device's architecture, or, when NVRTC does not know an
// architecture that new, for the newest one it knows (the driver JIT-compiles PTX for newer
// devices). CUDA C++ gets the architecture-specific variant where there is one and NVRTC
// knows the device's architecture (sm_90a, virtual compute_90a, on sm_90), so that
// NVIDIA-only kernels can use every instruction of the device; OpenCL C, translated, needs
// none of them and keeps the portable target. supported is NVRTC's list, nil when it
// cannot tell. A device older than every architecture NVRTC supports gives
// ErrUnsupported.
func chooseArch(cc int, supported []int, canCUBIN bool, dialect driver.Dialect) (target, error) {
	if len(supported) > 0 {
		known, newest, oldest := false, 0, supported[0]
		for _, a := range supported {
			known = known || a == cc
			newest, oldest = max(newest, a), min(oldest, a)
		}
		switch {
		case known:
		case cc < oldest:
			return target{}, fmt.Errorf("cuda: NVRTC compiles for sm_%d and newer, not for this device's sm_%d: %w", oldest, cc, driver.ErrUnsupported)
		case cc > newest:
			return ptxTarget(newest, ""), nil
		default:
			// Between two known architectures (a variant NVRTC lacks): PTX of the newest
			// older one.
			best := oldest
			for _, a := range supported {
				if a <= cc && a > best {
					best = a
				}
			}
			return ptxTarget(best, ""), nil
		}
	}
	suffix := ""
	if dialect == driver.DialectCUDA && archSpecific(cc) {
		suffix = "a"
	}
	if canCUBIN {
		return target{option: fmt.Sprintf("-arch=sm_%d%s", cc, suffix), cubin: true, virtual: fmt.Sprintf("compute_%d%s", cc, suffix)}, nil
	}
	return ptxTarget(cc, suffix), nil
}

// ptxTarget is PTX for virtual architecture compute_<cc><suffix>.
func ptxTarget(cc int, suffix string) target {
	v := fmt.Sprintf("compute_%d%s", cc, suffix)
	return target{option: "-arch=" + v, virtual: v}
}
