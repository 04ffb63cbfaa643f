package cuda

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prism-compute/prism/cuda/clc/translate"
	"github.com/prism-compute/prism/engine/driver"
)

// Build compiles OpenCL C source for the device: BuildSource of an OpenCL C source.
func (d *device) Build(source string, options []string) (driver.Program, error) {
	return d.BuildSource(driver.Source{Dialect: driver.DialectOpenCL, Text: source}, options)
}

// Dialects returns the dialects the backend builds: OpenCL C, through the prelude, and
// CUDA C++.
func (d *device) Dialects() []driver.Dialect {
	return []driver.Dialect{driver.DialectOpenCL, driver.DialectCUDA}
}

// BuildSource compiles src for the device with NVRTC, for its architecture (chooseArch), to
// CUBIN where it can, through the disk cache (cache.go), and loads the module
// (cuModuleLoadDataEx).
//
// OpenCL C is translated (package cuda/clc/translate: vector literals, swizzles,
// conversions and the like become calls of the prelude's functions; a construct with no
// CUDA counterpart, an image, is refused with ErrUnsupported naming it and its line), gets
// the prelude put before it and its options translated (translateOptions); NVRTC's log
// counts lines from the source's first line and names the file src.Name (kernel.cl when
// empty). CUDA C++ is compiled as it is, for the
// architecture-specific target where the device has one (compute_90a on sm_90), with the
// embedded headers (prism_cuda.h: headers.go) and NVRTC's own options (cudaOptions); its
// kernels must be extern "C" to be found by name. Either way -arch comes from the device,
// and a source that does not compile gives a *driver.BuildError with NVRTC's log.
func (d *device) BuildSource(src driver.Source, options []string) (driver.Program, error) {
	switch src.Dialect {
	case driver.DialectOpenCL:
		opts, err := translateOptions(options)
		if err != nil {
			return nil, err
		}
		tr, err := translate.OpenCL(src.Text, src.Name)
		if err != nil {
			return nil, fmt.Errorf("cuda: %w", err)
		}
		prog, err := d.build(src.Dialect, tr.Text, preludeName, nil, append(append([]string{}, fixedOptions...), opts...))
		var be *driver.BuildError
		if errors.As(err, &be) {
			be.Log = userLog(be.Log)
		}
		if err != nil {
			return nil, err
		}
		prog.locals = tr.Locals
		return prog, nil
	case driver.DialectCUDA:
		opts, err := cudaOptions(options)
		if err != nil {
			return nil, err
		}
		name := src.Name
		if name == "" {
			name = "source.cu"
		}
		prog, err := d.build(src.Dialect, src.Text, name, embeddedHeaders(), append(append([]string{}, cudaFixedOptions...), opts...))
		if err != nil {
			return nil, err // not a nil *program in the interface
		}
		return prog, nil
	case driver.DialectSPIRV:
		return nil, fmt.Errorf("cuda: build SPIR-V on %s: the CUDA backend takes no SPIR-V (it builds OpenCL C, through the translation, and CUDA C++): %w",
			d.info.Name, driver.ErrUnsupported)
	}
	return nil, fmt.Errorf("cuda: build: the backend does not build %s: %w", src.Dialect, driver.ErrUnsupported)
}

