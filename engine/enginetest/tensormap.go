package enginetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// The tensor of the tensor-map tests: a row-major tmRows x tmCols float32 matrix, as a 2D
// tensor of dims {tmCols, tmRows} (fastest first) whose rows are 400 bytes apart.
const (
	tmCols = 100
	tmRows = 70
)

// tmDesc returns the description of the test's matrix with TMABox's box.
func tmDesc() engine.TensorMapDesc {
	return engine.TensorMapDesc{
		Dims:    []int64{tmCols, tmRows},
		Strides: []int64{tmCols * 4},
		Box:     []int{suitekernels.TMABoxW, suitekernels.TMABoxH},
	}
}

// testTensorMaps checks tensor maps. On a device without them, TensorMapSupport and
// NewTensorMap say so with ErrUnsupported, before the driver. With them: descriptions
// that break a rule are refused with ErrInvalidArg naming the field, before the driver,
// and valid ones of every element type and rank are encoded; a launch refuses a map of a
// closed buffer or of another device, before the driver; and, where the device builds
// CUDA C++, TMABox copies boxes of a matrix with TMA, inside it and across its edges.
func (s *suite) testTensorMaps(t *testing.T) {
	if err := s.dev.TensorMapSupport(); err != nil {
		if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), s.id) {
			t.Errorf("TensorMapSupport() = %v, want nil or an error wrapping ErrUnsupported that names %s", err, s.id)
		}
		checkPrefix(t, "TensorMapSupport", err)
		b := newBuffer[float32](t, s, tmCols*tmRows)
		before := s.driverCalls()
		m, err2 := engine.NewTensorMap(b, tmDesc())
		if m != nil || !errors.Is(err2, engine.ErrUnsupported) {
			t.Errorf("NewTensorMap on %s = %v, %v; want ErrUnsupported", s.id, m, err2)
		}
		s.checkNoDriverCalls(t, before, "a tensor map on a device without them")
		t.Skipf("%s has no tensor maps: %v", s.id, err)
	}
	t.Run("Invalid", s.testTensorMapInvalid)
	t.Run("Encode", s.testTensorMapEncode)
	t.Run("Refused", s.testTensorMapRefused)
	t.Run("TMA", s.testTensorMapTMA)
}

