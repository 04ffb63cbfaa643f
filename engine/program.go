package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/prism-compute/prism/engine/driver"
)

// Program is compiled kernel source. It is safe for concurrent use.
type Program struct {
	handle
	drv    driver.Program
	cached *progEntry // the device's program cache's entry of drv, or nil
}

// Type aliases so that users need not import package driver.
type (
	// Dialect is the language of a kernel source; see driver.Dialect.
	Dialect = driver.Dialect
	// Source is kernel source text in a dialect, with an optional file name for compiler
	// messages; see driver.Source. Its zero Dialect is OpenCL C.
	Source = driver.Source
	// KernelAttributes describes a compiled kernel; see driver.KernelAttributes.
	KernelAttributes = driver.KernelAttributes
)

// Source dialects.
const (
	// DialectOpenCL is OpenCL C 1.2, which every backend builds.
	DialectOpenCL = driver.DialectOpenCL
	// DialectCUDA is CUDA C++, which only the CUDA backend builds (NVRTC).
	DialectCUDA = driver.DialectCUDA
	// DialectSPIRV is a SPIR-V module (Source.Binary), which OpenCL devices that take it
	// as an intermediate language build (clCreateProgramWithIL).
	DialectSPIRV = driver.DialectSPIRV
)

// ParseDialect returns the dialect named s ("OpenCL C", "CUDA C++", "opencl", "cuda") and
// whether s names one.
func ParseDialect(s string) (Dialect, bool) { return driver.ParseDialect(s) }

// Build compiles OpenCL C source for the device: it is BuildSource of an OpenCL C Source.
// options are compiler options such as "-DWG=256"; each backend translates the ones it
// understands. A compile failure returns an error wrapping ErrBuild from which errors.As
// extracts a *BuildError with the log.
func (d *Device) Build(source string, options ...string) (*Program, error) {
	return d.BuildSource(Source{Dialect: DialectOpenCL, Text: source}, options...)
}

// BuildSource compiles src, in its dialect, for the device. A dialect the device does not
// build (see Dialects) returns an error wrapping ErrUnsupported that names the dialect and
// the device, without calling the backend; an empty text or an unknown dialect wraps
// ErrInvalidArg. options are compiler options: OpenCL C takes OpenCL's ("-DWG=256",
// "-cl-fast-relaxed-math"), CUDA C++ takes NVRTC's ("-DWG=256", "--use_fast_math"); the
// backend chooses the target architecture. A compile failure returns an error wrapping
// ErrBuild from which errors.As extracts a *BuildError with the log.
//
// A SPIR-V module (DialectSPIRV, its bytes in Source.Binary) is built by OpenCL devices
// whose CL_DEVICE_IL_VERSION names SPIR-V (DeviceInfo.TakesSPIRV); elsewhere it is refused
// with ErrUnsupported naming the device and why. An OpenCL C Source whose text starts with
// SPIR-V's magic number (a .spv file read as a kernel source) is taken as that module. A
// module shorter than SPIR-V's header of five words, or not a whole number of words,
// wraps ErrInvalidArg.
//
// An OpenCL C build may choose the language version with -cl-std=CL1.1, CL1.2, CL2.0 or
// CL3.0, passed to the compiler as given. A version the device does not compile
// (DeviceInfo.OpenCLCVersions, where it reports them) is refused before the build with an
// error wrapping ErrUnsupported that names the device and the versions it has; a -cl-std
// that names no version wraps ErrInvalidArg.
//
// On OpenCL devices a build of the same source, dialect and options as a Program still
// open, or as one of the last 64 closed, returns that compile (engine's program cache):
// each Program is closed on its own, and its kernels are its own. BuildUncached compiles
// anew.
func (d *Device) BuildSource(src Source, options ...string) (*Program, error) {
	return d.buildSource(src, options, d.cacheable())
}

// BuildUncached is BuildSource without the program cache: it always compiles, and keeps
// nothing (the time of a compile is what prism bench's header reports).
func (d *Device) BuildUncached(src Source, options ...string) (*Program, error) {
	return d.buildSource(src, options, false)
}

