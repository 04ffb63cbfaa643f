package engine

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// Tensor maps: the tile descriptions that Hopper's Tensor Memory Accelerator (TMA) copies
// by. The host encodes a map of a tensor in a buffer once (NewTensorMap, which is CUDA's
// cuTensorMapEncodeTiled); a kernel takes it by value and copies boxes of the tensor
// between global and shared memory with cp.async.bulk.tensor, elements outside the tensor
// reading as zero. Only CUDA devices of compute capability 9.0 and newer have them
// (Device.TensorMapSupport).

// TensorMapSwizzle is how a tensor map's box is laid out in shared memory; see
// driver.TensorMapSwizzle.
type TensorMapSwizzle = driver.TensorMapSwizzle

// Swizzle patterns: the box as it is in global memory (SwizzleNone), or its rows' 16-byte
// chunks permuted within spans of 32, 64 or 128 bytes. Their values are CUDA's
// CUtensorMapSwizzle.
const (
	SwizzleNone = driver.SwizzleNone
	Swizzle32B  = driver.Swizzle32B
	Swizzle64B  = driver.Swizzle64B
	Swizzle128B = driver.Swizzle128B
)

// TensorMapDesc describes a tensor in a buffer and the box (tile) a copy moves, for
// NewTensorMap. The tensor starts at the buffer's first element, whose address is aligned
// beyond the 16 bytes TMA needs (the backend checks it); its element type is the buffer's.
type TensorMapDesc struct {
	// Dims is the number of elements in each dimension, fastest-varying first: 1 to 5
	// dimensions of 1 to 2^32 elements each.
	Dims []int64
	// Strides is the distance in bytes between consecutive elements of dimensions 1 to
	// len(Dims)-1 (the elements of dimension 0 are adjacent): len(Dims)-1 of them, each a
	// multiple of 16 below 2^40 and at least the extent of the dimension before it
	// (Strides[0] >= Dims[0] times the element size, Strides[i] >= Dims[i]*Strides[i-1]).
	Strides []int64
	// Box is the size of the box in elements, one per dimension, each 1 to 256; Box[0]
	// times the element size is a multiple of 16 bytes. A box may reach past the tensor's
	// edges, or be larger than it: elements outside the tensor read as zero. A kernel's copy
	// must start a box on a 16-byte boundary of dimension 0 (its coordinate there times the
	// element size a multiple of 16, negative ones included): on an H200 a box of a float32
	// matrix at column 1 or 2 stopped the context with an illegal instruction (2026-12-01),
	// where columns 0, 32, 64, 96 and -16 copy as they should.
	Box []int
	// Swizzle lays the box out in shared memory. With a swizzle, Box[0] times the element
	// size is at most its span (32, 64 or 128 bytes).
	Swizzle TensorMapSwizzle
	// L2Promotion is the size in bytes of the L2 requests the copies make: 0 for the
	// driver's default, 64, 128 or 256.
	L2Promotion int
}

// TensorMap is an encoded tensor map of a buffer: 128 opaque bytes that a kernel takes by
// value. Pass it to Queue.Launch for a CUDA C++ parameter declared
// `const __grid_constant__ CUtensorMap tm` (or any 64-byte-aligned structure of 128
// bytes); the kernel copies boxes with cp.async.bulk.tensor from the parameter's address.
// A TensorMap holds no device resources and needs no Close; it can be launched while its
// buffer is open, on the buffer's device only. It is safe for concurrent use.
type TensorMap struct {
	dev   *Device
	buf   *handle // the buffer's: launches check that it is open
	desc  TensorMapDesc
	dtype driver.TensorDataType
	bytes []byte // the encoding: driver.TensorMapBytes bytes, aligned to driver.TensorMapAlign
}

