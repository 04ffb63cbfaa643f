package engine

import (
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine/driver"
)

// Program is compiled kernel source. It is safe for concurrent use.
type Program struct {
	handle
	drv driver.Program
}

// Build compiles OpenCL C source for the device. options are compiler options such as
// "-DWG=256"; each backend translates the ones it understands. A compile failure returns
// an error wrapping ErrBuild from which errors.As extracts a *BuildError with the log.
func (d *Device) Build(source string, options ...string) (*Program, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if source == "" {
		return nil, fmt.Errorf("engine: build: empty source: %w", ErrInvalidArg)
	}
	dp, err := d.drv.Build(source, options)
	if err != nil {
		var be *driver.BuildError
		if errors.As(err, &be) {
			return nil, buildErr{be}
		}
		return nil, fmt.Errorf("engine: build on %s: %w", d.id, err)
	}
	p := &Program{handle: handle{dev: d, what: "program"}, drv: dp}
	if err := d.adopt(p); err != nil {
		dp.Close()
		return nil, err
	}
	return p, nil
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
	if l, ok := dk.(driver.WorkGroupLimiter); ok && l.MaxWorkGroupSize() > 0 {
		k.maxWG = l.MaxWorkGroupSize()
	}
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
	return p.drv.Close()
}

func (p *Program) closeResource() error {
	if !p.closed.CompareAndSwap(false, true) {
		return nil
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
}

// Name returns the kernel's function name.
func (k *Kernel) Name() string { return k.name }

// MaxWorkGroupSize returns the largest work-group this kernel can be launched with.
func (k *Kernel) MaxWorkGroupSize() int { return k.maxWG }

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
