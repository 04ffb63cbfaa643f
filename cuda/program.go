package cuda

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// Build compiles OpenCL C source for the device: the prelude (prelude.cuh) is put before
// it, the options are translated (translateOptions), and NVRTC compiles the text for the
// device's architecture, to CUBIN where it can (chooseArch). The result is cached on disk
// (cache.go) and loaded as a module (cuModuleLoadDataEx). A source that does not compile
// gives a *driver.BuildError with NVRTC's log, whose line numbers count from the source's
// first line.
func (d *device) Build(source string, options []string) (driver.Program, error) {
	opts, err := translateOptions(options)
	if err != nil {
		return nil, err
	}
	return d.build(translate(source), "prelude.cuh", opts)
}

// BuildCUDA compiles CUDA C++ source, without the prelude, for NVIDIA-only kernels. The
// options are NVRTC's (split at spaces), except -arch, which comes from the device.
func (d *device) BuildCUDA(source string, options []string) (driver.Program, error) {
	var opts []string
	for _, o := range options {
		for _, f := range strings.Fields(o) {
			if strings.HasPrefix(f, "-arch") || strings.HasPrefix(f, "--gpu-architecture") {
				return nil, fmt.Errorf("cuda: build option %q: the architecture comes from the device: %w", f, engine.ErrInvalidArg)
			}
			opts = append(opts, f)
		}
	}
	return d.build(source, "source.cu", opts)
}

// build compiles text (named name in NVRTC's messages) with the fixed options, opts and
// the device's architecture, through the cache, and loads the module.
func (d *device) build(text, name string, opts []string) (driver.Program, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	archOpt, cubin, err := chooseArch(d.props.ComputeCapability[0]*10+d.props.ComputeCapability[1], d.rt.archs, d.rt.cubin)
	if err != nil {
		return nil, err
	}
	all := append(append(append([]string{}, fixedOptions...), opts...), archOpt)
	key := cacheKey(text, all, d.info.LanguageVersion, d.rt.nvrtcVersion)
	dir := cacheDir()

	if kind, image, ok := cacheLoad(dir, key); ok {
		m, _, r := d.loadModule(image)
		if r == Success {
			tracef("cache hit %s (%s, %d bytes of %s)", key[:16], d.info.LanguageVersion, len(image), kindName(kind))
			return newProgram(d, m), nil
		}
		tracef("cache entry %s does not load (%v): compiling again", key[:16], r)
	} else {
		tracef("cache miss %s (%s)", key[:16], d.info.LanguageVersion)
	}

	start := time.Now()
	out, call, nr := nvrtcCompile(text, name, all, cubin)
	if nr != NVRTCSuccess {
		err := checkNVRTC(fmt.Sprintf("%s(%s)", call, strings.Join(all, " ")), nr)
		if call == "nvrtcCompileProgram" {
			return nil, &driver.BuildError{Device: d.info.Name, Log: out.log, Err: err}
		}
		return nil, err
	}
	kind := kindPTX
	if cubin {
		kind = kindCUBIN
	}
	tracef("nvrtc compiled %s in %v (%s, %d bytes of %s)", key[:16], time.Since(start).Round(time.Microsecond), archOpt, len(out.image), kindName(kind))
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
	return newProgram(d, m), nil
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
	if err := d.th.call(func() error {
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
}

var _ driver.Program = (*program)(nil)

func newProgram(d *device, m cuModule) *program {
	return &program{d: d, mod: m, refs: 1}
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
	return p.d.th.call(func() error { return check("cuModuleUnload", cuModuleUnload(p.mod)) })
}

// Function attributes (CUfunction_attribute).
const funcAttrMaxThreadsPerBlock = 0

// Kernel looks up a kernel function (cuModuleGetFunction); an unknown name gives an error
// wrapping engine.ErrNotFound. It also reads the largest block the function can be launched
// with and, where the driver has cuFuncGetParamInfo (CUDA 12.4), the sizes of its
// parameters: the kernel then implements driver.ArgCounter and launches check each
// argument's size.
func (p *program) Kernel(name string) (driver.Kernel, error) {
	if p.closed.Load() || !p.acquire() {
		return nil, errClosed("program")
	}
	k := &kernel{name: name, prog: p}
	counted := false
	err := p.d.th.call(func() error {
		f, r := cuModuleGetFunction(p.mod, name)
		if err := check(fmt.Sprintf("cuModuleGetFunction(%q)", name), r); err != nil {
			return err
		}
		k.fn = f
		if v, r := cuFuncGetAttribute(funcAttrMaxThreadsPerBlock, f); r == Success {
			k.maxThreads = v
		}
		if haveFuncGetParamInfo() {
			k.params, counted = paramSizes(func(i int) (int, Result) {
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

// paramSizes asks info for parameters 0, 1, ... until it reports CUDA_ERROR_INVALID_VALUE
// (past the last one), and returns their sizes. Any other failure means the driver cannot
// tell: ok is false.
func paramSizes(info func(i int) (int, Result)) (sizes []int, ok bool) {
	sizes = []int{}
	for i := 0; ; i++ {
		size, r := info(i)
		switch r {
		case Success:
			sizes = append(sizes, size)
		case InvalidValue:
			return sizes, true
		default:
			return nil, false
		}
	}
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
	// MaxActiveBlocksPerMultiprocessor returns how many blocks of blockSize threads, each
	// with dynamicSharedBytes of dynamic shared memory, can be resident on one
	// multiprocessor (cuOccupancyMaxActiveBlocksPerMultiprocessor).
	MaxActiveBlocksPerMultiprocessor(blockSize int, dynamicSharedBytes int64) (int, error)
}

// kernel is a CUfunction of a loaded module. It is safe for concurrent use: launches pass
// their arguments to cuLaunchKernel, which copies them.
type kernel struct {
	name       string
	fn         cuFunction
	prog       *program
	maxThreads int   // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0 if unknown
	params     []int // parameter sizes, nil if unknown
	closed     atomic.Bool
}

var (
	_ Kernel                  = (*kernel)(nil)
	_ driver.WorkGroupLimiter = (*kernel)(nil)
	_ driver.ArgCounter       = countedKernel{}
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
func (k *kernel) MaxWorkGroupSize() int { return k.maxThreads }

// MaxActiveBlocksPerMultiprocessor asks cuOccupancyMaxActiveBlocksPerMultiprocessor.
func (k *kernel) MaxActiveBlocksPerMultiprocessor(blockSize int, dynamicSharedBytes int64) (int, error) {
	if k.closed.Load() {
		return 0, errClosed("kernel " + k.name)
	}
	if blockSize <= 0 || dynamicSharedBytes < 0 {
		return 0, fmt.Errorf("cuda: occupancy of %s with %d threads and %d bytes of shared memory: %w", k.name, blockSize, dynamicSharedBytes, engine.ErrInvalidArg)
	}
	var n int
	err := k.prog.d.th.call(func() error {
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
		return nil, fmt.Errorf("cuda: kernel %T is not a CUDA kernel: %w", dk, engine.ErrInvalidArg)
	}
	if k.closed.Load() {
		return nil, errClosed("kernel " + k.name)
	}
	return k, nil
}
