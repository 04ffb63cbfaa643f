package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/engine/internal/fake"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// matrixDesc describes a row-major 70 x 100 float32 matrix with a 64 x 32 box.
func matrixDesc() engine.TensorMapDesc {
	return engine.TensorMapDesc{Dims: []int64{100, 70}, Strides: []int64{400}, Box: []int{64, 32}}
}

// TestTensorMapValidation checks, on the fake GPU, that each broken rule is refused with
// an error naming the field, without a call to Device.EncodeTensorMap, and that a valid
// description reaches it once.
func TestTensorMapValidation(t *testing.T) {
	dev, _ := open(t, "fake:0")
	b, err := engine.NewBuffer[float32](dev, 100*70)
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(d *engine.TensorMapDesc)) engine.TensorMapDesc {
		d := matrixDesc()
		f(&d)
		return d
	}
	for _, c := range []struct {
		desc engine.TensorMapDesc
		text string
	}{
		{with(func(d *engine.TensorMapDesc) { d.Dims = append(d.Dims, 1, 1, 1, 1) }), "Dims has 6 dimensions, want 1 to 5"},
		{with(func(d *engine.TensorMapDesc) { d.Dims[0] = -1 }), "Dims[0] is -1 elements, want 1 to 2^32"},
		{with(func(d *engine.TensorMapDesc) { d.Strides = nil }), "Strides has 0 entries; a tensor of 2 dimensions takes 1"},
		{with(func(d *engine.TensorMapDesc) { d.Strides[0] = 404 }), "Strides[0] is 404 bytes, not a positive multiple of 16"},
		{with(func(d *engine.TensorMapDesc) { d.Strides[0] = 384 }), "Strides[0] is 384 bytes, below the 400 bytes of a row of dimension 0"},
		{with(func(d *engine.TensorMapDesc) { d.Strides[0] = 1 << 40 }), "Strides[0] is 1099511627776 bytes, want below 2^40"},
		{with(func(d *engine.TensorMapDesc) { d.Box = []int{64} }), "Box has 1 entries, want one per dimension (2)"},
		{with(func(d *engine.TensorMapDesc) { d.Box[1] = 300 }), "Box[1] is 300 elements, want 1 to 256"},
		{with(func(d *engine.TensorMapDesc) { d.Box[0] = 6 }), "Box[0] is 6 elements of 4 bytes, 24 bytes: not a multiple of 16"},
		{with(func(d *engine.TensorMapDesc) { d.Swizzle = engine.Swizzle128B }), "Box[0] is 64 elements of 4 bytes, 256 bytes: beyond the 128-byte span of Swizzle 128B"},
		{with(func(d *engine.TensorMapDesc) { d.Swizzle = -1 }), "Swizzle is TensorMapSwizzle(-1)"},
		{with(func(d *engine.TensorMapDesc) { d.L2Promotion = 512 }), "L2Promotion is 512 bytes, want 0, 64, 128 or 256"},
		{with(func(d *engine.TensorMapDesc) { d.Dims[1] = 71 }), "spans 28400 bytes, beyond the buffer's 28000"},
	} {
		before := fake.DeviceCalls(dev.Driver(), "Device.EncodeTensorMap")
		m, err := engine.NewTensorMap(b, c.desc)
		if m != nil || !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("NewTensorMap(%+v) = %v, %v; want ErrInvalidArg saying %q", c.desc, m, err, c.text)
		}
		if p := enginetest.RepeatedPrefix(err); p != "" {
			t.Errorf("%v repeats %q", err, p)
		}
		if n := fake.DeviceCalls(dev.Driver(), "Device.EncodeTensorMap") - before; n != 0 {
			t.Errorf("%+v: Device.EncodeTensorMap called %d times", c.desc, n)
		}
	}
	before := fake.DeviceCalls(dev.Driver(), "Device.EncodeTensorMap")
	if _, err := engine.NewTensorMap(b, matrixDesc()); err != nil {
		t.Fatal(err)
	}
	if n := fake.DeviceCalls(dev.Driver(), "Device.EncodeTensorMap") - before; n != 1 {
		t.Errorf("a valid map: Device.EncodeTensorMap called %d times, want 1", n)
	}
}

// plainDriver is the fake backend with its devices' optional interfaces hidden, as a
// backend that has no tensor maps (OpenCL) is.
type plainDriver struct{ drv driver.Driver }

type plainDevice struct{ driver.Device }

func (d plainDriver) Devices(ctx context.Context) ([]driver.DeviceInfo, error) {
	return d.drv.Devices(ctx)
}
func (d plainDriver) Open(ctx context.Context, id string) (driver.Device, error) {
	dd, err := d.drv.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	return plainDevice{dd}, nil
}

