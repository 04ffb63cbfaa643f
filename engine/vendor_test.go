package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/engine/internal/fake"
)

// TestGemmRefused checks that every invalid GEMM is refused with an error that names the
// problem, before it reaches the driver.
func TestGemmRefused(t *testing.T) {
	dev, q := open(t, "fake:0")
	other, oq := open(t, "fake:1")
	b, err := dev.BLAS()
	if err != nil {
		t.Fatal(err)
	}
	buf := func(d *engine.Device, n int) *engine.Buffer[float32] {
		x, err := engine.NewBuffer[float32](d, n)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	a, bm, c := buf(dev, 64), buf(dev, 64), buf(dev, 64)
	small, foreign, closed := buf(dev, 15), buf(other, 64), buf(dev, 64)
	closed.Close()
	closedQ, _ := dev.NewQueue()
	closedQ.Close()
	ok := engine.GemmSpec{M: 4, N: 4, K: 4}
	for _, c := range []struct {
		name string
		want error
		msg  string
		call func() error
	}{
		{"nil BLAS", engine.ErrInvalidArg, "nil BLAS", func() error { return engine.Gemm(nil, q, ok, 1, a, bm, 0, c) }},
		{"zero M", engine.ErrInvalidArg, "M=0", func() error { return engine.Gemm(b, q, engine.GemmSpec{N: 4, K: 4}, 1, a, bm, 0, c) }},
		{"negative K", engine.ErrInvalidArg, "K=-1", func() error { return engine.Gemm(b, q, engine.GemmSpec{M: 4, N: 4, K: -1}, 1, a, bm, 0, c) }},
		{"negative stride", engine.ErrInvalidArg, "negative", func() error {
			return engine.Gemm(b, q, engine.GemmSpec{M: 4, N: 4, K: 4, StrideA: -1}, 1, a, bm, 0, c)
		}},
		{"lda below the row", engine.ErrInvalidArg, "lda 3 below the row length 4", func() error {
			return engine.Gemm(b, q, engine.GemmSpec{M: 4, N: 4, K: 4, LDA: 3}, 1, a, bm, 0, c)
		}},
		{"ldb below the transposed row", engine.ErrInvalidArg, "ldb 4 below the row length 5", func() error {
			return engine.Gemm(b, q, engine.GemmSpec{M: 2, N: 4, K: 5, LDB: 4, TransB: true}, 1, a, bm, 0, c)
		}},
		{"ldc below N", engine.ErrInvalidArg, "ldc 3 below N=4", func() error {
			return engine.Gemm(b, q, engine.GemmSpec{M: 4, N: 4, K: 4, LDC: 3}, 1, a, bm, 0, c)
		}},
		{"overlapping C", engine.ErrInvalidArg, "overlap", func() error {
			return engine.Gemm(b, q, engine.GemmSpec{M: 2, N: 2, K: 2, Batch: 2, StrideC: 3}, 1, a, bm, 0, c)
		}},
		{"A too short", engine.ErrInvalidArg, "buffer of A holds 15 elements, the spec reaches 16", func() error { return engine.Gemm(b, q, ok, 1, small, bm, 0, c) }},
		{"C too short for the batch", engine.ErrInvalidArg, "buffer of C holds 64 elements, the spec reaches 80", func() error {
			return engine.Gemm(b, q, engine.GemmSpec{M: 4, N: 4, K: 1, Batch: 5}, 1, a, bm, 0, c)
		}},
		{"C is A", engine.ErrInvalidArg, "in place", func() error { return engine.Gemm(b, q, ok, 1, a, bm, 0, a) }},
		{"nil B", engine.ErrInvalidArg, "nil buffer for B", func() error { return engine.Gemm(b, q, ok, 1, a, nil, 0, c) }},
		{"B of another device", engine.ErrInvalidArg, "belongs to fake:1", func() error { return engine.Gemm(b, q, ok, 1, a, foreign, 0, c) }},
		{"queue of another device", engine.ErrInvalidArg, "belongs to fake:0, not fake:1", func() error { return engine.Gemm(b, oq, ok, 1, foreign, foreign, 0, foreign) }},
		{"closed C", engine.ErrClosed, "closed", func() error { return engine.Gemm(b, q, ok, 1, a, bm, 0, closed) }},
		{"closed queue", engine.ErrClosed, "closed", func() error { return engine.Gemm(b, closedQ, ok, 1, a, bm, 0, c) }},
	} {
		before := fake.DeviceCalls(dev.Driver(), "BLAS.Gemm")
		err := c.call()
		if !errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), c.msg) {
			t.Errorf("%s: got %v, want an error wrapping %q that mentions %q", c.name, err, c.want, c.msg)
		}
		if n := fake.DeviceCalls(dev.Driver(), "BLAS.Gemm") - before; n != 0 {
			t.Errorf("%s: BLAS.Gemm called %d times", c.name, n)
		}
	}
	// A valid call reaches the driver once, and a closed BLAS is refused.
	before := fake.DeviceCalls(dev.Driver(), "BLAS.Gemm")
	if err := engine.Gemm(b, q, ok, 1, a, bm, 0, c); err != nil {
		t.Fatal(err)
	}
	if n := fake.DeviceCalls(dev.Driver(), "BLAS.Gemm") - before; n != 1 {
		t.Errorf("a valid GEMM called BLAS.Gemm %d times, want 1", n)
	}
	b.Close()
	if err := engine.Gemm(b, q, ok, 1, a, bm, 0, c); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Gemm on a closed BLAS = %v, want ErrClosed", err)
	}
}

