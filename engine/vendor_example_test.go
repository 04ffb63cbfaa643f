package engine_test

import (
	"context"
	"fmt"
	"log"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/fake"
)

// ExampleGemm multiplies two row-major matrices with the device's vendor BLAS (cuBLAS on
// CUDA, CLBlast on OpenCL) on the queue, buffers and inputs a Prism kernel would use, and
// times the call with Queue.Timed. The fake backend's Go BLAS stands in here.
func ExampleGemm() {
	fake.Register()
	ctx := context.Background()
	dev, err := engine.Open(ctx, "fake:0")
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close() // closes the BLAS too
	q, err := dev.NewQueue()
	if err != nil {
		log.Fatal(err)
	}
	blas, err := dev.BLAS()
	if err != nil {
		log.Fatal(err) // errors.Is(err, engine.ErrUnavailable): the library is not installed
	}

	// A (2x3) times B (3x2), row-major; C = 1*A*B + 0*C.
	a, _ := engine.Upload(ctx, q, []float32{1, 2, 3, 4, 5, 6})
	b, _ := engine.Upload(ctx, q, []float32{1, 0, 0, 1, 1, 1})
	c, _ := engine.NewBuffer[float32](dev, 4)
	spec := engine.GemmSpec{M: 2, N: 2, K: 3}
	elapsed, err := q.Timed(ctx, func() error { return engine.Gemm(blas, q, spec, 1, a, b, 0, c) })
	if err != nil {
		log.Fatal(err)
	}
	out, _ := c.Download(ctx, q)
	fmt.Println(blas.Library().Name, out, elapsed > 0)
	// Output: fake BLAS [4 5 10 11] true
}

// ExampleRunFFT plans a batch of forward complex FFTs with the device's vendor FFT
// (cuFFT on CUDA, clFFT on OpenCL) and runs it out of place on interleaved data.
func ExampleRunFFT() {
	fake.Register()
	ctx := context.Background()
	dev, err := engine.Open(ctx, "fake:0")
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close() // closes the FFT and its plans too
	q, _ := dev.NewQueue()
	f, err := dev.FFT()
	if err != nil {
		log.Fatal(err)
	}
	p, err := f.Plan(engine.FFTSpec{Kind: engine.C2C, Shape: []int{4}, Batch: 2})
	if err != nil {
		log.Fatal(err)
	}
	nin, nout := p.Lens() // 16 and 16: two transforms of 4 (re, im) pairs
	in, _ := engine.Upload(ctx, q, []float32{1, 0, 1, 0, 1, 0, 1, 0 /* ones */, 0, 0, 1, 0, 0, 0, 0, 0 /* x[1] = 1 */})
	out, _ := engine.NewBuffer[float32](dev, nout)
	if err := engine.RunFFT(p, q, in, out); err != nil {
		log.Fatal(err)
	}
	spec, _ := out.Download(ctx, q)
	fmt.Println(nin, nout, spec[:8], spec[8:])
	// Output: 16 16 [4 0 0 0 0 0 0 0] [1 0 0 -1 -1 0 0 1]
}
