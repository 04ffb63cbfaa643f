package suite_test

import (
	"context"
	"fmt"
	"log"

	_ "github.com/prism-compute/prism/cl" // registers the "opencl" backend
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/suite"
	"github.com/prism-compute/prism/platform"
)

// ExampleLookup runs one operation of the suite as `prism run` does: set up with seeded
// random inputs on a device, run, and check the result against the float64 reference.
func ExampleLookup() {
	ctx := context.Background()
	dev, err := platform.Open(ctx, "opencl")
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err != nil {
		log.Fatal(err)
	}
	op, err := suite.Lookup("stream/triad/float32")
	if err != nil {
		log.Fatal(err)
	}
	p := kernels.Params{Size: 1 << 16, Seed: 1, Portable: true} // the OpenCL C kernel on any device
	v, err := op.Pick(dev, p)
	if err != nil {
		log.Fatal(err)
	}
	in, err := op.Setup(ctx, q, p)
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	if err := in.Run(ctx, q); err != nil {
		log.Fatal(err)
	}
	if err := in.Verify(ctx, q); err != nil {
		log.Fatal(err) // wraps kernels.ErrVerify, naming the first element that differs
	}
	fmt.Printf("%s (%s), %s: verified; %.0f bytes moved per run\n", op.Name, v.Name, in.Shape(), in.Model().Bytes)
	// Output: stream/triad/float32 (portable), n=65536: verified; 786432 bytes moved per run
}

// Example_split splits one operation across two devices (here the first OpenCL device,
// opened twice: a device may take more than one share) with given shares, runs it, and
// checks the whole result against the float64 reference. With measured shares
// (SplitOptions{}), the planner picks the shares and the second run checks its plan
// against the fastest device alone; kernels.PlanSummary says what it chose.
func Example_split() {
	ctx := context.Background()
	var devs []*engine.Device
	for range 2 {
		dev, err := platform.Open(ctx, "opencl")
		if err != nil {
			log.Fatal(err)
		}
		defer dev.Close()
		devs = append(devs, dev)
	}
	op, err := suite.Lookup("map/axpy/float32")
	if err != nil {
		log.Fatal(err)
	}
	sp, err := op.Split(ctx, devs, kernels.Params{Size: 1 << 16, Seed: 1}, kernels.SplitOptions{Fractions: []float64{0.5, 0.5}})
	if err != nil {
		log.Fatal(err)
	}
	defer sp.Close()
	if err := sp.Run(ctx); err != nil {
		log.Fatal(err)
	}
	if err := sp.Verify(ctx); err != nil {
		log.Fatal(err)
	}
	sh := sp.Shares()
	fmt.Printf("%s: %d + %d elements; verified; %s\n", op.Name, sh[0].Units, sh[1].Units, kernels.PlanSummary(sh))
	// Output: map/axpy/float32: 32768 + 32768 elements; verified; split over 2 devices (shares given)
}
