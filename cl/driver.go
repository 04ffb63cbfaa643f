//go:build !noopencl

package cl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	ocl "github.com/jgillich/go-opencl/cl"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

func init() {
	engine.Register("opencl", &Driver{})
}

// Driver is the OpenCL backend: every device of every OpenCL platform the ICD loader
// finds. It is registered with engine as "opencl"; programs use it through engine and
// rarely need the type itself. The zero value is ready to use and safe for concurrent use.
type Driver struct {
	mu     sync.Mutex
	probed bool
	devs   []probed
}

var _ driver.Driver = (*Driver)(nil)

// probed is one device found by the probe.
type probed struct {
	info     driver.DeviceInfo
	dev      *ocl.Device
	platform string // platform name, for the queue-sharing policy
}

// Devices lists the devices of every OpenCL platform, with IDs "P:D" (platform index,
// device index in clGetPlatformIDs and clGetDeviceIDs order). The first call sets the
// drivers' variables the user has not set (see the package doc) and probes the ICD loader;
// a successful probe is kept, a failed one is tried again on the next call. No platform,
// or platforms without a device, give an error wrapping driver.ErrUnavailable.
func (d *Driver) Devices(ctx context.Context) ([]driver.DeviceInfo, error) {
	devs, err := d.probe(ctx)
	if err != nil {
		return nil, err
	}
	infos := make([]driver.DeviceInfo, len(devs))
	for i, p := range devs {
		infos[i] = p.info
	}
	return infos, nil
}

// Open opens the device with the given local ID ("0:0"). Each call creates its own
// OpenCL context, except on drivers that need queue sharing (see the package doc), where
// every open device of one physical device shares a context and its single queue.
func (d *Driver) Open(ctx context.Context, id string) (driver.Device, error) {
	devs, err := d.probe(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, p := range devs {
		if p.info.ID == id {
			dev, err := openDevice(p)
			if err != nil {
				return nil, err
			}
			return dev, nil
		}
		ids = append(ids, p.info.ID)
	}
	return nil, fmt.Errorf("cl: no OpenCL device %q (have %s): %w", id, strings.Join(ids, ", "), driver.ErrNotFound)
}

func (d *Driver) probe(ctx context.Context) ([]probed, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cl: probe: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.probed {
		return d.devs, nil
	}
	applyEnvDefaults()
	devs, err := probeAll()
	if err != nil {
		tracef("unavailable: %s", strings.TrimPrefix(err.Error(), prefix))
		return nil, err
	}
	d.devs, d.probed = devs, true
	return devs, nil
}

// probeAll asks the ICD loader for every platform and every device (platformIDs and
// deviceIDs in api.go, which bound the counts).
func probeAll() ([]probed, error) {
	plats, err := platformIDs()
	if _, failed := err.(Status); err != nil && !failed {
		return nil, err // a count that is not believed
	}
	if err != nil || len(plats) == 0 {
		if err == nil {
			err = PlatformNotFoundKHR
		}
		return nil, fmt.Errorf("cl: no OpenCL platform found by the ICD loader (libOpenCL.so.1); "+
			"install pocl-opencl-icd or a GPU driver (clGetPlatformIDs: %w): %w", statusOf(err), driver.ErrUnavailable)
	}
	tracef("loaded %s: %d platform(s)", loadedLibrary("libOpenCL.so"), len(plats))
	var (
		devs     []probed
		problems []string
		names    []string
	)
	for pi, plat := range plats {
		pname, err := platformString(rawPlatform(plat), paramPlatformName)
		if err != nil || pname == "" {
			pname = fmt.Sprintf("platform %d", pi)
		}
		names = append(names, strconv.Quote(pname))
		version, _ := platformString(rawPlatform(plat), paramPlatformVersion)
		list, err := deviceIDs(plat)
		switch {
		case errors.Is(err, DeviceNotFound) || err == nil && len(list) == 0:
			none := "no device"
			if hint := noDeviceHint(pname); hint != "" {
				none += " (" + hint + ")"
			}
			problems = append(problems, fmt.Sprintf("%s: %s", pname, none))
			tracef("platform %d: %q (%s): %s", pi, pname, version, none)
			continue
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", pname, err))
			tracef("platform %d: %q (%s): %v", pi, pname, version, err)
			continue
		}
		tracef("platform %d: %q (%s): %d device(s)", pi, pname, version, len(list))
		if where := driverCache(pname); where != "" {
			tracef("platform %d caches compiled programs in %s", pi, where)
		}
		for di, dev := range list {
			info, err := describe(queryDevice(dev))
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s device %d: %v", pname, di, err))
				tracef("device %d:%d: %v", pi, di, err)
				continue
			}
			info.ID = fmt.Sprintf("%d:%d", pi, di)
			info.Platform = pname
			tracef("device %s: %s (%s, %s, %s)", info.ID, info.Name, info.Kind, info.APIVersion, info.DriverVersion)
			devs = append(devs, probed{info: info, dev: dev, platform: pname})
		}
	}
	if len(devs) == 0 {
		return nil, fmt.Errorf("cl: OpenCL platforms %s found by the ICD loader (libOpenCL.so.1) report no usable device (%s): %w",
			strings.Join(names, ", "), strings.Join(problems, "; "), driver.ErrUnavailable)
	}
	return devs, nil
}

