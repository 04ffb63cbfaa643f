package group_test

import (
	"context"
	"fmt"
	"log"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/group"
	"github.com/prism-compute/prism/engine/internal/fake"
)

// ExampleAllReduce sums a vector across two devices: afterwards each holds the sum of
// both. The fake backend offers no collective library, so the group stages the
// collective through host memory; on CUDA GPUs with NCCL the same calls go through NCCL.
func ExampleAllReduce() {
	fake.Register()
	ctx := context.Background()
	var devs []*engine.Device
	for _, id := range []string{"fake:0", "fake:1"} {
		d, err := engine.Open(ctx, id)
		if err != nil {
			log.Fatal(err)
		}
		defer d.Close()
		devs = append(devs, d)
	}
	g, err := group.New(ctx, devs, group.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()

	var qs []*engine.Queue
	var bufs []*engine.Buffer[float32]
	for i, d := range devs {
		q, _ := d.NewQueue()
		b, err := engine.Upload(ctx, q, []float32{1, 2, 3, float32(10 * i)})
		if err != nil {
			log.Fatal(err)
		}
		qs, bufs = append(qs, q), append(bufs, b)
	}
	if err := group.AllReduce(ctx, g, qs, bufs, bufs, group.ReduceSum); err != nil { // in place
		log.Fatal(err)
	}
	for i, b := range bufs {
		v, _ := b.Download(ctx, qs[i])
		fmt.Println(g.Rank(i), v)
	}
	fmt.Println(g.Library().Name)
	// Output:
	// 0 [2 4 6 10]
	// 1 [2 4 6 10]
	// host-staged
}
