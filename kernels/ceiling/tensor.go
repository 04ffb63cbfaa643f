package ceiling

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed tensor_wgmma.cu
var wgmmaSource string

//go:embed tensor_mma.cu
var mmaSource string

//go:embed tensor.cl
var clTensorSource string

// TensorArith is an arithmetic of the tensor cores whose peak a Tensor measures; its value
// is the precision's number in the tensor-core kernels (PREC, as the GEMM family numbers
// them) and its String the result type it is the roof of.
type TensorArith int

// The arithmetics of the tensor peaks.
const (
	TensorTF32       TensorArith = 1 // float32 inputs as tf32, float32 accumulation
	TensorFloat16    TensorArith = 3 // IEEE binary16 inputs, float32 accumulation
	TensorBFloat16   TensorArith = 4 // bfloat16 inputs, float32 accumulation
	TensorFloat64    TensorArith = 5 // float64 on the fp64 tensor cores (DMMA)
	TensorFloat8E4M3 TensorArith = 6 // OCP float8 E4M3 inputs, float32 accumulation
	TensorFloat8E5M2 TensorArith = 7 // OCP float8 E5M2 inputs, float32 accumulation
)

// TensorAriths lists the arithmetics of the tensor peaks. E4M3 and E5M2 run at one rate on
// every NVIDIA architecture that has them (the same instruction shapes and the same
// throughput in the PTX ISA and the architecture whitepapers), so `prism bench` measures
// E4M3 alone for both; the tests run both.
func TensorAriths() []TensorArith {
	return []TensorArith{TensorTF32, TensorFloat16, TensorBFloat16, TensorFloat8E4M3, TensorFloat8E5M2, TensorFloat64}
}

// String returns the result type the arithmetic is the roof of ("tf32", "float16", ...).
func (a TensorArith) String() string {
	switch a {
	case TensorTF32:
		return "tf32"
	case TensorFloat16:
		return "float16"
	case TensorBFloat16:
		return "bfloat16"
	case TensorFloat64:
		return "float64"
	case TensorFloat8E4M3:
		return "float8e4m3"
	case TensorFloat8E5M2:
		return "float8e5m2"
	}
	return fmt.Sprintf("TensorArith(%d)", int(a))
}

// k returns the k of one mma.sync or wgmma instruction of the arithmetic (float64: of
// m8n8k4; tensorForm.k knows the other DMMA shapes).
func (a TensorArith) k() int {
	switch a {
	case TensorTF32:
		return 8
	case TensorFloat16, TensorBFloat16:
		return 16
	case TensorFloat8E4M3, TensorFloat8E5M2:
		return 32
	}
	return 4
}

// bits returns the fragment words of the values a = 1 and b = 2 (exact in every input
// type): replicated to 32 bits (4 fp8, 2 16-bit values, 1 tf32), or the bits of the
// doubles for float64.
func (a TensorArith) bits() (abits, bbits uint64) {
	switch a {
	case TensorTF32:
		return uint64(math.Float32bits(1)), uint64(math.Float32bits(2))
	case TensorFloat16:
		return 0x3c003c00, 0x40004000
	case TensorBFloat16:
		return 0x3f803f80, 0x40004000
	case TensorFloat8E4M3:
		return 0x38383838, 0x40404040
	case TensorFloat8E5M2:
		return 0x3c3c3c3c, 0x40404040
	}
	return math.Float64bits(1), math.Float64bits(2)
}

// tensorA and tensorB are the values of every element of A and B (their product is in
// every accumulator step).
const tensorA, tensorB = 1.0, 2.0

// tensorForm is one kernel and build of a tensor peak.
type tensorForm struct {
	wgmma  bool // tensor_wgmma.cu (sm_90a); else tensor_mma.cu, or tensor.cl when opencl
	opencl bool // tensor.cl through NVIDIA's OpenCL
	// wgmma: columns of an instruction (128, 256) and warpgroups per block.
	bn, wgs int
	// mma: accumulators per warp, threads per block, and the float64 shape (4: m8n8k4, 8:
	// m16n8k8, 16: m16n8k16).
	ch, threads, dshape int
	iters               int // trips of the kernel's loop
}

