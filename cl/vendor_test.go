//go:build !noopencl

package cl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/enginetest"
)

// The conformance suite (TestConformance) checks CLBlast's GEMMs and clFFT's transforms
// against float64 references on every device, and concurrent calls (on PoCL, through the
// shared queue); the tests here check what is particular to this backend: the loader, the
// versions, the translation to clFFT's layout, the status codes. PRISM_REQUIRE=clblast (or
// clfft, or blas, fft) turns a missing library from a skip into a failure.

// skipVendor returns why the vendor libraries are not tested, or "": not under Oclgrind,
// whose checks are for Prism's kernels. Seen here (Oclgrind 21.10, CLBlast 1.5.3, clFFT
// 2.12.2): --uninitialized reports CLBlast's direct GEMM kernels (XgemmDirectTN, ...) and
// clFFT's (fft_fwd), which compute on local and private memory left uninitialized where a
// tile overhangs the data and discard those results; and under that flag clFFT's
// transforms of 1000, 8x7 or 5x64 points come out NaN, while they pass under Oclgrind
// without it and on PoCL.
func skipVendor(t *testing.T) string {
	if underOclgrind(testDevices(t)) {
		return "vendor libraries are not run under Oclgrind: its checks are for Prism's kernels, and it flags CLBlast's and clFFT's (see skipVendor)"
	}
	return ""
}

// vendorDevice opens each OpenCL device with its vendor library of kind ("blas" or "fft"),
// skipping (or failing, under PRISM_REQUIRE) when the library is missing.
func vendorDevices(t *testing.T, f func(t *testing.T, dev *engine.Device)) {
	if reason := skipVendor(t); reason != "" {
		t.Skip(reason)
	}
	forEachDevice(t, f)
}

