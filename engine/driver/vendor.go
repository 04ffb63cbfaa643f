package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// This file is the SPI of vendor libraries (cuBLAS, cuFFT, CLBlast, clFFT): optional
// capabilities a Device may implement, so that engine can run a vendor routine on the
// device's own queues and buffers, beside Prism's kernels.

// ElemType is the element type of a vendor routine's data.
type ElemType int

// Element types. A complex element is a pair of them (re, im), interleaved. The 16- and
// 8-bit floats are the inputs of a mixed-precision GEMM only (MixedBLAS).
const (
	Float32 ElemType = iota + 1
	Float64
	Float16    // IEEE binary16
	BFloat16   // bfloat16: float32's upper 16 bits
	Float8E4M3 // OCP float8 E4M3
	Float8E5M2 // OCP float8 E5M2
)

// Size returns the size in bytes of one element (0 for an unknown type).
func (t ElemType) Size() int {
	switch t {
	case Float32:
		return 4
	case Float64:
		return 8
	case Float16, BFloat16:
		return 2
	case Float8E4M3, Float8E5M2:
		return 1
	}
	return 0
}

// String returns the type's name as the GEMM ops spell it: "float32", "float64",
// "float16", "bfloat16", "float8e4m3", "float8e5m2".
func (t ElemType) String() string {
	switch t {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	case Float16:
		return "float16"
	case BFloat16:
		return "bfloat16"
	case Float8E4M3:
		return "float8e4m3"
	case Float8E5M2:
		return "float8e5m2"
	}
	return fmt.Sprintf("ElemType(%d)", int(t))
}

// Library identifies a loaded vendor library.
type Library struct {
	Name    string `json:"name"`    // "cuBLAS", "cuFFT", "CLBlast", "clFFT"
	Version string `json:"version"` // "13.0.2", as the library reports it, else from its file name
	Path    string `json:"path"`    // the file the dynamic loader opened
}

// String returns "Name Version (Path)".
func (l Library) String() string {
	s := l.Name
	if l.Version != "" {
		s += " " + l.Version
	}
	if l.Path != "" {
		s += " (" + l.Path + ")"
	}
	return s
}

// BLASProvider is implemented by devices that offer a vendor BLAS.
type BLASProvider interface {
	// BLAS loads the library (on first use in the process) and returns a handle on it for
	// this device. A library that is not installed gives an error wrapping
	// engine.ErrUnavailable that names every file tried. engine closes the handle before
	// the device.
	BLAS() (BLAS, error)
}

// BLAS is a vendor BLAS bound to one device. It is safe for concurrent use: calls on
// different queues may come from different goroutines at once.
type BLAS interface {
	// Library describes the library loaded.
	Library() Library
	// Gemm enqueues a general matrix multiply on q, a queue of the BLAS's device, and
	// returns an event whose Elapsed spans the whole library call (every command the
	// library enqueued for it).
	Gemm(q Queue, g GemmArgs) (Event, error)
	// Close releases the handle. engine calls it once.
	Close() error
}

// GemmArgs is one general matrix multiply, or a strided batch of them, in row-major storage:
// C = Alpha*op(A)*op(B) + Beta*C with op(A) M x K, op(B) K x N and C M x N, op(X) = X^T when
// TransX (A then stored K x M, B stored N x K). engine has resolved every default and
// validated the shape against the buffers: dimensions, leading dimensions and Batch are at
// least 1, each leading dimension is at least the row length of its matrix as stored, the
// matrices of C do not overlap, and each buffer holds its last matrix. A backend whose
// library takes narrower integers must check the ranges itself.
type GemmArgs struct {
	Type           ElemType
	TransA, TransB bool
	M, N, K        int
	// Alpha and Beta are exact in Type (engine converted them from it). When Beta is 0, C
	// need not be read.
	Alpha, Beta float64
	A, B, C     Buffer
	// LDA, LDB and LDC are the row strides, in elements, of A, B and C as stored.
	LDA, LDB, LDC int
	// Batch is the number of products; matrix z of X starts at element z*StrideX.
	Batch                     int
	StrideA, StrideB, StrideC int64
}

