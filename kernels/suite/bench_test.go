package suite_test

import (
	"context"
	"flag"
	"strings"
	"testing"

	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/suite"
	"github.com/prism-compute/prism/platform"
)

var (
	benchSize = flag.Int("prism.size", 0, "size of every benchmarked op (elements of its main operand); 0: each op's quick size")
	benchOps  = flag.String("prism.ops", "", "comma-separated op patterns to benchmark (see Match); empty: all")
)

// BenchmarkOps times every op of the suite on the device PRISM_DEVICE selects (or the
// default device) with the same Instance that `prism bench` times: verified once, then run
// with rotated inputs, each iteration synchronized.
//
//	go test ./kernels/suite -run '^$' -bench Ops -prism.ops stream,gemm -prism.size 4000000
func BenchmarkOps(b *testing.B) {
	ctx := context.Background()
	dev, err := platform.Open(ctx, "")
	if err != nil {
		b.Skip(err)
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	var patterns []string
	if *benchOps != "" {
		patterns = strings.Split(*benchOps, ",")
	}
	ops, err := suite.Match(patterns...)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("device %s: %s", dev.ID(), dev.Info().Name)
	for _, op := range ops {
		b.Run(op.Name, func(b *testing.B) {
			size := *benchSize
			if size == 0 {
				size = op.QuickSize
			}
			in, err := op.Setup(ctx, q, kernels.Params{Size: size, Seed: 1, Rotate: true})
			if err != nil {
				b.Skip(err)
			}
			defer in.Close()
			if err := in.Run(ctx, q); err != nil {
				b.Fatal(err)
			}
			if err := in.Verify(ctx, q); err != nil {
				b.Fatal(err)
			}
			m := in.Model()
			b.SetBytes(int64(m.Bytes))
			b.ResetTimer()
			for b.Loop() {
				if err := in.Run(ctx, q); err != nil {
					b.Fatal(err)
				}
				if err := q.Finish(ctx); err != nil {
					b.Fatal(err)
				}
			}
			if s := b.Elapsed().Seconds(); s > 0 && m.Flops > 0 {
				b.ReportMetric(m.Flops*float64(b.N)/s/1e9, "GFLOP/s")
			}
		})
	}
}
