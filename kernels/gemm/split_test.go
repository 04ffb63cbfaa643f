package gemm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// splitCase is one split of TestSplitGEMM: an op, its size and the shares (nil: measured;
// for two devices, else evenly).
type splitCase struct {
	op   string
	n    int
	frac []float64
}

// splitCases are the splits of TestSplitGEMM: every layout at sizes whose rows straddle
// the portable kernel's tiles (TS 32 under Oclgrind, 128 on CPUs), fixed shares that leave
// a device out, uneven ones, measured ones, and the batch split by matrices.
func splitCases() []splitCase {
	if kerneltest.Small() {
		return []splitCase{
			{"gemm/nn/float32", 1, []float64{0.5, 0.5}},
			{"gemm/nn/float32", 7, []float64{0.3, 0.7}},
			{"gemm/tn/float32", 9, nil},
			{"gemm/nt/float32", 17, []float64{0, 1}},
			{"gemm/batched/float32", 8 * 5 * 5, []float64{0.3, 0.7}},
		}
	}
	return []splitCase{
		{"gemm/nn/float32", 1, []float64{0.5, 0.5}},
		{"gemm/nn/float32", 7, []float64{0.3, 0.7}},
		{"gemm/nn/float32", 133, nil},
		{"gemm/nn/float64", 67, []float64{0.3, 0.7}},
		{"gemm/nn/float64", 33, []float64{1, 0}},
		{"gemm/nt/float32", 65, []float64{0, 1}},
		{"gemm/tn/float32", 67, []float64{0.3, 0.7}},
		{"gemm/tn/float32", 45, nil},
		{"gemm/batched/float32", 8 * 33 * 33, []float64{0.3, 0.7}},
		{"gemm/batched/float32", 8 * 9 * 9, nil},
		{"gemm/nn/bfloat16", 37, []float64{0.6, 0.4}},
		{"gemm/batched/tf32", 8 * 17 * 17, []float64{0.5, 0.5}},
	}
}

