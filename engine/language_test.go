package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/internal/fake"
)

// langDevice is a fake device that reports the OpenCL C versions and ILs of info and
// records what reaches its BuildSource.
type langDevice struct {
	driver.Device
	info     func(driver.DeviceInfo) driver.DeviceInfo
	dialects []driver.Dialect
	mu       sync.Mutex
	built    []driver.Source
	options  [][]string
}

func (d *langDevice) Info() driver.DeviceInfo { return d.info(d.Device.Info()) }

func (d *langDevice) Dialects() []driver.Dialect { return d.dialects }

func (d *langDevice) BuildSource(src driver.Source, options []string) (driver.Program, error) {
	d.mu.Lock()
	d.built = append(d.built, src)
	d.options = append(d.options, options)
	d.mu.Unlock()
	if src.Dialect == driver.DialectSPIRV {
		return d.Device.Build("// a module", options)
	}
	return d.Device.Build(src.Text, options)
}

var langDevices = struct {
	sync.Mutex
	byBackend map[string]*langDevice
}{byBackend: map[string]*langDevice{}}

// openLang registers (once per backend name) a fake backend whose devices report what
// info returns and build dialects, and opens its device 0.
func openLang(t *testing.T, backend string, dialects []driver.Dialect, info func(driver.DeviceInfo) driver.DeviceInfo) (*engine.Device, *langDevice) {
	t.Helper()
	langDevices.Lock()
	if _, ok := langDevices.byBackend[backend]; !ok {
		langDevices.byBackend[backend] = nil
		engine.Register(backend, wrapDriver{fake.New(), func(d driver.Device) driver.Device {
			ld := &langDevice{Device: d, info: info, dialects: dialects}
			langDevices.Lock()
			langDevices.byBackend[backend] = ld
			langDevices.Unlock()
			return ld
		}})
	}
	langDevices.Unlock()
	dev, err := engine.Open(context.Background(), backend+":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	langDevices.Lock()
	defer langDevices.Unlock()
	return dev, langDevices.byBackend[backend]
}

// poclLike reports the versions PoCL 3.1 and Rusticl report here.
func poclLike(in driver.DeviceInfo) driver.DeviceInfo {
	in.Name = "pthread-cpu"
	in.OpenCLCVersions = "1.0 1.1 1.2 3.0"
	in.OpenCLCFeatures = "__opencl_c_int64"
	return in
}

// TestBuildStd: a -cl-std the device compiles reaches the backend as given; one it does
// not is refused before the build, naming the device and its versions; one OpenCL does
// not define is an invalid argument; a device that reports no versions is not checked.
func TestBuildStd(t *testing.T) {
	dev, ld := openLang(t, "lang-std", []driver.Dialect{driver.DialectOpenCL}, poclLike)
	for _, c := range []struct {
		options []string
		want    error
		msg     string
	}{
		{[]string{"-cl-std=CL3.0"}, nil, ""},
		{[]string{"-DN=4 -cl-std=CL1.2"}, nil, ""},
		{[]string{"-cl-std=CL2.0"}, engine.ErrUnsupported,
			"engine: build with -cl-std=CL2.0 on lang-std:0 (pthread-cpu): the device compiles OpenCL C 1.0, 1.1, 1.2 and 3.0 only"},
		{[]string{"-DN=4", "-cl-fast-relaxed-math -cl-std=CL2.0"}, engine.ErrUnsupported, "-cl-std=CL2.0 on lang-std:0"},
		{[]string{"-cl-std=CL4.0"}, engine.ErrInvalidArg, "engine: build option -cl-std=CL4.0: want -cl-std=CL1.1, CL1.2, CL2.0 or CL3.0"},
		{[]string{"-cl-std=3.0"}, engine.ErrInvalidArg, "-cl-std=3.0: want"},
	} {
		before := len(ld.options)
		p, err := dev.Build("// nothing", c.options...)
		if c.want == nil {
			if err != nil {
				t.Errorf("%q: %v", c.options, err)
				continue
			}
			p.Close()
			if got := ld.options[len(ld.options)-1]; fmt.Sprint(got) != fmt.Sprint(c.options) {
				t.Errorf("%q reached the backend as %q", c.options, got)
			}
			continue
		}
		if !errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), c.msg) {
			t.Errorf("%q: %v, want an error wrapping %v containing %q", c.options, err, c.want, c.msg)
		}
		if len(ld.options) != before {
			t.Errorf("%q reached the backend", c.options)
		}
	}
	unreported, _ := openLang(t, "lang-unreported", []driver.Dialect{driver.DialectOpenCL}, func(in driver.DeviceInfo) driver.DeviceInfo { return in })
	if p, err := unreported.Build("// nothing", "-cl-std=CL2.0"); err != nil {
		t.Errorf("a device that reports no versions: %v", err)
	} else {
		p.Close()
	}
	// CUDA C++ has no -cl-std to check: NVRTC's -std=... is not OpenCL's.
}

