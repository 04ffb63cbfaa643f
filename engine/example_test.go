package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/fake"
)

// axpySource is an OpenCL C kernel: y = a*x + y over n elements from y[off].
const axpySource = `
__kernel void prism_axpy(const int n, const int off, const float a,
                         __global const float *x, __global float *y) {
  const int i = (int)get_global_id(0);
  if (i < n) {
    y[off + i] = a * x[i] + y[off + i];
  }
}
`

// ExampleOpen opens a device, moves data to it, builds and launches a kernel and reads the
// result back. A program registers a backend with a blank import (_
// "github.com/prism-compute/prism/cl") and opens "opencl:0:0"; here the in-memory fake
// backend, which runs kernels it knows in Go, stands in.
func ExampleOpen() {
	fake.Register()
	ctx := context.Background()

	dev, err := engine.Open(ctx, "fake:0")
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close() // closes the queue, buffers, program and kernel too

	q, err := dev.NewQueue()
	if err != nil {
		log.Fatal(err)
	}
	x, err := engine.Upload(ctx, q, []float32{1, 2, 3})
	if err != nil {
		log.Fatal(err)
	}
	y, err := engine.Upload(ctx, q, []float32{10, 20, 30})
	if err != nil {
		log.Fatal(err)
	}
	prog, err := dev.Build(axpySource)
	if err != nil {
		log.Fatal(err) // a *engine.BuildError holds the compiler's log
	}
	k, err := prog.Kernel("prism_axpy")
	if err != nil {
		log.Fatal(err)
	}

	// One work-item per element, in work-groups of 64: round the global size up; the
	// kernel ignores the extra work-items.
	const n = 3
	r := engine.Range1D(engine.RoundUp(n, 64), 64)
	if err := q.Launch(k, r, int32(n), int32(0), float32(2), x, y); err != nil {
		log.Fatal(err)
	}
	out, err := y.Download(ctx, q)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(dev.Info().Name, out)
	// Output: Prism fake GPU [12 24 36]
}

// ExampleDevice_BuildSource builds a CUDA C++ kernel where the device builds that dialect,
// and shows what each device accepts at launch. Here the fake backend's GPU stands in for a
// CUDA device and its CPU for an OpenCL one, which refuses CUDA C++ before any compiler
// runs.
func ExampleDevice_BuildSource() {
	fake.Register()
	const reverse = `extern "C" __global__ void prism_group_reverse_shared(int n, int off, const uint32_t *in, uint32_t *out) {
  extern __shared__ uint32_t tile[];
  // ...
}`
	for _, id := range []string{"fake:0", "fake:1"} {
		dev, err := engine.Open(context.Background(), id)
		if err != nil {
			log.Fatal(err)
		}
		f := dev.LaunchFeatures()
		fmt.Printf("%s builds %v; LocalBytes arguments %v, Range.SharedBytes %v, clusters of up to %d\n",
			id, dev.Dialects(), f.LocalArgs, f.SharedBytes, f.MaxClusterSize)
		_, err = dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: reverse, Name: "reverse.cu"})
		if errors.Is(err, engine.ErrUnsupported) {
			fmt.Println(err)
		}
		dev.Close()
	}
	// Output:
	// fake:0 builds [OpenCL C CUDA C++]; LocalBytes arguments true, Range.SharedBytes true, clusters of up to 8
	// fake:1 builds [OpenCL C]; LocalBytes arguments true, Range.SharedBytes false, clusters of up to 0
	// engine: build CUDA C++ on fake:1 (Prism fake CPU): the device builds OpenCL C only: unsupported
}

