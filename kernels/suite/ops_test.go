package suite_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
	"github.com/prism-compute/prism/kernels/suite"
)

// TestOps runs every op of the catalog as `prism bench` and `prism run` do (the same
// Instance), on every device: set up with rotation, run twice (two input sets where the op
// rotates), verified after each run; a size of 0 is refused.
func TestOps(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, op := range suite.Ops() {
			for _, v := range op.Variants {
				t.Run(op.Name+"/"+v.Name, func(t *testing.T) { testVariant(t, q, op, v) })
			}
		}
	})
}

// testVariant runs one variant of op as TestOps describes; a variant the device cannot run
// must refuse with ErrUnsupported, before any work.
func testVariant(t *testing.T, q *engine.Queue, op kernels.Op, v kernels.Variant) {
	oclgrind := strings.Contains(q.Device().Info().Platform, "Oclgrind")
	if v.Vendor && oclgrind {
		// Oclgrind would check the library's kernels, not Prism's: its uninitialized-read
		// check flags CLBlast's and clFFT's own kernels (they pass on PoCL).
		t.Skip("vendor library kernels are not checked under Oclgrind")
	}
	if oclgrind && (op.Family == "sort" || op.Family == "attention") {
		// Their packages run the same kernels under Oclgrind (TestSort: every key type,
		// both orders, pairs; TestAttention, TestFlash, TestOpsAtShapes), at more sizes;
		// here they took half of TestOps' time (125 s in CI beside another package).
		t.Skip("checked under Oclgrind by the family's own tests (kernels/sort, kernels/attention)")
	}
	if err := v.Fits(q.Device()); err != nil {
		if _, serr := op.Setup(t.Context(), q, kernels.Params{Size: 1, Variant: v.Name}); !errors.Is(serr, engine.ErrUnsupported) {
			t.Errorf("variant %s does not fit (%v), yet Setup gave %v, want ErrUnsupported", v.Name, err, serr)
		}
		t.Skip(err)
	}
	if oclgrind && op.Family == "gemm" && op.Type != "float32" {
		// Every precision's GEMM is the one portable kernel (gemm.cl, batches in the grid's
		// third dimension) built for its types, which kernels/gemm runs under Oclgrind in the
		// four layouts (TestPrecisions; float64 in TestGEMM; batches of float32 in TestGEMM
		// and TestOpShapes); the float32 ops here take the op's set-up and rotation through it.
		// The other precisions' 25 ops took about 25 s of TestOps there.
		t.Skip("checked under Oclgrind by kernels/gemm's TestPrecisions and TestGEMM; the float32 ops run here")
	}
	if oclgrind && op.Family == "conv" && v.Name == "regtile" {
		// kernels/conv's TestRegtileOp sets this variant up and runs it under Oclgrind (and
		// TestRegtile its kernel at edge shapes); 2.7 s here.
		t.Skip("checked under Oclgrind by kernels/conv's TestRegtileOp")
	}
	if oclgrind && op.Family == "conv" && op.Name != "conv/3x3/float32" {
		// The conv ops are one kernel (conv2d) at other filter sides and strides, which
		// kernels/conv's TestConv runs under Oclgrind (1x1, 5x5 with stride 2 among them);
		// conv/3x3 takes the op's set-up and rotation through it here (5x5s2 took 4.2 s).
		t.Skip("checked under Oclgrind by kernels/conv's TestConv; conv/3x3 runs here")
	}
	if _, err := op.Setup(t.Context(), q, kernels.Params{Size: 0, Variant: v.Name}); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("size 0: %v, want ErrInvalidArg", err)
	}
	size := op.QuickSize
	if kerneltest.Small() {
		switch op.Family {
		case "overlap":
			// 2048 multiply-adds an element, and Setup times the pipeline 12 times: minutes
			// even at 1024 elements.
			t.Skip("overlap's pipeline is too long for Oclgrind; it runs on PoCL and Rusticl")
		case "transfer":
			// After a host write into part of a buffer, Oclgrind 21.10's --uninitialized
			// flags bytes of it past the write that a kernel wrote before (the guard band
			// transfer_check reads), though their values are right: a false report.
			t.Skip("Oclgrind misreads the guard band after a host-to-device copy as uninitialized; transfer runs on PoCL and Rusticl")
		}
		size = min(size, 1024) // Oclgrind: about 10^4 operations per second
	}
	if kerneltest.Slow(q.Device()) {
		// Two thirds of TestOps' time went to llvmpipe at the quick sizes. The families'
		// tests run their kernels there at edge sizes; the op's set-up, runs and checks
		// need no more than this.
		size = min(size, 1<<16)
	}
	in, err := op.Setup(t.Context(), q, kernels.Params{Size: size, Seed: 11, Rotate: true, Variant: v.Name})
	if errors.Is(err, engine.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := in.Close(); err != nil {
			t.Error(err)
		}
	}()
	if m := in.Model(); m.Flops < 0 || m.Bytes < 0 || (m.Bytes == 0 && m.Flops > 0) || (m.Bytes == 0 && op.Family != "alloc" && op.Family != "launch") {
		t.Errorf("model %+v: want bytes moved, or no work at all for a latency (alloc, launch)", m)
	}
	for run := range 2 {
		if err := in.Run(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		if err := in.Verify(t.Context(), q); err != nil {
			t.Fatalf("run %d (%s): %v", run, in.Shape(), err)
		}
	}
	t.Logf("%s (%s): %s verified", op.Name, v.Name, in.Shape())
}