// build compiles text in dialect (named name in NVRTC's messages) with the in-memory
// headers, opts and the device's architecture, through the cache, and loads the module.
func (d *device) build(dialect driver.Dialect, text, name string, headers []header, opts []string) (*program, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	tg, err := chooseArch(d.props.ComputeCapability[0]*10+d.props.ComputeCapability[1], d.rt.archs, d.rt.cubin, dialect)
	if err != nil {
		return nil, err
	}
	all := append(opts, tg.option)
	in := cacheInput{
		dialect:       dialect,
		text:          text,
		headers:       headers,
		options:       all,
		arch:          d.info.LanguageVersion,
		target:        tg.virtual,
		nvrtcVersion:  d.rt.nvrtcVersion,
		driverVersion: d.rt.driverVersion,
	}
	key := in.key()
	dir := cacheDir()
	tracef("build %s of %s: %s for %s (%s), options %q", name, dialect, tg.option, d.info.LanguageVersion, tg.virtual, strings.Join(all, " "))

	if kind, image, ok := cacheLoad(dir, key); ok {
		m, _, r := d.loadModule(image)
		if r == Success {
			tracef("cache hit %s in %s (%d bytes of %s)", key[:16], dir, len(image), kindName(kind))
			return newProgram(d, m, imageParams(image)), nil
		}
		tracef("cache entry %s does not load (%v): compiling again", key[:16], r)
	} else {
		tracef("cache miss %s in %s", key[:16], dir)
	}

	start := time.Now()
	out, call, nr := nvrtcCompile(text, name, headers, all, tg.cubin)
	if nr != NVRTCSuccess {
		err := checkNVRTC(fmt.Sprintf("%s(%s)", call, strings.Join(all, " ")), nr)
		if call == "nvrtcCompileProgram" {
			return nil, &driver.BuildError{Device: d.info.Name, Log: out.log, Err: err}
		}
		return nil, err
	}
	kind := kindPTX
	if tg.cubin {
		kind = kindCUBIN
	}
	tracef("nvrtc compiled %s in %v (%d bytes of %s)", key[:16], time.Since(start).Round(time.Microsecond), len(out.image), kindName(kind))
	if out.log != "" {
		tracef("nvrtc log:\n%s", out.log)
	}
	if err := cacheStore(dir, key, kind, out.image); err != nil {
		tracef("cache: not stored: %v", err)
	}
	m, jitLog, r := d.loadModule(out.image)
	if err := check(fmt.Sprintf("cuModuleLoadDataEx(%d bytes of %s)", len(out.image), kindName(kind)), r); err != nil {
		if jitLog != "" {
			return nil, &driver.BuildError{Device: d.info.Name, Log: jitLog, Err: err}
		}
		return nil, err
	}
	return newProgram(d, m, imageParams(out.image)), nil
}

func kindName(kind byte) string {
	if kind == kindCUBIN {
		return "CUBIN"
	}
	return "PTX"
}

// loadModule loads an image on the device's thread.
func (d *device) loadModule(image []byte) (cuModule, string, Result) {
	var (
		m   cuModule
		log string
		r   Result
	)
	if err := d.th.Call(func() error {
		m, log, r = cuModuleLoad(image)
		return nil
	}); err != nil {
		return nil, "", ContextIsDestroyed
	}
	return m, log, r
}

// program is a loaded module. It is safe for concurrent use. Its kernels keep it loaded:
// the module is unloaded when the program and every kernel taken from it are closed.
type program struct {
	d      *device
	mod    cuModule
	mu     sync.Mutex
	refs   int // 1 for the program until Close, plus one per open kernel
	closed atomic.Bool
	params map[string]int // parameters per kernel as the image declares them (params.go)
	// locals holds the indices of each kernel's __local pointer parameters (translation),
	// nil for CUDA C++, whose kernels have none.
	locals map[string][]int
}

var _ driver.Program = (*program)(nil)

func newProgram(d *device, m cuModule, params map[string]int) *program {
	return &program{d: d, mod: m, refs: 1, params: params}
}

func (p *program) acquire() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refs == 0 {
		return false
	}
	p.refs++
	return true
}

func (p *program) release() error {
	p.mu.Lock()
	p.refs--
	last := p.refs == 0
	p.mu.Unlock()
	if !last {
		return nil
	}
	return p.d.th.Call(func() error { return check("cuModuleUnload", cuModuleUnload(p.mod)) })
}

// Function attributes (CUfunction_attribute in cuda.h).
const (
	funcAttrMaxThreadsPerBlock     = 0
	funcAttrSharedSizeBytes        = 1
	funcAttrConstSizeBytes         = 2
	funcAttrLocalSizeBytes         = 3
	funcAttrNumRegs                = 4
	funcAttrPTXVersion             = 5
	funcAttrBinaryVersion          = 6
	funcAttrMaxDynamicSharedMemory = 8
)