// TestSplitGEMM splits GEMMs across the OpenCL devices found (one opened twice where there
// is one) and checks the assembled D against the float64 reference, the shares against the
// fractions asked for, and the model and shape against the one-device instance's.
func TestSplitGEMM(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	for _, c := range splitCases() {
		op := opNamed(t, c.op)
		size := c.n * c.n
		if strings.Contains(c.op, "batched") {
			size = c.n
		}
		frac := c.frac
		if frac != nil && len(devs) != 2 {
			frac = kerneltest.Evenly(len(devs))
		}
		t.Run(strings.ReplaceAll(c.op, "/", "_")+"/"+sizeName(size, frac), func(t *testing.T) {
			if strings.HasSuffix(c.op, "float64") && slices.ContainsFunc(devs, func(d *engine.Device) bool { return !d.Info().FP64 }) {
				t.Skip("a device reports no fp64")
			}
			p := kernels.Params{Size: size, Seed: 11}
			in, err := op.Split(t.Context(), devs, p, kernels.SplitOptions{Fractions: frac})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			checkShares(t, in.Shares(), devs, unitsOf(in), frac)
			t.Logf("%s: shares %+v, variants %q", in.Shape(), in.Shares(), in.(interface{ Variants() []string }).Variants())
			for range 2 {
				if err := in.Run(t.Context()); err != nil {
					t.Fatal(err)
				}
				if err := in.Verify(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if frac != nil {
				kerneltest.CheckRecheck(t, in) // the rows laid out for one device and back
			}
			q, err := devs[0].NewQueue()
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			one, err := op.Setup(t.Context(), q, p)
			if err != nil {
				t.Fatal(err)
			}
			defer one.Close()
			if in.Model() != one.Model() || in.Shape() != one.Shape() {
				t.Errorf("model %+v, shape %q; the one-device instance has %+v, %q", in.Model(), in.Shape(), one.Model(), one.Shape())
			}
		})
	}
}

// sizeName names a case by its size and shares.
func sizeName(size int, frac []float64) string {
	if frac == nil {
		return fmt.Sprintf("size=%d/measured", size)
	}
	return fmt.Sprintf("size=%d/%v", size, frac)
}

// unitsOf returns the units a split instance divides: rows of a GEMM, matrices of a batch.
func unitsOf(in kernels.SplitInstance) int {
	switch sp := in.(type) {
	case *gemmSplit[float32, float32]:
		return sp.units()
	case *gemmSplit[float64, float64]:
		return sp.units()
	case *gemmSplit[engine.BFloat16, float32]:
		return sp.units()
	}
	return -1
}

func (sp *gemmSplit[In, Out]) units() int {
	if sp.byBatch {
		return sp.s.Batch
	}
	return sp.s.M
}

// checkShares checks that shares name devs in order and add up to total, and that fixed
// fractions gave each device its rounded share (the largest taking the remainder) and
// none to a device given zero.
func checkShares(t *testing.T, shares []kernels.Share, devs []*engine.Device, total int, frac []float64) {
	t.Helper()
	if len(shares) != len(devs) {
		t.Fatalf("%d shares for %d devices", len(shares), len(devs))
	}
	sum := 0
	for i, s := range shares {
		if s.Device != devs[i].ID() {
			t.Errorf("share %d is %s's, want %s's", i, s.Device, devs[i].ID())
		}
		if s.Units < 0 {
			t.Errorf("share %d: %d units", i, s.Units)
		}
		if math.Abs(s.Fraction-float64(s.Units)/float64(total)) > 1e-12 {
			t.Errorf("share %d: fraction %v for %d units of %d", i, s.Fraction, s.Units, total)
		}
		if frac != nil {
			if frac[i] == 0 && s.Units != 0 {
				t.Errorf("share %d: %d units for a fraction of 0", i, s.Units)
			}
			if d := math.Abs(float64(s.Units) - frac[i]*float64(total)); d > float64(len(devs)) {
				t.Errorf("share %d: %d units of %d for a fraction of %v", i, s.Units, total, frac[i])
			}
		} else if s.Rate <= 0 {
			t.Errorf("share %d: measured rate %v", i, s.Rate)
		}
		sum += s.Units
	}
	if sum != total {
		t.Errorf("shares add up to %d units, want %d", sum, total)
	}
}

// TestSplitGEMMInputs checks that a split multiplies the one-device op's inputs: the same
// alpha, beta, A, B and C from the same seed.
func TestSplitGEMMInputs(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	for _, name := range []string{"gemm/tn/float32", "gemm/batched/float32"} {
		op := opNamed(t, name)
		p := kernels.Params{Size: 8 * 9 * 9, Seed: 5}
		in, err := op.Split(t.Context(), devs, p, kernels.SplitOptions{Fractions: kerneltest.Evenly(len(devs))})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		q, err := devs[0].NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		inst, err := op.Setup(t.Context(), q, p)
		if err != nil {
			t.Fatal(err)
		}
		defer inst.Close()
		one := inst.(*gemmInstance[float32, float32])
		ab, err := one.ab.Last(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		c, err := one.c.Last(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		sp := in.(*gemmSplit[float32, float32])
		if sp.alpha != one.alpha || sp.beta != one.beta || sp.s != one.shape ||
			!slices.Equal(sp.a, ab[0]) || !slices.Equal(sp.b, ab[1]) || !slices.Equal(sp.c, c[0]) {
			t.Errorf("%s: the split's inputs (alpha %v, beta %v, %v) differ from the one-device op's (alpha %v, beta %v, %v)",
				name, sp.alpha, sp.beta, sp.s, one.alpha, one.beta, one.shape)
		}
	}
}

// TestSplitGEMMVerify checks that the split's Verify finds a wrong element of the assembled
// D and names the device that computed it, in full and, above gemmFullCheck, sampled (a
// corner).
func TestSplitGEMMVerify(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	sizes := []int{37}
	if !kerneltest.Small() {
		sizes = append(sizes, 520) // 520^3 above gemmFullCheck: a sample is checked
	}
	for _, n := range sizes {
		if (n*n*n > gemmFullCheck) != (n == 520) {
			t.Fatalf("%d^3 is on the wrong side of gemmFullCheck", n)
		}
		in, err := opNamed(t, "gemm/nn/float32").Split(t.Context(), devs, kernels.Params{Size: n * n, Seed: 2}, kernels.SplitOptions{Fractions: kerneltest.Evenly(len(devs))})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		if err := in.Verify(t.Context()); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("Verify before Run: %v, want an error wrapping ErrInvalidArg", err)
		}
		if err := in.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := in.Verify(t.Context()); err != nil {
			t.Fatal(err)
		}
		sp := in.(*gemmSplit[float32, float32])
		last := devs[len(devs)-1].ID()
		*sp.at(sp.lc - 1) += 1
		if err := in.Verify(t.Context()); !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), "computed on "+last) {
			t.Errorf("n=%d, last element wrong: %v; want an error wrapping ErrVerify naming %s", n, err, last)
		}
	}
}

// TestSplitGEMMVariants checks that a named variant runs on every device (portable, and
// the vendor BLAS where it is installed) and that a variant a device cannot run fails the
// setup, as Setup does.
func TestSplitGEMMVariants(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	op := opNamed(t, "gemm/nn/float32")
	for _, v := range []string{"portable", "CLBlast"} {
		p := kernels.Params{Size: 29 * 29, Seed: 4, Variant: v}
		in, err := op.Split(t.Context(), devs, p, kernels.SplitOptions{Fractions: kerneltest.Evenly(len(devs))})
		if v == "CLBlast" && (errors.Is(err, engine.ErrUnsupported) || errors.Is(err, engine.ErrUnavailable)) {
			t.Logf("CLBlast: %v", err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		for i, got := range in.(*gemmSplit[float32, float32]).Variants() {
			if in.Shares()[i].Units > 0 && !strings.HasPrefix(got, v) {
				t.Errorf("%s: device %d runs %q", v, i, got)
			}
		}
		if err := in.Run(t.Context()); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if err := in.Verify(t.Context()); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if err := errors.Join(in.Close(), in.Close()); err != nil {
			t.Errorf("Close twice: %v", err)
		}
		if err := in.Run(t.Context()); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("Run after Close: %v, want an error wrapping ErrClosed", err)
		}
	}
	_, err := op.Split(t.Context(), devs, kernels.Params{Size: 64, Variant: "cuda-simt"}, kernels.SplitOptions{})
	if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "cuda-simt") || strings.Count(err.Error(), "kernels: ") != 1 {
		t.Errorf("cuda-simt on OpenCL devices: %v, want an error wrapping ErrUnsupported naming the variant, prefixed once", err)
	}
}

// TestSplitGEMMInvalid checks the arguments a split refuses with ErrInvalidArg.
func TestSplitGEMMInvalid(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	op := opNamed(t, "gemm/nn/float32")
	for _, c := range []struct {
		name string
		devs []*engine.Device
		size int
		frac []float64
	}{
		{"no devices", nil, 64, nil},
		{"size 0", devs, 0, nil},
		{"fractions too few", devs, 64, []float64{1}},
		{"fractions sum", devs, 64, append(kerneltest.Evenly(len(devs)-1), 0.5)},
		{"fraction negative", devs, 64, negative(len(devs))},
	} {
		in, err := op.Split(t.Context(), c.devs, kernels.Params{Size: c.size}, kernels.SplitOptions{Fractions: c.frac})
		if !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%s: %v, want an error wrapping ErrInvalidArg", c.name, err)
		}
		if in != nil {
			in.Close()
		}
	}
	// A shape runs on one device: the split says so, not that GEMM takes no shape.
	_, err := op.Split(t.Context(), devs, kernels.Params{Size: 64, Shape: "64x32x16"}, kernels.SplitOptions{})
	if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), `a shape ("64x32x16") runs on one device`) {
		t.Errorf("a shape: %v, want unsupported, saying a shape runs on one device", err)
	}
}

