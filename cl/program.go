//go:build !noopencl

package cl

/*
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <stdlib.h>
#ifdef __APPLE__
#include <OpenCL/cl.h>
#else
#include <CL/cl.h>
#endif

// clCreateProgramWithIL is OpenCL 2.1's: declared weak, so that the package still loads
// with an OpenCL library older than 2.1, where it is then null.
extern CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithIL(cl_context, const void*, size_t, cl_int*) __attribute__((weak));

static int prism_have_program_with_il(void) { return clCreateProgramWithIL != 0; }

static cl_program prism_create_program_with_il(cl_context ctx, const void* il, size_t n, cl_int* status) {
	if (!clCreateProgramWithIL) {
		*status = CL_INVALID_OPERATION;
		return NULL;
	}
	return clCreateProgramWithIL(ctx, il, n, status);
}
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	ocl "github.com/jgillich/go-opencl/cl"

	"github.com/prism-compute/prism/engine/driver"
)

// Build compiles OpenCL C source for the device (clCreateProgramWithSource,
// clBuildProgram). options are passed to the compiler as given, joined with spaces, and on
// Oclgrind followed by -DPRISM_OCLGRIND=1 (compilerOptions). A source or an option the
// compiler rejects returns a *driver.BuildError holding the whole build log; its Err is
// the status of clBuildProgram. Traces and errors name the options as given.
func (d *device) Build(source string, options []string) (driver.Program, error) {
	return d.buildProgram("OpenCL C", len(source), options, func() (*ocl.Program, error) {
		p, err := d.c.ctx.CreateProgramWithSource([]string{source})
		return p, wrap("clCreateProgramWithSource", err)
	})
}

// Dialects returns the dialects the device builds: OpenCL C, and SPIR-V where
// CL_DEVICE_IL_VERSION names it.
func (d *device) Dialects() []driver.Dialect {
	if d.info.TakesSPIRV() {
		return []driver.Dialect{driver.DialectOpenCL, driver.DialectSPIRV}
	}
	return []driver.Dialect{driver.DialectOpenCL}
}

// BuildSource builds OpenCL C (Build) or a SPIR-V module (clCreateProgramWithIL, then
// clBuildProgram with options as Build passes them). A device whose CL_DEVICE_IL_VERSION
// names no SPIR-V, or an OpenCL library without clCreateProgramWithIL (older than 2.1),
// answers ErrUnsupported.
func (d *device) BuildSource(src driver.Source, options []string) (driver.Program, error) {
	switch src.Dialect {
	case driver.DialectOpenCL:
		return d.Build(src.Text, options)
	case driver.DialectSPIRV:
		if !d.info.TakesSPIRV() {
			return nil, fmt.Errorf("cl: build SPIR-V on %s: the device takes no SPIR-V (CL_DEVICE_IL_VERSION is %q): %w", d.info.Name, d.info.ILVersions, driver.ErrUnsupported)
		}
		if !haveProgramWithIL() {
			return nil, fmt.Errorf("cl: build SPIR-V on %s: the OpenCL library has no clCreateProgramWithIL (OpenCL 2.1): %w", d.info.Name, driver.ErrUnsupported)
		}
		il := src.Binary
		if len(il) == 0 {
			return nil, fmt.Errorf("cl: build: empty SPIR-V module: %w", driver.ErrInvalidArg)
		}
		return d.buildProgram("SPIR-V", len(il), options, func() (*ocl.Program, error) {
			p, st := createProgramWithIL(rawContext(d.c.ctx), il)
			if st != Success {
				return nil, check(fmt.Sprintf("clCreateProgramWithIL(%d bytes)", len(il)), st)
			}
			return p, nil
		})
	}
	return nil, fmt.Errorf("cl: build: the backend does not build %s: %w", src.Dialect, driver.ErrUnsupported)
}

// buildProgram makes a program with create (on the context's thread) from size bytes of
// what (a dialect's name, for traces) and builds it with options (clBuildProgram).
func (d *device) buildProgram(what string, size int, options []string, create func() (*ocl.Program, error)) (driver.Program, error) {
	if d.closed.Load() {
		return nil, errClosed("device")
	}
	opts := strings.Join(options, " ")
	compile := compilerOptions(d.info.Platform, opts)
	start := time.Now()
	var (
		p      *ocl.Program
		st     Status
		log    string
		logErr error
	)
	release := captureDriverStderr() // the compiler's own output goes to the trace
	err := d.c.thread.Call(func() error {
		var err error
		if p, err = create(); err != nil {
			return err
		}
		if st = buildProgram(rawProgram(p), rawDevice(d.dev), compile); st != Success {
			log, logErr = buildLog(rawProgram(p), rawDevice(d.dev))
			p.Release()
		} else if tracing() {
			log, _ = buildLog(rawProgram(p), rawDevice(d.dev)) // warnings, for the trace
		}
		return nil
	})
	release()
	if err != nil {
		return nil, err
	}
	if st != Success {
		call := "clBuildProgram"
		if opts != "" {
			call = fmt.Sprintf("clBuildProgram(%q)", opts)
		}
		err := check(call, st)
		tracef("build of %d bytes of %s with options %q failed in %v: %v", size, what, opts, time.Since(start).Round(time.Microsecond), st)
		switch {
		case st == BuildProgramFailure || st == CompileProgramFailure || st == InvalidBuildOptions ||
			st == InvalidCompilerOptions || log != "":
			if log == "" && logErr != nil {
				log = "(no log: " + logErr.Error() + ")"
			}
			return nil, &driver.BuildError{Device: d.info.Name, Log: log, Err: err}
		}
		return nil, err
	}
	tracef("built %d bytes of %s with options %q in %v", size, what, opts, time.Since(start).Round(time.Microsecond))
	traceBuildLog(log)
	return &program{p: p, dev: d.dev, th: d.c.thread}, nil
}

// oclgrindDefine is the option Build adds on Oclgrind (a platform whose name contains
// "Oclgrind"), so that a kernel can choose, under #ifdef PRISM_OCLGRIND, a form equivalent
// to its fast one that Oclgrind 21.10 checks correctly. The case it exists for: Oclgrind
// rewrites a store of a vector built from scalars (an insertelement chain, which the
// 16-byte stores of several kernels compile to) into a store of the chain's undefined
// start followed by one store per component, and its --uninitialized check then reports
// the first store, though every component is written. Real devices never see the macro.
const oclgrindDefine = "-DPRISM_OCLGRIND=1"

// compilerOptions returns the options clBuildProgram gets on platform for the options
// given (joined): oclgrindDefine added on Oclgrind.
func compilerOptions(platform, opts string) string {
	if !strings.Contains(platform, "Oclgrind") {
		return opts
	}
	if opts == "" {
		return oclgrindDefine
	}
	return opts + " " + oclgrindDefine
}

// program is a built cl_program. It is safe for concurrent use.
type program struct {
	p      *ocl.Program
	dev    *ocl.Device
	th     *osThread
	closed atomic.Bool
}

var _ driver.Program = (*program)(nil)

// Kernel creates a kernel object for the named function (clCreateKernel). An unknown name
// returns an error wrapping driver.ErrNotFound (through InvalidKernelName).
func (p *program) Kernel(name string) (driver.Kernel, error) {
	if p.closed.Load() {
		return nil, errClosed("program")
	}
	kn := &kernel{name: name, numArgs: -1, th: p.th}
	err := p.th.Call(func() error {
		k, err := p.p.CreateKernel(name)
		if err != nil {
			return wrap(fmt.Sprintf("clCreateKernel(%q)", name), err)
		}
		kn.k = k
		if n, err := k.NumArgs(); err == nil {
			kn.numArgs = n
		}
		q := kernelQuery(k, p.dev)
		kn.attrs = kernelAttributes(q)
		kn.attrs.RequiredWorkGroupSize = requiredWorkGroupSize(q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return kn, nil
}

// Close releases the program (clReleaseProgram); kernels made from it stay valid.
// Idempotent.
func (p *program) Close() error {
	if p.closed.CompareAndSwap(false, true) {
		release(p.th, p.p.Release)
	}
	return nil
}

// kernelCompileWorkGroupSize is CL_KERNEL_COMPILE_WORK_GROUP_SIZE: the size_t[3] of a
// kernel's reqd_work_group_size attribute, zeros without one.
const kernelCompileWorkGroupSize = 0x11B1

// requiredWorkGroupSize returns the work-group size the kernel's source requires
// (CL_KERNEL_COMPILE_WORK_GROUP_SIZE), all zero when it requires none or the query fails.
func requiredWorkGroupSize(q infoQuery) (req [3]int) {
	v, err := querySizes(q, kernelCompileWorkGroupSize)
	if err != nil || len(v) != 3 {
		return req
	}
	for i, n := range v {
		req[i] = int(n)
	}
	return req
}

// kernel is a cl_kernel. It is safe for concurrent use: clSetKernelArg changes the one
// cl_kernel that every launch shares, so a launch holds mu from its first argument until
// clEnqueueNDRangeKernel has returned (after which the arguments may change).
type kernel struct {
	k       *ocl.Kernel
	name    string
	numArgs int                     // CL_KERNEL_NUM_ARGS, -1 if unknown
	attrs   driver.KernelAttributes // clGetKernelWorkGroupInfo on the device
	th      *osThread
	mu      sync.Mutex
	closed  atomic.Bool
}

var (
	_ driver.Kernel            = (*kernel)(nil)
	_ driver.ArgCounter        = (*kernel)(nil)
	_ driver.WorkGroupLimiter  = (*kernel)(nil)
	_ driver.AttributeReporter = (*kernel)(nil)
)

// Name returns the kernel's function name.
func (k *kernel) Name() string { return k.name }

// NumArgs returns the number of arguments the kernel declares (CL_KERNEL_NUM_ARGS), or -1
// if the driver would not tell.
func (k *kernel) NumArgs() int { return k.numArgs }

// MaxWorkGroupSize returns CL_KERNEL_WORK_GROUP_SIZE for the device, or 0 if unknown.
func (k *kernel) MaxWorkGroupSize() int { return k.attrs.MaxWorkGroupSize }

// Attributes returns what clGetKernelWorkGroupInfo reports for the device:
// CL_KERNEL_WORK_GROUP_SIZE, CL_KERNEL_LOCAL_MEM_SIZE (the kernel's __local arrays; no
// __local argument was set when it was asked), CL_KERNEL_PRIVATE_MEM_SIZE and
// CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE and CL_KERNEL_COMPILE_WORK_GROUP_SIZE.
// OpenCL reports no register, constant or binary version counts: those fields are zero.
func (k *kernel) Attributes() driver.KernelAttributes { return k.attrs }

// Close releases the kernel (clReleaseKernel). Idempotent.
func (k *kernel) Close() error {
	if k.closed.CompareAndSwap(false, true) {
		k.mu.Lock()
		release(k.th, k.k.Release)
		k.mu.Unlock()
	}
	return nil
}

// haveProgramWithIL reports whether the OpenCL library has clCreateProgramWithIL.
func haveProgramWithIL() bool { return C.prism_have_program_with_il() != 0 }

// createProgramWithIL makes a program of the intermediate-language module il in context
// ctx (clCreateProgramWithIL), wrapped in go-opencl's type as programLayout lays it out.
func createProgramWithIL(ctx unsafe.Pointer, il []byte) (*ocl.Program, Status) {
	var st C.cl_int
	buf := C.CBytes(il)
	defer C.free(buf)
	h := C.prism_create_program_with_il(C.cl_context(ctx), buf, C.size_t(len(il)), &st)
	if Status(st) != Success {
		return nil, Status(st)
	}
	p := new(ocl.Program)
	(*programLayout)(unsafe.Pointer(p)).handle = unsafe.Pointer(h)
	return p, Success
}
