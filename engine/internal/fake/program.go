package fake

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// kernelDecl finds kernel declarations, per dialect: `__kernel void NAME(` (or `kernel
// void`, with attributes between `__kernel` and `void`) in OpenCL C, `__global__ void
// NAME(` in CUDA C++.
var kernelDecl = map[driver.Dialect]*regexp.Regexp{
	driver.DialectOpenCL: regexp.MustCompile(`\b(?:__)?kernel\s+(?:__attribute__\s*\(\([^;{]*?\)\)\s*)*void\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(`),
	driver.DialectCUDA:   regexp.MustCompile(`\b__global__\s+void\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(`),
}

// errBuildFailure stands for the API status of a failed build (CL_BUILD_PROGRAM_FAILURE).
var errBuildFailure = errors.New("fake: BUILD_PROGRAM_FAILURE")

// program is a "compiled" source: the kernels it declares and the macros its options define.
type program struct {
	dev     *device
	kernels map[string]bool
	defines map[string]string
	closed  atomic.Bool
}

var _ driver.Program = (*program)(nil)

// build finds the kernels that src declares and fails, like a compiler, when one of them
// has no Go implementation in src's dialect, with a log that quotes that kernel's source
// lines.
func build(d *device, src driver.Source, options []string) (*program, error) {
	defines, err := parseOptions(options)
	if err != nil {
		return nil, &driver.BuildError{Device: d.info.Name, Log: err.Error(), Err: errBuildFailure}
	}
	p := &program{dev: d, kernels: map[string]bool{}, defines: defines}
	name := src.Name
	if name == "" {
		name = "<source>"
	}
	var log strings.Builder
	source := src.Text
	for _, m := range kernelDecl[src.Dialect].FindAllStringSubmatchIndex(source, -1) {
		kn := source[m[2]:m[3]]
		if im, ok := kernels[kn]; ok && im.dialect == src.Dialect {
			p.kernels[kn] = true
			continue
		}
		line, col := position(source, m[2])
		fmt.Fprintf(&log, "%s:%d:%d: error: the fake backend has no Go implementation of %s kernel %q\n", name, line, col, src.Dialect, kn)
		quote(&log, source, m[0], line)
	}
	if log.Len() > 0 {
		log.WriteString("build failed.\n")
		return nil, &driver.BuildError{Device: d.info.Name, Log: log.String(), Err: errBuildFailure}
	}
	return p, nil
}

// parseOptions collects -D macros; other options are accepted and ignored.
func parseOptions(options []string) (map[string]string, error) {
	defs := map[string]string{}
	fields := strings.Fields(strings.Join(options, " "))
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if !strings.HasPrefix(f, "-D") {
			continue
		}
		def := strings.TrimPrefix(f, "-D")
		if def == "" {
			if i+1 == len(fields) {
				return nil, fmt.Errorf("error: macro name missing after '-D'")
			}
			i++
			def = fields[i]
		}
		name, value, ok := strings.Cut(def, "=")
		if !ok {
			value = "1"
		}
		defs[name] = value
	}
	return defs, nil
}

// position returns the 1-based line and column of byte offset off in s.
func position(s string, off int) (line, col int) {
	before := s[:off]
	line = strings.Count(before, "\n") + 1
	col = off - (strings.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// quote writes the lines of the kernel declared at byte offset start, from its first line
// (numbered line) to the line holding its closing brace, numbered as a compiler does.
func quote(w *strings.Builder, source string, start, line int) {
	lineStart := strings.LastIndexByte(source[:start], '\n') + 1
	end, depth := len(source), 0
	for i := start; i < len(source); i++ {
		switch source[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				end = i + 1
				i = len(source)
			}
		}
	}
	if nl := strings.IndexByte(source[end:], '\n'); nl >= 0 {
		end += nl
	} else {
		end = len(source)
	}
	for i, l := range strings.Split(source[lineStart:end], "\n") {
		fmt.Fprintf(w, "%5d | %s\n", line+i, l)
	}
}

func (p *program) Kernel(name string) (driver.Kernel, error) {
	count(p.dev, "Program.Kernel")
	if p.closed.Load() {
		return nil, violation("Program.Kernel on a closed program")
	}
	if !p.kernels[name] {
		return nil, fmt.Errorf("fake: Kernel: no kernel %q in the program: %w", name, engine.ErrNotFound)
	}
	k := &kernel{dev: p.dev, name: name, impl: kernels[name], defines: p.defines}
	if err := p.dev.adopt(k, "Program.Kernel"); err != nil {
		return nil, err
	}
	return k, nil
}

func (p *program) Close() error {
	count(p.dev, "Program.Close")
	if p.closed.Swap(true) {
		return violation("Program.Close called twice")
	}
	return p.dev.drop(p, "Build")
}

// kernel is a kernel bound to its Go implementation. It outlives its program.
type kernel struct {
	dev     *device
	name    string
	impl    *impl
	defines map[string]string
	closed  atomic.Bool
}

var (
	_ driver.Kernel            = (*kernel)(nil)
	_ driver.ArgCounter        = (*kernel)(nil)
	_ driver.WorkGroupLimiter  = (*kernel)(nil)
	_ driver.AttributeReporter = (*kernel)(nil)
)

func (k *kernel) Name() string {
	count(k.dev, "Kernel.Name")
	return k.name
}

// NumArgs returns the number of arguments of the kernel's implementation.
func (k *kernel) NumArgs() int {
	count(k.dev, "Kernel.NumArgs")
	return len(k.impl.params)
}

// MaxWorkGroupSize returns the device's limit: Go kernels use no registers.
func (k *kernel) MaxWorkGroupSize() int {
	count(k.dev, "Kernel.MaxWorkGroupSize")
	return k.dev.info.MaxWorkGroupSize
}

// Attributes reports the device's work-group limit, the implementation's static local
// memory and required work-group size; Go kernels use no registers, private or constant
// memory.
func (k *kernel) Attributes() driver.KernelAttributes {
	count(k.dev, "Kernel.Attributes")
	return driver.KernelAttributes{
		MaxWorkGroupSize:      k.dev.info.MaxWorkGroupSize,
		LocalBytes:            k.impl.localBytes,
		PreferredMultiple:     1,
		RequiredWorkGroupSize: k.impl.required,
	}
}

func (k *kernel) Close() error {
	count(k.dev, "Kernel.Close")
	if k.closed.Swap(true) {
		return violation("Kernel.Close called twice")
	}
	return k.dev.drop(k, "Program.Kernel")
}