// funcAttributes reads a function's attributes through attr (cuFuncGetAttribute); an
// attribute that cannot be read is left at zero. warp is the device's warp size, the
// preferred multiple of a block's size.
func funcAttributes(attr func(int) (int, Result), warp int) driver.KernelAttributes {
	get := func(a int) int {
		v, r := attr(a)
		if r != Success {
			return 0
		}
		return v
	}
	return driver.KernelAttributes{
		Registers:         get(funcAttrNumRegs),
		LocalBytes:        int64(get(funcAttrSharedSizeBytes)),
		PrivateBytes:      int64(get(funcAttrLocalSizeBytes)),
		ConstBytes:        int64(get(funcAttrConstSizeBytes)),
		MaxWorkGroupSize:  get(funcAttrMaxThreadsPerBlock),
		PreferredMultiple: warp,
		BinaryVersion:     get(funcAttrBinaryVersion),
		PTXVersion:        get(funcAttrPTXVersion),
	}
}

// Kernel looks up a kernel function (cuModuleGetFunction); an unknown name gives an error
// wrapping driver.ErrNotFound. It also reads the largest block the function can be launched
// with and, where the driver has cuFuncGetParamInfo (CUDA 12.4), the sizes of its
// parameters: the kernel then implements driver.ArgCounter and launches check each
// argument's size. The number of parameters comes from cuFuncGetParamCount where the
// driver has it, else from the module image (params.go), else by asking past the end.
func (p *program) Kernel(name string) (driver.Kernel, error) {
	if p.closed.Load() || !p.acquire() {
		return nil, errClosed("program")
	}
	k := &kernel{name: name, prog: p, locals: p.locals[name], opencl: p.locals != nil}
	counted := false
	err := p.d.th.Call(func() error {
		f, r := cuModuleGetFunction(p.mod, name)
		if err := check(fmt.Sprintf("cuModuleGetFunction(%q)", name), r); err != nil {
			return err
		}
		k.fn = f
		k.attrs = funcAttributes(func(a int) (int, Result) { return cuFuncGetAttribute(a, f) }, p.d.props.WarpSize)
		if v, r := cuFuncGetAttribute(funcAttrMaxDynamicSharedMemory, f); r == Success {
			k.maxDynamic.Store(int64(v))
		}
		if haveFuncGetParamInfo() {
			n := -1 // unknown: probe until the driver says past the end
			if c, ok := p.params[name]; ok {
				n = c
			}
			if haveFuncGetParamCount() {
				if c, r := cuFuncGetParamCount(f); r == Success && c >= 0 && c <= maxParams {
					n = c
				}
			}
			k.params, counted = paramSizes(n, func(i int) (int, Result) {
				_, size, r := cuFuncGetParamInfo(f, i)
				return size, r
			})
		}
		return nil
	})
	if err != nil {
		p.release()
		return nil, err
	}
	if counted {
		return countedKernel{k}, nil
	}
	return k, nil
}

// maxParams bounds the parameters a kernel is believed to have: CUDA passes at most 32 KiB
// of parameters, so no kernel has more than 32768 of them.
const maxParams = 32768

// paramSizes asks info for the sizes of parameters 0 to n-1, n from cuFuncGetParamCount.
// Where the count is unknown (n < 0: older drivers) it asks for 0, 1, ... until info reports
// CUDA_ERROR_INVALID_VALUE, past the last one (a failed call that tools such as
// compute-sanitizer report as an API error). Any other failure, or more than maxParams,
// means the driver cannot tell: ok is false.
func paramSizes(n int, info func(i int) (int, Result)) (sizes []int, ok bool) {
	sizes = []int{}
	for i := 0; n < 0 || i < n; i++ {
		if i >= maxParams {
			return nil, false
		}
		size, r := info(i)
		switch {
		case r == Success:
			sizes = append(sizes, size)
		case r == InvalidValue && n < 0:
			return sizes, true
		default:
			return nil, false
		}
	}
	return sizes, true
}