func TestStdOption(t *testing.T) {
	for in, want := range map[string]string{"CL3.0": "-cl-std=CL3.0", "3.0": "-cl-std=CL3.0", "cl2.0": "-cl-std=CL2.0", "1.2": "-cl-std=CL1.2"} {
		if got, err := engine.StdOption(in); err != nil || got != want {
			t.Errorf("StdOption(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "CL", "3", "CL1.0", "CL2.1", "c++"} {
		if got, err := engine.StdOption(in); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("StdOption(%q) = %q, %v; want ErrInvalidArg", in, got, err)
		}
	}
}

// spirvHeader is the five-word header of a SPIR-V module (little-endian), as llvm-spirv
// writes it.
var spirvHeader = []byte{0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0, 0x0e, 0, 6, 0, 0x18, 0, 0, 0, 0, 0, 0, 0}

// TestBuildSPIRV: a SPIR-V module reaches a backend that builds SPIR-V as its bytes, also
// when handed over as source text (recognized by its magic number, in either byte order);
// bytes that are no module are refused as invalid, naming the file; a device without
// SPIR-V refuses it by name, saying why, before the backend is called.
func TestBuildSPIRV(t *testing.T) {
	takes := func(in driver.DeviceInfo) driver.DeviceInfo {
		in.Name = "a GPU"
		in.ILVersions = "SPIR-V_1.0 SPIR-V_1.2"
		return in
	}
	dev, ld := openLang(t, "lang-spirv", []driver.Dialect{driver.DialectOpenCL, driver.DialectSPIRV}, takes)
	if !dev.Builds(engine.DialectSPIRV) {
		t.Fatalf("Dialects() = %v", dev.Dialects())
	}
	bigEndian := []byte{0x07, 0x23, 0x02, 0x03, 0, 1, 0, 0, 0, 6, 0, 0x0e, 0, 0, 0, 0x18, 0, 0, 0, 0}
	for _, src := range []engine.Source{
		{Dialect: engine.DialectSPIRV, Binary: spirvHeader},
		{Text: string(spirvHeader), Name: "k.spv"},
		{Dialect: engine.DialectOpenCL, Text: string(bigEndian)},
	} {
		p, err := dev.BuildSource(src, "-DN=1")
		if err != nil {
			t.Errorf("%+v: %v", src, err)
			continue
		}
		p.Close()
		got := ld.built[len(ld.built)-1]
		if got.Dialect != engine.DialectSPIRV || (string(got.Binary) != string(spirvHeader) && string(got.Binary) != string(bigEndian)) || got.Text != "" {
			t.Errorf("%+v reached the backend as %+v", src, got)
		}
	}
	for _, c := range []struct {
		src engine.Source
		msg string
	}{
		{engine.Source{Dialect: engine.DialectSPIRV, Binary: []byte("__kernel void k() {}")}, "engine: build: k.cl is not a SPIR-V module (it does not start with the magic number 0x07230203)"},
		{engine.Source{Dialect: engine.DialectSPIRV}, "engine: build: empty SPIR-V module"},
		{engine.Source{Dialect: engine.DialectSPIRV, Binary: spirvHeader[:16], Name: "k.spv"}, "k.spv is not a SPIR-V module: 16 bytes, shorter than the header's 5 words"},
		{engine.Source{Text: string(spirvHeader[:18]), Name: "k.spv"}, "k.spv is not a SPIR-V module: 18 bytes are not a whole number of 32-bit words"},
	} {
		if c.src.Name == "" && c.src.Binary != nil {
			c.src.Name = "k.cl"
		}
		before := len(ld.built)
		_, err := dev.BuildSource(c.src)
		if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(fmt.Sprint(err), c.msg) {
			t.Errorf("%q: %v, want ErrInvalidArg containing %q", c.src.Binary, err, c.msg)
		}
		if len(ld.built) != before {
			t.Errorf("%q reached the backend", c.src.Binary)
		}
	}

	for _, c := range []struct {
		backend string
		il      string
		msg     string
	}{
		{"lang-nospirv", "", "engine: build SPIR-V on lang-nospirv:0 (a CPU): the lang-nospirv backend takes no SPIR-V (it builds OpenCL C)"},
		{"lang-otheril", "SPIR_1.2", "engine: build SPIR-V on lang-otheril:0 (a CPU): the device takes SPIR_1.2, no SPIR-V"},
	} {
		il := c.il
		no, nld := openLang(t, c.backend, []driver.Dialect{driver.DialectOpenCL}, func(in driver.DeviceInfo) driver.DeviceInfo {
			in.Name = "a CPU"
			in.ILVersions = il
			return in
		})
		_, err := no.BuildSource(engine.Source{Text: string(spirvHeader), Name: "k.spv"})
		if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(fmt.Sprint(err), c.msg) {
			t.Errorf("%s: %v, want ErrUnsupported containing %q", c.backend, err, c.msg)
		}
		if len(nld.built) != 0 {
			t.Errorf("%s: the module reached the backend", c.backend)
		}
	}
}

func TestDialectSPIRV(t *testing.T) {
	if d, ok := engine.ParseDialect("spir-v"); !ok || d != engine.DialectSPIRV || d.String() != "SPIR-V" {
		t.Errorf("ParseDialect(spir-v) = %v, %v", d, ok)
	}
	for b, want := range map[string]bool{"": false, "\x03\x02\x23": false, "\x03\x02\x23\x07": true, "\x07\x23\x02\x03\x00": true, "__kernel": false} {
		if got := engine.IsSPIRV([]byte(b)); got != want {
			t.Errorf("IsSPIRV(%q) = %v, want %v", b, got, want)
		}
	}
}
