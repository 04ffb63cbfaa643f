package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/engine/internal/fake"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

func TestDialect(t *testing.T) {
	for _, c := range []struct {
		d    engine.Dialect
		name string
	}{
		{engine.DialectOpenCL, "OpenCL C"},
		{engine.DialectCUDA, "CUDA C++"},
	} {
		if got := c.d.String(); got != c.name {
			t.Errorf("%d.String() = %q, want %q", int(c.d), got, c.name)
		}
		for _, s := range []string{c.name, strings.ToLower(c.name), strings.Fields(c.name)[0]} {
			if d, ok := engine.ParseDialect(s); !ok || d != c.d {
				t.Errorf("ParseDialect(%q) = %v, %v; want %v", s, d, ok, c.d)
			}
		}
		b, err := json.Marshal(c.d)
		var back engine.Dialect
		if err != nil || json.Unmarshal(b, &back) != nil || back != c.d {
			t.Errorf("JSON round trip of %v: %s, %v, %v", c.d, b, err, back)
		}
	}
	if _, ok := engine.ParseDialect("Fortran"); ok {
		t.Error("ParseDialect(Fortran) succeeded")
	}
	if d := engine.Dialect(7); d.Known() || d.String() != "Dialect(7)" {
		t.Errorf("Dialect(7): Known %v, String %q", d.Known(), d.String())
	}
	if _, err := json.Marshal(engine.Dialect(7)); err == nil {
		t.Error("an unknown dialect was marshaled")
	}
}

// TestDialects checks what engine takes from the driver's optional DialectBuilder.
func TestDialects(t *testing.T) {
	for _, c := range []struct {
		id   string
		want []engine.Dialect
	}{
		{"fake:0", []engine.Dialect{engine.DialectOpenCL, engine.DialectCUDA}},
		{"fake:1", []engine.Dialect{engine.DialectOpenCL}},
	} {
		dev, _ := open(t, c.id)
		if got := dev.Dialects(); !slices.Equal(got, c.want) {
			t.Errorf("%s: Dialects() = %v, want %v", c.id, got, c.want)
		}
		dev.Dialects()[0] = engine.DialectCUDA // a copy: the device's list is unchanged
		if !slices.Equal(dev.Dialects(), c.want) {
			t.Errorf("%s: Dialects() returned the device's own slice", c.id)
		}
	}
	// A CUDA C++ source on a device without it: refused before the driver, naming both.
	dev, _ := open(t, "fake:1")
	before := fake.DeviceCalls(dev.Driver(), "")
	_, err := dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: suitekernels.CUDASource})
	want := "engine: build CUDA C++ on fake:1 (Prism fake CPU): the device builds OpenCL C only: unsupported"
	if !errors.Is(err, engine.ErrUnsupported) || err.Error() != want {
		t.Errorf("BuildSource(CUDA C++) on fake:1 = %v, want %q", err, want)
	}
	if n := fake.DeviceCalls(dev.Driver(), "") - before; n != 0 {
		t.Errorf("the refused build made %d driver calls", n)
	}
	// Build goes through BuildSource where the driver has it.
	dev0, _ := open(t, "fake:0")
	if _, err := dev0.Build(suitekernels.Source); err != nil {
		t.Fatal(err)
	}
	if n := fake.DeviceCalls(dev0.Driver(), "Device.BuildSource"); n != 1 {
		t.Errorf("Build on a DialectBuilder: Device.BuildSource called %d times, want 1", n)
	}
}