// TestFFTRefused checks that invalid plans and runs are refused, naming the problem,
// before they reach the driver.
func TestFFTRefused(t *testing.T) {
	dev, q := open(t, "fake:0")
	f, err := dev.FFT()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		spec engine.FFTSpec
		msg  string
	}{
		{"no dimension", engine.FFTSpec{}, "0 dimensions"},
		{"three dimensions", engine.FFTSpec{Shape: []int{2, 2, 2}}, "3 dimensions"},
		{"zero length", engine.FFTSpec{Shape: []int{4, 0}}, "dimension 1 is 0"},
		{"negative batch", engine.FFTSpec{Shape: []int{4}, Batch: -1}, "negative batch"},
		{"inverse r2c", engine.FFTSpec{Kind: engine.R2C, Shape: []int{4}, Inverse: true}, "forward only"},
		{"unknown kind", engine.FFTSpec{Kind: 7, Shape: []int{4}}, "unknown kind"},
	} {
		before := fake.DeviceCalls(dev.Driver(), "FFT.Plan")
		if _, err := f.Plan(c.spec); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(fmt.Sprint(err), c.msg) {
			t.Errorf("%s: Plan = %v, want ErrInvalidArg mentioning %q", c.name, err, c.msg)
		}
		if n := fake.DeviceCalls(dev.Driver(), "FFT.Plan") - before; n != 0 {
			t.Errorf("%s: FFT.Plan called %d times", c.name, n)
		}
	}

	p, err := f.Plan(engine.FFTSpec{Kind: engine.R2C, Shape: []int{4, 8}, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if in, out := p.Lens(); in != 64 || out != 2*4*5*2 {
		t.Errorf("Lens of r2c 4x8 batch 2 = %d, %d; want 64, 80", in, out)
	}
	in, _ := engine.NewBuffer[float32](dev, 64)
	out, _ := engine.NewBuffer[float32](dev, 80)
	short, _ := engine.NewBuffer[float32](dev, 79)
	d64, _ := engine.NewBuffer[float64](dev, 80)
	other, _ := open(t, "fake:1")
	foreign, _ := engine.NewBuffer[float32](other, 80)
	for _, c := range []struct {
		name string
		msg  string
		call func() error
	}{
		{"short output", "output buffer holds 79 elements, 80 are written", func() error { return engine.RunFFT(p, q, in, short) }},
		{"in place", "same buffer", func() error { return engine.RunFFT(p, q, out, out) }},
		{"wrong precision", "other precision", func() error { return engine.RunFFT(p, q, d64, d64) }},
		{"nil input", "nil input", func() error { return engine.RunFFT(p, q, nil, out) }},
		{"foreign output", "belongs to fake:1", func() error { return engine.RunFFT(p, q, in, foreign) }},
		{"nil plan", "nil plan", func() error { return engine.RunFFT(nil, q, in, out) }},
	} {
		before := fake.DeviceCalls(dev.Driver(), "FFTPlan.Run")
		if err := c.call(); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(fmt.Sprint(err), c.msg) {
			t.Errorf("%s: RunFFT = %v, want ErrInvalidArg mentioning %q", c.name, err, c.msg)
		}
		if n := fake.DeviceCalls(dev.Driver(), "FFTPlan.Run") - before; n != 0 {
			t.Errorf("%s: FFTPlan.Run called %d times", c.name, n)
		}
	}
	if err := engine.RunFFT(p, q, in, out); err != nil {
		t.Errorf("valid RunFFT: %v", err)
	}
}

// TestVendorLifetimes checks that a device loads each library once, closes the libraries
// and plans with itself, each once and before itself, and loads a new library after the
// old one was closed.
func TestVendorLifetimes(t *testing.T) {
	before := fake.Violations()
	dev, err := engine.Open(context.Background(), "fake:1")
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := dev.BLAS()
	b2, _ := dev.BLAS()
	if b1 != b2 || fake.DeviceCalls(dev.Driver(), "Device.BLAS") != 1 {
		t.Errorf("two BLAS calls: %p, %p, Device.BLAS called %d times; want one BLAS", b1, b2, fake.DeviceCalls(dev.Driver(), "Device.BLAS"))
	}
	b1.Close()
	b3, err := dev.BLAS()
	if err != nil || b3 == b1 {
		t.Errorf("BLAS after Close = %p, %v; want a new BLAS", b3, err)
	}
	if lib := b3.Library(); lib.Name != "fake BLAS" || lib.String() != "fake BLAS 1.0 ((built in))" {
		t.Errorf("Library() = %+v (%v)", lib, lib)
	}
	f, _ := dev.FFT()
	spec := engine.FFTSpec{Kind: engine.C2C, Shape: []int{8}}
	p1, _ := f.Plan(spec)
	p2, _ := f.Plan(spec)
	p2.Close()
	if err := dev.Close(); err != nil {
		t.Fatalf("Device.Close: %v", err)
	}
	for _, c := range []struct {
		method string
		want   int64
	}{{"BLAS.Close", 2}, {"FFT.Close", 1}, {"FFTPlan.Close", 2}, {"Device.Close", 1}} {
		if n := fake.DeviceCalls(dev.Driver(), c.method); n != c.want {
			t.Errorf("%s called %d times, want %d", c.method, n, c.want)
		}
	}
	for _, c := range []interface{ Close() error }{b1, b3, f, p1, p2} {
		if err := c.Close(); err != nil {
			t.Errorf("%T.Close after Device.Close: %v", c, err)
		}
	}
	if _, err := dev.BLAS(); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("BLAS on a closed device = %v, want ErrClosed", err)
	}
	if v := fake.Violations() - before; v != 0 {
		t.Errorf("%d driver contract violations", v)
	}
}

