package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/fake"
)

// axpySource is an OpenCL C kernel: y = a*x + y over n elements from y[off].
const axpySource = `
__kernel void prism_axpy(const int n, const int off, const float a,
                         __global const float *x, __global float *y) {
  const int i = (int)get_global_id(0);
  if (i < n) {
    y[off + i] = a * x[i] + y[off + i];
  }
}
`

// ExampleOpen opens a device, moves data to it, builds and launches a kernel and reads the
// result back. A program registers a backend with a blank import (_
// "github.com/prism-compute/prism/cl") and opens "opencl:0:0"; here the in-memory fake
// backend, which runs kernels it knows in Go, stands in.
func ExampleOpen() {
	fake.Register()
	ctx := context.Background()

	dev, err := engine.Open(ctx, "fake:0")
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close() // closes the queue, buffers, program and kernel too

	q, err := dev.NewQueue()
	if err != nil {
		log.Fatal(err)
	}
	x, err := engine.Upload(ctx, q, []float32{1, 2, 3})
	if err != nil {
		log.Fatal(err)
	}
	y, err := engine.Upload(ctx, q, []float32{10, 20, 30})
	if err != nil {
		log.Fatal(err)
	}
	prog, err := dev.Build(axpySource)
	if err != nil {
		log.Fatal(err) // a *engine.BuildError holds the compiler's log
	}
	k, err := prog.Kernel("prism_axpy")
	if err != nil {
		log.Fatal(err)
	}

	// One work-item per element, in work-groups of 64: round the global size up; the
	// kernel ignores the extra work-items.
	const n = 3
	r := engine.Range1D(engine.RoundUp(n, 64), 64)
	if err := q.Launch(k, r, int32(n), int32(0), float32(2), x, y); err != nil {
		log.Fatal(err)
	}
	out, err := y.Download(ctx, q)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(dev.Info().Name, out)
	// Output: Prism fake GPU [12 24 36]
}

// ExampleDevice_BuildSource builds a CUDA C++ kernel where the device builds that dialect,
// and shows what each device accepts at launch. Here the fake backend's GPU stands in for a
// CUDA device and its CPU for an OpenCL one, which refuses CUDA C++ before any compiler
// runs.
func ExampleDevice_BuildSource() {
	fake.Register()
	const reverse = `extern "C" __global__ void prism_group_reverse_shared(int n, int off, const uint32_t *in, uint32_t *out) {
  extern __shared__ uint32_t tile[];
  // ...
}`
	for _, id := range []string{"fake:0", "fake:1"} {
		dev, err := engine.Open(context.Background(), id)
		if err != nil {
			log.Fatal(err)
		}
		f := dev.LaunchFeatures()
		fmt.Printf("%s builds %v; LocalBytes arguments %v, Range.SharedBytes %v, clusters of up to %d\n",
			id, dev.Dialects(), f.LocalArgs, f.SharedBytes, f.MaxClusterSize)
		_, err = dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: reverse, Name: "reverse.cu"})
		if errors.Is(err, engine.ErrUnsupported) {
			fmt.Println(err)
		}
		dev.Close()
	}
	// Output:
	// fake:0 builds [OpenCL C CUDA C++]; LocalBytes arguments true, Range.SharedBytes true, clusters of up to 8
	// fake:1 builds [OpenCL C]; LocalBytes arguments true, Range.SharedBytes false, clusters of up to 0
	// engine: build CUDA C++ on fake:1 (Prism fake CPU): the device builds OpenCL C only: unsupported
}
