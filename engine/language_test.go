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