// bareDevice hides a device's vendor libraries: it has the driver.Device methods only.
type bareDevice struct{ driver.Device }

// missingDevice is a device whose vendor libraries are not installed.
type missingDevice struct{ driver.Device }

func (missingDevice) BLAS() (driver.BLAS, error) {
	return nil, fmt.Errorf("libvendorblas.so.1: cannot open shared object file: %w", engine.ErrUnavailable)
}

func (missingDevice) FFT() (driver.FFT, error) {
	return nil, fmt.Errorf("libvendorfft.so.1: cannot open shared object file: %w", engine.ErrUnavailable)
}

// wrapDriver opens the fake's devices wrapped by wrap.
type wrapDriver struct {
	*fake.Driver
	wrap func(driver.Device) driver.Device
}

func (w wrapDriver) Open(ctx context.Context, id string) (driver.Device, error) {
	d, err := w.Driver.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	return w.wrap(d), nil
}

// TestVendorMissing checks the errors of a backend without vendor libraries and of one
// whose libraries are not installed, and how the conformance suite treats them.
func TestVendorMissing(t *testing.T) {
	engine.Register("vendor-bare", wrapDriver{fake.New(), func(d driver.Device) driver.Device { return bareDevice{d} }})
	engine.Register("vendor-missing", wrapDriver{fake.New(), func(d driver.Device) driver.Device { return missingDevice{d} }})
	for _, c := range []struct {
		backend string
		want    error
		msg     string
	}{
		{"vendor-bare", engine.ErrUnsupported, "offers no vendor"},
		{"vendor-missing", engine.ErrUnavailable, "cannot open shared object file"},
	} {
		dev, err := engine.Open(context.Background(), c.backend+":0")
		if err != nil {
			t.Fatal(err)
		}
		_, berr := dev.BLAS()
		_, ferr := dev.FFT()
		for _, err := range []error{berr, ferr} {
			if !errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), c.msg) || !strings.Contains(fmt.Sprint(err), c.backend+":0") {
				t.Errorf("%s: %v, want an error wrapping %q naming the device and mentioning %q", c.backend, err, c.want, c.msg)
			}
		}
		for _, r := range []struct {
			require    string
			skip, fail bool
		}{{"", true, false}, {"cuda,opencl", true, false}, {"blas", false, true}} {
			t.Setenv("PRISM_REQUIRE", r.require)
			rec := record(func(tb testing.TB) { enginetest.RequireVendorOrSkip(tb, dev, "blas", berr) })
			if rec.skipped != r.skip || rec.failed != r.fail || !strings.Contains(rec.msg, c.msg) {
				t.Errorf("%s, PRISM_REQUIRE=%q: skipped %v, failed %v (%q); want %v, %v", c.backend, r.require, rec.skipped, rec.failed, rec.msg, r.skip, r.fail)
			}
		}
		if err := dev.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

