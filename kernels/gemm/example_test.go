package gemm_test

import (
	"context"
	"fmt"
	"log"
	"math"

	_ "github.com/prism-compute/prism/cl" // registers the "opencl" backend
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/gemm"
	"github.com/prism-compute/prism/platform"
)

// ExampleNew multiplies bfloat16 matrices with float32 accumulation through the fastest
// GEMM the device has for that precision: the tensor cores on an NVIDIA GPU through CUDA,
// the portable kernel elsewhere (here, an OpenCL device).
func ExampleNew() {
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
	const n = 64
	a, b := make([]engine.BFloat16, n*n), make([]engine.BFloat16, n*n)
	for i := range a {
		a[i] = engine.BFloat16FromFloat32(float32(i%7) / 8) // exact in bfloat16
		b[i] = engine.BFloat16FromFloat32(float32(i%5) / 4)
	}
	da, err := engine.Upload(ctx, q, a)
	if err != nil {
		log.Fatal(err)
	}
	db, err := engine.Upload(ctx, q, b)
	if err != nil {
		log.Fatal(err)
	}
	dc, err := engine.NewBuffer[float32](dev, n*n)
	if err != nil {
		log.Fatal(err)
	}
	prec, _ := gemm.LookupPrecision("bfloat16")
	g, err := gemm.New[engine.BFloat16, float32](dev, prec)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	if err := g.RunInto(q, gemm.GEMMShape{M: n, N: n, K: n}, 1, da, db, 0, dc, dc); err != nil {
		log.Fatal(err)
	}
	c, err := dc.Download(ctx, q)
	if err != nil {
		log.Fatal(err)
	}
	var want float64 // C[0][0] = sum_l A[0][l] * B[l][0], exact in float32 here
	for l := range n {
		want += a[l].Float64() * b[l*n].Float64()
	}
	fmt.Printf("C[0][0] = %g (float64 reference %g, difference %g)\n", c[0], want, math.Abs(float64(c[0])-want))
	// Output: C[0][0] = 11.84375 (float64 reference 11.84375, difference 0)
}
