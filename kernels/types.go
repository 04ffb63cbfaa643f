package kernels

import (
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/prism-compute/prism/engine"
)

// Float is the set of floating-point element types of the suite.
type Float interface{ float32 | float64 }

// Number is the set of element types the suite computes in.
type Number interface {
	~float32 | ~float64 | ~int32 | ~uint32
}

// Type describes one element type of the suite: its name in op names, its size, how the
// OpenCL C and the CUDA C++ sources spell it, its rounding, what a device needs to compute
// in it and how the host converts it. The launchers' -D type options (Defines), TypeName,
// Epsilon, Gamma and the tolerances all read it, so that a new element type is an entry of
// the table Types or StorageTypes returns plus the kernels that use it. A Type is a value;
// it is safe for concurrent use.
type Type struct {
	// Name is the type's name in op names and reports ("float32").
	Name string
	// Size is the size of one element in bytes.
	Size int
	// OpenCL and CUDA are the type's spellings in OpenCL C ("float", "uint") and CUDA C++
	// ("float", "unsigned int"): Defines passes the OpenCL one as ELEM.
	OpenCL, CUDA string
	// Float reports a floating-point type; integer types compute exactly, wrapping modulo
	// 2^(8*Size).
	Float bool
	// Signed reports a signed integer type (int8, int16, int32, int64); false for unsigned
	// integers and floating-point types.
	Signed bool
	// Unit is the unit roundoff u: the largest relative error of one rounding to nearest
	// (2^-24 for float32, 2^-53 for float64); 0 for integer types.
	Unit float64
	// MinNormal is the smallest positive normal value (2^-126 for float32): results below it
	// may be flushed to zero on GPUs. MinSubnormal is the smallest positive value (2^-149
	// for float32). Both are 0 for integer types.
	MinNormal, MinSubnormal float64
	// FP64 and FP16 report that computing in the type needs the device's fp64 or fp16
	// support (engine.DeviceInfo FP64, FP16); Defines then also defines PRISM_FP64 or
	// PRISM_FP16, which the kernels test to enable the extension.
	FP64, FP16 bool
	// Storage reports a storage-only type (float16, bfloat16, float8e4m3, float8e5m2): a
	// buffer holds its bits in the unsigned integer of Size bytes that OpenCL and CUDA
	// name (ushort, uchar), Defines passes that spelling as ELEM, and a kernel converts each
	// element to float32 when it loads it and back when it stores it (the functions of
	// ConvertSource): arithmetic happens in float32. Unit, MinNormal and MinSubnormal are the storage format's, what one rounding
	// of a stored result costs. Such a type needs no fp16 support of the device (FP16 is
	// false): the conversions are integer code. Storage types are not Numbers: TypeOf and
	// Types leave them out; StorageTypes and TypeByName give them.
	Storage bool
	// FromFloat64 converts x to the type as Go's conversions do (floats round to nearest
	// even, integers truncate toward zero; storage types through engine's conversions,
	// engine.HalfFromFloat64 and the like, which round once, to nearest even, with OCP's
	// non-saturating overflow for fp8) and returns the bits of the result in the low
	// 8*Size bits; ToFloat64 returns the value of the type with those bits, exactly. They are
	// the host's conversions for element types Go has no arithmetic for (half, bfloat16,
	// fp8).
	FromFloat64 func(x float64) uint64
	ToFloat64   func(bits uint64) float64
}

// types is the table of element types, in the order Types lists them.
var types = [...]Type{
	{
		Name: "float32", Size: 4, OpenCL: "float", CUDA: "float", Float: true,
		Unit: 0x1p-24, MinNormal: 0x1p-126, MinSubnormal: 0x1p-149,
		FromFloat64: func(x float64) uint64 { return uint64(math.Float32bits(float32(x))) },
		ToFloat64:   func(b uint64) float64 { return float64(math.Float32frombits(uint32(b))) },
	},
	{
		Name: "float64", Size: 8, OpenCL: "double", CUDA: "double", Float: true,
		Unit: 0x1p-53, MinNormal: 0x1p-1022, MinSubnormal: 0x1p-1074, FP64: true,
		FromFloat64: math.Float64bits,
		ToFloat64:   math.Float64frombits,
	},
	{
		Name: "int32", Size: 4, OpenCL: "int", CUDA: "int", Signed: true,
		FromFloat64: func(x float64) uint64 { return uint64(uint32(int32(x))) },
		ToFloat64:   func(b uint64) float64 { return float64(int32(uint32(b))) },
	},
	{
		Name: "uint32", Size: 4, OpenCL: "uint", CUDA: "unsigned int",
		FromFloat64: func(x float64) uint64 { return uint64(uint32(x)) },
		ToFloat64:   func(b uint64) float64 { return float64(uint32(b)) },
	},
}