// TestSplitGEMMPoCLDevices splits across two distinct PoCL devices where
// POCL_DEVICES="pthread pthread" makes PoCL expose two.
func TestSplitGEMMPoCLDevices(t *testing.T) {
	if len(strings.Fields(os.Getenv("POCL_DEVICES"))) < 2 {
		t.Skip(`POCL_DEVICES does not name two PoCL devices (POCL_DEVICES="pthread pthread")`)
	}
	devs := kerneltest.SplitDevices(t, false)
	var pocl []*engine.Device
	for _, d := range devs {
		if strings.Contains(d.Info().Platform, "Portable Computing Language") && !slices.Contains(pocl, d) {
			pocl = append(pocl, d)
		}
	}
	if len(pocl) < 2 || pocl[0].ID() == pocl[1].ID() {
		t.Fatalf("POCL_DEVICES=%q gives PoCL devices %v; want two distinct", os.Getenv("POCL_DEVICES"), ids(pocl))
	}
	pocl = pocl[:2]
	for _, frac := range [][]float64{{0.3, 0.7}, nil} {
		in, err := opNamed(t, "gemm/nn/float32").Split(context.Background(), pocl, kernels.Params{Size: 99 * 99, Seed: 8}, kernels.SplitOptions{Fractions: frac})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		checkShares(t, in.Shares(), pocl, 99, frac)
		if err := in.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := in.Verify(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Logf("shares %+v", in.Shares())
	}
}

// negative returns n fractions summing to 1, the first negative.
func negative(n int) []float64 {
	f := kerneltest.Evenly(n)
	f[0], f[1] = f[0]-1, f[1]+1
	return f
}

func ids(devs []*engine.Device) []string {
	var out []string
	for _, d := range devs {
		out = append(out, d.ID())
	}
	return out
}

// TestChunking checks the chunks of a share: at most maxChunks, none smaller than the
// least (but a share smaller than it), summing to the share.
func TestChunking(t *testing.T) {
	for _, c := range []struct {
		units   int
		byBatch bool
		want    []int
	}{
		{1, false, []int{1}},
		{1023, false, []int{1023}},
		{1024, false, []int{512, 512}},
		{8192, false, []int{2048, 2048, 2048, 2048}},
		{2051, false, []int{513, 513, 513, 512}},
		{17, true, []int{9, 8}},
		{7, true, []int{7}},
	} {
		if got := chunking(c.units, c.byBatch); !slices.Equal(got, c.want) {
			t.Errorf("chunking(%d, %v) = %v, want %v", c.units, c.byBatch, got, c.want)
		}
	}
}

// TestSplitGEMMChunks runs splits whose shares compute in several chunks, each read back
// while the next computes, by rows (B shared by the chunks) and by matrices.
func TestSplitGEMMChunks(t *testing.T) {
	defer func(r, m int) { minChunkRows, minChunkMatrices = r, m }(minChunkRows, minChunkMatrices)
	minChunkRows, minChunkMatrices = 8, 1
	devs := kerneltest.SplitDevices(t, false)
	for _, c := range []struct {
		op   string
		size int
	}{{"gemm/nn/float32", 67 * 67}, {"gemm/tn/float32", 67 * 67}, {"gemm/batched/float32", 11}} {
		op := opNamed(t, c.op)
		in, err := op.Split(t.Context(), devs, kernels.Params{Size: c.size, Seed: 5}, kernels.SplitOptions{Fractions: kerneltest.Evenly(len(devs))})
		if err != nil {
			t.Fatalf("%s: %v", c.op, err)
		}
		sp := in.(*gemmSplit[float32, float32])
		most := 0
		for _, pt := range sp.Parts() {
			if pt != nil {
				most = max(most, len(pt.chunks))
			}
		}
		if most < 2 {
			t.Errorf("%s: shares %+v ran in one chunk each", c.op, in.Shares())
		}
		for range 2 {
			if err := in.Run(t.Context()); err != nil {
				t.Fatalf("%s: %v", c.op, err)
			}
			if err := in.Verify(t.Context()); err != nil {
				t.Fatalf("%s: %v", c.op, err)
			}
		}
		if err := in.Close(); err != nil {
			t.Errorf("%s: Close: %v", c.op, err)
		}
	}
}

// TestSplitGEMMBLASLt splits a bfloat16 GEMM over a CUDA device opened twice with the
// cuBLASLt variant named: each block runs through cuBLASLt's mixed-precision GEMM and the
// whole verifies against the reference. It skips without a CUDA device (fails under
// PRISM_REQUIRE=cuda) or without cuBLASLt.
func TestSplitGEMMBLASLt(t *testing.T) {
	ids := enginetest.DeviceIDs(t, "cuda")
	var devs []*engine.Device
	for range 2 {
		d, err := engine.Open(t.Context(), ids[0])
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		devs = append(devs, d)
	}
	op := opNamed(t, "gemm/nn/bfloat16")
	in, err := op.Split(t.Context(), devs, kernels.Params{Size: 256 * 256, Seed: 5, Variant: "cuBLASLt"}, kernels.SplitOptions{Fractions: []float64{0.5, 0.5}})
	if errors.Is(err, engine.ErrUnavailable) {
		t.Skipf("cuBLASLt: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	for i, v := range in.(*gemmSplit[engine.BFloat16, float32]).Variants() {
		if v != "cuBLASLt" {
			t.Errorf("device %d runs %q, want cuBLASLt", i, v)
		}
	}
	if err := in.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := in.Verify(t.Context()); err != nil {
		t.Fatal(err)
	}
}
