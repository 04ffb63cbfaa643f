package driver

import "fmt"

// This file is the SPI of tensor maps: descriptions of a tile of a tensor in device memory
// that Hopper's Tensor Memory Accelerator copies between global and shared memory (CUDA's
// cuTensorMapEncodeTiled, CUDA 12.0, compute capability 9.0 and newer). The host encodes a
// map once; kernels take its bytes by value.

// TensorMapBytes is the size of an encoded tensor map (CUDA's CUtensorMap), which a kernel
// takes by value; TensorMapAlign is the alignment of its parameter and of the memory an
// Arg holding one points to.
const (
	TensorMapBytes = 128
	TensorMapAlign = 64
)

// MaxTensorRank is the most dimensions a tensor map has.
const MaxTensorRank = 5

// TensorMapSwizzle is how a tensor map's box is laid out in shared memory: as it is in
// global memory (SwizzleNone), or with the 16-byte chunks of each row of a 32-, 64- or
// 128-byte span permuted, so that reads of a column hit distinct banks. Its values are
// CUDA's CUtensorMapSwizzle.
type TensorMapSwizzle int

// Swizzle patterns.
const (
	SwizzleNone TensorMapSwizzle = iota
	Swizzle32B
	Swizzle64B
	Swizzle128B
)

// Span returns the bytes of the swizzle's span (32, 64 or 128), 0 for SwizzleNone or an
// unknown pattern. The inner dimension of a swizzled box holds at most that many bytes.
func (s TensorMapSwizzle) Span() int {
	switch s {
	case Swizzle32B:
		return 32
	case Swizzle64B:
		return 64
	case Swizzle128B:
		return 128
	}
	return 0
}

// Known reports whether s is one of the swizzle patterns.
func (s TensorMapSwizzle) Known() bool { return s >= SwizzleNone && s <= Swizzle128B }

// String returns "none", "32B", "64B" or "128B".
func (s TensorMapSwizzle) String() string {
	if s == SwizzleNone {
		return "none"
	}
	if n := s.Span(); n > 0 {
		return fmt.Sprintf("%dB", n)
	}
	return fmt.Sprintf("TensorMapSwizzle(%d)", int(s))
}

// TensorDataType is the element type of a tensor map. Its values are CUDA's
// CUtensorMapDataType.
type TensorDataType int

// Element types of tensor maps.
const (
	TensorUint8    TensorDataType = 0
	TensorUint16   TensorDataType = 1
	TensorUint32   TensorDataType = 2
	TensorInt32    TensorDataType = 3
	TensorUint64   TensorDataType = 4
	TensorInt64    TensorDataType = 5
	TensorFloat16  TensorDataType = 6
	TensorFloat32  TensorDataType = 7
	TensorFloat64  TensorDataType = 8
	TensorBFloat16 TensorDataType = 9
)

var tensorTypes = [...]struct {
	name string
	size int
}{
	TensorUint8: {"uint8", 1}, TensorUint16: {"uint16", 2}, TensorUint32: {"uint32", 4}, TensorInt32: {"int32", 4},
	TensorUint64: {"uint64", 8}, TensorInt64: {"int64", 8}, TensorFloat16: {"float16", 2}, TensorFloat32: {"float32", 4},
	TensorFloat64: {"float64", 8}, TensorBFloat16: {"bfloat16", 2},
}

// Size returns the size in bytes of one element, 0 for an unknown type.
func (t TensorDataType) Size() int {
	if t < 0 || int(t) >= len(tensorTypes) {
		return 0
	}
	return tensorTypes[t].size
}

// String returns the type's name ("float32", "bfloat16", ...).
func (t TensorDataType) String() string {
	if t.Size() == 0 {
		return fmt.Sprintf("TensorDataType(%d)", int(t))
	}
	return tensorTypes[t].name
}

// TensorMapEncoder is implemented by devices whose kernels take tensor maps. Without it,
// engine refuses tensor maps with ErrUnsupported.
type TensorMapEncoder interface {
	// TensorMapSupport reports whether the device encodes tensor maps: nil, or an error
	// wrapping engine.ErrUnsupported that says why not (an architecture or a driver
	// without them). engine asks once, when it opens the device, and calls
	// EncodeTensorMap only where it said nil.
	TensorMapSupport() error
	// EncodeTensorMap encodes a tiled tensor map of buf, whose elements are of dataType:
	// a tensor of len(dims) dimensions (1 to MaxTensorRank) of dims[i] elements each,
	// fastest-varying first, starting at buf's first byte; strides[i] is the byte stride
	// of dimension i+1 (len(dims)-1 of them); box[i] is the tile's extent in elements;
	// swizzle lays the box out in shared memory; l2Promotion (0, 64, 128 or 256) is the
	// size in bytes of the L2 requests the copies make, 0 for the default. Every element
	// stride is 1, nothing is interleaved, and elements of a box outside the tensor read
	// as zero. engine has checked every rule of the description (ranks, lengths, strides
	// multiples of 16 bytes below 2^40 and each at least the previous dimension's extent,
	// boxes of 1 to 256 elements whose inner dimension is a multiple of 16 bytes and fits
	// the swizzle's span, the tensor within buf) and that buf is open and of this device.
	// The result is what a kernel receives (an Arg's Value of TensorMapBytes bytes).
	EncodeTensorMap(buf Buffer, dataType TensorDataType, dims, strides []uint64, box []uint32, swizzle TensorMapSwizzle, l2Promotion int) ([TensorMapBytes]byte, error)
}
