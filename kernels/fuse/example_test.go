package fuse_test

import (
	"context"
	"fmt"
	"log"

	_ "github.com/prism-compute/prism/cl" // registers the "opencl" backend
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/fuse"
	"github.com/prism-compute/prism/platform"
)

// ExampleCompile compiles y = a*x + exp(-z) into one kernel, runs it, and fuses the same
// expression again, which finds the kernel in the device's cache.
func ExampleCompile() {
	ctx := context.Background()
	dev, err := platform.Open(ctx, "opencl")
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close() // closes the fused kernels too
	q, err := dev.NewQueue()
	if err != nil {
		log.Fatal(err)
	}
	types := fuse.Types{"x": "float32", "z": "float32", "a": "scalar:float32", "y": "float32"}
	f, err := fuse.Compile(dev, "y = a*x + exp(-z)", types)
	if err != nil {
		log.Fatal(err) // a bad expression names its column
	}
	x, err := engine.Upload(ctx, q, []float32{1, 2, 3, 4})
	if err != nil {
		log.Fatal(err)
	}
	z, err := engine.Upload(ctx, q, []float32{0, 0, 0, 0})
	if err != nil {
		log.Fatal(err)
	}
	y, err := engine.NewBuffer[float32](dev, 4)
	if err != nil {
		log.Fatal(err)
	}
	if err := f.Run(q, 4, map[string]any{"x": x, "z": z, "a": 2, "y": y}); err != nil {
		log.Fatal(err)
	}
	out, err := y.Download(ctx, q)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	for _, p := range f.Params() {
		fmt.Printf("%s %s scalar=%v output=%v\n", p.Name, p.Type, p.Scalar, p.Output)
	}
	builds := fuse.Builds(dev)
	if _, err := fuse.Compile(dev, "y = a * x + exp(-z);", types); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d operations per element, %.0f bytes for 4 elements, builds of the second Compile: %d\n",
		f.Flops(), f.Model(4).Bytes, fuse.Builds(dev)-builds)
	// Output:
	// [3 5 7 9]
	// y float32 scalar=false output=true
	// x float32 scalar=false output=false
	// z float32 scalar=false output=false
	// a float32 scalar=true output=false
	// 4 operations per element, 48 bytes for 4 elements, builds of the second Compile: 0
}