func (d *Device) buildSource(src Source, options []string, cached bool) (*Program, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if src.Dialect == DialectOpenCL && src.Binary == nil && IsSPIRV([]byte(src.Text[:min(len(src.Text), 4)])) {
		src = Source{Dialect: DialectSPIRV, Binary: []byte(src.Text), Name: src.Name}
	}
	if !src.Dialect.Known() {
		return nil, fmt.Errorf("engine: build: unknown dialect %d: %w", int(src.Dialect), ErrInvalidArg)
	}
	if src.Dialect == DialectSPIRV {
		if err := checkSPIRV(src); err != nil {
			return nil, err
		}
	} else {
		if i := strings.IndexByte(src.Text, 0); i >= 0 {
			return nil, fmt.Errorf("engine: build: the source holds a NUL byte at offset %d (compilers would stop reading there): %w", i, ErrInvalidArg)
		}
		if src.Text == "" {
			return nil, fmt.Errorf("engine: build: empty %s source: %w", src.Dialect, ErrInvalidArg)
		}
	}
	if src.Dialect == DialectSPIRV && !d.Builds(src.Dialect) {
		return nil, d.noSPIRV()
	}
	if !d.Builds(src.Dialect) {
		names := make([]string, len(d.dialects))
		for i, dl := range d.dialects {
			names[i] = dl.String()
		}
		return nil, fmt.Errorf("engine: build %s on %s (%s): the device builds %s only: %w",
			src.Dialect, d.id, d.info.Name, strings.Join(names, " and "), ErrUnsupported)
	}
	if src.Dialect == DialectOpenCL {
		if err := d.checkStd(options); err != nil {
			return nil, err
		}
	}
	var key progKey
	if cached {
		key = keyOf(src, options)
		if e := d.progs.take(key); e != nil {
			p := &Program{handle: handle{dev: d, what: "program"}, drv: e.drv, cached: e}
			if err := d.adopt(p); err != nil {
				d.progs.release(e)
				return nil, err
			}
			return p, nil
		}
	}
	var (
		dp  driver.Program
		err error
	)
	if b, ok := d.drv.(driver.DialectBuilder); ok {
		dp, err = b.BuildSource(src, options)
	} else {
		dp, err = d.drv.Build(src.Text, options)
	}
	if err != nil {
		var be *driver.BuildError
		if errors.As(err, &be) {
			return nil, buildErr{be}
		}
		return nil, fmt.Errorf("engine: build %s on %s: %w", src.Dialect, d.id, err)
	}
	p := &Program{handle: handle{dev: d, what: "program"}, drv: dp}
	if cached {
		p.cached = d.progs.put(key, dp)
	}
	if err := d.adopt(p); err != nil {
		p.closeDriver()
		return nil, err
	}
	return p, nil
}

// BuildSourceContext is BuildSource that gives up when ctx is done first: it returns at
// once with an error wrapping ctx's error, while the compiler, which no backend can stop,
// goes on in the background; the program it makes is closed when it ends, and Close of
// the device leaves the backend's device open until then (a driver must not release a
// context under a running compile). It is how a build of a user's source, which may take
// minutes, is left at a signal or a time limit.
func (d *Device) BuildSourceContext(ctx context.Context, src Source, options ...string) (*Program, error) {
	if ctx == nil {
		return nil, fmt.Errorf("engine: build: nil context: %w", ErrInvalidArg)
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("engine: build %s on %s: %w", src.Dialect, d.id, err)
	}
	if ctx.Done() == nil {
		return d.BuildSource(src, options...)
	}
	if err := d.startBuild(); err != nil {
		return nil, err
	}
	type built struct {
		p   *Program
		err error
	}
	done := make(chan built, 1)
	go func() {
		p, err := d.BuildSource(src, options...)
		done <- built{p, err}
	}()
	select {
	case b := <-done:
		d.endBuild()
		return b.p, b.err
	case <-ctx.Done():
	}
	select {
	case b := <-done:
		d.endBuild()
		return b.p, b.err
	default:
	}
	Tracef("build on %s abandoned: %v (the compiler goes on in the background)", d.id, ctx.Err())
	go func() {
		b := <-done
		if b.p != nil {
			b.p.Close()
		}
		d.endBuild()
	}()
	return nil, fmt.Errorf("engine: build %s on %s: %w", src.Dialect, d.id, ctx.Err())
}