// The forms NewTensor picks: on sm_90, wgmma m64n256 with two warpgroups per block for tf32
// and the 16-bit inputs (938 TFLOP/s in float16 on an H200, 95% of its dense rate; m64n128
// with four warpgroups reached the same), m64n128 with two for float8 (shorter loops, below,
// whose blocks then overlap two to a multiprocessor), and DMMA m16n8k16 for float64 (65.6
// TFLOP/s on an H200; m16n8k8 65.3, m8n8k4 31.5); elsewhere mma.sync with 8 accumulators per
// warp and DMMA m8n8k4. The loops are long enough to make the store of the sums negligible
// and short enough for every accumulator to stay an exact integer (below 2^17; float8
// shorter, fp8Iters).
var (
	formWGMMA   = tensorForm{wgmma: true, bn: 256, wgs: 2, iters: 256}
	formMMA     = tensorForm{ch: 8, threads: 256, dshape: 4, iters: 1024}
	formDMMA90  = tensorForm{ch: 8, threads: 256, dshape: 16, iters: 256}
	formCL      = tensorForm{opencl: true, ch: 8, threads: 256, iters: 1024}
	formWGMMA8  = tensorForm{wgmma: true, bn: 128, wgs: 2, iters: 256}
	formsTested = []tensorForm{ // the other forms TestTensorPeak checks where they run
		{wgmma: true, bn: 128, wgs: 2, iters: 256}, {wgmma: true, bn: 256, wgs: 1, iters: 256}, {wgmma: true, bn: 128, wgs: 4, iters: 256},
		{ch: 4, threads: 128, dshape: 4, iters: 1024}, {ch: 8, threads: 256, dshape: 8, iters: 512}, {ch: 4, threads: 256, dshape: 16, iters: 256},
	}
)

// fp8Iters caps the loop of a float8 form: Hopper's float8 tensor cores keep only about 14
// bits of the sum when they add the products to the accumulator (DeepSeek-V3 technical
// report, 3.3.2), so a product of 2 stops counting once the accumulator is large enough.
// Seen on an H200: wgmma's accumulators stuck at 2^15. The caps keep wgmma's at 2^14 (64
// trips of four m64nNk32: 64 x 4 x 32 x 2; checked exact there) and mma.sync's at 2^11 (32
// trips of one m16n8k32: 32 x 32 x 2), for sm_89 (Hopper's mma.sync float8 form is refused:
// runs).
const fp8WGMMAIters, fp8MMAIters = 64, 32

// forArith returns the form as it runs arithmetic a: float8 loops capped (fp8Iters).
func (f tensorForm) forArith(a TensorArith) tensorForm {
	if a == TensorFloat8E4M3 || a == TensorFloat8E5M2 {
		if f.wgmma {
			f.iters = min(f.iters, fp8WGMMAIters)
		} else {
			f.iters = min(f.iters, fp8MMAIters)
		}
	}
	return f
}

// kernel returns the name of the form's kernel.
func (f tensorForm) kernel() string {
	if f.wgmma {
		return "tensor_peak_wgmma"
	}
	return "tensor_peak_mma"
}

// threadsPer returns the threads of a block.
func (f tensorForm) threadsPer() int {
	if f.wgmma {
		return 128 * f.wgs
	}
	return f.threads
}

// shape returns the m, n and k of one instruction in a.
func (f tensorForm) shape(a TensorArith) (m, n, k int) {
	switch {
	case f.wgmma:
		return 64, f.bn, a.k()
	case a == TensorFloat64 && f.dshape == 4:
		return 8, 8, 4
	case a == TensorFloat64:
		return 16, 8, f.dshape
	}
	return 16, 8, a.k()
}

