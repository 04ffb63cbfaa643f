package gemm

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestBLASLtVariants checks which ops list the cuBLASLt baseline: those of tf32, float16,
// bfloat16 and float8e4m3, each as its only vendor variant (so that bench's vendor column
// is cuBLASLt's), a CUDA variant; float8e5m2 and float32x3tf32 have none, float32 and
// float64 keep cuBLAS and CLBlast.
func TestBLASLtVariants(t *testing.T) {
	for _, op := range Family().Ops {
		var vendors []string
		var lt *kernels.Variant
		for i, v := range op.Variants {
			if v.Vendor {
				vendors = append(vendors, v.Name)
			}
			if v.Name == "cuBLASLt" {
				lt = &op.Variants[i]
			}
		}
		var want []string
		switch op.Type {
		case "tf32", "float16", "bfloat16", "float8e4m3":
			want = []string{"cuBLASLt"}
		case "float32", "float64":
			want = []string{"cuBLAS", "CLBlast"}
		}
		if !slices.Equal(vendors, want) {
			t.Errorf("%s: vendor variants %v, want %v", op.Name, vendors, want)
		}
		if lt != nil && (lt.Backend != "cuda" || !strings.Contains(lt.Doc, "cublasLtMatmul")) {
			t.Errorf("%s: cuBLASLt variant %+v", op.Name, *lt)
		}
	}
}

// TestBLASLt runs the cuBLASLt variant of every op that lists it, on every layout, at
// sizes that are no multiple of a tile (M = N = K = 1, 17, 255 beside 128; the batched ops
// 8 such matrices), and verifies each product against the float64 reference with the
// precision's tolerance (gemmInstance.Verify, as for Prism's kernels), twice, over two
// input sets. Off CUDA the variant must refuse (ErrUnsupported). On a CUDA GPU every op of
// tf32, float16 and bfloat16 must run at every size; float8e4m3 must run in the layout nt
// at 128 (its TN form), refuse the other layouts before sm_100 saying why, and may refuse a
// size whose rows are not a multiple of 16 bytes (the heuristic has no algorithm, said as
// unsupported). PRISM_REQUIRE=cuda makes a missing GPU a failure, =cublaslt (or blas,
// cublas) a missing library.
func TestBLASLt(t *testing.T) {
	var ops []kernels.Op
	for _, op := range Family().Ops {
		if slices.Contains(op.VariantNames(), "cuBLASLt") {
			ops = append(ops, op)
		}
	}
	refuse := func(dev *engine.Device) error {
		q, err := dev.NewQueue()
		if err != nil {
			return err
		}
		defer q.Close()
		for _, op := range ops {
			in, err := op.Setup(context.Background(), q, kernels.Params{Size: 16 * 16, Variant: "cuBLASLt"})
			if err == nil {
				in.Close()
			}
			if !errors.Is(err, engine.ErrUnsupported) {
				return err
			}
		}
		return engine.ErrUnsupported
	}
	kerneltest.ForEachCUDADevice(t, "cuBLASLt", refuse, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if _, err := ltLibrary(dev); err != nil {
			if enginetest.Required("cublaslt") {
				t.Fatalf("PRISM_REQUIRE names cublaslt: %v", err)
			}
			enginetest.RequireVendorOrSkip(t, dev, "blas", err)
		}
		cc := dev.Info().ComputeCapability
		for _, op := range ops {
			batch := 1
			if strings.HasPrefix(op.Name, "gemm/batched/") {
				batch = gemmOpBatch
			}
			fp8 := op.Type == "float8e4m3"
			for _, n := range []int{1, 17, 128, 255} {
				t.Run(op.Name+"/"+strconv.Itoa(n), func(t *testing.T) {
					in, err := op.Setup(t.Context(), q, kernels.Params{Size: batch * n * n, Seed: 7, Rotate: true, Variant: "cuBLASLt"})
					if errors.Is(err, engine.ErrUnsupported) && fp8 {
						nt := strings.HasPrefix(op.Name, "gemm/nt/")
						switch {
						case !nt && cc < 100 && !strings.Contains(err.Error(), `"TN" form`):
							t.Errorf("refused without naming the TN form: %v", err)
						case nt && n == 128 && cc >= 89:
							t.Errorf("the TN form at 128 is refused: %v", err)
						}
						t.Skip(err)
					}
					if err != nil {
						t.Fatal(err)
					}
					defer in.Close()
					if lib := in.(interface{ Library() string }).Library(); !strings.HasPrefix(lib, "cuBLASLt ") {
						t.Errorf("Library() = %q", lib)
					}
					for run := range 2 {
						if err := in.Run(t.Context(), q); err != nil {
							t.Fatal(err)
						}
						if err := in.Verify(t.Context(), q); err != nil {
							t.Fatalf("run %d (%s): %v", run, in.Shape(), err)
						}
					}
				})
			}
		}
	})
}

// ltLibrary loads the device's cuBLASLt.
func ltLibrary(dev *engine.Device) (engine.Library, error) {
	b, err := dev.BLAS()
	if err != nil {
		return engine.Library{}, err
	}
	return b.MixedLibrary()
}