// TestTensorMapUnsupported checks the two ways a device has no tensor maps: a backend
// without driver.TensorMapEncoder, and a device whose driver says why (the fake CPU). Both
// give ErrUnsupported with the reason, from TensorMapSupport and NewTensorMap, and the
// driver is asked once, when the device is opened.
func TestTensorMapUnsupported(t *testing.T) {
	if !slices.Contains(engine.Backends(), "enginetest-plain") {
		engine.Register("enginetest-plain", plainDriver{fake.New()})
	}
	for _, c := range []struct {
		id   string
		want string
	}{
		{"enginetest-plain:0", "engine: tensor maps on enginetest-plain:0 (Prism fake GPU): the enginetest-plain backend has no tensor maps (CUDA's, on compute capability 9.0 and newer): unsupported"},
		{"fake:1", "engine: tensor maps on fake:1 (Prism fake CPU): fake: Prism fake CPU has no tensor maps (an OpenCL device): unsupported"},
	} {
		dev, err := engine.Open(context.Background(), c.id)
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		if err := dev.TensorMapSupport(); !errors.Is(err, engine.ErrUnsupported) || err.Error() != c.want {
			t.Errorf("%s: TensorMapSupport() = %v, want %q", c.id, err, c.want)
		}
		b, err := engine.NewBuffer[float32](dev, 100*70)
		if err != nil {
			t.Fatal(err)
		}
		m, err := engine.NewTensorMap(b, matrixDesc())
		if m != nil || !errors.Is(err, engine.ErrUnsupported) || err.Error() != c.want {
			t.Errorf("%s: NewTensorMap = %v, %v; want %q", c.id, m, err, c.want)
		}
		// An invalid description on such a device: unsupported comes first.
		if _, err := engine.NewTensorMap(b, engine.TensorMapDesc{}); !errors.Is(err, engine.ErrUnsupported) {
			t.Errorf("%s: NewTensorMap of an empty description = %v, want ErrUnsupported", c.id, err)
		}
	}
	dev, _ := open(t, "fake:1")
	b, _ := engine.NewBuffer[float32](dev, 100*70)
	for range 3 {
		engine.NewTensorMap(b, matrixDesc())
		dev.TensorMapSupport()
	}
	for method, want := range map[string]int64{"Device.TensorMapSupport": 1, "Device.EncodeTensorMap": 0} {
		if n := fake.DeviceCalls(dev.Driver(), method); n != want {
			t.Errorf("fake:1: %s called %d times, want %d", method, n, want)
		}
	}
	gpu, _ := open(t, "fake:0")
	if err := gpu.TensorMapSupport(); err != nil {
		t.Errorf("fake:0: TensorMapSupport() = %v, want nil", err)
	}
}

// TestTensorMapLaunch launches TMABox on the fake GPU with a map (the fake's kernel decodes
// the 128 bytes it receives, refusing any it did not encode or that are not 64-byte
// aligned), then refuses, before the driver, the map of a buffer since closed and a map of
// another opening of the device.
func TestTensorMapLaunch(t *testing.T) {
	before := fake.Violations()
	dev, q := open(t, "fake:0")
	prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: suitekernels.TensorMapSource})
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel(suitekernels.TMABox)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]float32, 100*70)
	for i := range src {
		src[i] = float32(i)
	}
	a, err := engine.Upload(t.Context(), q, src)
	if err != nil {
		t.Fatal(err)
	}
	m, err := engine.NewTensorMap(a, matrixDesc())
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.NewBuffer[float32](dev, 64*32)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Launch(k, engine.Range1D(64, 64), m, int32(90), int32(60), int32(0), out); err != nil {
		t.Fatal(err)
	}
	got, err := out.Download(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	// Row y, column x of the box is element (60+y)*100 + 90+x of the matrix, inside it.
	for _, c := range []struct{ x, y int }{{0, 0}, {9, 9}, {10, 0}, {0, 10}, {63, 31}} {
		want := float32(0)
		if 90+c.x < 100 && 60+c.y < 70 {
			want = float32((60+c.y)*100 + 90 + c.x)
		}
		if v := got[c.y*64+c.x]; v != want {
			t.Errorf("box element (%d, %d) = %v, want %v", c.x, c.y, v, want)
		}
	}

	dev2, q2 := open(t, "fake:0")
	prog2, err := dev2.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: suitekernels.TensorMapSource})
	if err != nil {
		t.Fatal(err)
	}
	k2, err := prog2.Kernel(suitekernels.TMABox)
	if err != nil {
		t.Fatal(err)
	}
	out2, err := engine.NewBuffer[float32](dev2, 64*32)
	if err != nil {
		t.Fatal(err)
	}
	closedBuf, _ := engine.NewBuffer[float32](dev, 100*70)
	closedMap, err := engine.NewTensorMap(closedBuf, matrixDesc())
	if err != nil {
		t.Fatal(err)
	}
	closedBuf.Close()
	for _, c := range []struct {
		name string
		q    *engine.Queue
		k    *engine.Kernel
		m    *engine.TensorMap
		out  *engine.Buffer[float32]
		want error
		text string
	}{
		{"closed buffer", q, k, closedMap, out, engine.ErrClosed, "engine: launch prism_tma_box: argument 0: the tensor map of float32 [100 70], strides [400], box [64 32], swizzle none: its buffer is closed"},
		{"another opening", q2, k2, m, out2, engine.ErrInvalidArg, "engine: launch prism_tma_box: argument 0: the tensor map belongs to another opening of fake:0"},
	} {
		calls := fake.Calls("")
		err := c.q.Launch(c.k, engine.Range1D(64, 64), c.m, int32(0), int32(0), int32(0), c.out)
		if !errors.Is(err, c.want) || !strings.HasPrefix(err.Error(), c.text) {
			t.Errorf("%s: %v, want %v starting %q", c.name, err, c.want, c.text)
		}
		if n := fake.Calls("") - calls; n != 0 {
			t.Errorf("%s: %d driver calls", c.name, n)
		}
	}
	if v := fake.Violations() - before; v != 0 {
		t.Errorf("%d driver contract violations", v)
	}
}