// ExampleNewTensorMap encodes a tensor map of a row-major 70 x 100 float32 matrix with a
// box of 32 rows of 64 elements, and launches a CUDA C++ kernel that copies the box at
// (64, 48) with TMA: the box reaches past the matrix's right and bottom edges, where it
// reads zeros. The fake GPU stands in for a CUDA device of compute capability 9.0, and its
// CPU for an OpenCL device, which has no tensor maps.
func ExampleNewTensorMap() {
	fake.Register()
	ctx := context.Background()
	const tmaSource = `struct alignas(64) tmap { unsigned long long v[16]; };
extern "C" __global__ void prism_tma_box(const __grid_constant__ tmap tm, const int x0, const int y0,
                                         const int off, float *out) {
  // mbarrier.init, cp.async.bulk.tensor.2d ... [tm, {x0, y0}] ..., mbarrier.try_wait.parity
}`
	dev, err := engine.Open(ctx, "fake:0")
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err != nil {
		log.Fatal(err)
	}
	matrix := make([]float32, 70*100)
	for i := range matrix {
		matrix[i] = float32(i)
	}
	a, err := engine.Upload(ctx, q, matrix)
	if err != nil {
		log.Fatal(err)
	}
	tm, err := engine.NewTensorMap(a, engine.TensorMapDesc{
		Dims:    []int64{100, 70}, // elements, fastest-varying first: columns, then rows
		Strides: []int64{100 * 4}, // bytes from one row to the next
		Box:     []int{64, 32},    // 32 rows of 64 elements per copy
	})
	if err != nil {
		log.Fatal(err)
	}
	prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: tmaSource, Name: "tma.cu"})
	if err != nil {
		log.Fatal(err)
	}
	k, err := prog.Kernel("prism_tma_box")
	if err != nil {
		log.Fatal(err)
	}
	box, err := engine.NewBuffer[float32](dev, 64*32)
	if err != nil {
		log.Fatal(err)
	}
	if err := q.Launch(k, engine.Range1D(128, 128), tm, int32(64), int32(48), int32(0), box); err != nil {
		log.Fatal(err)
	}
	out, err := box.Download(ctx, q)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tm)
	fmt.Println("row 0:", out[0:3], "...", out[35:37], "; row 21:", out[21*64:21*64+2], "; row 22:", out[22*64:22*64+2])

	cpu, err := engine.Open(ctx, "fake:1")
	if err != nil {
		log.Fatal(err)
	}
	defer cpu.Close()
	fmt.Println(cpu.TensorMapSupport())
	// Output:
	// tensor map of float32 [100 70], strides [400], box [64 32], swizzle none
	// row 0: [4864 4865 4866] ... [4899 0] ; row 21: [6964 6965] ; row 22: [0 0]
	// engine: tensor maps on fake:1 (Prism fake CPU): fake: Prism fake CPU has no tensor maps (an OpenCL device): unsupported
}

// ExampleAuto launches a kernel over exactly n work-items and lets the launch choose the
// work-group size within the compiled kernel's and the device's limits: 256 items where
// they allow it, 32 on Mesa's Rusticl, which allows no more; always a divisor of n, so
// no work-item runs past n. It opens the first device of the first backend that has one:
// a program imports a backend (_ "github.com/prism-compute/prism/cl") and finds its
// devices; here the in-memory fake backend stands in.
func ExampleAuto() {
	fake.Register()
	ctx := context.Background()
	dev, err := firstDevice(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err != nil {
		log.Fatal(err)
	}
	const n = 1000
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = float32(i), 1
	}
	x, err := engine.Upload(ctx, q, xs)
	if err != nil {
		log.Fatal(err)
	}
	y, err := engine.Upload(ctx, q, ys)
	if err != nil {
		log.Fatal(err)
	}
	prog, err := dev.Build(axpySource)
	if err != nil {
		log.Fatal(err)
	}
	k, err := prog.Kernel("prism_axpy")
	if err != nil {
		log.Fatal(err)
	}

	r := engine.Range1D(n, engine.Auto)
	if err := q.Launch(k, r, int32(n), int32(0), float32(2), x, y); err != nil {
		log.Fatal(err)
	}
	out, err := y.Download(ctx, q)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out[0], out[1], out[n-1])

	// Resolve tells the work-group size the launch used.
	chosen, err := k.Resolve(r)
	if err != nil {
		log.Fatal(err)
	}
	l := chosen.Local[0]
	fmt.Println("global", chosen.Global[0], "in work-groups that divide it:", n%l == 0 && l <= k.MaxWorkGroupSize())
	// Output:
	// 1 3 1999
	// global 1000 in work-groups that divide it: true
}

// firstDevice opens the first device of the first registered backend that has one.
func firstDevice(ctx context.Context) (*engine.Device, error) {
	for _, b := range engine.Backends() {
		infos, err := engine.Devices(ctx, b)
		if err != nil || len(infos) == 0 {
			continue // a backend whose library is missing has no device here
		}
		return engine.Open(ctx, b+":"+infos[0].ID)
	}
	return nil, fmt.Errorf("no device: import a backend (_ \"github.com/prism-compute/prism/cl\"): %w", engine.ErrNotFound)
}
