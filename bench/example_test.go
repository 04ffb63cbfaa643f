package bench_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/render"
	_ "github.com/prism-compute/prism/cl" // registers the "opencl" backend
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/suite"
	"github.com/prism-compute/prism/platform"
)

// ExampleRun benchmarks two operations on one device, each verified before it is timed, and
// writes the report as Markdown with bench/render (WriteJSON writes it as JSON, and
// render.Table, CSV, Benchstat and HTML the other forms). Timings vary from run to run; what the example prints
// does not: which cases were verified, how often each was timed, and that the Markdown has
// a row for each.
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
	var md bytes.Buffer
	if err := render.Markdown(&md, rep, ""); err != nil {
		log.Fatal(err)
	}
	verified := 0
	results := rep.Devices[0].Results
	for _, res := range results {
		if res.Verified {
			verified++
			fmt.Printf("%s: verified, %d timed runs, in the Markdown: %v\n", res.Case, res.Stats.Runs, strings.Contains(md.String(), "| "+res.Case+" |"))
		} else {
			fmt.Printf("%s: %s%s\n", res.Case, res.Skipped, res.Err)
		}
	}
	fmt.Printf("%d of %d cases verified\n", verified, len(results))
	// Output:
	// stream/triad/float32: verified, 3 timed runs, in the Markdown: true
	// reduce/sum/float32: verified, 3 timed runs, in the Markdown: true
	// 2 of 2 cases verified
}