// regs returns the accumulator registers one instruction writes in each thread: its m x n
// tile over the warpgroup's (wgmma) or warp's threads.
func (f tensorForm) regs(a TensorArith) int {
	m, n, _ := f.shape(a)
	if f.wgmma {
		return m * n / 128
	}
	return m * n / 32
}

// perThread returns the output of every thread: the sum of its accumulators, each
// iters * (instructions per trip on it) * k * a * b.
func (f tensorForm) perThread(a TensorArith) float64 {
	_, _, k := f.shape(a)
	step := float64(f.regs(a)) * float64(k) * tensorA * tensorB // one instruction
	if f.wgmma {
		return step * float64(f.iters) * 4
	}
	return step * float64(f.iters) * float64(f.ch)
}

// flopsPerBlock returns the floating-point operations of one block, a multiply-add
// counting as two.
func (f tensorForm) flopsPerBlock(a TensorArith) float64 {
	m, n, k := f.shape(a)
	per := 2 * float64(m) * float64(n) * float64(k)
	if f.wgmma {
		return float64(f.wgs) * float64(f.iters) * 4 * per
	}
	return float64(f.threads/32) * float64(f.iters) * float64(f.ch) * per
}

// String describes the form in a's terms, for reports.
func (f tensorForm) String(a TensorArith) string {
	m, n, k := f.shape(a)
	via := ""
	switch {
	case f.wgmma:
		return fmt.Sprintf("wgmma.mma_async m%dn%dk%d on shared-memory operands, %d warpgroups per block, %d x 4 instructions each", m, n, k, f.wgs, f.iters)
	case f.opencl:
		via = " (inline PTX through NVIDIA's OpenCL)"
	}
	return fmt.Sprintf("mma.sync m%dn%dk%d%s on register fragments, %d independent accumulators per warp, %d threads per block, %d trips",
		m, n, k, via, f.ch, f.threads, f.iters)
}

// defines returns the -D options of the form's build in a.
func (f tensorForm) defines(a TensorArith) []string {
	opts := []string{fmt.Sprintf("-DPREC=%d", int(a))}
	switch {
	case f.wgmma:
		return append(opts, fmt.Sprintf("-DBN=%d", f.bn), fmt.Sprintf("-DWGS=%d", f.wgs))
	case f.opencl:
		return append(opts, "-DPRISM_PTX", fmt.Sprintf("-DCH=%d", f.ch), fmt.Sprintf("-DTHREADS=%d", f.threads))
	}
	return append(opts, fmt.Sprintf("-DCH=%d", f.ch), fmt.Sprintf("-DTHREADS=%d", f.threads), fmt.Sprintf("-DDSHAPE=%d", f.dshape))
}

// runs returns nil when the form runs a on an NVIDIA device of compute capability cc (0:
// not reported, which only the OpenCL form accepts: its build decides), else why not.
func (f tensorForm) runs(a TensorArith, cc int) error {
	switch {
	case f.opencl && a != TensorTF32 && a != TensorFloat16 && a != TensorBFloat16:
		return fmt.Errorf("the OpenCL tensor peak measures tf32, float16 and bfloat16 (the opencl-mma GEMM's precisions), not %s", a)
	case f.opencl && cc == 0:
		return nil
	case cc < 80:
		return fmt.Errorf("the tensor-core kernels need sm_80 or newer; the device is sm_%d", cc)
	case (a == TensorFloat8E4M3 || a == TensorFloat8E5M2) && cc < 89:
		return fmt.Errorf("sm_%d has no float8 tensor cores (sm_89 and newer have them)", cc)
	case !f.wgmma && !f.opencl && (a == TensorFloat8E4M3 || a == TensorFloat8E5M2) && cc == 90:
		// On an H200 every mma.sync float8 form summed exactly half of its products' due
		// (thread sums 32768 of 65536 with 32 trips, 8192 of 16384 with 8), where mma.cu's
		// GEMM, the same instruction on random tiles, verifies: a peak that does not check is
		// no roof, and wgmma's is Hopper's float8 roof.
		return fmt.Errorf("the mma.sync float8 peak does not verify on sm_90 (half of its products' sum on an H200); Hopper's float8 peak is wgmma's")
	case f.wgmma && (cc != 90 || a == TensorFloat64):
		return fmt.Errorf("wgmma is sm_90a's (tf32, 16-bit and float8); the device is sm_%d", cc)
	case !f.wgmma && a == TensorFloat64 && f.dshape != 4 && cc < 90:
		return fmt.Errorf("DMMA m16n8k%d is sm_90's; the device is sm_%d", f.dshape, cc)
	}
	return nil
}

