package cuda_test

import (
	"context"
	"fmt"
	"log"

	"github.com/prism-compute/prism/cuda"
	"github.com/prism-compute/prism/engine"
)

// Example opens the first CUDA device through engine, reads the properties engine does not
// offer, and copies data through page-locked host memory. (It needs a GPU, so it is
// compiled but not run by go test.)
func Example() {
	ctx := context.Background()
	dev, err := engine.Open(ctx, "cuda:0")
	if err != nil {
		log.Fatal(err) // without libcuda, NVRTC or a GPU: an error wrapping engine.ErrUnavailable
	}
	defer dev.Close()

	cd := dev.Driver().(cuda.Device)
	p := cd.Properties()
	fmt.Printf("%s: sm_%d%d, %d SMs, %d MiB of L2\n", dev.Info().Name, p.ComputeCapability[0], p.ComputeCapability[1],
		p.Multiprocessors, p.L2CacheBytes>>20)

	pinned, err := engine.NewHostBuffer[float32](dev, 1<<18) // page-locked on CUDA
	if err != nil {
		log.Fatal(err)
	}
	defer pinned.Close()
	xs := pinned.Slice()
	for i := range xs {
		xs[i] = float32(i)
	}
	q, err := dev.NewQueue()
	if err != nil {
		log.Fatal(err)
	}
	buf, err := engine.NewBuffer[float32](dev, len(xs))
	if err != nil {
		log.Fatal(err)
	}
	up, err := buf.WriteAsync(q, 0, pinned, 0, len(xs)) // no staging, the host goes on
	if err != nil {
		log.Fatal(err)
	}
	defer up.Close()
	if err := up.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(buf.Len())
}
