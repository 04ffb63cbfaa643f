package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/prism-compute/prism/engine"
)

// execBuildOptions returns the build options of prism exec's -D flags: the macros, as
// defineOptions makes them, and the OpenCL C version, which -D also takes as OpenCL's own
// option (-D -cl-std=CL3.0, or -D cl-std=3.0): engine.StdOption checks it and the build
// refuses a version the device does not compile, naming the versions it has. A second
// -cl-std is a usage error.
func execBuildOptions(defines []string) (macros, std []string, err error) {
	var rest []string
	for _, d := range defines {
		v, ok := strings.CutPrefix(strings.TrimPrefix(d, "-"), "cl-std=")
		if !ok {
			rest = append(rest, d)
			continue
		}
		if len(std) > 0 {
			return nil, nil, usageError{fmt.Errorf("-D %q: the OpenCL C version is already %s", d, strings.TrimPrefix(std[0], "-cl-std="))}
		}
		opt, err := engine.StdOption(v)
		if err != nil {
			return nil, nil, usageError{fmt.Errorf("-D %q: %w", d, err)}
		}
		std = append(std, opt)
	}
	macros, err = defineOptions(rest)
	return macros, std, err
}

// isSPIRVFile reports whether the kernel file holds a SPIR-V module, by its magic number;
// a file named *.spv that does not start with it is a usage error saying so, rather than
// OpenCL C that defines no kernel.
func isSPIRVFile(file string, src []byte) (bool, error) {
	if engine.IsSPIRV(src) {
		return true, nil
	}
	if strings.EqualFold(filepath.Ext(file), ".spv") {
		n := min(len(src), 4)
		return false, usageError{fmt.Errorf("%s is not a SPIR-V module: it starts with % x, not the magic number 03 02 23 07 (0x07230203); make one with llvm-spirv", file, src[:n])}
	}
	return false, nil
}
