package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Precision is how a GEMM op multiplies: the storage type of its inputs A and B, the
// arithmetic of its products, and the type of C, D, alpha, beta and the accumulation
// (float32, or float64 for the float64 op). It is the last part of the op's name
// (gemm/nn/bfloat16): every precision is its own op, and nothing falls back to another.
// The portable kernel (gemm.cl) computes every precision on every device, converting the
// inputs to float32 as it loads them; the tensor-core variant (cuda-mma, mma.cu) computes
// them on NVIDIA GPUs of compute capability MMACompute and newer.
type Precision struct {
	// Name is the precision's name in op names ("tf32").
	Name string
	// In is the element type of A and B as stored ("float32", "float16", "float8e4m3").
	In string
	// Doc says what is computed, for listings.
	Doc string
	// MMA is the precision's code in the tensor-core kernels (Prec: PrecFloat32 has none)
	// and MMACompute the compute capability that mma.cu needs for it (80; 89 for fp8).
	MMA        Prec
	MMACompute int
	// conv is gemm.cl's CONV for the inputs (empty: none), in its IN type.
	clIn, conv string
	// inErr is the largest relative error of one product a*b that the kernel's own
	// rounding of the inputs causes (tf32: both factors cut to 11 significant bits,
	// truncated on wgmma, a relative error below 2^-10 each).
	inErr float64
	// accUnit is the unit roundoff the tolerance takes for the float32 accumulation: 2^-23
	// on tensor cores, which may truncate rather than round when they align and add
	// (Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor cores",
	// PeerJ Comput. Sci. 7:e330, 2021); 2^-13 for fp8, whose Hopper accumulation keeps
	// about 14 bits (DeepSeek-V3 technical report, 2024, 3.3.2).
	accUnit float64
}

// Prec is a precision's code in the tensor-core kernels: the PREC that mma.cu, wgmma.cu
// and gemm_mma.cl are built with (-DPREC=1 for tf32, ...). PrecFloat32 has no tensor-core
// kernel. Its methods say which kernels compute a precision (dispatch).
type Prec int

// The precisions of the GEMM ops, as the tensor-core kernels number them.
const (
	PrecFloat32       Prec = 0 // IEEE float32: no tensor-core kernel
	PrecTF32          Prec = 1 // float32 inputs reduced to tf32
	PrecFloat32x3TF32 Prec = 2 // float32 inputs split into three tf32 products
	PrecFloat16       Prec = 3 // IEEE binary16 inputs
	PrecBFloat16      Prec = 4 // bfloat16 inputs
	PrecFloat64       Prec = 5 // IEEE float64, on the fp64 tensor cores (DMMA)
	PrecFloat8E4M3    Prec = 6 // OCP float8 E4M3 inputs
	PrecFloat8E5M2    Prec = 7 // OCP float8 E5M2 inputs
)

// TensorCore reports whether mma.cu computes p on the tensor cores: every precision but
// float32.
func (p Prec) TensorCore() bool { return p >= PrecTF32 && p <= PrecFloat8E5M2 }

// Warpgroup reports whether wgmma.cu computes p on Hopper's warpgroup tensor cores: every
// tensor-core precision but float64.
func (p Prec) Warpgroup() bool { return p.TensorCore() && p != PrecFloat64 }

// OpenCLTensorCore reports whether gemm_mma.cl computes p on the tensor cores through
// NVIDIA's OpenCL: tf32, float16 and bfloat16.
func (p Prec) OpenCLTensorCore() bool { return p == PrecTF32 || p.Bits16() }

// TF32 reports whether p multiplies float32 inputs as tf32 on the tensor cores: tf32 and
// float32x3tf32.
func (p Prec) TF32() bool { return p == PrecTF32 || p == PrecFloat32x3TF32 }

// Bits16 reports whether p's inputs are 16-bit floats: float16 and bfloat16.
func (p Prec) Bits16() bool { return p == PrecFloat16 || p == PrecBFloat16 }

// Float8 reports whether p's inputs are 8-bit floats: float8e4m3 and float8e5m2.
func (p Prec) Float8() bool { return p == PrecFloat8E4M3 || p == PrecFloat8E5M2 }

// BLAS reports whether p is a precision of the standard BLAS (sgemm, dgemm), which the
// vendor baselines compute: float32 and float64.
func (p Prec) BLAS() bool { return p == PrecFloat32 || p == PrecFloat64 }