// TestOpsSmallShapes runs the portable variant of every op as a device with fewer
// work-items per group and less local memory would (kernels.EnvMaxWorkGroup and
// EnvMaxLocalBytes lower the limits the families build for), on the CPU devices (GPUs run
// their default shapes in TestOps): the families must build smaller configurations and
// still verify, or say unsupported naming the limit that stops them.
func TestOpsSmallShapes(t *testing.T) {
	for _, lim := range []struct {
		wg, local string
		// unsupported lists the families that cannot run under these limits, with what
		// their error must name.
		unsupported map[string]string
	}{
		{"32", "", nil},    // Mesa's Rusticl on llvmpipe reports 32 for every kernel
		{"8", "4096", nil}, // below a warp, 4 KiB of local memory
		// The smallest work-group, and too little local memory for three families.
		{"1", "512", map[string]string{"histogram": "bytes of local memory", "gemm": "bytes of local memory", "attention": "bytes of local memory"}},
	} {
		t.Run("wg="+lim.wg+",local="+lim.local, func(t *testing.T) {
			t.Setenv(kernels.EnvMaxWorkGroup, lim.wg)
			t.Setenv(kernels.EnvMaxLocalBytes, lim.local)
			kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
				if dev.Info().Kind != engine.KindCPU || kerneltest.Small() {
					t.Skip("small shapes run on CPU devices at full speed (TestOps covers the default shapes)")
				}
				if kerneltest.Slow(dev) {
					// The families choose their configurations under these limits on the host;
					// PoCL builds and runs them here. (Rusticl's own limit is 32 for every
					// kernel: TestOps runs those shapes on it.)
					t.Skip("small shapes run on PoCL; llvmpipe is slow (kerneltest.Slow)")
				}
				for _, op := range suite.Ops() {
					t.Run(op.Name, func(t *testing.T) {
						in, err := op.Setup(t.Context(), q, kernels.Params{Size: min(op.QuickSize, 4099), Seed: 5, Portable: true})
						if errors.Is(err, engine.ErrUnsupported) && op.Type == "float64" && !dev.Info().FP64 {
							t.Skip(err)
						}
						if want, ok := lim.unsupported[op.Family]; ok {
							if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), want) {
								t.Fatalf("Setup = %v, want ErrUnsupported naming %q", err, want)
							}
							return
						}
						if lim.unsupported != nil && errors.Is(err, engine.ErrUnsupported) && strings.Contains(err.Error(), "bytes of local memory") {
							// Implementations count a kernel's local memory differently (Rusticl
							// counts more than PoCL): at this limit any family may not fit, and
							// must say so, naming the local memory.
							t.Skip(err)
						}
						if err != nil {
							t.Fatal(err)
						}
						defer in.Close()
						if err := in.Run(t.Context(), q); err != nil {
							t.Fatal(err)
						}
						if err := in.Verify(t.Context(), q); err != nil {
							t.Fatalf("%s: %v", in.Shape(), err)
						}
					})
				}
			})
		})
	}
}