// storageTypes is the table of storage-only element types (Type.Storage), in the order
// StorageTypes lists them.
var storageTypes = [...]Type{
	{
		Name: "float16", Size: 2, OpenCL: "ushort", CUDA: "unsigned short", Float: true, Storage: true,
		Unit: 0x1p-11, MinNormal: 0x1p-14, MinSubnormal: 0x1p-24,
		FromFloat64: func(x float64) uint64 { return uint64(engine.HalfFromFloat64(x)) },
		ToFloat64:   func(b uint64) float64 { return engine.Half(b).Float64() },
	},
	{
		Name: "bfloat16", Size: 2, OpenCL: "ushort", CUDA: "unsigned short", Float: true, Storage: true,
		Unit: 0x1p-8, MinNormal: 0x1p-126, MinSubnormal: 0x1p-133,
		FromFloat64: func(x float64) uint64 { return uint64(engine.BFloat16FromFloat64(x)) },
		ToFloat64:   func(b uint64) float64 { return engine.BFloat16(b).Float64() },
	},
	{
		Name: "float8e4m3", Size: 1, OpenCL: "uchar", CUDA: "unsigned char", Float: true, Storage: true,
		Unit: 0x1p-4, MinNormal: 0x1p-6, MinSubnormal: 0x1p-9,
		FromFloat64: func(x float64) uint64 { return uint64(engine.Float8E4M3FromFloat64(x)) },
		ToFloat64:   func(b uint64) float64 { return engine.Float8E4M3(b).Float64() },
	},
	{
		Name: "float8e5m2", Size: 1, OpenCL: "uchar", CUDA: "unsigned char", Float: true, Storage: true,
		Unit: 0x1p-3, MinNormal: 0x1p-14, MinSubnormal: 0x1p-16,
		FromFloat64: func(x float64) uint64 { return uint64(engine.Float8E5M2FromFloat64(x)) },
		ToFloat64:   func(b uint64) float64 { return engine.Float8E5M2(b).Float64() },
	},
}

// otherTypes is the table of the integer types no kernel of the suite computes in, in
// the order OtherTypes lists them: the host's types that a kernel of the user's (prism
// exec) may take.
var otherTypes = [...]Type{
	{
		Name: "int8", Size: 1, OpenCL: "char", CUDA: "signed char", Signed: true,
		FromFloat64: func(x float64) uint64 { return uint64(uint8(int8(x))) },
		ToFloat64:   func(b uint64) float64 { return float64(int8(uint8(b))) },
	},
	{
		Name: "uint8", Size: 1, OpenCL: "uchar", CUDA: "unsigned char",
		FromFloat64: func(x float64) uint64 { return uint64(uint8(x)) },
		ToFloat64:   func(b uint64) float64 { return float64(uint8(b)) },
	},
	{
		Name: "int16", Size: 2, OpenCL: "short", CUDA: "short", Signed: true,
		FromFloat64: func(x float64) uint64 { return uint64(uint16(int16(x))) },
		ToFloat64:   func(b uint64) float64 { return float64(int16(uint16(b))) },
	},
	{
		Name: "uint16", Size: 2, OpenCL: "ushort", CUDA: "unsigned short",
		FromFloat64: func(x float64) uint64 { return uint64(uint16(x)) },
		ToFloat64:   func(b uint64) float64 { return float64(uint16(b)) },
	},
	{
		Name: "int64", Size: 8, OpenCL: "long", CUDA: "long long", Signed: true,
		FromFloat64: func(x float64) uint64 { return uint64(int64(x)) },
		ToFloat64:   func(b uint64) float64 { return float64(int64(b)) },
	},
	{
		Name: "uint64", Size: 8, OpenCL: "ulong", CUDA: "unsigned long long",
		FromFloat64: func(x float64) uint64 { return uint64(x) },
		ToFloat64:   func(b uint64) float64 { return float64(b) },
	},
}