// NewTensorMap encodes a tensor map of the tensor that d describes in b, whose element
// type T is the map's: uint8, uint16, uint32, int32, uint64, int64, float32, float64, Half
// (float16) and BFloat16 are CUDA's types of the same name; int8, Float8E4M3 and
// Float8E5M2 are mapped as uint8 and int16 as uint16, which the copies move unchanged.
//
// Every rule of d is checked before the backend is called, and a broken one gives an error
// wrapping ErrInvalidArg that names the field (and the tensor, the buffer's bytes, where it
// reaches past them). A device without tensor maps (every OpenCL device, CUDA devices
// below compute capability 9.0, drivers before CUDA 12.0) gives an error wrapping
// ErrUnsupported that says why; see Device.TensorMapSupport.
//
//	tm, err := engine.NewTensorMap(a, engine.TensorMapDesc{
//		Dims:    []int64{int64(cols), int64(rows)}, // a row-major rows x cols matrix
//		Strides: []int64{int64(cols) * 4},          // bytes from one row to the next
//		Box:     []int{64, 32},                     // 32 rows of 64 float32 per copy
//	})
//	err = q.Launch(k, r, tm, out)
func NewTensorMap[T Scalar](b *Buffer[T], d TensorMapDesc) (*TensorMap, error) {
	if b == nil {
		return nil, fmt.Errorf("engine: tensor map: nil buffer: %w", ErrInvalidArg)
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	dev := b.dev
	if err := dev.TensorMapSupport(); err != nil {
		return nil, err
	}
	dt, ok := tensorDataType[T]()
	if !ok {
		return nil, fmt.Errorf("engine: tensor map of %s: the element type has no tensor map type: %w", reflect.TypeFor[T](), ErrUnsupported)
	}
	dims, strides, box, err := checkTensorDesc(d, int64(SizeOf[T]()), b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("engine: tensor map of %s: %w", reflect.TypeFor[T](), err)
	}
	enc, ok := dev.drv.(driver.TensorMapEncoder)
	if !ok { // TensorMapSupport said nil: only a driver that implements it does
		return nil, fmt.Errorf("engine: tensor map on %s: the %s backend has no tensor maps: %w", dev, dev.backend, ErrUnsupported)
	}
	enc128, err := enc.EncodeTensorMap(b.drv, dt, dims, strides, box, d.Swizzle, d.L2Promotion)
	if err != nil {
		return nil, fmt.Errorf("engine: tensor map on %s: %w", dev.id, err)
	}
	m := &TensorMap{dev: dev, buf: &b.handle, desc: d.clone(), dtype: dt, bytes: alignedBytes(driver.TensorMapBytes, driver.TensorMapAlign)}
	copy(m.bytes, enc128[:])
	return m, nil
}

// TensorMapSupport reports whether NewTensorMap encodes tensor maps for d: nil where it
// does, else an error wrapping ErrUnsupported that says why (the backend has none, as
// OpenCL; the device's architecture predates them, as CUDA's below compute capability
// 9.0; the driver lacks them). The backend was asked once, when the device was opened.
func (d *Device) TensorMapSupport() error {
	if err := d.check(); err != nil {
		return err
	}
	if d.tensorMaps != nil {
		return wrapf(d.tensorMaps, "tensor maps on %s", d)
	}
	return nil
}

// tensorMapSupport asks the backend's device whether it encodes tensor maps, for newDevice:
// nil, or the reason wrapping ErrUnsupported.
func tensorMapSupport(backend string, d driver.Device) error {
	e, ok := d.(driver.TensorMapEncoder)
	if !ok {
		return fmt.Errorf("the %s backend has no tensor maps (CUDA's, on compute capability 9.0 and newer): %w", backend, ErrUnsupported)
	}
	err := e.TensorMapSupport()
	if err != nil && !errors.Is(err, ErrUnsupported) {
		err = fmt.Errorf("%w: %w", err, ErrUnsupported)
	}
	return err
}

// Device returns the device of the map's buffer.
func (m *TensorMap) Device() *Device {
	if m == nil {
		return nil
	}
	return m.dev
}

// Desc returns the description the map was encoded from (a copy).
func (m *TensorMap) Desc() TensorMapDesc {
	if m == nil {
		return TensorMapDesc{}
	}
	return m.desc.clone()
}

// String describes the map: "tensor map of float32 [100 70], strides [400], box [64 32],
// swizzle none".
func (m *TensorMap) String() string {
	if m == nil || m.buf == nil {
		return "<nil tensor map>"
	}
	return fmt.Sprintf("tensor map of %s %v, strides %v, box %v, swizzle %s", m.dtype, m.desc.Dims, m.desc.Strides, m.desc.Box, m.desc.Swizzle)
}

// arg returns the map as a kernel argument on dev: its bytes, by value. The map's buffer
// must be open and of dev.
func (m *TensorMap) arg(dev *Device) (driver.Arg, error) {
	if m == nil || m.buf == nil || len(m.bytes) != driver.TensorMapBytes {
		return driver.Arg{}, fmt.Errorf("nil tensor map, or one not made by NewTensorMap: %w", ErrInvalidArg)
	}
	if m.buf.closed.Load() {
		return driver.Arg{}, fmt.Errorf("the %s: its buffer is closed: %w", m, ErrClosed)
	}
	if err := m.dev.check(); err != nil {
		return driver.Arg{}, err
	}
	if m.dev != dev {
		if m.dev.id == dev.id {
			return driver.Arg{}, fmt.Errorf("the tensor map belongs to another opening of %s: each engine.Open is a device of its own: %w", dev.id, ErrInvalidArg)
		}
		return driver.Arg{}, fmt.Errorf("the tensor map belongs to %s, not %s: %w", m.dev.id, dev.id, ErrInvalidArg)
	}
	return driver.Arg{Value: m.bytes}, nil
}

func (d TensorMapDesc) clone() TensorMapDesc {
	d.Dims, d.Strides, d.Box = slices.Clone(d.Dims), slices.Clone(d.Strides), slices.Clone(d.Box)
	return d
}

// tensorDataType returns the tensor map type of elements of type T.
func tensorDataType[T Scalar]() (driver.TensorDataType, bool) {
	var z T
	switch any(z).(type) {
	case Half:
		return driver.TensorFloat16, true
	case BFloat16:
		return driver.TensorBFloat16, true
	case Float8E4M3, Float8E5M2:
		return driver.TensorUint8, true
	}
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Uint8, reflect.Int8:
		return driver.TensorUint8, true
	case reflect.Uint16, reflect.Int16:
		return driver.TensorUint16, true
	case reflect.Uint32:
		return driver.TensorUint32, true
	case reflect.Int32:
		return driver.TensorInt32, true
	case reflect.Uint64:
		return driver.TensorUint64, true
	case reflect.Int64:
		return driver.TensorInt64, true
	case reflect.Float32:
		return driver.TensorFloat32, true
	case reflect.Float64:
		return driver.TensorFloat64, true
	}
	return 0, false
}

