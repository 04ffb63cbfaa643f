package engine

import (
	"bytes"
	"slices"
	"testing"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// stubDevice is a driver device that encodes tensor maps as a fixed pattern and records
// what it was asked; only the methods below are called.
type stubDevice struct {
	driver.Device
	encodes int
	got     struct {
		dt          driver.TensorDataType
		dims        []uint64
		strides     []uint64
		box         []uint32
		swizzle     driver.TensorMapSwizzle
		l2Promotion int
	}
}

func (d *stubDevice) Info() driver.DeviceInfo {
	return driver.DeviceInfo{Name: "stub", GlobalMemBytes: 1 << 20}
}
func (d *stubDevice) Alloc(size int64) (driver.Buffer, error) { return stubBuffer(size), nil }
func (d *stubDevice) TensorMapSupport() error                 { return nil }

func (d *stubDevice) EncodeTensorMap(buf driver.Buffer, dt driver.TensorDataType, dims, strides []uint64, box []uint32,
	swizzle driver.TensorMapSwizzle, l2Promotion int) ([driver.TensorMapBytes]byte, error) {
	d.encodes++
	d.got.dt, d.got.dims, d.got.strides, d.got.box, d.got.swizzle, d.got.l2Promotion = dt, dims, strides, box, swizzle, l2Promotion
	return stubEncoding(), nil
}

// stubEncoding is the stub's encoding: byte i is 7i+1.
func stubEncoding() (out [driver.TensorMapBytes]byte) {
	for i := range out {
		out[i] = byte(7*i + 1)
	}
	return out
}

type stubBuffer int64

func (b stubBuffer) Size() int64  { return int64(b) }
func (b stubBuffer) Close() error { return nil }

// TestTensorMapArg checks what the driver is asked to encode, for a description and
// element type, and that a map becomes exactly the driver's 128 bytes as a launch
// argument: aligned to 64 bytes, with no room past them, without a copy or an allocation.
func TestTensorMapArg(t *testing.T) {
	sd := &stubDevice{}
	dev, err := newDevice("stub:0", "stub", sd)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuffer[BFloat16](dev, 104*70)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewTensorMap(b, TensorMapDesc{Dims: []int64{100, 70}, Strides: []int64{208}, Box: []int{64, 32}, Swizzle: Swizzle128B, L2Promotion: 128})
	if err != nil {
		t.Fatal(err)
	}
	g := sd.got
	if sd.encodes != 1 || g.dt != driver.TensorBFloat16 || !slices.Equal(g.dims, []uint64{100, 70}) || !slices.Equal(g.strides, []uint64{208}) ||
		!slices.Equal(g.box, []uint32{64, 32}) || g.swizzle != driver.Swizzle128B || g.l2Promotion != 128 {
		t.Errorf("the driver was asked %d times for %+v", sd.encodes, g)
	}
	var values []byte
	a, err := toArg(m, dev, &values)
	if err != nil {
		t.Fatal(err)
	}
	want := stubEncoding()
	switch {
	case a.Buffer != nil || a.Local != 0 || !bytes.Equal(a.Value, want[:]):
		t.Errorf("argument %+v, want the value % x", a, want)
	case cap(a.Value) != driver.TensorMapBytes:
		t.Errorf("the value has a capacity of %d bytes: a driver could append into memory past it", cap(a.Value))
	case uintptr(unsafe.Pointer(unsafe.SliceData(a.Value)))%driver.TensorMapAlign != 0:
		t.Errorf("the value is at %p, not aligned to %d bytes", unsafe.SliceData(a.Value), driver.TensorMapAlign)
	case len(values) != 0:
		t.Errorf("the map was copied to the queue's scratch memory (%d bytes)", len(values))
	}
	if n := testing.AllocsPerRun(100, func() { toArg(m, dev, &values) }); n != 0 {
		t.Errorf("a tensor map argument allocates %v times", n)
	}
	// Another map is encoded again; the first keeps its bytes.
	if _, err := NewTensorMap(b, TensorMapDesc{Dims: []int64{8}, Box: []int{8}}); err != nil || sd.encodes != 2 {
		t.Errorf("a second map: %v, %d encodings", err, sd.encodes)
	}
	if !bytes.Equal(m.bytes, want[:]) {
		t.Error("the first map's bytes changed")
	}
}

// TestTensorDataTypes checks the tensor map type of every element type.
func TestTensorDataTypes(t *testing.T) {
	type myFloat float32
	for _, c := range []struct {
		got  func() (driver.TensorDataType, bool)
		want driver.TensorDataType
	}{
		{tensorDataType[uint8], driver.TensorUint8},
		{tensorDataType[int8], driver.TensorUint8},
		{tensorDataType[Float8E4M3], driver.TensorUint8},
		{tensorDataType[Float8E5M2], driver.TensorUint8},
		{tensorDataType[uint16], driver.TensorUint16},
		{tensorDataType[int16], driver.TensorUint16},
		{tensorDataType[Half], driver.TensorFloat16},
		{tensorDataType[BFloat16], driver.TensorBFloat16},
		{tensorDataType[uint32], driver.TensorUint32},
		{tensorDataType[int32], driver.TensorInt32},
		{tensorDataType[float32], driver.TensorFloat32},
		{tensorDataType[myFloat], driver.TensorFloat32},
		{tensorDataType[uint64], driver.TensorUint64},
		{tensorDataType[int64], driver.TensorInt64},
		{tensorDataType[float64], driver.TensorFloat64},
	} {
		dt, ok := c.got()
		if !ok || dt != c.want {
			t.Errorf("got %v, %v; want %v", dt, ok, c.want)
		}
	}
}
