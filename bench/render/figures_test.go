package render

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/prism-compute/prism/bench"
	_ "github.com/prism-compute/prism/cl" // registers the "opencl" backend
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/kernels/suite"
)

// TestFiguresLinkLatencyRender runs the cases of bench's TestRunFiguresLinkLatency (an op
// with figures over the host link, a transfer, a latency) and renders them: the table says
// which cases are bound by the link or are latencies and lists the figures, and benchstat
// gives a latency no rate.
func TestFiguresLinkLatencyRender(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "opencl")
	ctx := context.Background()
	dev, err := engine.Open(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	ops, err := suite.Match("overlap/q2/float32", "transfer/h2d-pinned/uint8", "alloc/pool/uint8")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Run(ctx, bench.Config{Ops: ops, Sizes: []int{1000}, Quick: true, Count: 3, Warmup: 1, Seed: 7}, []*engine.Device{dev})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Check(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Table(&buf, rep, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"host link", "latency", "figures (the ops' own", "overlap/q2/float32 1000: compute "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := Benchstat(&buf, rep); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(line, "BenchmarkAlloc") && strings.Contains(line, "GB/s") {
			t.Errorf("benchstat gives the latency a rate: %s", line)
		}
	}
}
