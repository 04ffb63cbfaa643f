package kernels

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prism-compute/prism/engine"
)

// Op is one runnable operation of the suite in one element type, e.g. "gemm/nn/float32":
// what `prism run`, `prism bench` and the suite's benchmarks run. Each family lists its
// operations in its Family; the package kernels/suite lists them all.
type Op struct {
	// Name is "family/op/type", e.g. "stream/triad/float32". Unique.
	Name string
	// Family is the kernel family, the name of its .cl file ("stream").
	Family string
	// Type is the element type ("float32", "float64", "int32", "uint32").
	Type string
	// Doc is one line: what the operation computes.
	Doc string
	// SizeDoc says how Params.Size maps to the operation's shape, e.g. "n elements" or
	// "M = N = K = round(sqrt(size))". Size always counts elements of the main operand.
	SizeDoc string
	// DefaultSize is the size `prism bench` uses on a GPU; QuickSize the size of `make run`
	// and of the suite's tests (a few hundred milliseconds on PoCL on two cores).
	DefaultSize, QuickSize int
	// Variants are the operation's implementations in priority order: backend-specific
	// ones first (CUDA C++ with warp shuffles or tensor cores, ...), vendor-library
	// baselines anywhere in the list, and last the portable OpenCL C one, named "portable",
	// which every device runs (Portable builds that entry). Setup runs the one Pick chooses.
	Variants []Variant
	// Split sets the operation up across several devices (split.go); nil where the
	// operation is not split.
	Split Splitter
}

// Params are the inputs of Op.Setup.
type Params struct {
	// Size is the number of elements of the operation's main operand; Op.SizeDoc says how
	// it becomes a shape. Setup rounds it to the nearest valid shape (Instance.Shape says
	// which) and rejects Size < 1.
	Size int
	// Seed seeds the random inputs: equal seeds give equal inputs on every device.
	Seed uint64
	// Rotate asks for several input sets, used in turn by successive Runs, so that repeated
	// runs do not find their inputs in a cache: as many as RotationSets says.
	Rotate bool
	// Portable forces the portable OpenCL C kernels even where a backend-specific variant
	// exists (CUDA C++ with tensor cores or warp shuffles), for fair cross-API comparisons.
	Portable bool
	// Variant forces the implementation of that name ("cuda-shfl", "portable", "cuBLAS");
	// empty lets Pick choose. Setup fails when the op has no such variant or the device
	// cannot run it: nothing falls back silently to another implementation.
	Variant string
	// Tunables forces the variant's tunables, spelled as its Candidates spell them
	// ("BM=128 BN=256 ..."); empty takes the tunings `prism tune` saved for the device
	// (LookupTuned), else the variant's table. A variant without tunables refuses it.
	Tunables string
	// Shape, where set, is the problem's shape given explicitly instead of the one Size
	// gives, spelled as the op's family spells it: "MxNxK" for GEMM ("4096x1024x512": A
	// M x K, B K x N, C M x N; batched GEMM: each matrix of the batch), "BxHxSxD" for
	// attention ("4x32x4096x128": batch, heads, seq, head dim), any dimensions the
	// kernels take, tile multiples or not. Size is then not read. Families that take
	// no shape refuse one (CheckSize) with an error wrapping engine.ErrUnsupported.
	Shape string
}

// Instance is an operation set up on one device at one size. Not safe for concurrent use.
type Instance interface {
	// Run enqueues the operation once on q (with the next input set when rotating). ctx
	// bounds what Run waits for where it waits (the transfer family's blocking copies,
	// the launch and overlap families' finish); the work it enqueues does not watch ctx.
	Run(ctx context.Context, q *engine.Queue) error
	// Verify reads back the output of the last Run and compares it with the float64
	// reference on the same inputs. A mismatch is an error wrapping ErrVerify that names
	// the first element that differs, its value, the reference and the tolerance. ctx
	// bounds the read-backs; when it ends, Verify returns its error.
	Verify(ctx context.Context, q *engine.Queue) error
	// Model is the work of one Run.
	Model() Model
	// Shape describes the problem actually set up, e.g. "n=1048576" or "M=N=K=1024".
	Shape() string
	// Close releases the instance's buffers and kernels. Idempotent.
	Close() error
}

// FigureReporter is implemented by instances that measure figures of their own beside the
// time of a run, which the model cannot express: the overlap family's share of the copy
// time a pipeline hides, its stage times. Figures returns them by name, given the median
// time of the runs the caller timed (the time a figure such as a speedup compares with);
// names end in their unit ("serial_ns", "hidden_fraction", "speedup"), and a figure that
// cannot be computed (a time of zero) is left out. `prism bench` records them in each
// result's "figures".
type FigureReporter interface {
	Figures(median time.Duration) map[string]float64
}

