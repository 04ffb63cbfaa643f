package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/internal/fake"
)

// mixedDevice is a fake device whose vendor BLAS also offers the mixed-precision GEMM
// (driver.MixedBLAS), recording each call's arguments.
type mixedDevice struct{ driver.Device }

func (d mixedDevice) BLAS() (driver.BLAS, error) {
	b, err := d.Device.(driver.BLASProvider).BLAS()
	if err != nil {
		return nil, err
	}
	m := &mixedBLAS{BLAS: b}
	lastMixed = m
	return m, nil
}

// lastMixed is the mixed BLAS a mixedDevice made last.
var lastMixed *mixedBLAS

type mixedBLAS struct {
	driver.BLAS
	mu    sync.Mutex
	calls []driver.MixedGemmArgs
}

func (b *mixedBLAS) MixedLibrary() (driver.Library, error) {
	return driver.Library{Name: "fake BLASLt", Version: "2.0", Path: "(built in)"}, nil
}

func (b *mixedBLAS) GemmMixed(q driver.Queue, g driver.MixedGemmArgs) (driver.Event, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, g)
	if g.M == 13 {
		return nil, fmt.Errorf("fake BLASLt: no algorithm for M=13: %w", driver.ErrUnsupported)
	}
	return doneEvent{}, nil
}

// doneEvent is a command that has completed.
type doneEvent struct{}

func (doneEvent) Wait(context.Context) error      { return nil }
func (doneEvent) Elapsed() (time.Duration, error) { return time.Microsecond, nil }
func (doneEvent) Close() error                    { return nil }