// TestVendorLibraries checks what CLBlast and clFFT report: a name, a version in numbers
// and the file loaded.
func TestVendorLibraries(t *testing.T) {
	vendorDevices(t, func(t *testing.T, dev *engine.Device) {
		b, err := dev.BLAS()
		enginetest.RequireVendorOrSkip(t, dev, "blas", err)
		f, err := dev.FFT()
		enginetest.RequireVendorOrSkip(t, dev, "fft", err)
		version := regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`)
		for _, c := range []struct {
			lib  engine.Library
			name string
		}{{b.Library(), "CLBlast"}, {f.Library(), "clFFT"}} {
			t.Logf("%s: %v", dev.ID(), c.lib)
			if c.lib.Name != c.name || !version.MatchString(c.lib.Version) || !filepath.IsAbs(c.lib.Path) {
				t.Errorf("Library() = %+v: want %s, a version in numbers, an absolute path", c.lib, c.name)
			}
			if _, err := os.Stat(c.lib.Path); err != nil {
				t.Errorf("%s's path: %v", c.name, err)
			}
		}
	})
}

// withVendorNames points the loaders at other file names for one test, forgetting what
// was loaded, and restores both afterwards. A failed load changes nothing in the C tables,
// so the libraries loaded before stay usable.
func withVendorNames(t *testing.T, blasNames, fftNames []string) {
	clblastState.mu.Lock()
	clfftState.mu.Lock()
	oldB, oldF := clblastLibraries, clfftLibraries
	libB, libF := clblastState.lib, clfftState.lib
	clblastLibraries, clfftLibraries = blasNames, fftNames
	clblastState.lib, clfftState.lib = nil, nil
	clfftState.mu.Unlock()
	clblastState.mu.Unlock()
	t.Cleanup(func() {
		clblastState.mu.Lock()
		clfftState.mu.Lock()
		defer clblastState.mu.Unlock()
		defer clfftState.mu.Unlock()
		clblastLibraries, clfftLibraries = oldB, oldF
		if clblastState.lib == nil {
			clblastState.lib = libB
		}
		if clfftState.lib == nil {
			clfftState.lib = libF
		}
	})
}

// TestVendorMissing points the loader at libraries that do not exist: the error wraps
// engine.ErrUnavailable, names every file tried (PRISM_VENDOR_PATH's directories first)
// with the loader's message, and the device stays usable.
func TestVendorMissing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(driver.VendorPathEnv, dir)
	withVendorNames(t, []string{"libclblast-missing.so.1"}, []string{"libclFFT-missing.so.2", "libclFFT-missing.so"})
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		_, berr := dev.BLAS()
		_, ferr := dev.FFT()
		for _, c := range []struct {
			err  error
			want []string
		}{
			{berr, []string{"CLBlast", filepath.Join(dir, "libclblast-missing.so.1"), "libclblast-missing.so.1: cannot open shared object file", dev.ID()}},
			{ferr, []string{"clFFT", filepath.Join(dir, "libclFFT-missing.so.2"), "libclFFT-missing.so: cannot open", driver.VendorPathEnv}},
		} {
			if !errors.Is(c.err, engine.ErrUnavailable) {
				t.Errorf("%v: want an error wrapping ErrUnavailable", c.err)
			}
			for _, w := range c.want {
				if !strings.Contains(fmt.Sprint(c.err), w) {
					t.Errorf("error does not mention %q: %v", w, c.err)
				}
			}
			if i := strings.Index(fmt.Sprint(c.err), dir); i < 0 || i > strings.Index(fmt.Sprint(c.err), "; ") {
				t.Errorf("PRISM_VENDOR_PATH is not tried first: %v", c.err)
			}
		}
		t.Log(berr)
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := engine.Upload(t.Context(), q, []float32{1}); err != nil {
			t.Errorf("the device after a failed load: %v", err)
		}
	})
}

// TestVendorStatus checks the names of the libraries' status codes and the sentinels they
// match.
func TestVendorStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		name string
		is   error
	}{
		{BLASInvalidLeadDimA, "CLBlastInvalidLeadDimA (-1016)", engine.ErrInvalidArg},
		{BLASInsufficientMemoryC, "CLBlastInsufficientMemoryC (-1009)", engine.ErrInvalidArg},
		{BLASNoDoublePrecision, "CLBlastNoDoublePrecision (-2044)", engine.ErrUnsupported},
		{BLASInsufficientMemoryTemp, "CLBlastInsufficientMemoryTemp (-2050)", engine.ErrOutOfMemory},
		{BLASStatus(OutOfResources), "CL_OUT_OF_RESOURCES (-5)", engine.ErrOutOfMemory},
		{FFTNotImplemented, "CLFFT_NOTIMPLEMENTED (4097)", engine.ErrUnsupported},
		{FFTInvalidPlan, "CLFFT_INVALID_PLAN (4102)", engine.ErrInvalidArg},
		{FFTStatus(InvalidMemObject), "CL_INVALID_MEM_OBJECT (-38)", engine.ErrInvalidArg},
	} {
		if c.err.Error() != c.name || !errors.Is(c.err, c.is) {
			t.Errorf("%v: want %q, matching %v", c.err, c.name, c.is)
		}
	}
	err := checkCLFFT("clfftBakePlan", FFTDeviceNoDouble)
	var st FFTStatus
	if !errors.As(err, &st) || st != FFTDeviceNoDouble || err.Error() != "cl: clfftBakePlan: CLFFT_DEVICE_NO_DOUBLE (4103)" {
		t.Errorf("checkCLFFT = %v", err)
	}
	if checkCLBlast("CLBlastSgemm", 0) != nil || checkCLFFT("clfftSetup", 0) != nil {
		t.Error("success is an error")
	}
}

// TestCLFFTLayout checks the translation of row-major shapes to clFFT's lengths, strides
// and distances.
func TestCLFFTLayout(t *testing.T) {
	for _, c := range []struct {
		spec driver.FFTSpec
		want clfftLayout
	}{
		{driver.FFTSpec{Kind: driver.C2C, Shape: []int{8}}, clfftLayout{[]int{8}, []int{1}, []int{1}, 8, 8}},
		{driver.FFTSpec{Kind: driver.R2C, Shape: []int{8}}, clfftLayout{[]int{8}, []int{1}, []int{1}, 8, 5}},
		{driver.FFTSpec{Kind: driver.R2C, Shape: []int{7}}, clfftLayout{[]int{7}, []int{1}, []int{1}, 7, 4}},
		{driver.FFTSpec{Kind: driver.C2C, Shape: []int{3, 8}}, clfftLayout{[]int{8, 3}, []int{1, 8}, []int{1, 8}, 24, 24}},
		{driver.FFTSpec{Kind: driver.R2C, Shape: []int{3, 8}}, clfftLayout{[]int{8, 3}, []int{1, 8}, []int{1, 5}, 24, 15}},
	} {
		if got := clfftLayoutOf(c.spec); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%v %v: %+v, want %+v", c.spec.Kind, c.spec.Shape, got, c.want)
		}
	}
}

// BenchmarkVendor times CLBlast's SGEMM and clFFT's c2c with Queue.Timed, beside nothing
// else, after a warm-up call: `go test -run '^$' -bench Vendor ./cl`.
func BenchmarkVendor(b *testing.B) {
	infos, err := engine.Devices(context.Background(), "opencl")
	if err != nil || len(infos) == 0 {
		b.Skipf("no OpenCL device: %v", err)
	}
	dev, err := engine.Open(context.Background(), "opencl:"+infos[0].ID)
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprintf("CLBlastSgemm/n=%d", n), func(b *testing.B) {
			blas, err := dev.BLAS()
			if err != nil {
				b.Skip(err)
			}
			x := make([]float32, n*n)
			for i := range x {
				x[i] = float32(i%7) - 3
			}
			a, _ := engine.Upload(b.Context(), q, x)
			c, _ := engine.NewBuffer[float32](dev, n*n)
			defer a.Close()
			defer c.Close()
			spec := engine.GemmSpec{M: n, N: n, K: n}
			run := func() error { return engine.Gemm(blas, q, spec, 1, a, a, 0, c) }
			benchTimed(b, q, run, 2*float64(n)*float64(n)*float64(n))
		})
	}
	for _, n := range []int{1 << 12, 1 << 20} {
		b.Run(fmt.Sprintf("clFFT/c2c/n=%d", n), func(b *testing.B) {
			f, err := dev.FFT()
			if err != nil {
				b.Skip(err)
			}
			p, err := f.Plan(engine.FFTSpec{Kind: engine.C2C, Shape: []int{n}})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			in, _ := engine.Upload(b.Context(), q, make([]float32, 2*n))
			out, _ := engine.NewBuffer[float32](dev, 2*n)
			defer in.Close()
			defer out.Close()
			run := func() error { return engine.RunFFT(p, q, in, out) }
			benchTimed(b, q, run, 5*float64(n)*math.Log2(float64(n)))
		})
	}
}

// benchTimed runs f once to warm up, then once per iteration under Queue.Timed, and
// reports the mean device time and flop rate.
func benchTimed(b *testing.B, q *engine.Queue, f func() error, flops float64) {
	ctx := context.Background()
	if err := f(); err != nil {
		b.Fatal(err)
	}
	if err := q.Finish(ctx); err != nil {
		b.Fatal(err)
	}
	var total float64
	iters := 0
	for b.Loop() {
		d, err := q.Timed(ctx, f)
		if err != nil {
			b.Fatal(err)
		}
		total += d.Seconds()
		iters++
	}
	b.ReportMetric(total/float64(iters)*1e6, "device-us/op")
	b.ReportMetric(flops*float64(iters)/total/1e9, "GFLOP/s")
}
