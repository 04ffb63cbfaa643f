package cuda

import (
	"fmt"

	"github.com/prism-compute/prism/engine/driver"
)

// Tensor maps (driver.TensorMapEncoder): cuTensorMapEncodeTiled (CUDA 12.0) encodes the
// 128-byte CUtensorMap that Hopper's Tensor Memory Accelerator copies boxes by, on devices
// of compute capability 9.0 and newer. The symbol is optional: a driver without it, or an
// older device, has no tensor maps (driver.ErrUnsupported). A kernel takes the map by value
// (`const __grid_constant__ CUtensorMap`), as the 128 bytes of an Arg's Value, which
// launches pass in 64-byte-aligned C memory (packArgs).

var _ driver.TensorMapEncoder = (*device)(nil)

// minTensorMapCompute is the compute capability of the first architecture with TMA.
const minTensorMapCompute = 90

// l2Promotions maps an L2 promotion in bytes to CUtensorMapL2promotion.
var l2Promotions = map[int]int{0: 0, 64: 1, 128: 2, 256: 3}

// TensorMapSupport reports tensor maps on devices of compute capability 9.0 and newer
// whose driver has cuTensorMapEncodeTiled (CUDA 12.0).
func (d *device) TensorMapSupport() error {
	if cc := d.info.ComputeCapability; cc < minTensorMapCompute {
		return fmt.Errorf("cuda: %s is sm_%d: tensor maps (TMA) need compute capability 9.0 or newer: %w", d.info.Name, cc, driver.ErrUnsupported)
	}
	if !haveTensorMapEncodeTiled() {
		v := d.props.DriverVersion
		return fmt.Errorf("cuda: the driver (CUDA %d.%d) has no cuTensorMapEncodeTiled (CUDA 12.0): %w", v/1000, v%1000/10, driver.ErrUnsupported)
	}
	return nil
}

// EncodeTensorMap encodes a tiled tensor map of buf with cuTensorMapEncodeTiled, on the
// device's thread: element strides 1, no interleave, elements outside the tensor read as
// zero. engine has checked the description; what the driver refuses besides
// (CUDA_ERROR_INVALID_VALUE) gives an error wrapping driver.ErrInvalidArg that names the
// call and its arguments.
func (d *device) EncodeTensorMap(buf driver.Buffer, dt driver.TensorDataType, dims, strides []uint64, box []uint32,
	swizzle driver.TensorMapSwizzle, l2Promotion int) ([driver.TensorMapBytes]byte, error) {
	var out [driver.TensorMapBytes]byte
	if d.closed.Load() {
		return out, errClosed("device")
	}
	b, err := asBuffer(buf)
	if err != nil {
		return out, err
	}
	rank := len(dims)
	l2, ok := l2Promotions[l2Promotion]
	switch {
	case b.d != d:
		return out, fmt.Errorf("cuda: tensor map of a buffer of another device: %w", driver.ErrInvalidArg)
	case b.ptr%16 != 0:
		return out, fmt.Errorf("cuda: tensor map of a buffer at %#x: the address must be a multiple of 16: %w", b.ptr, driver.ErrInvalidArg)
	case rank < 1 || rank > driver.MaxTensorRank || len(strides) != rank-1 || len(box) != rank:
		return out, fmt.Errorf("cuda: tensor map of dims %v, strides %v, box %v: want 1 to %d dimensions, one stride fewer, one box size each: %w",
			dims, strides, box, driver.MaxTensorRank, driver.ErrInvalidArg)
	case dt.Size() == 0 || !swizzle.Known() || !ok:
		return out, fmt.Errorf("cuda: tensor map of %v, swizzle %v, L2 promotion of %d bytes: %w", dt, swizzle, l2Promotion, driver.ErrInvalidArg)
	}
	err = d.th.Call(func() error {
		var r Result
		out, r = cuTensorMapEncodeTiled(int(dt), b.ptr, dims, strides, box, int(swizzle), l2)
		return check(fmt.Sprintf("cuTensorMapEncodeTiled(%v, dims %v, strides %v, box %v, swizzle %v, L2 promotion %d bytes)",
			dt, dims, strides, box, swizzle, l2Promotion), r)
	})
	return out, err
}