// testTensorMapInvalid checks that descriptions breaking each rule are refused with
// ErrInvalidArg, naming the field, before the driver.
func (s *suite) testTensorMapInvalid(t *testing.T) {
	b := newBuffer[float32](t, s, tmCols*tmRows)
	with := func(f func(d *engine.TensorMapDesc)) engine.TensorMapDesc {
		d := tmDesc()
		f(&d)
		return d
	}
	cube := func(d *engine.TensorMapDesc) { // 100 x 10 x 7, within the buffer
		d.Dims, d.Strides, d.Box = []int64{tmCols, 10, 7}, []int64{tmCols * 4, tmCols * 4 * 10}, []int{64, 8, 1}
	}
	for _, c := range []struct {
		name  string
		desc  engine.TensorMapDesc
		field string // the error names it
	}{
		{"no dimensions", with(func(d *engine.TensorMapDesc) { d.Dims, d.Strides, d.Box = nil, nil, nil }), "Dims"},
		{"six dimensions", with(func(d *engine.TensorMapDesc) {
			d.Dims, d.Strides, d.Box = []int64{4, 1, 1, 1, 1, 1}, []int64{16, 16, 16, 16, 16}, []int{4, 1, 1, 1, 1, 1}
		}), "Dims"},
		{"a dimension of 0", with(func(d *engine.TensorMapDesc) { d.Dims[1] = 0 }), "Dims[1]"},
		{"a dimension above 2^32", with(func(d *engine.TensorMapDesc) { d.Dims[1] = 1<<32 + 1 }), "Dims[1]"},
		{"strides missing", with(func(d *engine.TensorMapDesc) { d.Strides = nil }), "Strides"},
		{"a stride too many", with(func(d *engine.TensorMapDesc) { d.Strides = []int64{400, 28000} }), "Strides"},
		{"a stride not a multiple of 16", with(func(d *engine.TensorMapDesc) { d.Strides[0] = 408 }), "Strides[0]"},
		{"a stride below a row", with(func(d *engine.TensorMapDesc) { d.Strides[0] = 384 }), "Strides[0]"},
		{"a negative stride", with(func(d *engine.TensorMapDesc) { d.Strides[0] = -400 }), "Strides[0]"},
		{"a stride of 2^40", with(func(d *engine.TensorMapDesc) { d.Strides[0] = 1 << 40 }), "Strides[0]"},
		{"a stride below the dimension before", with(func(d *engine.TensorMapDesc) { cube(d); d.Strides[1] = 16 * 200 }), "Strides[1]"},
		{"box entries missing", with(func(d *engine.TensorMapDesc) { d.Box = d.Box[:1] }), "Box"},
		{"a box of 0", with(func(d *engine.TensorMapDesc) { d.Box[1] = 0 }), "Box[1]"},
		{"a box above 256", with(func(d *engine.TensorMapDesc) { d.Box[1] = 257 }), "Box[1]"},
		{"an inner box of 8 bytes", with(func(d *engine.TensorMapDesc) { d.Box[0] = 2 }), "Box[0]"},
		{"an inner box beyond the swizzle's span", with(func(d *engine.TensorMapDesc) { d.Swizzle = engine.Swizzle64B }), "Swizzle"},
		{"an unknown swizzle", with(func(d *engine.TensorMapDesc) { d.Swizzle = 7 }), "Swizzle"},
		{"an L2 promotion of 32 bytes", with(func(d *engine.TensorMapDesc) { d.L2Promotion = 32 }), "L2Promotion"},
		{"a tensor beyond the buffer", with(func(d *engine.TensorMapDesc) { d.Dims[1] = tmRows + 1 }), "buffer"},
		{"rows beyond the buffer", with(func(d *engine.TensorMapDesc) { d.Strides[0] = 416 }), "buffer"},
		{"a cube beyond the buffer", with(func(d *engine.TensorMapDesc) { cube(d); d.Strides[1] = 16 * 2560 }), "buffer"},
		{"a tensor beyond any buffer", with(func(d *engine.TensorMapDesc) {
			d.Dims, d.Strides, d.Box = []int64{4, 1 << 32, 1 << 32}, []int64{16, 16 << 32}, []int{4, 1, 1}
		}), "buffer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := s.driverCalls()
			m, err := engine.NewTensorMap(b, c.desc)
			if m != nil || !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.field) {
				t.Errorf("NewTensorMap(%+v) = %v, %v; want ErrInvalidArg naming %s", c.desc, m, err, c.field)
			}
			checkPrefix(t, "NewTensorMap", err)
			s.checkNoDriverCalls(t, before, "an invalid tensor map")
		})
	}
	closed := newBuffer[float32](t, s, tmCols*tmRows)
	closed.Close()
	before := s.driverCalls()
	if _, err := engine.NewTensorMap[float32](nil, tmDesc()); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("NewTensorMap of a nil buffer = %v, want ErrInvalidArg", err)
	}
	if _, err := engine.NewTensorMap(closed, tmDesc()); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("NewTensorMap of a closed buffer = %v, want ErrClosed", err)
	}
	s.checkNoDriverCalls(t, before, "a tensor map of a nil or closed buffer")
}

