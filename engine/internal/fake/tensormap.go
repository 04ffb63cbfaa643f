package fake

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// Tensor maps: the GPU encodes them (driver.TensorMapEncoder), the CPU does not, as an
// OpenCL device has none. An encoding is 128 bytes of the fake's own layout, deterministic
// for a given buffer and description, which the Go kernel of suitekernels.TMABox decodes
// to copy its box, as TMA would:
//
//	offset  bytes  field
//	0       4      magic "PTM1"
//	4       1      rank
//	5       1      data type (driver.TensorDataType)
//	6       1      swizzle (driver.TensorMapSwizzle)
//	7       1      L2 promotion / 64
//	8       8      the buffer's ID (bufferIDs)
//	16      5 x 8  dims
//	56      4 x 8  strides
//	88      5 x 2  box
//	98      26     zero
//	124     4      FNV-1a of bytes 0 to 123
//
// All numbers are little-endian.

var _ driver.TensorMapEncoder = (*device)(nil)

const tensorMapMagic = "PTM1"

var (
	// bufferIDs numbers buffers, for encodings: an encoding holds no pointer.
	bufferIDs atomic.Uint64
	// mapped holds the buffers of encoded tensor maps by ID while they are open, so that a
	// kernel can find the buffer of the map it is given.
	mapped sync.Map
)

// TensorMapSupport reports tensor maps on the GPU, and their absence on the CPU.
func (d *device) TensorMapSupport() error {
	count(d, "Device.TensorMapSupport")
	if d.tensorMaps {
		return nil
	}
	return fmt.Errorf("fake: %s has no tensor maps (an OpenCL device): %w", d.info.Name, engine.ErrUnsupported)
}

// EncodeTensorMap encodes a tensor map in the fake's layout, after checking every promise
// the SPI makes about its arguments (a broken one is a violation).
func (d *device) EncodeTensorMap(buf driver.Buffer, dt driver.TensorDataType, dims, strides []uint64, box []uint32,
	swizzle driver.TensorMapSwizzle, l2Promotion int) ([driver.TensorMapBytes]byte, error) {
	count(d, "Device.EncodeTensorMap")
	var out [driver.TensorMapBytes]byte
	if !d.tensorMaps {
		return out, violation("EncodeTensorMap on a device without tensor maps")
	}
	b := asBuffer(buf)
	if err := b.use(d, "EncodeTensorMap", 0, int64(len(b.mem))); err != nil {
		return out, err
	}
	if msg := tensorMapContract(int64(len(b.mem)), dt, dims, strides, box, swizzle, l2Promotion); msg != "" {
		return out, violation("EncodeTensorMap: %s", msg)
	}
	mapped.Store(b.id, b)
	le := binary.LittleEndian
	copy(out[0:4], tensorMapMagic)
	out[4], out[5], out[6], out[7] = byte(len(dims)), byte(dt), byte(swizzle), byte(l2Promotion/64)
	le.PutUint64(out[8:], b.id)
	for i, n := range dims {
		le.PutUint64(out[16+8*i:], n)
	}
	for i, s := range strides {
		le.PutUint64(out[56+8*i:], s)
	}
	for i, n := range box {
		le.PutUint16(out[88+2*i:], uint16(n))
	}
	h := fnv.New32a()
	h.Write(out[:124])
	le.PutUint32(out[124:], h.Sum32())
	return out, nil
}

// tensorMapContract returns the first promise of the SPI that the arguments of
// EncodeTensorMap break, or "".
func tensorMapContract(size int64, dt driver.TensorDataType, dims, strides []uint64, box []uint32, swizzle driver.TensorMapSwizzle, l2 int) string {
	es := uint64(dt.Size())
	rank := len(dims)
	switch {
	case es == 0:
		return fmt.Sprintf("data type %v", dt)
	case rank < 1 || rank > driver.MaxTensorRank || len(strides) != rank-1 || len(box) != rank:
		return fmt.Sprintf("dims %v, strides %v, box %v", dims, strides, box)
	case !swizzle.Known():
		return fmt.Sprintf("swizzle %v", swizzle)
	case l2 != 0 && l2 != 64 && l2 != 128 && l2 != 256:
		return fmt.Sprintf("L2 promotion of %d bytes", l2)
	case uint64(box[0])*es%16 != 0 || (swizzle.Span() > 0 && uint64(box[0])*es > uint64(swizzle.Span())):
		return fmt.Sprintf("box %v of %d-byte elements with swizzle %v", box, es, swizzle)
	}
	for i, n := range dims {
		if n < 1 || n > 1<<32 || box[i] < 1 || box[i] > 256 {
			return fmt.Sprintf("dims %v, box %v", dims, box)
		}
	}
	extent, end := dims[0]*es, dims[0]*es
	for i, s := range strides {
		if s%16 != 0 || s >= 1<<40 || s < extent {
			return fmt.Sprintf("strides %v for dims %v of %d-byte elements", strides, dims, es)
		}
		// Within the checks above, dims[i+1]*s < 2^72 may overflow: a buffer is smaller.
		if dims[i+1] > (1<<63)/s {
			return fmt.Sprintf("a tensor of dims %v and strides %v beyond any buffer", dims, strides)
		}
		extent, end = dims[i+1]*s, end+(dims[i+1]-1)*s
	}
	if end > uint64(size) {
		return fmt.Sprintf("a tensor of %d bytes (dims %v, strides %v) in a buffer of %d", end, dims, strides, size)
	}
	return ""
}

// tensorMap is a decoded encoding.
type tensorMap struct {
	buf     *buffer
	dt      driver.TensorDataType
	dims    []uint64
	strides []uint64
	box     []uint32
	swizzle driver.TensorMapSwizzle
}

// decodeTensorMap decodes a kernel's tensor map argument, which engine promises is
// TensorMapBytes bytes aligned to TensorMapAlign. A map whose buffer was closed is an
// error, where a GPU would fault.
func decodeTensorMap(v []byte) (tensorMap, error) {
	var m tensorMap
	if len(v) != driver.TensorMapBytes || uintptr(unsafe.Pointer(unsafe.SliceData(v)))%driver.TensorMapAlign != 0 {
		return m, violation("a tensor map argument of %d bytes at %p: want %d bytes aligned to %d", len(v), unsafe.SliceData(v), driver.TensorMapBytes, driver.TensorMapAlign)
	}
	le := binary.LittleEndian
	h := fnv.New32a()
	h.Write(v[:124])
	if string(v[0:4]) != tensorMapMagic || le.Uint32(v[124:]) != h.Sum32() {
		return m, errors.New("fake: the tensor map argument is not one the fake encoded (magic or checksum differ)")
	}
	rank := int(v[4])
	m.dt, m.swizzle = driver.TensorDataType(v[5]), driver.TensorMapSwizzle(v[6])
	m.dims, m.strides, m.box = make([]uint64, rank), make([]uint64, rank-1), make([]uint32, rank)
	for i := range m.dims {
		m.dims[i] = le.Uint64(v[16+8*i:])
		m.box[i] = uint32(le.Uint16(v[88+2*i:]))
	}
	for i := range m.strides {
		m.strides[i] = le.Uint64(v[56+8*i:])
	}
	b, ok := mapped.Load(le.Uint64(v[8:]))
	if !ok || b.(*buffer).closed.Load() {
		return m, errors.New("fake: the tensor map's buffer is closed (a GPU would fault)")
	}
	m.buf = b.(*buffer)
	return m, nil
}
