package cuda

import (
	_ "embed"
	"strconv"
)

// prelude is the translation of the suite's OpenCL C dialect to CUDA C++ (prelude.cuh),
// placed before every kernel source given to Build.
//
//go:embed prelude.cuh
var prelude string

// sourceName is the file name NVRTC's messages give an OpenCL C source that has no name
// of its own: a #line directive after the prelude makes them count lines from the
// source's first line, as an OpenCL compiler's log does.
const sourceName = "kernel.cl"

// translate returns the text NVRTC compiles for an OpenCL C source named name.
func translate(source, name string) string {
	return prelude + "\n#line 1 " + strconv.Quote(name) + "\n" + source
}