// TestLaunchOptionsRefused checks, on the fake GPU that has every launch option, that those
// beyond its limits are refused before the driver, with errors that name the numbers.
func TestLaunchOptionsRefused(t *testing.T) {
	dev, q := open(t, "fake:0")
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel(suitekernels.GroupReverse)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := engine.NewBuffer[uint32](dev, 64)
	out, _ := engine.NewBuffer[uint32](dev, 64)
	args := []any{int32(64), int32(0), in, out}
	r := engine.Range1D(64, 64)
	limit := dev.Info().MaxLocalBytes() // 96 KiB; the kernel has 256 static bytes
	for _, c := range []struct {
		name string
		r    engine.Range
		args []any
		want error
		text string
	}{
		{"shared bytes with the static ones above the limit", r.WithSharedBytes(limit - 255), args, engine.ErrInvalidArg,
			fmt.Sprintf("dynamic shared memory of %d bytes and the kernel's 256 static bytes exceed the %d bytes", limit-255, limit)},
		{"cluster above 8", engine.Range1D(64*16, 64).WithCluster(16, 1, 1), args, engine.ErrInvalidArg, "of 16 work-groups exceeds the 8 of fake:0"},
		{"cluster not dividing the grid", engine.Range1D(64*6, 64).WithCluster(4, 1, 1), args, engine.ErrInvalidArg, "6 work-groups in dimension 0 is not a multiple of 4"},
		{"local bytes above the limit", r, append(args[:3:3], engine.LocalBytes(64<<10-255)), engine.ErrInvalidArg,
			fmt.Sprintf("LocalBytes arguments of %d bytes and the kernel's 256 static bytes exceed the 65536 bytes", 64<<10-255)},
	} {
		before := fake.DeviceCalls(dev.Driver(), "Queue.Launch")
		err := q.Launch(k, c.r, c.args...)
		if !errors.Is(err, c.want) || err == nil || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want %v saying %q", c.name, err, c.want, c.text)
		}
		if p := enginetest.RepeatedPrefix(err); p != "" {
			t.Errorf("%s: %v repeats %q", c.name, err, p)
		}
		if n := fake.DeviceCalls(dev.Driver(), "Queue.Launch") - before; n != 0 {
			t.Errorf("%s: Queue.Launch called %d times", c.name, n)
		}
	}
	// At the limit, the launch reaches the driver.
	if err := q.Launch(k, r.WithSharedBytes(limit-256), args...); err != nil {
		t.Errorf("shared bytes at the limit: %v", err)
	}
}

func TestKernelAttributes(t *testing.T) {
	dev, _ := open(t, "fake:0")
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel(suitekernels.GroupReverse)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.KernelAttributes{LocalBytes: suitekernels.GroupMax * 4, MaxWorkGroupSize: 256, PreferredMultiple: 1}
	if got := k.Attributes(); got != want {
		t.Errorf("Attributes() = %+v, want %+v", got, want)
	}
	before := fake.DeviceCalls(dev.Driver(), "")
	k.Attributes()
	if n := fake.DeviceCalls(dev.Driver(), "") - before; n != 0 {
		t.Errorf("Attributes made %d driver calls: they are read once, by Program.Kernel", n)
	}
}

func TestRepeatedPrefix(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("cuda: cannot load libcuda.so.1: unavailable"), ""},
		{errors.New("engine: open cuda:0: cuda: cannot load libcuda.so.1: unavailable"), ""},
		{errors.New("engine: launch k: argument 3: buffer is closed: use of closed object"), ""},
		{errors.New("cl: clBuildProgram(\"-DWG=64\"): CL_BUILD_PROGRAM_FAILURE (-11)"), ""},
		{errors.New("engine: cuda: cuda: cannot load libcuda.so.1: unavailable"), "cuda"},
		{errors.New("engine: launch k: argument 3: engine: buffer is closed"), "engine"},
		{errors.New("cuda: cuda: x"), "cuda"},
	} {
		if got := enginetest.RepeatedPrefix(c.err); got != c.want {
			t.Errorf("RepeatedPrefix(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// TestUnavailableSaysEachPrefixOnce: a backend that cannot load its library gives, through
// Devices and Open, its own error with no prefix repeated (it once read "engine: cuda:
// cuda: cannot load ...").
func TestUnavailableSaysEachPrefixOnce(t *testing.T) {
	const name = "enginetest-noload"
	cause := fmt.Errorf("%s: cannot load libnoload.so.1 (tried libnoload.so.1: cannot open shared object file): %w", name, engine.ErrUnavailable)
	engine.Register(name, staticDriver{err: cause})
	_, err := engine.Devices(context.Background(), name)
	if !errors.Is(err, engine.ErrUnavailable) || err.Error() != cause.Error() {
		t.Errorf("Devices = %v, want the backend's error as it is: %v", err, cause)
	}
	_, err = engine.Open(context.Background(), name+":0")
	if want := "engine: open " + name + ":0: " + cause.Error(); err == nil || err.Error() != want {
		t.Errorf("Open = %v, want %q", err, want)
	}
	for _, e := range []error{err} {
		if p := enginetest.RepeatedPrefix(e); p != "" {
			t.Errorf("%v repeats %q", e, p)
		}
	}
}