// testTensorMapEncode encodes valid maps at the rules' limits, of every rank and element
// type.
func (s *suite) testTensorMapEncode(t *testing.T) {
	b := newBuffer[float32](t, s, tmCols*tmRows)
	for _, c := range []struct {
		name string
		desc engine.TensorMapDesc
	}{
		{"the matrix", tmDesc()},
		{"a box larger than the tensor", engine.TensorMapDesc{Dims: []int64{tmCols, tmRows}, Strides: []int64{400}, Box: []int{128, 256}}},
		{"one dimension", engine.TensorMapDesc{Dims: []int64{tmCols * tmRows}, Box: []int{256}}},
		{"five dimensions", engine.TensorMapDesc{Dims: []int64{4, 5, 7, 2, 5}, Strides: []int64{16, 80, 560, 1120},
			Box: []int{4, 5, 7, 2, 5}}},
		{"padded rows", engine.TensorMapDesc{Dims: []int64{96, 70}, Strides: []int64{400}, Box: []int{32, 8}, Swizzle: engine.Swizzle128B}},
		{"swizzle 32B", engine.TensorMapDesc{Dims: []int64{tmCols, tmRows}, Strides: []int64{400}, Box: []int{8, 8}, Swizzle: engine.Swizzle32B}},
		{"swizzle 64B", engine.TensorMapDesc{Dims: []int64{tmCols, tmRows}, Strides: []int64{400}, Box: []int{16, 8}, Swizzle: engine.Swizzle64B}},
		{"L2 promotion", engine.TensorMapDesc{Dims: []int64{tmCols, tmRows}, Strides: []int64{400}, Box: []int{64, 32}, L2Promotion: 256}},
		{"the whole buffer, to its last byte", engine.TensorMapDesc{Dims: []int64{tmCols, 10, 7}, Strides: []int64{400, 4000}, Box: []int{4, 1, 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := engine.NewTensorMap(b, c.desc)
			if err != nil {
				t.Fatalf("NewTensorMap(%+v): %v", c.desc, err)
			}
			if m.Device() != s.dev || !reflect.DeepEqual(m.Desc(), c.desc) {
				t.Errorf("Device() = %v, Desc() = %+v; want %v, %+v", m.Device(), m.Desc(), s.dev, c.desc)
			}
		})
	}
	t.Run("element types", func(t *testing.T) {
		tensorMapOf[uint8](t, s, 16)
		tensorMapOf[int8](t, s, 16)
		tensorMapOf[engine.Float8E4M3](t, s, 16)
		tensorMapOf[engine.Float8E5M2](t, s, 32)
		tensorMapOf[uint16](t, s, 8)
		tensorMapOf[int16](t, s, 8)
		tensorMapOf[engine.Half](t, s, 8)
		tensorMapOf[engine.BFloat16](t, s, 64)
		tensorMapOf[uint32](t, s, 4)
		tensorMapOf[int32](t, s, 4)
		tensorMapOf[float32](t, s, 4)
		tensorMapOf[uint64](t, s, 2)
		tensorMapOf[int64](t, s, 2)
		tensorMapOf[float64](t, s, 16)
	})
}

// tensorMapOf encodes a map of a 64 x 16 matrix of T with a box of inner elements by 4.
func tensorMapOf[T engine.Scalar](t *testing.T, s *suite, inner int) {
	t.Helper()
	b := newBuffer[T](t, s, 64*16)
	es := int64(engine.SizeOf[T]())
	d := engine.TensorMapDesc{Dims: []int64{64, 16}, Strides: []int64{64 * es}, Box: []int{inner, 4}}
	if _, err := engine.NewTensorMap(b, d); err != nil {
		t.Errorf("NewTensorMap of %s, %+v: %v", reflect.TypeFor[T](), d, err)
	}
}

// testTensorMapRefused checks that a launch refuses, before the driver, a map whose buffer
// is closed, a map of another opening of the device, and a nil or zero map.
func (s *suite) testTensorMapRefused(t *testing.T) {
	q := s.queue(t)
	k := s.kernel(t, suitekernels.Iota) // any kernel: the argument is refused before its type matters
	out := newBuffer[uint32](t, s, 1)
	launch := func(m any) error { return q.Launch(k, engine.Range1D(1, 1), int32(1), m, out) }

	b := newBuffer[float32](t, s, tmCols*tmRows)
	closedMap, err := engine.NewTensorMap(b, tmDesc())
	if err != nil {
		t.Fatalf("NewTensorMap: %v", err)
	}
	b.Close()

	other, err := engine.Open(context.Background(), s.id)
	if err != nil {
		t.Fatalf("second engine.Open(%q): %v", s.id, err)
	}
	defer other.Close()
	ob, err := engine.NewBuffer[float32](other, tmCols*tmRows)
	if err != nil {
		t.Fatalf("NewBuffer on the second device: %v", err)
	}
	otherMap, err := engine.NewTensorMap(ob, tmDesc())
	if err != nil {
		t.Fatalf("NewTensorMap on the second device: %v", err)
	}
	for _, c := range []struct {
		name string
		m    any
		want error
		text string
	}{
		{"its buffer closed", closedMap, engine.ErrClosed, "buffer is closed"},
		{"of another opening", otherMap, engine.ErrInvalidArg, "another opening"},
		{"nil", (*engine.TensorMap)(nil), engine.ErrInvalidArg, "nil tensor map"},
		{"zero", &engine.TensorMap{}, engine.ErrInvalidArg, "not made by NewTensorMap"},
		{"by value", engine.TensorMap{}, engine.ErrInvalidArg, "cannot be a kernel argument"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, beforeOther := s.driverCalls(), s.callsOn(other)
			err := launch(c.m)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) || !strings.Contains(err.Error(), "argument 1") {
				t.Errorf("a launch with a tensor map %s: %v; want %v saying %q of argument 1", c.name, err, c.want, c.text)
			}
			checkPrefix(t, "Launch", err)
			s.checkNoDriverCalls(t, before, "a launch with a tensor map "+c.name)
			s.checkNoDriverCallsOn(t, other, beforeOther, "a launch with a tensor map "+c.name)
		})
	}
	// The map of the other opening closes with its device.
	other.Close()
	if err := launch(otherMap); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("a launch with a tensor map of a closed device: %v, want ErrClosed", err)
	}
}

