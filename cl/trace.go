//go:build !noopencl

package cl

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/prism-compute/prism/engine"
)

// tracef prints a trace line on stderr when PRISM_TRACE asks for it (engine.Tracing).
func tracef(format string, args ...any) {
	if engine.Tracing() {
		traceTo(os.Stderr, format, args...)
	}
}

// traceTo writes a trace line to w, whether or not tracing is on: the drain of a build's
// stderr (stderr.go) writes the compilers' output to the stderr it saved, not to file
// descriptor 2, which is then its own pipe.
func traceTo(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "prism: cl: "+strings.TrimSuffix(format, "\n")+"\n", args...)
}

// tracing reports whether PRISM_TRACE asks for trace output.
func tracing() bool { return engine.Tracing() }

// traceBuildLog puts the build log of a program that compiled (its warnings) in the trace,
// each line indented under a heading; an empty log prints nothing. A build that fails
// returns its log in the error instead.
func traceBuildLog(log string) {
	log = strings.TrimSpace(log)
	if log == "" || !tracing() {
		return
	}
	tracef("build log of the program (it compiled):\n    %s", strings.ReplaceAll(log, "\n", "\n    "))
}

// loadedLibrary returns the path of the shared library whose file name starts with name
// ("libOpenCL.so") as this process mapped it (/proc/self/maps), or name itself where that
// cannot be read.
func loadedLibrary(name string) string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return name
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 6 && strings.HasPrefix(filepath.Base(fields[5]), name) {
			return fields[5]
		}
	}
	return name
}

// driverCache says where the platform named keeps the programs it compiles, which this
// package leaves to the driver (OpenCL drivers keep their own caches), or ""
// for a driver whose cache is not known here.
func driverCache(platform string) string {
	switch {
	case platform == "Portable Computing Language":
		if d := os.Getenv("POCL_CACHE_DIR"); d != "" {
			return d + " (POCL_CACHE_DIR)"
		}
		return "~/.cache/pocl/kcache (set POCL_CACHE_DIR to move it)"
	case strings.Contains(platform, "NVIDIA"):
		if d := os.Getenv("CUDA_CACHE_PATH"); d != "" {
			return d + " (CUDA_CACHE_PATH)"
		}
		return "~/.nv/ComputeCache (set CUDA_CACHE_PATH to move it)"
	}
	return ""
}