// Limits of tensor maps (cuTensorMapEncodeTiled).
const (
	maxTensorDim    = 1 << 32 // elements in one dimension
	maxTensorStride = 1 << 40 // bytes, exclusive
	maxTensorBox    = 256     // elements of a box in one dimension
	tensorAlign     = 16      // bytes: strides and a box's inner dimension
)

// checkTensorDesc checks d for elements of es bytes in a buffer of size bytes and returns
// it as the driver takes it. An error wraps ErrInvalidArg and names the field.
func checkTensorDesc(d TensorMapDesc, es, size int64) (dims, strides []uint64, box []uint32, err error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf(format+": %w", append(args, ErrInvalidArg)...)
	}
	rank := len(d.Dims)
	if rank < 1 || rank > driver.MaxTensorRank {
		return nil, nil, nil, bad("Dims has %d dimensions, want 1 to %d", rank, driver.MaxTensorRank)
	}
	if len(d.Strides) != rank-1 {
		return nil, nil, nil, bad("Strides has %d entries; a tensor of %d dimensions takes %d (the byte strides of dimensions 1 to %d)",
			len(d.Strides), rank, rank-1, rank-1)
	}
	if len(d.Box) != rank {
		return nil, nil, nil, bad("Box has %d entries, want one per dimension (%d)", len(d.Box), rank)
	}
	dims, strides, box = make([]uint64, rank), make([]uint64, rank-1), make([]uint32, rank)
	for i, n := range d.Dims {
		if n < 1 || n > maxTensorDim {
			return nil, nil, nil, bad("Dims[%d] is %d elements, want 1 to 2^32", i, n)
		}
		dims[i] = uint64(n)
	}
	// extent is the bytes that dimensions 0 to i span, as far as the stride of i+1 must
	// reach; the last element addressed ends at end.
	extent := dims[0] * uint64(es)
	end := extent
	for i, s := range d.Strides {
		switch {
		case s <= 0 || s%tensorAlign != 0:
			return nil, nil, nil, bad("Strides[%d] is %d bytes, not a positive multiple of %d", i, s, tensorAlign)
		case s >= maxTensorStride:
			return nil, nil, nil, bad("Strides[%d] is %d bytes, want below 2^40", i, s)
		case uint64(s) < extent && i == 0:
			return nil, nil, nil, bad("Strides[0] is %d bytes, below the %d bytes of a row of dimension 0 (Dims[0] = %d elements of %d bytes)", s, extent, dims[0], es)
		case uint64(s) < extent:
			return nil, nil, nil, bad("Strides[%d] is %d bytes, below the %d bytes that dimension %d spans (Dims[%d] = %d times Strides[%d] = %d)",
				i, s, extent, i, i, dims[i], i-1, d.Strides[i-1])
		}
		strides[i] = uint64(s)
		// Both products are below 2^72; a high word means far beyond any buffer.
		hi, lo := bits.Mul64(dims[i+1], strides[i])
		if hi != 0 || lo > math.MaxInt64 {
			extent = math.MaxUint64
		} else {
			extent = lo
		}
		hi, lo = bits.Mul64(dims[i+1]-1, strides[i])
		if sum, carry := bits.Add64(end, lo, 0); hi != 0 || carry != 0 || sum > math.MaxInt64 {
			end = math.MaxUint64
		} else {
			end = sum
		}
	}
	for i, n := range d.Box {
		if n < 1 || n > maxTensorBox {
			return nil, nil, nil, bad("Box[%d] is %d elements, want 1 to %d", i, n, maxTensorBox)
		}
		box[i] = uint32(n)
	}
	if inner := int64(d.Box[0]) * es; inner%tensorAlign != 0 {
		return nil, nil, nil, bad("Box[0] is %d elements of %d bytes, %d bytes: not a multiple of %d", d.Box[0], es, inner, tensorAlign)
	}
	if !d.Swizzle.Known() {
		return nil, nil, nil, bad("Swizzle is %v, want SwizzleNone, Swizzle32B, Swizzle64B or Swizzle128B", d.Swizzle)
	}
	if span, inner := d.Swizzle.Span(), int64(d.Box[0])*es; span > 0 && inner > int64(span) {
		return nil, nil, nil, bad("Box[0] is %d elements of %d bytes, %d bytes: beyond the %d-byte span of Swizzle %s", d.Box[0], es, inner, span, d.Swizzle)
	}
	switch d.L2Promotion {
	case 0, 64, 128, 256:
	default:
		return nil, nil, nil, bad("L2Promotion is %d bytes, want 0, 64, 128 or 256", d.L2Promotion)
	}
	if end > uint64(size) {
		what := fmt.Sprint(end)
		if end == math.MaxUint64 {
			what = "more than 2^63"
		}
		return nil, nil, nil, bad("the tensor of Dims %v and Strides %v spans %s bytes, beyond the buffer's %d", d.Dims, d.Strides, what, size)
	}
	return dims, strides, box, nil
}

// alignedBytes returns n bytes of new memory whose address is a multiple of align (a power
// of two). Go's heap does not move objects, so the alignment lasts.
func alignedBytes(n, align int) []byte {
	mem := make([]byte, n+align-1)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(mem))) & uintptr(align-1))
	return mem[off : off+n : off+n]
}