// Tensor runs a tensor-core peak kernel in one arithmetic on one NVIDIA device:
// tensor_wgmma.cu on sm_90, tensor_mma.cu on other CUDA devices and for float64, tensor.cl
// through NVIDIA's OpenCL. Every warp repeats independent matrix multiply-accumulates on
// constant operands, a = 1 and b = 2, so that every accumulator ends as an exact integer
// the host checks. It is safe for concurrent use by goroutines that each use their own
// Queue.
type Tensor struct {
	arith  TensorArith
	form   tensorForm
	prog   *engine.Program
	k      *engine.Kernel
	ab, bb uint64
}

// NewTensor compiles the tensor peak of arithmetic a for dev, in the form that reaches the
// device's rate: on CUDA, wgmma on sm_90 (but for float64), mma.sync elsewhere; on NVIDIA's
// OpenCL platform, mma.sync in inline PTX (tf32, float16 and bfloat16, as the opencl-mma
// GEMM). It returns an error wrapping engine.ErrUnsupported on any other device, below
// compute capability 8.0, and for float8 below 8.9.
func NewTensor(dev *engine.Device, a TensorArith) (*Tensor, error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: ceiling: nil device: %w", engine.ErrInvalidArg)
	}
	info := dev.Info()
	f := formMMA
	switch cc := info.ComputeCapability; {
	case dev.Backend() == "opencl" && strings.Contains(info.Platform, "NVIDIA"):
		f = formCL
	case cc == 90 && a == TensorFloat64:
		f = formDMMA90
	case cc == 90 && (a == TensorFloat8E4M3 || a == TensorFloat8E5M2):
		f = formWGMMA8
	case cc == 90:
		f = formWGMMA
	}
	return newTensor(dev, a, f)
}

func newTensor(dev *engine.Device, a TensorArith, f tensorForm) (*Tensor, error) {
	if a.String() == fmt.Sprintf("TensorArith(%d)", int(a)) {
		return nil, fmt.Errorf("kernels: ceiling: no tensor peak of arithmetic %d: %w", int(a), engine.ErrInvalidArg)
	}
	info := dev.Info()
	want := "cuda"
	if f.opencl {
		want = "opencl"
	}
	if dev.Backend() != want {
		return nil, fmt.Errorf("kernels: ceiling: no %s tensor peak runs on %s (%s, %s): the tensor peaks run on NVIDIA GPUs through CUDA or NVIDIA's OpenCL: %w",
			a, dev.ID(), dev.Backend(), info.Platform, engine.ErrUnsupported)
	}
	f = f.forArith(a)
	if err := f.runs(a, info.ComputeCapability); err != nil {
		return nil, fmt.Errorf("kernels: ceiling: the %s tensor peak on %s: %w: %w", a, dev.ID(), err, engine.ErrUnsupported)
	}
	t := &Tensor{arith: a, form: f}
	t.ab, t.bb = a.bits()
	var err error
	if !f.opencl {
		src, file := mmaSource, "tensor_mma.cu"
		if f.wgmma {
			src, file = wgmmaSource, "tensor_wgmma.cu"
		}
		if t.prog, t.k, err = kernels.BuildCUDA(dev, src, file, f.kernel(), f.threadsPer(), f.defines(a)); err != nil {
			return nil, fmt.Errorf("kernels: ceiling: the %s tensor peak: %w", a, err)
		}
		return t, nil
	}
	t.prog, err = dev.BuildSource(engine.Source{Dialect: engine.DialectOpenCL, Text: clTensorSource, Name: "tensor.cl"}, f.defines(a)...)
	if err != nil {
		if info.ComputeCapability == 0 && errors.Is(err, engine.ErrBuild) {
			// NVIDIA, of an architecture the driver does not report: one whose compiler
			// refuses mma.sync lacks the instructions.
			return nil, fmt.Errorf("kernels: ceiling: the %s tensor peak: %s reports no compute capability and does not build mma.sync: %w: %w",
				a, dev.ID(), engine.ErrUnsupported, err)
		}
		return nil, fmt.Errorf("kernels: ceiling: the %s tensor peak: %w", a, err)
	}
	if t.k, err = t.prog.Kernel(f.kernel()); err != nil {
		t.Close()
		return nil, err
	}
	if most := t.k.MaxWorkGroupSize(); most > 0 && most < f.threads {
		t.Close()
		return nil, fmt.Errorf("kernels: ceiling: the %s tensor peak takes %d work-items per group on %s, needs %d: %w", a, most, dev.ID(), f.threads, engine.ErrUnsupported)
	}
	return t, nil
}