// FigureMeaning is implemented by FigureReporters some of whose figures mean nothing on
// the device the instance was set up on: Inapplicable names them, each with why (the
// overlap family's hidden share on a CPU device, whose copies are memory copies on the
// very cores that compute). Figures leaves them out; `prism bench` records them in
// "figures_na" and reports show them as n/a.
type FigureMeaning interface {
	Inapplicable() map[string]string
}

// ErrVerify is wrapped by every verification failure.
var ErrVerify = errors.New("verification failed")

// Family is one kernel family: one OpenCL C source and the operations built on it. Each
// family package returns its own (stream.Family(), gemm.Family(), ...); the package
// kernels/suite lists them in order and makes the catalog of them.
type Family struct {
	// Name is the family's name: the first part of its operations' names and the name of its
	// .cl file ("stream").
	Name string
	// Source is the family's OpenCL C text (its .cl file, embedded in its package), which
	// opens with the header that Header and HeaderSection read.
	Source string
	// Ops are the family's operations in the order listings show them.
	Ops []Op
}

// Model is the work an operation must do: floating-point operations and bytes moved to and
// from device memory (across the host link, for the transfer and overlap families). The
// benchmark divides them by time for GFLOP/s and GB/s. A model of zero FLOPs and zero
// bytes is a latency: the op's time is its figure (the alloc family's allocate and free),
// and reports give it no rate and no roofline.
type Model struct {
	Flops float64
	Bytes float64
	// Link marks Bytes as crossing the link between host and device (PCIe, NVLink-C2C)
	// rather than device memory: the device's copy ceiling is no roof for them (the
	// transfer and overlap families).
	Link bool
}

// CheckSize rejects sizes below 1 with an error naming the op (the first check of every
// Setup), and a Shape, which the families that call it do not take, with an error naming
// the family and wrapping engine.ErrUnsupported (a family that takes a shape checks it
// itself).
func CheckSize(name string, p Params) error {
	if p.Shape != "" {
		family, _, _ := strings.Cut(name, "/")
		return fmt.Errorf("kernels: %s: the %s family takes a size, not a shape (asked for %q): %w", name, family, p.Shape, engine.ErrUnsupported)
	}
	if p.Size < 1 {
		return fmt.Errorf("kernels: %s: size %d; must be at least 1: %w", name, p.Size, engine.ErrInvalidArg)
	}
	return nil
}

// typeAliases are common spellings of element types, mapped to the names that ops use.
var typeAliases = map[string][]string{
	"fp32": {"float32"}, "f32": {"float32"}, "float": {"float32"}, "single": {"float32"}, "sp": {"float32"},
	"fp64": {"float64"}, "f64": {"float64"}, "double": {"float64"}, "dp": {"float64"},
	"fp16": {"float16"}, "f16": {"float16"}, "half": {"float16"}, "hp": {"float16"},
	"bf16": {"bfloat16"}, "bfloat": {"bfloat16"}, "brain16": {"bfloat16"},
	"fp8": {"float8e4m3", "float8e5m2"}, "f8": {"float8e4m3", "float8e5m2"}, "float8": {"float8e4m3", "float8e5m2"},
	"e4m3": {"float8e4m3"}, "fp8e4m3": {"float8e4m3"}, "f8e4m3": {"float8e4m3"}, "fp8_e4m3": {"float8e4m3"},
	"e5m2": {"float8e5m2"}, "fp8e5m2": {"float8e5m2"}, "f8e5m2": {"float8e5m2"}, "fp8_e5m2": {"float8e5m2"},
	"tf32x3": {"float32x3tf32"}, "3xtf32": {"float32x3tf32"},
	"int": {"int32"}, "i32": {"int32"}, "s32": {"int32"}, "uint": {"uint32"}, "u32": {"uint32"},
	"i64": {"int64"}, "u64": {"uint64"}, "long": {"int64"}, "ulong": {"uint64"},
	"u8": {"uint8"}, "uchar": {"uint8"}, "byte": {"uint8"}, "i8": {"int8"}, "char": {"int8"},
}

// TypeAliases returns the element type names that s, a common spelling of one, stands for
// ("fp32" and "f32": float32; "half": float16; "bf16": bfloat16; "fp8": float8e4m3 and
// float8e5m2), or nil when s is no such spelling. Case does not matter.
func TypeAliases(s string) []string {
	return slices.Clone(typeAliases[strings.ToLower(s)])
}

// AliasedNames returns the op names or patterns that name means when its last part is a
// common spelling of an element type (TypeAliases): "gemm/nn/fp32" gives gemm/nn/float32,
// "fp8" float8e4m3 and float8e5m2. It returns nil when the last part is no such spelling.
// A caller that suggests names puts these first: edit distance alone takes "fp32" nearer
// to tf32 than to float32.
func AliasedNames(name string) []string {
	i := strings.LastIndexByte(name, '/')
	var out []string
	for _, t := range TypeAliases(name[i+1:]) {
		out = append(out, name[:i+1]+t)
	}
	return out
}
