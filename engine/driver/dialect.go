package driver

import (
	"fmt"
	"strings"
)

// Dialect is the language a kernel source is written in.
type Dialect int

// Kernel source dialects. The zero value is OpenCL C, which every backend builds.
const (
	// DialectOpenCL is OpenCL C 1.2, the portable dialect of the kernel suite. Every
	// backend builds it: OpenCL drivers natively, the CUDA backend through a translation.
	DialectOpenCL Dialect = iota
	// DialectCUDA is CUDA C++, for NVIDIA-only kernels. Only the CUDA backend builds it.
	DialectCUDA
	// DialectSPIRV is a SPIR-V module (Source.Binary), built by OpenCL devices that take
	// it as an intermediate language (CL_DEVICE_IL_VERSION names SPIR-V;
	// clCreateProgramWithIL).
	DialectSPIRV
)

// dialects lists every known dialect in order, for ParseDialect.
var dialects = []Dialect{DialectOpenCL, DialectCUDA, DialectSPIRV}

// String returns the dialect's name: "OpenCL C", "CUDA C++" or "SPIR-V".
func (d Dialect) String() string {
	switch d {
	case DialectOpenCL:
		return "OpenCL C"
	case DialectCUDA:
		return "CUDA C++"
	case DialectSPIRV:
		return "SPIR-V"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// Known reports whether d is one of the dialects this package defines.
func (d Dialect) Known() bool { return d >= DialectOpenCL && d <= DialectSPIRV }

// MarshalText encodes the dialect as its name.
func (d Dialect) MarshalText() ([]byte, error) {
	if !d.Known() {
		return nil, fmt.Errorf("driver: unknown dialect %d", int(d))
	}
	return []byte(d.String()), nil
}

// UnmarshalText decodes a dialect from its name (see ParseDialect).
func (d *Dialect) UnmarshalText(b []byte) error {
	v, ok := ParseDialect(string(b))
	if !ok {
		return fmt.Errorf("driver: unknown dialect %q (want \"OpenCL C\", \"CUDA C++\" or \"SPIR-V\")", b)
	}
	*d = v
	return nil
}

// ParseDialect returns the dialect named s, ignoring case ("OpenCL C", "CUDA C++",
// "SPIR-V", or the short forms "opencl" and "cuda"), and whether s names one.
func ParseDialect(s string) (Dialect, bool) {
	for _, d := range dialects {
		short, _, _ := strings.Cut(d.String(), " ")
		if strings.EqualFold(s, d.String()) || strings.EqualFold(s, short) {
			return d, true
		}
	}
	return DialectOpenCL, false
}

// Source is kernel source text in a dialect, or a module's bytes (SPIR-V).
type Source struct {
	Dialect Dialect
	Text    string
	// Binary is the module of a binary dialect (SPIR-V's words, in the byte order of its
	// magic number); text dialects leave it nil.
	Binary []byte
	// Name is the file name that compiler messages give the source ("gemm_wgmma.cu"); a
	// backend chooses one when it is empty.
	Name string
}

// DialectBuilder is implemented by devices that build sources in more dialects than
// OpenCL C. A device without it builds OpenCL C only, through Device.Build.
type DialectBuilder interface {
	// Dialects returns the dialects BuildSource accepts, DialectOpenCL first.
	Dialects() []Dialect
	// BuildSource compiles src, whose dialect is one of Dialects, with the given options
	// for this device. A compile failure returns a *BuildError carrying the compiler log.
	BuildSource(src Source, options []string) (Program, error)
}

// SPIRVMagic is the first word of every SPIR-V module.
const SPIRVMagic = 0x07230203

// IsSPIRV reports whether b starts with SPIR-V's magic number, in either byte order.
func IsSPIRV(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	le := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	be := uint32(b[3]) | uint32(b[2])<<8 | uint32(b[1])<<16 | uint32(b[0])<<24
	return le == SPIRVMagic || be == SPIRVMagic
}