// GemmCompute is the arithmetic of a mixed-precision GEMM (MixedBLAS).
type GemmCompute int

// Arithmetics of a mixed-precision GEMM.
const (
	// ComputeFloat32 multiplies the inputs as stored (the products of 16- and 8-bit floats
	// are exact in float32) and accumulates in float32.
	ComputeFloat32 GemmCompute = iota
	// ComputeTF32 multiplies float32 inputs as tf32 (10 explicit mantissa bits) on the
	// tensor cores and accumulates in float32.
	ComputeTF32
)

// String returns "float32" or "tf32".
func (c GemmCompute) String() string {
	switch c {
	case ComputeFloat32:
		return "float32"
	case ComputeTF32:
		return "tf32"
	}
	return fmt.Sprintf("GemmCompute(%d)", int(c))
}

// MixedBLAS is implemented by BLAS handles that offer a GEMM whose inputs A and B are
// 16- or 8-bit floats while C is float32, or float32 inputs multiplied as tf32: cuBLASLt
// on CUDA. engine answers ErrUnsupported where a handle lacks it.
type MixedBLAS interface {
	// MixedLibrary loads the library that computes the mixed-precision GEMMs (on first use
	// in the process; it may be another library than Library's, as cuBLASLt is beside
	// cuBLAS) and describes it. A library that is not installed gives an error wrapping
	// engine.ErrUnavailable that names every file tried.
	MixedLibrary() (Library, error)
	// GemmMixed enqueues a mixed-precision GEMM on q, a queue of the BLAS's device, like
	// BLAS.Gemm. A combination of types, arithmetic, layout or device that the library
	// does not compute gives an error wrapping engine.ErrUnsupported that names it and
	// says why, before anything is enqueued where the rule is known in advance.
	GemmMixed(q Queue, g MixedGemmArgs) (Event, error)
}

// MixedGemmArgs is one mixed-precision GEMM, validated as GemmArgs. GemmArgs.Type is the
// type of C and of the accumulation (Float32; Alpha and Beta are exact in it), In the
// type of A and B, Compute the arithmetic: ComputeTF32 with In Float32, ComputeFloat32
// with the 16- and 8-bit inputs.
type MixedGemmArgs struct {
	GemmArgs
	In      ElemType
	Compute GemmCompute
}

// FFTProvider is implemented by devices that offer a vendor FFT.
type FFTProvider interface {
	// FFT loads the library (on first use in the process) and returns a handle on it for
	// this device, with the same contract as BLASProvider.BLAS.
	FFT() (FFT, error)
}

// FFT is a vendor FFT bound to one device. It is safe for concurrent use.
type FFT interface {
	// Library describes the library loaded.
	Library() Library
	// Plan prepares a transform. engine closes every plan before the FFT.
	Plan(s FFTSpec) (FFTPlan, error)
	// Close releases the handle. engine calls it once.
	Close() error
}

// FFTKind is the kind of a transform.
type FFTKind int

// Transform kinds.
const (
	// C2C transforms complex data to complex data, forward or inverse.
	C2C FFTKind = iota
	// R2C transforms real data to the non-redundant half of its spectrum, forward only.
	R2C
)

// String returns "c2c" or "r2c".
func (k FFTKind) String() string {
	switch k {
	case C2C:
		return "c2c"
	case R2C:
		return "r2c"
	}
	return fmt.Sprintf("FFTKind(%d)", int(k))
}