// Close releases the program; its module is unloaded (cuModuleUnload) once its kernels
// are closed too. Idempotent.
func (p *program) Close() error {
	if !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	return p.release()
}

// Kernel is the CUDA view of a kernel: what Program.Kernel of this backend returns, with
// the queries that engine does not offer. It is safe for concurrent use.
type Kernel interface {
	driver.Kernel
	// MaxWorkGroupSize returns the largest block the kernel can be launched with
	// (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK).
	MaxWorkGroupSize() int
	// Attributes returns the function's attributes (cuFuncGetAttribute): registers,
	// static shared, local (spill) and constant memory, the largest block, the warp size
	// as the preferred multiple, the binary and PTX versions.
	Attributes() driver.KernelAttributes
	// MaxActiveBlocksPerMultiprocessor returns how many blocks of blockSize threads, each
	// with dynamicSharedBytes of dynamic shared memory, can be resident on one
	// multiprocessor (cuOccupancyMaxActiveBlocksPerMultiprocessor).
	MaxActiveBlocksPerMultiprocessor(blockSize int, dynamicSharedBytes int64) (int, error)
}

// kernel is a CUfunction of a loaded module. It is safe for concurrent use: launches pass
// their arguments to cuLaunchKernel, which copies them.
type kernel struct {
	name   string
	fn     cuFunction
	prog   *program
	attrs  driver.KernelAttributes // cuFuncGetAttribute, read once
	params []int                   // parameter sizes, nil if unknown
	locals []int                   // indices of __local pointer parameters (program.locals)
	opencl bool                    // built from OpenCL C
	closed atomic.Bool

	// maxDynamic is CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as last read or set:
	// a launch with more dynamic shared memory raises it first (the opt-in above 48 KiB),
	// once per kernel and size. Set only on the device's thread; read by any launch.
	maxDynamic atomic.Int64
}

var (
	_ Kernel                   = (*kernel)(nil)
	_ driver.WorkGroupLimiter  = (*kernel)(nil)
	_ driver.AttributeReporter = (*kernel)(nil)
	_ driver.ArgCounter        = countedKernel{}
)

// countedKernel is a kernel whose parameters the driver reported: it also implements
// driver.ArgCounter. (A kernel of a driver without cuFuncGetParamInfo does not, so that
// engine does not trust an unknown count.)
type countedKernel struct{ *kernel }

// NumArgs returns the number of parameters the kernel declares.
func (k countedKernel) NumArgs() int { return len(k.params) }

// Name returns the kernel's function name.
func (k *kernel) Name() string { return k.name }

// MaxWorkGroupSize returns CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, or 0 if unknown.
func (k *kernel) MaxWorkGroupSize() int { return k.attrs.MaxWorkGroupSize }

// Attributes returns the attributes cuFuncGetAttribute reported when the kernel was
// looked up.
func (k *kernel) Attributes() driver.KernelAttributes { return k.attrs }

// optInShared raises the kernel's limit on dynamic shared memory to bytes where it is
// lower (cuFuncSetAttribute with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): above
// 48 KiB, a block's shared memory needs this opt-in. It runs on the device's thread.
func (k *kernel) optInShared(bytes int64) error {
	if bytes <= k.maxDynamic.Load() {
		return nil
	}
	if !haveFuncSetAttribute() {
		return fmt.Errorf("cuda: launch %s with %d bytes of dynamic shared memory: the driver has no cuFuncSetAttribute for the opt-in above %d: %w",
			k.name, bytes, k.maxDynamic.Load(), driver.ErrUnsupported)
	}
	call := fmt.Sprintf("cuFuncSetAttribute(%s, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, %d)", k.name, bytes)
	if err := check(call, cuFuncSetAttribute(k.fn, funcAttrMaxDynamicSharedMemory, int(bytes))); err != nil {
		return err
	}
	tracef("%s: dynamic shared memory raised from %d to %d bytes", k.name, k.maxDynamic.Load(), bytes)
	k.maxDynamic.Store(bytes)
	return nil
}