// describe reads what the engine wants to know about one device. The name and type are
// required; any other query that fails is left at its zero value ("not reported").
func describe(q infoQuery) (driver.DeviceInfo, error) {
	var info driver.DeviceInfo
	var err error
	if info.Name, err = queryString(q, paramDeviceName); err != nil {
		return info, err
	}
	typ, err := queryUlong(q, paramDeviceType)
	if err != nil {
		return info, err
	}
	switch {
	case typ&deviceTypeGPU != 0:
		info.Kind = driver.KindGPU
	case typ&deviceTypeAccelerator != 0:
		info.Kind = driver.KindAccelerator
	case typ&deviceTypeCPU != 0:
		info.Kind = driver.KindCPU
	default:
		info.Kind = driver.KindOther
	}
	info.Vendor, _ = queryString(q, paramDeviceVendor)
	info.APIVersion, _ = queryString(q, paramDeviceVersion)
	info.DriverVersion, _ = queryString(q, paramDriverVersion)
	info.LanguageVersion, _ = queryString(q, paramOpenCLCVersion)
	if v, err := queryUint(q, paramMaxComputeUnits); err == nil {
		info.ComputeUnits = int(v)
	}
	if v, err := queryUint(q, paramMaxClockFrequency); err == nil {
		info.ClockMHz = int(v)
	}
	if v, err := queryUlong(q, paramGlobalMemSize); err == nil {
		info.GlobalMemBytes = int64(v)
	}
	if v, err := queryUlong(q, paramMaxMemAllocSize); err == nil {
		info.MaxAllocBytes = int64(v)
	}
	if v, err := queryUlong(q, paramLocalMemSize); err == nil {
		info.LocalMemBytes = int64(v)
	}
	if v, err := queryUlong(q, paramGlobalMemCacheSize); err == nil {
		info.CacheBytes = int64(v)
	}
	if v, err := querySizes(q, paramMaxWorkGroupSize); err == nil {
		info.MaxWorkGroupSize = int(v[0])
	}
	if v, err := querySizes(q, paramMaxWorkItemSizes); err == nil {
		for i := 0; i < len(v) && i < 3; i++ {
			info.MaxWorkItemSizes[i] = int(v[i])
		}
	}
	exts := map[string]bool{}
	if s, err := queryString(q, paramDeviceExtensions); err == nil {
		for _, e := range strings.Fields(s) {
			exts[e] = true
		}
	}
	info.FP64 = exts["cl_khr_fp64"]
	if !info.FP64 {
		// OpenCL 1.2 made fp64 optional core: a non-zero double config means support.
		if v, err := queryUlong(q, paramDoubleFPConfig); err == nil && v != 0 {
			info.FP64 = true
		}
	}
	info.FP16 = exts["cl_khr_fp16"]
	info.Int64Atomics = exts["cl_khr_int64_base_atomics"]
	info.Subgroups = exts["cl_khr_subgroups"]
	info.PCIBusID = pciBusID(q, exts)
	describeLanguage(q, &info)
	if exts["cl_nv_device_attribute_query"] {
		major, err1 := queryUint(q, paramComputeCapMajorNV)
		minor, err2 := queryUint(q, paramComputeCapMinorNV)
		if err1 == nil && err2 == nil {
			info.ComputeCapability = int(major*10 + minor)
		}
	}
	return info, nil
}
