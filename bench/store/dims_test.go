package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
)

// TestHistoryDims records two runs of gemm/nn/float32 at two shapes of one size
// (bench.Result.Dims): History returns each point with its shape, a filter on the shape
// keeps its series alone, and the shapes survive export.
func TestHistoryDims(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	for run := range 2 {
		r := synthetic("h", "c", "dev", time.Date(2026, 11, 1+run, 0, 0, 0, 0, time.UTC), 5, 3)
		base := r.Devices[0].Results[4] // gemm/nn/float32
		var rs []bench.Result
		for i, dims := range []string{"96x32x128", "32x96x128"} {
			x := base
			x.Size, x.Dims = 3072, dims
			x.Shape = fmt.Sprintf("M=%s", dims)
			x.Stats = bench.Summarize([]time.Duration{time.Duration(1000 * (i + 1) * (run + 1))})
			rs = append(rs, x)
		}
		r.Devices[0].Results = rs
		if _, err := s.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	pts, err := s.History(ctx, Series{Case: "gemm/nn/float32"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pts {
		got = append(got, fmt.Sprintf("%d:%s:%v", p.Size, p.Dims, p.Median))
	}
	if w := "3072:96x32x128:1µs 3072:32x96x128:2µs 3072:96x32x128:2µs 3072:32x96x128:4µs"; strings.Join(got, " ") != w {
		t.Errorf("history %s; want %s", strings.Join(got, " "), w)
	}
	pts, err = s.History(ctx, Series{Case: "gemm/nn/float32", Dims: "32x96x128"})
	if err != nil || len(pts) != 2 || pts[0].Dims != "32x96x128" || pts[1].Dims != "32x96x128" {
		t.Errorf("history of 32x96x128: %+v, %v", pts, err)
	}
	rep, err := s.Export(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d := rep.Devices[0].Results; d[0].Dims != "96x32x128" || d[1].Dims != "32x96x128" {
		t.Errorf("exported dims %q, %q", d[0].Dims, d[1].Dims)
	}
}
