package fake

import (
	"context"
	"fmt"
	"sync"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// Name is the backend name Register uses.
const Name = "fake"

var (
	registerOnce sync.Once
	std          = New()
)

// Register registers the fake backend with engine under Name. It may be called any number
// of times, from any goroutine; only the first call registers. It is not called from init,
// so that importing the package has no effect of its own.
func Register() {
	registerOnce.Do(func() { engine.Register(Name, std) })
}

// Driver is the fake backend. Its methods are safe for concurrent use.
type Driver struct {
	specs []spec
}

// spec is one fake device: what it reports, the dialects it builds, its launch features
// and whether it encodes tensor maps.
type spec struct {
	info       driver.DeviceInfo
	dialects   []driver.Dialect
	features   driver.LaunchFeatures
	tensorMaps bool
}

var _ driver.Driver = (*Driver)(nil)

// New returns a fake backend with devices "0" and "1", not registered: pass it to
// engine.Register under a name of your choice.
func New() *Driver {
	base := driver.DeviceInfo{
		Vendor:           "Prism",
		Platform:         "Prism fake platform",
		APIVersion:       "fake 1.0",
		DriverVersion:    "1.0",
		LanguageVersion:  "OpenCL C 1.2",
		ComputeUnits:     4,
		ClockMHz:         1000,
		GlobalMemBytes:   1 << 30,
		MaxAllocBytes:    256 << 20,
		LocalMemBytes:    64 << 10,
		MaxWorkGroupSize: 256,
		MaxWorkItemSizes: [3]int{256, 256, 64},
		FP64:             true,
	}
	gpu, cpu := base, base
	gpu.ID, gpu.Name, gpu.Kind, gpu.PCIBusID = "0", "Prism fake GPU", driver.KindGPU, "0000:01:00.0"
	gpu.LocalMemOptInBytes = 96 << 10
	cpu.ID, cpu.Name, cpu.Kind = "1", "Prism fake CPU", driver.KindCPU
	return &Driver{specs: []spec{
		{
			info:       gpu,
			dialects:   []driver.Dialect{driver.DialectOpenCL, driver.DialectCUDA},
			features:   driver.LaunchFeatures{LocalArgs: true, SharedBytes: true, MaxClusterSize: 8},
			tensorMaps: true,
		},
		{
			info:     cpu,
			dialects: []driver.Dialect{driver.DialectOpenCL},
			features: driver.LaunchFeatures{LocalArgs: true},
		},
	}}
}

// Devices lists the fake devices.
func (d *Driver) Devices(ctx context.Context) ([]driver.DeviceInfo, error) {
	count(nil, "Driver.Devices")
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fake: Devices: %w", err)
	}
	infos := make([]driver.DeviceInfo, len(d.specs))
	for i, sp := range d.specs {
		infos[i] = sp.info
	}
	return infos, nil
}

// Open opens a fake device; every call returns a new, independent device.
func (d *Driver) Open(ctx context.Context, id string) (driver.Device, error) {
	count(nil, "Driver.Open")
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fake: Open: %w", err)
	}
	for _, sp := range d.specs {
		if sp.info.ID == id {
			return &device{spec: sp, info: sp.info, calls: newCounters(), live: map[any]string{}}, nil
		}
	}
	return nil, fmt.Errorf("fake: Open: no device %q: %w", id, engine.ErrNotFound)
}