// Kernel returns the kernel function with the given name.
func (p *Program) Kernel(name string) (*Kernel, error) {
	if p == nil {
		return nil, fmt.Errorf("engine: nil program: %w", ErrInvalidArg)
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	dk, err := p.drv.Kernel(name)
	if err != nil {
		return nil, fmt.Errorf("engine: kernel %q: %w", name, err)
	}
	k := &Kernel{handle: handle{dev: p.dev, what: "kernel " + name}, drv: dk, name: name, numArgs: -1, maxWG: p.dev.info.MaxWorkGroupSize}
	if c, ok := dk.(driver.ArgCounter); ok {
		k.numArgs = c.NumArgs()
	}
	if r, ok := dk.(driver.AttributeReporter); ok {
		k.attrs = r.Attributes()
		if k.attrs.MaxWorkGroupSize > 0 {
			k.maxWG = k.attrs.MaxWorkGroupSize
		}
	}
	if l, ok := dk.(driver.WorkGroupLimiter); ok && l.MaxWorkGroupSize() > 0 {
		k.maxWG = l.MaxWorkGroupSize()
	}
	k.attrs.MaxWorkGroupSize = k.maxWG
	if err := p.dev.adopt(k); err != nil {
		dk.Close()
		return nil, err
	}
	return k, nil
}

// Close releases the program. Kernels taken from it stay usable until closed. Idempotent.
func (p *Program) Close() error {
	if p == nil || !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	p.dev.release(p)
	return p.closeDriver()
}

func (p *Program) closeResource() error {
	if !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	return p.closeDriver()
}

// closeDriver closes p's compile, or hands it back to the device's program cache.
func (p *Program) closeDriver() error {
	if p.cached != nil {
		return p.dev.progs.release(p.cached)
	}
	return p.drv.Close()
}
func (p *Program) order() int { return 2 }

// Kernel is a kernel function. It is safe for concurrent use: arguments are given per launch.
type Kernel struct {
	handle
	drv     driver.Kernel
	name    string
	numArgs int // -1 when the backend cannot tell
	maxWG   int
	attrs   KernelAttributes
	autoMu  sync.Mutex
	auto    autoChoice // the last Auto choice (autolocal.go), guarded by autoMu
}

// Name returns the kernel's function name.
func (k *Kernel) Name() string {
	if k == nil {
		return ""
	}
	return k.name
}

// MaxWorkGroupSize returns the largest work-group this kernel can be launched with.
func (k *Kernel) MaxWorkGroupSize() int {
	if k == nil {
		return 0
	}
	return k.maxWG
}

// Attributes returns what the backend reports about the compiled kernel: registers, static
// local memory, private and constant memory, the preferred work-group multiple, the
// work-group size its source requires, binary and PTX versions. Fields a backend cannot tell are zero, except MaxWorkGroupSize, which
// is always MaxWorkGroupSize().
func (k *Kernel) Attributes() KernelAttributes {
	if k == nil {
		return KernelAttributes{}
	}
	return k.attrs
}

// Close releases the kernel. Idempotent.
func (k *Kernel) Close() error {
	if k == nil || !k.closed.CompareAndSwap(false, true) {
		return nil
	}
	k.dev.release(k)
	return k.drv.Close()
}

func (k *Kernel) closeResource() error {
	if !k.closed.CompareAndSwap(false, true) {
		return nil
	}
	return k.drv.Close()
}
func (k *Kernel) order() int { return 1 }

// stdVersions are the values of OpenCL's -cl-std option and the OpenCL C version each
// asks for.
var stdVersions = map[string]string{"CL1.1": "1.1", "CL1.2": "1.2", "CL2.0": "2.0", "CL3.0": "3.0"}

// StdOption returns the build option that asks for OpenCL C version std ("CL3.0", "3.0"
// or "cl3.0"): "-cl-std=CL3.0", or an error wrapping ErrInvalidArg for a version OpenCL
// does not define.
func StdOption(std string) (string, error) {
	v := strings.ToUpper(std)
	if !strings.HasPrefix(v, "CL") {
		v = "CL" + v
	}
	if _, ok := stdVersions[v]; !ok {
		return "", fmt.Errorf("engine: OpenCL C version %q: want CL1.1, CL1.2, CL2.0 or CL3.0: %w", std, ErrInvalidArg)
	}
	return "-cl-std=" + v, nil
}

// checkStd checks the -cl-std options among options (each of which may hold several,
// separated by spaces) against the OpenCL C versions the device compiles.
func (d *Device) checkStd(options []string) error {
	for _, o := range options {
		for _, f := range strings.Fields(o) {
			std, ok := strings.CutPrefix(f, "-cl-std=")
			if !ok {
				continue
			}
			v, ok := stdVersions[std]
			if !ok {
				return fmt.Errorf("engine: build option %s: want -cl-std=CL1.1, CL1.2, CL2.0 or CL3.0: %w", f, ErrInvalidArg)
			}
			if !d.info.CompilesOpenCLC(v) {
				have := strings.Fields(d.info.OpenCLCVersions)
				list := strings.Join(have, ", ")
				if n := len(have); n > 1 {
					list = strings.Join(have[:n-1], ", ") + " and " + have[n-1]
				}
				return fmt.Errorf("engine: build with %s on %s (%s): the device compiles OpenCL C %s only: %w",
					f, d.id, d.info.Name, list, ErrUnsupported)
			}
		}
	}
	return nil
}

// IsSPIRV reports whether b starts with SPIR-V's magic number (0x07230203, in either byte
// order): a SPIR-V module, which BuildSource takes as such.
func IsSPIRV(b []byte) bool { return driver.IsSPIRV(b) }

// checkSPIRV checks the shape of a SPIR-V module: its magic number, a whole number of
// 32-bit words, and at least the five words of the header.
func checkSPIRV(src Source) error {
	name := cmp.Or(src.Name, "the module")
	switch b := src.Binary; {
	case len(b) == 0:
		return fmt.Errorf("engine: build: empty SPIR-V module: %w", ErrInvalidArg)
	case !IsSPIRV(b):
		return fmt.Errorf("engine: build: %s is not a SPIR-V module (it does not start with the magic number 0x07230203): %w", name, ErrInvalidArg)
	case len(b)%4 != 0:
		return fmt.Errorf("engine: build: %s is not a SPIR-V module: %d bytes are not a whole number of 32-bit words: %w", name, len(b), ErrInvalidArg)
	case len(b) < 20:
		return fmt.Errorf("engine: build: %s is not a SPIR-V module: %d bytes, shorter than the header's 5 words: %w", name, len(b), ErrInvalidArg)
	}
	return nil
}

// noSPIRV is the error for a SPIR-V module on a device that does not build SPIR-V.
func (d *Device) noSPIRV() error {
	switch {
	case d.backend == "opencl" && d.info.ILVersions == "":
		return fmt.Errorf("engine: build SPIR-V on %s (%s): the device takes no intermediate language (CL_DEVICE_IL_VERSION is empty): %w",
			d.id, d.info.Name, ErrUnsupported)
	case d.info.ILVersions != "":
		return fmt.Errorf("engine: build SPIR-V on %s (%s): the device takes %s, no SPIR-V: %w", d.id, d.info.Name, d.info.ILVersions, ErrUnsupported)
	}
	names := make([]string, len(d.dialects))
	for i, dl := range d.dialects {
		names[i] = dl.String()
	}
	return fmt.Errorf("engine: build SPIR-V on %s (%s): the %s backend takes no SPIR-V (it builds %s): %w",
		d.id, d.info.Name, d.backend, strings.Join(names, " and "), ErrUnsupported)
}