// MaxActiveBlocksPerMultiprocessor asks cuOccupancyMaxActiveBlocksPerMultiprocessor.
func (k *kernel) MaxActiveBlocksPerMultiprocessor(blockSize int, dynamicSharedBytes int64) (int, error) {
	if k.closed.Load() {
		return 0, errClosed("kernel " + k.name)
	}
	if blockSize <= 0 || dynamicSharedBytes < 0 {
		return 0, fmt.Errorf("cuda: occupancy of %s with %d threads and %d bytes of shared memory: %w", k.name, blockSize, dynamicSharedBytes, driver.ErrInvalidArg)
	}
	var n int
	err := k.prog.d.th.Call(func() error {
		var r Result
		n, r = cuOccupancyMaxActiveBlocksPerMultiprocessor(k.fn, blockSize, dynamicSharedBytes)
		return check(fmt.Sprintf("cuOccupancyMaxActiveBlocksPerMultiprocessor(%s, %d, %d)", k.name, blockSize, dynamicSharedBytes), r)
	})
	return n, err
}

// Close releases the kernel, and its module if its program is closed too. Idempotent.
func (k *kernel) Close() error {
	if !k.closed.CompareAndSwap(false, true) {
		return nil
	}
	return k.prog.release()
}

// asKernel returns the kernel behind dk, which may be a *kernel or a countedKernel.
func asKernel(dk driver.Kernel) (*kernel, error) {
	var k *kernel
	switch v := dk.(type) {
	case *kernel:
		k = v
	case countedKernel:
		k = v.kernel
	}
	if k == nil {
		return nil, fmt.Errorf("cuda: kernel %T is not a CUDA kernel: %w", dk, driver.ErrInvalidArg)
	}
	if k.closed.Load() {
		return nil, errClosed("kernel " + k.name)
	}
	return k, nil
}

// preludeName is the file name NVRTC gives the prelude's lines in its messages; the user's
// lines carry their own file's name (the translation's #line).
const preludeName = "prelude.cuh"

// userLog returns NVRTC's log of an OpenCL C build as a user should read it: without the
// warnings and remarks about the prelude's own lines, which say nothing about the user's
// source; the prelude's errors stay (a user's macro or type may cause them), and a last
// line says how many messages were left out. Messages start at a line "FILE(LINE): "; the
// lines after it (the source line, the caret) belong to it.
func userLog(log string) string {
	var out []string
	dropped, dropping := 0, false
	for _, line := range strings.Split(log, "\n") {
		if file, rest, ok := nvrtcMessage(line); ok {
			dropping = file == preludeName && !strings.HasPrefix(rest, "error") && !strings.HasPrefix(rest, "catastrophic error")
			if dropping {
				dropped++
			}
		} else if strings.HasPrefix(line, "Remark:") || strings.HasPrefix(line, "Warning:") {
			dropping = false
		}
		if !dropping {
			out = append(out, line)
		}
	}
	text := strings.TrimRight(strings.Join(out, "\n"), "\n")
	if dropped > 0 {
		text += fmt.Sprintf("\n(%d warnings about Prism's prelude left out)", dropped)
	}
	return text
}

// nvrtcMessage splits a line that starts a message of NVRTC's log, "FILE(LINE): severity
// ...", into its file and what follows the colon.
func nvrtcMessage(line string) (file, rest string, ok bool) {
	open := strings.IndexByte(line, '(')
	if open <= 0 {
		return "", "", false
	}
	shut := strings.Index(line[open:], "): ")
	if shut < 0 {
		return "", "", false
	}
	num := line[open+1 : open+shut]
	if num == "" || strings.Trim(num, "0123456789") != "" {
		return "", "", false
	}
	return line[:open], line[open+shut+3:], true
}