// Close releases the kernel. Idempotent.
func (t *Tensor) Close() error {
	if t == nil {
		return nil
	}
	return errors.Join(t.k.Close(), t.prog.Close())
}

// Arith returns the arithmetic measured.
func (t *Tensor) Arith() TensorArith { return t.arith }

// Threads returns the threads of a block; a Run writes one output per thread.
func (t *Tensor) Threads() int { return t.form.threadsPer() }

// How describes the kernel ("wgmma.mma_async m64n256k16 on shared-memory operands, ...").
func (t *Tensor) How() string { return t.form.String(t.arith) }

// Run launches blocks blocks, writing Threads() floats each into out.
func (t *Tensor) Run(q *engine.Queue, out *engine.Buffer[float32], blocks int) error {
	n := blocks * t.Threads()
	if blocks < 1 || out == nil || out.Len() < n {
		return fmt.Errorf("kernels: ceiling: %s tensor peak: output of %d elements, %d blocks of %d threads need %d: %w",
			t.arith, kernels.LenOf(out), blocks, t.Threads(), n, engine.ErrInvalidArg)
	}
	if err := kernels.CheckGroups(t.form.kernel(), blocks, t.Threads()); err != nil {
		return err
	}
	r := engine.Range1D(n, t.Threads())
	if t.form.wgmma || t.form.opencl {
		return q.Launch(t.k, r, out, uint32(t.ab), uint32(t.bb), int32(t.form.iters))
	}
	return q.Launch(t.k, r, out, t.ab, t.bb, int32(t.form.iters))
}

// Flops returns the floating-point operations of a Run of blocks blocks, a multiply-add
// counting as two.
func (t *Tensor) Flops(blocks int) float64 { return float64(blocks) * t.form.flopsPerBlock(t.arith) }

// Want returns the value of every output element: the sum of a thread's accumulators, each
// an exact integer, below 2^24 (exact in float32).
func (t *Tensor) Want() float64 { return t.form.perThread(t.arith) }

// Check compares every element of a Run's output with Want, for equality (the operands
// are small powers of two: the sums are exact whatever order and alignment the tensor
// cores use). A mismatch is an error wrapping kernels.ErrVerify.
func (t *Tensor) Check(got []float32) error {
	want := t.Want()
	for i, v := range got {
		if float64(v) != want {
			return fmt.Errorf("%w: %s tensor peak: thread %d's sum = %v, want %v (%s)", kernels.ErrVerify, t.arith, i, v, want, t.How())
		}
	}
	return nil
}
