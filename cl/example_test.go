package cl_test

import (
	"context"
	"fmt"
	"log"

	_ "github.com/prism-compute/prism/cl" // registers the "opencl" backend
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/platform"
)

// Example opens an OpenCL device (PoCL on a machine without a GPU), builds a user's
// OpenCL C kernel, launches it and reads the result back.
func Example() {
	ctx := context.Background()
	xs, ys := []float32{1, 2, 3}, []float32{10, 20, 30}
	dev, err := platform.Open(ctx, "opencl") // or "opencl:0:0", "gpu", "cpu"; PRISM_DEVICE when ""
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close() // closes everything made from it

	prog, err := dev.Build(`
__kernel void scale_add(const int n, const float a, __global const float *x, __global float *y) {
  const int i = (int)get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}`)
	if err != nil {
		log.Fatal(err) // a build failure carries the compiler's log (engine.BuildError)
	}
	k, err := prog.Kernel("scale_add")
	if err != nil {
		log.Fatal(err)
	}
	q, err := dev.NewQueue()
	if err != nil {
		log.Fatal(err)
	}
	x, err := engine.Upload(ctx, q, xs)
	if err != nil {
		log.Fatal(err)
	}
	y, err := engine.Upload(ctx, q, ys)
	if err != nil {
		log.Fatal(err)
	}
	// One work-item per element in work-groups of up to 64: the global size is rounded up
	// and the kernel ignores the extra items.
	wg := min(64, k.MaxWorkGroupSize())
	if err := q.Launch(k, engine.Range1D(engine.RoundUp(3, wg), wg), int32(3), float32(2), x, y); err != nil {
		log.Fatal(err)
	}
	out, err := y.Download(ctx, q)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output: [12 24 36]
}
