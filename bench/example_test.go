package bench_test

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/prism-compute/prism/bench"
	_ "github.com/prism-compute/prism/cl" // registers the "opencl" backend
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/suite"
	"github.com/prism-compute/prism/platform"
)

// ExampleRun benchmarks two operations on one device, each verified before it is timed, and
// writes the report as Markdown (WriteJSON, WriteCSV, WriteHTML, WriteTable do likewise).
func ExampleRun() {
	ctx := context.Background()
	dev, err := platform.Open(ctx, "opencl")
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	ops, err := suite.Match("triad/float32", "reduce/sum/float32")
	if err != nil {
		log.Fatal(err)
	}
	cfg := bench.Config{Ops: ops, Sizes: []int{1 << 16}, Quick: true, Count: 3, Warmup: 1, Seed: 1}
	rep, err := bench.Run(ctx, cfg, []*engine.Device{dev})
	if err != nil {
		log.Fatal(err)
	}
	if err := rep.WriteMarkdown(io.Discard, ""); err != nil {
		log.Fatal(err)
	}
	for _, res := range rep.Devices[0].Results {
		fmt.Printf("%s: verified %v, %d timed runs\n", res.Case, res.Verified, res.Stats.Runs)
	}
	// Output:
	// stream/triad/float32: verified true, 3 timed runs
	// reduce/sum/float32: verified true, 3 timed runs
}