// FFTSpec describes a batch of out-of-place transforms of contiguous, interleaved data.
// Shape holds 1 or 2 dimensions, row-major (the last is contiguous), each at least 1;
// Batch is at least 1, the transforms following each other without gaps. A C2C transform
// reads and writes prod(Shape) complex elements per transform; an R2C transform reads
// prod(Shape) real elements and writes prod(Shape[:last]) * (Shape[last]/2 + 1) complex
// ones. The forward transform has the exponent -2 pi i jk/n, the inverse +2 pi i jk/n,
// unnormalized.
type FFTSpec struct {
	Kind    FFTKind
	Type    ElemType
	Shape   []int
	Batch   int
	Inverse bool // C2C only
}

// FFTPlan is a prepared transform of one device.
type FFTPlan interface {
	// Run enqueues the transform from in to out (distinct buffers, each large enough) on q,
	// a queue of the plan's device, and returns an event whose Elapsed spans the whole
	// library call. in is not modified. Runs of one plan must not overlap on the device:
	// a plan's scratch memory is its own, not its queue's.
	Run(q Queue, in, out Buffer) (Event, error)
	// Close releases the plan. engine calls it once.
	Close() error
}

// VendorPathEnv names the environment variable that lists, colon-separated, directories
// to search first for vendor libraries.
const VendorPathEnv = "PRISM_VENDOR_PATH"

// LibraryCandidates returns the file names a backend tries, in order, to load a vendor
// library known under names (newest first, e.g. "libcublas.so.13", "libcublas.so.12"):
// every name in each directory of PRISM_VENDOR_PATH, so that an explicit setting wins;
// then every bare name, which the dynamic loader looks up on its own path
// (LD_LIBRARY_PATH, the ld.so cache, the system directories); then every name in each of
// dirs that exists, the library's usual install locations. Empty and duplicate entries
// are dropped.
func LibraryCandidates(names []string, dirs ...string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	inDir := func(dir string) {
		for _, n := range names {
			add(filepath.Join(dir, n))
		}
	}
	for _, dir := range filepath.SplitList(os.Getenv(VendorPathEnv)) {
		if dir != "" {
			inDir(dir)
		}
	}
	for _, n := range names {
		add(n)
	}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			inDir(dir)
		}
	}
	return out
}

// LibraryVersion returns the version in a shared library's file name after ".so."
// ("1.5.3" for libclblast.so.1.5.3), resolving symbolic links first, or "" when the name
// carries none.
func LibraryVersion(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	base := filepath.Base(path)
	i := strings.LastIndex(base, ".so.")
	if i < 0 {
		return ""
	}
	v := base[i+len(".so."):]
	for _, r := range v {
		if (r < '0' || r > '9') && r != '.' {
			return ""
		}
	}
	return strings.Trim(v, ".")
}

// BLAS1 is implemented by BLAS handles that offer the level-1 routines the suite has
// operations for. engine answers ErrUnsupported where a handle lacks it or a routine.
type BLAS1 interface {
	// Axpy enqueues Y = Alpha*X + Y over N elements (Y in place).
	Axpy(q Queue, a AxpyArgs) (Event, error)
	// Dot enqueues Out[0] = the sum of X[i]*Y[i] over N elements, written to device memory.
	Dot(q Queue, a DotArgs) (Event, error)
	// Sum enqueues Out[0] = the sum of X[i] (not of |X[i]|, which is asum) over N elements;
	// an error wrapping engine.ErrUnsupported where the library has no such routine
	// (cuBLAS has only asum). Y is unused.
	Sum(q Queue, a DotArgs) (Event, error)
}

// AxpyArgs is one Y = Alpha*X + Y; engine has checked that N >= 1 and that both buffers
// hold N elements of Type, and Alpha is exact in Type.
type AxpyArgs struct {
	Type  ElemType
	N     int
	Alpha float64
	X, Y  Buffer
}

// DotArgs is one Out[0] = X . Y; engine has checked that N >= 1, X and Y hold N elements of
// Type and Out at least one.
type DotArgs struct {
	Type      ElemType
	N         int
	X, Y, Out Buffer
}