// Types returns the element types the suite computes in (its Numbers): float32, float64,
// int32, uint32. The storage-only types are in StorageTypes.
func Types() []Type { return types[:] }

// StorageTypes returns the storage-only element types (Type.Storage), whose buffers hold
// engine.Half, engine.BFloat16, engine.Float8E4M3 and engine.Float8E5M2: float16,
// bfloat16, float8e4m3, float8e5m2.
func StorageTypes() []Type { return storageTypes[:] }

// OtherTypes returns the integer element types that no kernel of the suite computes in:
// int8, uint8, int16, uint16, int64, uint64. Tools that run kernels of their users' own
// (prism exec) take them with Types and StorageTypes.
func OtherTypes() []Type { return otherTypes[:] }

// AllTypes returns every element type: Types, then StorageTypes, then OtherTypes.
func AllTypes() []Type {
	return slices.Concat(types[:], storageTypes[:], otherTypes[:])
}

// TypeByName returns the element type named name ("float32", "bfloat16", "int8"), among
// AllTypes, and whether there is one.
func TypeByName(name string) (Type, bool) {
	for _, table := range [][]Type{types[:], storageTypes[:], otherTypes[:]} {
		for _, t := range table {
			if t.Name == name {
				return t, true
			}
		}
	}
	return Type{}, false
}

// TypeOf returns the descriptor of element type T (of its underlying type for a named
// type).
func TypeOf[T Number]() Type {
	var z T
	switch any(z).(type) {
	case float32:
		return types[0]
	case float64:
		return types[1]
	case int32:
		return types[2]
	case uint32:
		return types[3]
	}
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Float32:
		return types[0]
	case reflect.Float64:
		return types[1]
	case reflect.Int32:
		return types[2]
	}
	return types[3]
}

// TypeName returns the name of element type T ("float32").
func TypeName[T Number]() string { return TypeOf[T]().Name }

// Epsilon returns the unit roundoff of T (2^-24 for float32, 2^-53 for float64, 0 for the
// integer types).
func Epsilon[T Number]() float64 { return TypeOf[T]().Unit }

// Gamma returns gamma_k = k*u/(1-k*u) for the unit roundoff u of T: the bound on the
// relative error of a sum or product chain of k roundings (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., 3.1). It returns +Inf when k*u >= 1, 0 for integer types.
func Gamma[T Number](k int) float64 {
	ku := float64(k) * Epsilon[T]()
	if ku >= 1 {
		return math.Inf(1)
	}
	return ku / (1 - ku)
}

// Defines returns the -D options that select the type in a family's source (ELEM, and
// PRISM_FP64 or PRISM_FP16 where the type needs them), or an error wrapping
// engine.ErrUnsupported when dev cannot compute in it.
func (t Type) Defines(dev *engine.Device) ([]string, error) {
	opts := []string{"-DELEM=" + t.OpenCL}
	if t.FP64 {
		if !dev.Info().FP64 {
			return nil, fmt.Errorf("kernels: %s has no fp64: %w", dev.ID(), engine.ErrUnsupported)
		}
		opts = append(opts, "-DPRISM_FP64")
	}
	if t.FP16 {
		if !dev.Info().FP16 {
			return nil, fmt.Errorf("kernels: %s has no fp16: %w", dev.ID(), engine.ErrUnsupported)
		}
		opts = append(opts, "-DPRISM_FP16")
	}
	return opts, nil
}

// ULP returns the unit in the last place of x in the type: 2u * 2^e for 2^e <= |x| <
// 2^(e+1), at least MinSubnormal (MinSubnormal for zero, infinite or NaN x). 0 for integer
// types.
func (t Type) ULP(x float64) float64 {
	if !t.Float {
		return 0
	}
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return t.MinSubnormal
	}
	return max(math.Ldexp(2*t.Unit, math.Ilogb(x)), t.MinSubnormal)
}