// TestGemmMixed checks the mixed-precision GEMM's validation, which is Gemm's (every
// invalid call refused before the driver, naming the problem), its own rules on the
// arithmetic, the arguments the driver receives for each input type, and the errors of a
// BLAS without the capability.
func TestGemmMixed(t *testing.T) {
	engine.Register("vendor-mixed", wrapDriver{fake.New(), func(d driver.Device) driver.Device { return mixedDevice{d} }})
	dev, err := engine.Open(context.Background(), "vendor-mixed:0")
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	b, err := dev.BLAS()
	if err != nil {
		t.Fatal(err)
	}
	drv := lastMixed
	if lib, err := b.MixedLibrary(); err != nil || lib.String() != "fake BLASLt 2.0 ((built in))" {
		t.Errorf("MixedLibrary = %v, %v", lib, err)
	}
	newBuf := func(n int) *engine.Buffer[engine.Half] {
		x, err := engine.NewBuffer[engine.Half](dev, n)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	a, bm, small := newBuf(64), newBuf(64), newBuf(15)
	c, err := engine.NewBuffer[float32](dev, 64)
	if err != nil {
		t.Fatal(err)
	}
	f32, err := engine.NewBuffer[float32](dev, 64)
	if err != nil {
		t.Fatal(err)
	}
	ok := engine.GemmSpec{M: 4, N: 4, K: 4}
	f := engine.ComputeFloat32
	for _, c := range []struct {
		name string
		want error
		msg  string
		call func() error
	}{
		{"nil BLAS", engine.ErrInvalidArg, "nil BLAS", func() error { return engine.GemmMixed(nil, q, ok, f, 1, a, bm, 0, c) }},
		{"zero M", engine.ErrInvalidArg, "M=0", func() error { return engine.GemmMixed(b, q, engine.GemmSpec{N: 4, K: 4}, f, 1, a, bm, 0, c) }},
		{"A too short", engine.ErrInvalidArg, "buffer of A holds 15 elements, the spec reaches 16", func() error { return engine.GemmMixed(b, q, ok, f, 1, small, bm, 0, c) }},
		{"nil C", engine.ErrInvalidArg, "nil buffer for C", func() error { return engine.GemmMixed(b, q, ok, f, 1, a, bm, 0, nil) }},
		{"C is A", engine.ErrInvalidArg, "in place", func() error {
			return engine.GemmMixed(b, q, ok, engine.ComputeTF32, 1, f32, c, 0, f32)
		}},
		{"float32 inputs in float32", engine.ErrInvalidArg, "are Gemm's", func() error { return engine.GemmMixed(b, q, ok, f, 1, f32, f32, 0, c) }},
		{"float16 inputs as tf32", engine.ErrInvalidArg, "float16 inputs are multiplied as stored", func() error {
			return engine.GemmMixed(b, q, ok, engine.ComputeTF32, 1, a, bm, 0, c)
		}},
		{"unknown arithmetic", engine.ErrInvalidArg, "unknown arithmetic GemmCompute(7)", func() error { return engine.GemmMixed(b, q, ok, 7, 1, a, bm, 0, c) }},
		{"refused by the library", engine.ErrUnsupported, "float16 gemm nn M=13 N=1 K=1 lda=1 ldb=1 ldc=1 on vendor-mixed:0: fake BLASLt: no algorithm for M=13", func() error {
			return engine.GemmMixed(b, q, engine.GemmSpec{M: 13, N: 1, K: 1}, f, 1, a, bm, 0, c)
		}},
	} {
		before := len(drv.calls)
		err := c.call()
		if !errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), c.msg) {
			t.Errorf("%s: got %v, want an error wrapping %q that mentions %q", c.name, err, c.want, c.msg)
		}
		if n := len(drv.calls) - before; n != 0 && c.want != engine.ErrUnsupported {
			t.Errorf("%s: the driver was called %d times", c.name, n)
		}
	}
	// Valid calls reach the driver with the spec's defaults resolved, C's type float32, the
	// input type and the arithmetic.
	drv.calls = nil
	spec := engine.GemmSpec{TransB: true, M: 3, N: 2, K: 5}
	if err := engine.GemmMixed(b, q, spec, f, 1.5, a, bm, -0.25, c); err != nil {
		t.Fatal(err)
	}
	if err := engine.GemmMixed(b, q, spec, engine.ComputeTF32, 2, f32, f32, 0, c); err != nil {
		t.Fatal(err)
	}
	e8, _ := engine.NewBuffer[engine.Float8E4M3](dev, 64)
	e5, _ := engine.NewBuffer[engine.Float8E5M2](dev, 64)
	bf, _ := engine.NewBuffer[engine.BFloat16](dev, 64)
	for _, err := range []error{
		engine.GemmMixed(b, q, spec, f, 1, e8, e8, 0, c), engine.GemmMixed(b, q, spec, f, 1, e5, e5, 0, c), engine.GemmMixed(b, q, spec, f, 1, bf, bf, 0, c),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []struct {
		in      driver.ElemType
		compute driver.GemmCompute
		alpha   float64
		beta    float64
	}{{driver.Float16, f, 1.5, -0.25}, {driver.Float32, engine.ComputeTF32, 2, 0}, {driver.Float8E4M3, f, 1, 0}, {driver.Float8E5M2, f, 1, 0}, {driver.BFloat16, f, 1, 0}}
	if len(drv.calls) != len(want) {
		t.Fatalf("%d driver calls, want %d", len(drv.calls), len(want))
	}
	for i, w := range want {
		g := drv.calls[i]
		if g.In != w.in || g.Compute != w.compute || g.Type != driver.Float32 || g.Alpha != w.alpha || g.Beta != w.beta ||
			!g.TransB || g.TransA || g.M != 3 || g.N != 2 || g.K != 5 || g.LDA != 5 || g.LDB != 5 || g.LDC != 2 || g.Batch != 1 {
			t.Errorf("call %d: %+v; want %v inputs, %v arithmetic, alpha %v, beta %v, nt M=3 N=2 K=5 lda=5 ldb=5 ldc=2", i, g, w.in, w.compute, w.alpha, w.beta)
		}
	}
	if got := driver.Float8E4M3.String() + " " + driver.BFloat16.String() + fmt.Sprint(driver.Float16.Size(), driver.Float8E5M2.Size()); got != "float8e4m3 bfloat162 1" {
		t.Errorf("element types: %q", got)
	}

	// The fake's own BLAS has no mixed-precision GEMM: ErrUnsupported naming it.
	plain, pq := open(t, "fake:0")
	pb, err := plain.BLAS()
	if err != nil {
		t.Fatal(err)
	}
	pa, _ := engine.NewBuffer[engine.Half](plain, 64)
	pc, _ := engine.NewBuffer[float32](plain, 64)
	if _, err := pb.MixedLibrary(); !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "fake BLAS offers no mixed-precision gemm") {
		t.Errorf("MixedLibrary of the fake BLAS = %v, want ErrUnsupported naming it", err)
	}
	if err := engine.GemmMixed(pb, pq, ok, f, 1, pa, pa, 0, pc); !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "float16 inputs") {
		t.Errorf("GemmMixed on the fake BLAS = %v, want ErrUnsupported", err)
	}
	b.Close()
	if err := engine.GemmMixed(b, q, ok, f, 1, a, bm, 0, c); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("GemmMixed on a closed BLAS = %v, want ErrClosed", err)
	}
	if _, err := b.MixedLibrary(); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("MixedLibrary of a closed BLAS = %v, want ErrClosed", err)
	}
}
