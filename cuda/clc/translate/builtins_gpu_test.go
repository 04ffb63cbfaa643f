package translate_test

import (
	"context"
	"testing"

	_ "github.com/prism-compute/prism/cl" // the OpenCL backend: a GPU's OpenCL driver
	"github.com/prism-compute/prism/cuda/clc/translate"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"

	_ "github.com/prism-compute/prism/cuda" // the CUDA backend: the translation through NVRTC
)

// TestBuiltinsGeneratedGPU runs TestBuiltinsGenerated's program on every GPU: through the
// translation and NVRTC on each CUDA device, unchanged on each GPU's OpenCL driver, and
// checks every output component against its Go reference (or, where there is none, against
// the first GPU's). It skips where there is no GPU, and fails under PRISM_REQUIRE=cuda
// where the CUDA backend finds none.
func TestBuiltinsGeneratedGPU(t *testing.T) {
	var ids []string
	for _, backend := range []string{"cuda", "opencl"} {
		infos, err := engine.Devices(context.Background(), backend)
		if backend == "cuda" && (err != nil || len(infos) == 0) {
			enginetest.RequireOrSkip(t, "cuda", err)
		}
		for _, in := range infos {
			if in.Kind == engine.KindGPU {
				ids = append(ids, backend+":"+in.ID)
			}
		}
	}
	if len(ids) == 0 {
		t.Skip("no GPU: the generated built-ins run on the CPU and PoCL in TestBuiltinsGenerated")
	}
	translate.CheckBuiltinsOnDevices(t, ids)
}