func TestGemmSpec(t *testing.T) {
	s := engine.GemmSpec{TransA: true, M: 3, N: 5, K: 7, Batch: 2}
	d := s.WithDefaults()
	if d.LDA != 3 || d.LDB != 5 || d.LDC != 5 || d.StrideA != 21 || d.StrideB != 35 || d.StrideC != 15 {
		t.Errorf("WithDefaults = %+v", d)
	}
	if a, b, c := s.Lens(); a != 42 || b != 70 || c != 30 {
		t.Errorf("Lens = %d, %d, %d; want 42, 70, 30", a, b, c)
	}
	if got, want := s.String(), "tn M=3 N=5 K=7 lda=3 ldb=5 ldc=5 batch=2 strides=21,35,15"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if err := (engine.GemmSpec{M: 1 << 40, N: 1 << 40, K: 1}).Validate(); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Validate of a 2^80-element C = %v, want ErrInvalidArg", err)
	}
	sp := engine.FFTSpec{Kind: engine.C2C, Shape: []int{4, 6}, Batch: 3, Inverse: true}
	if in, out := sp.Lens(); in != 144 || out != 144 || sp.String() != "c2c 4x6 batch=3 float32 inverse" {
		t.Errorf("FFTSpec %q: Lens %d, %d", sp, in, out)
	}
}