// precisions are the precisions of the GEMM ops beyond float32 and float64, in the order
// listings show them.
var precisions = []Precision{
	{Name: "tf32", In: "float32", MMA: PrecTF32, MMACompute: 80, clIn: "float", conv: "prism_tf32",
		Doc: "inputs float32 reduced to tf32 (10 mantissa bits: rounded, ties away from zero, by mma.sync and OpenCL; truncated by wgmma, whose tensor cores drop the low 13 bits of the float32 they read, as Triton's Hopper kernels leave them; cuBLASLt rounds), float32 accumulation and output",
		// Truncation bounds each factor's relative error by 2^-10 (rounding by 2^-11).
		inErr: 2*0x1p-10 + 0x1p-20, accUnit: 0x1p-23},
	{Name: "float32x3tf32", In: "float32", MMA: PrecFloat32x3TF32, MMACompute: 80, clIn: "float",
		Doc: "float32 accuracy from three tf32 products (3xTF32: big*big + big*small + small*big), float32 output",
		// The split drops small_a*small_b and rounds small_a, small_b to tf32: below
		// 3*2^-22*(1+2^-10) relative per product. The accumulation is held to the SGEMM
		// bound, the variant's claim (ref.go, precTolerance).
		inErr: 3.01 * 0x1p-22, accUnit: 0x1p-24},
	{Name: "float16", In: "float16", MMA: PrecFloat16, MMACompute: 80, clIn: "ushort", conv: "prism_half",
		Doc: "inputs IEEE binary16, products exact, float32 accumulation and output", accUnit: 0x1p-23},
	{Name: "bfloat16", In: "bfloat16", MMA: PrecBFloat16, MMACompute: 80, clIn: "ushort", conv: "prism_bfloat16",
		Doc: "inputs bfloat16, products exact, float32 accumulation and output", accUnit: 0x1p-23},
	{Name: "float8e4m3", In: "float8e4m3", MMA: PrecFloat8E4M3, MMACompute: 89, clIn: "uchar", conv: "prism_e4m3",
		Doc: "inputs OCP float8 E4M3, products exact, float32 accumulation and output", accUnit: 0x1p-13},
	{Name: "float8e5m2", In: "float8e5m2", MMA: PrecFloat8E5M2, MMACompute: 89, clIn: "uchar", conv: "prism_e5m2",
		Doc: "inputs OCP float8 E5M2, products exact, float32 accumulation and output", accUnit: 0x1p-13},
}

// Precisions returns the precisions of the GEMM ops beyond float32 and float64.
func Precisions() []Precision { return append([]Precision(nil), precisions...) }

// LookupPrecision returns the precision of that name: one of Precisions, or float32 or
// float64.
func LookupPrecision(name string) (Precision, bool) {
	if name == "float32" || name == "float64" {
		return precisionOf(name), true
	}
	for _, p := range precisions {
		if p.Name == name {
			return p, true
		}
	}
	return Precision{}, false
}

// precisionOf returns the precision of the ops in float32 or float64 (plain IEEE
// arithmetic: GEMMTolerance), or of a name of Precisions.
func precisionOf(name string) Precision {
	for _, p := range precisions {
		if p.Name == name {
			return p
		}
	}
	if name == "float64" {
		return Precision{Name: name, In: name, MMA: PrecFloat64, MMACompute: 80, clIn: "double"}
	}
	return Precision{Name: name, In: name, clIn: "float"}
}

// Tolerance returns the largest error allowed between an element of D and the float64
// reference computed from the inputs as stored, for inner dimension k, scalar alpha and
// mag = |alpha| * sum_l |a_il*b_lj| + |beta*c_ij| (GEMMRef):
//
//	float32, float64:  GEMMTolerance
//	others:            ((1+inErr)(1+gamma_{k+2}(accUnit)) - 1 + gamma_{k+2}(2^-53)) * mag
//	                   + (k+3) * max(1, |alpha|) * 2^-126
//
// Derivation as GEMMTolerance's, with two changes: each product carries the error inErr
// of the kernel's own rounding of its inputs (tf32; zero where the inputs are used as
// stored: the products of float16, bfloat16 and fp8 values are exact in float32), and the
// accumulation's unit is accUnit (see Precision). For float32x3tf32 it is the SGEMM bound
// plus the split's own error: the variant's claim is float32 accuracy.
func (p Precision) Tolerance(k int, alpha, mag float64) float64 {
	switch p.Name {
	case "float32":
		return GEMMTolerance[float32](k, alpha, mag)
	case "float64":
		return GEMMTolerance[float64](k, alpha, mag)
	}
	gamma := func(u float64) float64 {
		ku := float64(k+2) * u
		if ku >= 1 {
			return math.Inf(1)
		}
		return ku / (1 - ku)
	}
	rel := (1+p.inErr)*(1+gamma(p.accUnit)) - 1 + gamma(0x1p-53)
	return rel*mag + float64(k+3)*math.Max(1, math.Abs(alpha))*0x1p-126
}

// InputType is the set of element types of GEMM inputs A and B.
type InputType interface {
	float32 | float64 | engine.Half | engine.BFloat16 | engine.Float8E4M3 | engine.Float8E5M2
}

// typeNameOf returns the name of input type In ("float16").
func typeNameOf[In InputType]() string {
	var z In
	switch any(z).(type) {
	case float32:
		return "float32"
	case float64:
		return "float64"
	case engine.Half:
		return "float16"
	case engine.BFloat16:
		return "bfloat16"
	case engine.Float8E4M3:
		return "float8e4m3"
	}
	return "float8e5m2"
}

// check returns an error wrapping engine.ErrInvalidArg unless in and out are p's input
// and output types.
func (p Precision) check(in, out string) error {
	wantOut := "float32"
	if p.Name == "float64" {
		wantOut = "float64"
	}
	if in != p.In || out != wantOut {
		return fmt.Errorf("kernels: gemm %s takes %s inputs and %s outputs, not %s and %s: %w", p.Name, p.In, wantOut, in, out, engine.ErrInvalidArg)
	}
	return nil
}

// randIn returns n uniform values of [lo, hi) rounded to In (to nearest even; the fp8
// formats hold every value of [-1, 1) without overflow), drawn and rounded as
// kernels.RandRounded does.
func randIn[In InputType](rng *rand.Rand, n int, lo, hi float64) []In {
	return kernels.RandRounded(rng, n, lo, hi, kernels.RoundFloats[In])
}

// widen returns the values of x, exactly, in float64.
func widen[In InputType](x []In) []float64 {
	out := make([]float64, len(x))
	kernels.WidenFloats(out, x)
	return out
}
