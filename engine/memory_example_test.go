package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/fake"
)

// ExampleBuffer_WriteAsync copies through host buffers on one queue while another queue
// computes, ordered by an event: the second queue's kernel runs after the copy, on the
// device, and the host never blocks until it wants the result. (The in-memory fake backend
// stands in for a device here.)
func ExampleBuffer_WriteAsync() {
	fake.Register()
	ctx := context.Background()
	dev, err := engine.Open(ctx, "fake:0")
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	copyQ, _ := dev.NewQueue()
	computeQ, _ := dev.NewQueue()

	const n = 4
	in, err := engine.NewHostBuffer[float32](dev, 2*n) // page-locked on CUDA
	if err != nil {
		log.Fatal(err)
	}
	out, _ := engine.NewHostBuffer[float32](dev, n)
	copy(in.Slice(), []float32{1, 2, 3, 4, 10, 20, 30, 40})
	x, _ := engine.NewBuffer[float32](dev, n)
	y, _ := engine.NewBuffer[float32](dev, n)

	upX, err := x.WriteAsync(copyQ, 0, in, 0, n)
	if err != nil {
		log.Fatal(err)
	}
	upY, _ := y.WriteAsync(copyQ, 0, in, n, n)
	defer upX.Close()
	defer upY.Close()

	prog, _ := dev.Build(axpySource)
	k, _ := prog.Kernel("prism_axpy")
	if err := computeQ.Wait(ctx, upX, upY); err != nil { // on the device: the host goes on
		log.Fatal(err)
	}
	if err := computeQ.Launch(k, engine.Range1D(64, 64), int32(n), int32(0), float32(2), x, y); err != nil {
		log.Fatal(err)
	}
	down, _ := y.ReadAsync(computeQ, 0, out, 0, n)
	defer down.Close()
	if err := down.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Slice())
	// Output: [12 24 36 48]
}

// ExampleDevice_PoolStats shows the memory pool at work: the second buffer of a size
// takes the memory the first one gave back.
func ExampleDevice_PoolStats() {
	fake.Register()
	dev, err := engine.Open(context.Background(), "fake:0")
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	for range 3 {
		b, err := engine.NewBuffer[float32](dev, 1<<18) // 1 MiB
		if err != nil {
			log.Fatal(err)
		}
		b.Close()
	}
	st := dev.PoolStats()
	fmt.Printf("hits %d, misses %d, cached %d KiB, in use %d\n", st.Hits, st.Misses, st.CachedBytes>>10, st.InUseBytes)
	released, _ := dev.TrimPool()
	fmt.Printf("trimmed %d KiB\n", released>>10)
	// Output:
	// hits 2, misses 1, cached 1024 KiB, in use 0
	// trimmed 1024 KiB
}

// ExampleBuffer_Reach runs a kernel on one device over a buffer of another: straight
// across the link where the devices reach each other's memory (CUDA GPUs with peer
// access), else through a copy on the kernel's device first. (The in-memory fake backend's
// two devices cannot reach each other, so the copy runs here.)
func ExampleBuffer_Reach() {
	fake.Register()
	ctx := context.Background()
	gpu, err := engine.Open(ctx, "fake:0")
	if err != nil {
		log.Fatal(err)
	}
	defer gpu.Close()
	other, _ := engine.Open(ctx, "fake:1")
	defer other.Close()
	q, _ := gpu.NewQueue()
	oq, _ := other.NewQueue()

	const n = 4
	x, _ := engine.Upload(ctx, oq, []float32{1, 2, 3, 4}) // on the other device
	y, _ := engine.Upload(ctx, q, []float32{10, 20, 30, 40})
	if err := oq.Finish(ctx); err != nil { // x is written before a kernel reads it
		log.Fatal(err)
	}
	arg, err := x.Reach(q)
	if errors.Is(err, engine.ErrUnsupported) {
		local, _ := engine.NewBuffer[float32](gpu, n)
		defer local.Close()
		if err := engine.CopyPeer(ctx, q, local, 0, oq, x, 0, n); err != nil {
			log.Fatal(err)
		}
		arg, err = local, nil
		fmt.Println("copied:", err == nil)
	} else if err != nil {
		log.Fatal(err)
	}
	prog, _ := gpu.Build(axpySource)
	k, _ := prog.Kernel("prism_axpy")
	if err := q.Launch(k, engine.Range1D(64, 64), int32(n), int32(0), float32(2), arg, y); err != nil {
		log.Fatal(err)
	}
	got, _ := y.Download(ctx, q)
	fmt.Println(got)
	// Output:
	// copied: true
	// [12 24 36 48]
}