// testTensorMapTMA launches TMABox, which copies one box of the test's matrix with TMA,
// at box coordinates inside the matrix, across its right and bottom edges, and before its
// start (negative coordinates), and checks the guarded output against the matrix: zeros
// where the box leaves it. One launch goes through Timed, which takes the launch path
// with an event.
func (s *suite) testTensorMapTMA(t *testing.T) {
	if !s.dev.Builds(engine.DialectCUDA) {
		t.Skipf("%s encodes tensor maps but does not build CUDA C++", s.id)
	}
	p, err := s.dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: suitekernels.TensorMapSource, Name: "tma.cu"})
	if err != nil {
		t.Fatalf("BuildSource: %v", err)
	}
	defer p.Close()
	k, err := p.Kernel(suitekernels.TMABox)
	if err != nil {
		t.Fatalf("Kernel: %v", err)
	}
	defer k.Close()
	t.Logf("attributes: %+v", k.Attributes())
	q := s.queue(t)
	matrix := random[float32](rng(t), tmCols*tmRows)
	a := upload(t, q, matrix)
	m, err := engine.NewTensorMap(a, tmDesc())
	if err != nil {
		t.Fatalf("NewTensorMap: %v", err)
	}
	t.Logf("%v", m)
	const w, h = suitekernels.TMABoxW, suitekernels.TMABoxH
	l := min(128, k.MaxWorkGroupSize())
	for _, c := range []struct {
		x0, y0 int
		timed  bool
	}{
		{0, 0, false},
		{32, 16, false},
		{64, 48, false}, // across the right (100) and bottom (70) edges
		{96, 66, true},
		{-16, -8, false}, // before the start
		{200, 0, false},  // wholly outside
	} {
		t.Run(fmt.Sprintf("box at %d,%d", c.x0, c.y0), func(t *testing.T) {
			want := make([]float32, w*h)
			for y := range h {
				for x := range w {
					if mx, my := c.x0+x, c.y0+y; mx >= 0 && mx < tmCols && my >= 0 && my < tmRows {
						want[y*w+x] = matrix[my*tmCols+mx]
					}
				}
			}
			out := upload(t, q, sentinels[float32](w*h+2*guard))
			launch := func() error {
				return q.Launch(k, engine.Range1D(l, l), m, int32(c.x0), int32(c.y0), int32(guard), out)
			}
			if c.timed {
				if _, err := q.Timed(context.Background(), launch); err != nil {
					t.Fatalf("Timed launch: %v", err)
				}
			} else if err := launch(); err != nil {
				t.Fatalf("Launch: %v", err)
			}
			checkBits(t, "box", download(t, q, out), guarded(want), guard)
		})
	}
}
