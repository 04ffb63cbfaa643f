package cuda

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

func init() {
	engine.Register("cuda", &Driver{})
}

// Driver is the CUDA backend: every device the CUDA driver reports. It is registered with
// engine as "cuda"; programs use it through engine and rarely need the type itself. The
// zero value is ready to use and safe for concurrent use.
type Driver struct {
	mu     sync.Mutex
	probed bool
	rt     *libInfo
	devs   []probed
}

var _ driver.Driver = (*Driver)(nil)

// libInfo is what the probe learns about the libraries, shared by every device.
type libInfo struct {
	cudaPath, nvrtcPath string
	driverVersion       int    // cuDriverGetVersion: 13000 for CUDA 13.0
	nvrtcVersion        string // "13.0"
	archs               []int  // NVRTC's supported architectures, nil if unknown
	cubin               bool   // NVRTC can emit CUBIN
}

// probed is one device found by the probe.
type probed struct {
	info    driver.DeviceInfo
	props   Properties
	ordinal int // CUdevice
}

// Devices lists the CUDA devices with IDs "0", "1", ... (CUDA device ordinals, which follow
// CUDA_VISIBLE_DEVICES). The first call loads libcuda.so.1 and NVRTC and calls cuInit; a
// successful probe is kept, a failed one is tried again on the next call. Missing
// libraries, or no device, give an error wrapping driver.ErrUnavailable that names what was
// tried.
func (d *Driver) Devices(ctx context.Context) ([]driver.DeviceInfo, error) {
	devs, _, err := d.probe(ctx)
	if err != nil {
		return nil, err
	}
	infos := make([]driver.DeviceInfo, len(devs))
	for i, p := range devs {
		infos[i] = p.info
	}
	return infos, nil
}

// Open opens the device with the given local ID ("0"): it retains the device's primary
// context and starts the OS thread on which every CUDA call for the open device runs.
func (d *Driver) Open(ctx context.Context, id string) (driver.Device, error) {
	devs, rt, err := d.probe(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, p := range devs {
		if p.info.ID == id {
			return openDevice(p, rt)
		}
		ids = append(ids, p.info.ID)
	}
	return nil, fmt.Errorf("cuda: no CUDA device %q (have %s): %w", id, strings.Join(ids, ", "), driver.ErrNotFound)
}

func (d *Driver) probe(ctx context.Context) ([]probed, *libInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("cuda: probe: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.probed {
		return d.devs, d.rt, nil
	}
	devs, rt, err := probeAll()
	if err != nil {
		tracef("unavailable: %s", strings.TrimPrefix(err.Error(), prefix))
		return nil, nil, err
	}
	d.devs, d.rt, d.probed = devs, rt, true
	tracef("loaded %s and %s (CUDA %s, NVRTC %s): %d device(s)", rt.cudaPath, rt.nvrtcPath,
		versionString(rt.driverVersion), rt.nvrtcVersion, len(devs))
	tracef("NVRTC compiles for %v (CUBIN %v); compiled code is cached in %s", rt.archs, rt.cubin, cacheDir())
	for _, p := range devs {
		tracef("device %s: %s (%s, %d SMs, shared memory %d bytes per block, %d with opt-in, clusters %v)", p.info.ID, p.info.Name,
			p.info.LanguageVersion, p.props.Multiprocessors, p.props.SharedMemPerBlock, p.props.SharedMemPerBlockOptin, p.props.ClusterLaunch)
	}
	return devs, rt, nil
}

// probeAll loads the libraries, initializes the driver and describes every device.
func probeAll() ([]probed, *libInfo, error) {
	cudaPath, nvrtcPath, err := loadLibraries()
	if err != nil {
		return nil, nil, err
	}
	rt := &libInfo{cudaPath: cudaPath, nvrtcPath: nvrtcPath, archs: nvrtcSupportedArchs(), cubin: haveCUBIN()}
	if err := check("cuInit(0)", cuInit()); err != nil {
		return nil, nil, wrapf(err, "%s loaded, but the driver does not initialize (is a GPU visible? CUDA_VISIBLE_DEVICES=%q)",
			cudaPath, os.Getenv("CUDA_VISIBLE_DEVICES"))
	}
	v, r := cuDriverGetVersion()
	if err := check("cuDriverGetVersion", r); err != nil {
		return nil, nil, err
	}
	rt.driverVersion = v
	major, minor, nr := nvrtcVersion()
	if err := checkNVRTC("nvrtcVersion", nr); err != nil {
		return nil, nil, err
	}
	rt.nvrtcVersion = fmt.Sprintf("%d.%d", major, minor)

	n, r := cuDeviceGetCount()
	if err := check("cuDeviceGetCount", r); err != nil {
		return nil, nil, err
	}
	if n < 0 || n > maxDevices {
		return nil, nil, fmt.Errorf("cuda: cuDeviceGetCount reports %d devices, outside 0 to %d: the driver is not trusted: %w", n, maxDevices, driver.ErrUnavailable)
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("cuda: %s reports no CUDA device (CUDA_VISIBLE_DEVICES=%q): %w",
			cudaPath, os.Getenv("CUDA_VISIBLE_DEVICES"), driver.ErrUnavailable)
	}
	kernelModule := nvidiaModuleVersion()
	var devs []probed
	for i := 0; i < n; i++ {
		dev, r := cuDeviceGet(i)
		if err := check(fmt.Sprintf("cuDeviceGet(%d)", i), r); err != nil {
			return nil, nil, err
		}
		name, r := cuDeviceGetName(dev)
		if err := check(fmt.Sprintf("cuDeviceGetName(%d)", i), r); err != nil {
			return nil, nil, err
		}
		total, r := cuDeviceTotalMem(dev)
		if err := check(fmt.Sprintf("cuDeviceTotalMem_v2(%d)", i), r); err != nil {
			return nil, nil, err
		}
		pci, r := cuDeviceGetPCIBusID(dev)
		if r != Success {
			pci = ""
		}
		attr := func(a int) (int, error) {
			v, r := cuDeviceGetAttribute(a, dev)
			return v, check(fmt.Sprintf("cuDeviceGetAttribute(%d, %d)", a, i), r)
		}
		info, props, err := describe(attr, name, total, pci)
		if err != nil {
			return nil, nil, err
		}
		info.ID = strconv.Itoa(i)
		info.APIVersion = "CUDA " + versionString(rt.driverVersion)
		info.DriverVersion = kernelModule
		if info.DriverVersion == "" {
			info.DriverVersion = info.APIVersion
		}
		props.DriverVersion = rt.driverVersion
		props.NVRTCVersion = rt.nvrtcVersion
		devs = append(devs, probed{info: info, props: props, ordinal: dev})
	}
	return devs, rt, nil
}

// Device attributes (CUdevice_attribute in cuda.h).
const (
	attrMaxThreadsPerBlock          = 1
	attrMaxBlockDimX                = 2
	attrMaxGridDimX                 = 5
	attrMaxSharedMemoryPerBlock     = 8
	attrWarpSize                    = 10
	attrMaxRegistersPerBlock        = 12
	attrClockRate                   = 13 // kHz
	attrMultiprocessorCount         = 16
	attrPCIBusID                    = 33
	attrPCIDeviceID                 = 34
	attrMemoryClockRate             = 36 // kHz
	attrGlobalMemoryBusWidth        = 37 // bits
	attrL2CacheSize                 = 38
	attrMaxThreadsPerMultiprocessor = 39
	attrPCIDomainID                 = 50
	attrComputeCapabilityMajor      = 75
	attrComputeCapabilityMinor      = 76
	attrMaxSharedMemoryPerSM        = 81
	attrMaxSharedMemoryPerBlockOpt  = 97
	attrClusterLaunch               = 120
)

// Bounds on what the driver's attributes are believed: a compute capability of 1.0 to 99.9
// (its minor is one digit: "sm_%d%d" must name one architecture), at most maxMultiprocessors
// multiprocessors, and a warp size that is a power of two up to 1024 (the largest block).
const (
	maxComputeMajor    = 99
	maxMultiprocessors = 1 << 16
	maxWarpSize        = 1024
)

// describe fills a DeviceInfo and Properties from the device's attributes (attr asks one),
// name, total memory and PCI bus ID string. The compute capability is required, and a
// device whose driver reports one outside 1.0 to 99.9 is refused (ErrUnavailable); any
// other attribute that cannot be read, is negative, or is out of bounds (a multiprocessor
// count above maxMultiprocessors, a warp size that is not a power of two up to 1024) is
// left at zero ("not reported").
func describe(attr func(int) (int, error), name string, totalMem int64, pciBusID string) (driver.DeviceInfo, Properties, error) {
	var p Properties
	major, err := attr(attrComputeCapabilityMajor)
	if err != nil {
		return driver.DeviceInfo{}, p, err
	}
	minor, err := attr(attrComputeCapabilityMinor)
	if err != nil {
		return driver.DeviceInfo{}, p, err
	}
	if major < 1 || major > maxComputeMajor || minor < 0 || minor > 9 {
		return driver.DeviceInfo{}, p, fmt.Errorf("cuda: device %q reports compute capability %d.%d, outside 1.0 to %d.9: the driver is not trusted: %w",
			name, major, minor, maxComputeMajor, driver.ErrUnavailable)
	}
	get := func(a int) int {
		v, err := attr(a)
		if err != nil {
			return 0
		}
		if v < 0 {
			tracef("device %q: attribute %d is %d: not believed, left unreported", name, a, v)
			return 0
		}
		return v
	}
	p.ComputeCapability = [2]int{major, minor}
	p.Multiprocessors = get(attrMultiprocessorCount)
	if p.Multiprocessors > maxMultiprocessors {
		tracef("device %q: %d multiprocessors, above %d: not believed, left unreported", name, p.Multiprocessors, maxMultiprocessors)
		p.Multiprocessors = 0
	}
	p.ClockMHz = get(attrClockRate) / 1000
	p.MemoryClockMHz = get(attrMemoryClockRate) / 1000
	p.MemoryBusWidth = get(attrGlobalMemoryBusWidth)
	p.L2CacheBytes = int64(get(attrL2CacheSize))
	p.TotalMemBytes = totalMem
	p.SharedMemPerBlock = int64(get(attrMaxSharedMemoryPerBlock))
	p.SharedMemPerBlockOptin = int64(get(attrMaxSharedMemoryPerBlockOpt))
	p.SharedMemPerMultiprocessor = int64(get(attrMaxSharedMemoryPerSM))
	p.RegistersPerBlock = get(attrMaxRegistersPerBlock)
	p.MaxThreadsPerBlock = get(attrMaxThreadsPerBlock)
	p.MaxThreadsPerMultiprocessor = get(attrMaxThreadsPerMultiprocessor)
	p.WarpSize = get(attrWarpSize)
	if w := p.WarpSize; w > maxWarpSize || w&(w-1) != 0 {
		tracef("device %q: a warp size of %d: not believed, left unreported", name, w)
		p.WarpSize = 0
	}
	p.ClusterLaunch = get(attrClusterLaunch) == 1
	for i := range 3 {
		p.MaxBlockDim[i] = get(attrMaxBlockDimX + i)
		p.MaxGridDim[i] = get(attrMaxGridDimX + i)
	}
	p.PCIBusID = formatPCIBusID(pciBusID)
	if p.PCIBusID == "" {
		dom, e1 := attr(attrPCIDomainID)
		bus, e2 := attr(attrPCIBusID)
		dev, e3 := attr(attrPCIDeviceID)
		if e1 == nil && e2 == nil && e3 == nil && dom >= 0 && bus >= 0 && bus <= 0xff && dev >= 0 && dev <= 0x1f {
			p.PCIBusID = fmt.Sprintf("%04x:%02x:%02x.%x", dom, bus, dev, 0)
		}
	}

	info := driver.DeviceInfo{
		Name:             name,
		Vendor:           "NVIDIA",
		Platform:         "NVIDIA CUDA",
		Kind:             driver.KindGPU,
		LanguageVersion:  fmt.Sprintf("sm_%d%d", major, minor),
		ComputeUnits:     p.Multiprocessors,
		ClockMHz:         p.ClockMHz,
		GlobalMemBytes:   totalMem,
		MaxAllocBytes:    totalMem, // CUDA has no per-allocation limit below the memory size
		LocalMemBytes:    p.SharedMemPerBlock,
		CacheBytes:       p.L2CacheBytes,
		MaxWorkGroupSize: p.MaxThreadsPerBlock,
		MaxWorkItemSizes: p.MaxBlockDim,
		FP64:             true,
		Int64Atomics:     true,
		Subgroups:        true, // warps
		FP16:             major > 5 || (major == 5 && minor >= 3),
		PCIBusID:         p.PCIBusID,
	}
	if p.SharedMemPerBlockOptin > p.SharedMemPerBlock {
		info.LocalMemOptInBytes = p.SharedMemPerBlockOptin
	}
	info.ComputeCapability = major*10 + minor
	return info, p, nil
}

// formatPCIBusID rewrites cuDeviceGetPCIBusId's "domain:bus:device.function" (hex, the
// domain 4 or 8 digits, upper case) in the lower-case "%04x:%02x:%02x.%x" form that the
// OpenCL backend and platform use, or returns "" if s is not of that form.
func formatPCIBusID(s string) string {
	s = strings.TrimSpace(s)
	dom, rest, ok1 := strings.Cut(s, ":")
	bus, rest, ok2 := strings.Cut(rest, ":")
	dev, fn, ok3 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || !ok3 {
		return ""
	}
	var v [4]uint64
	for i, f := range []string{dom, bus, dev, fn} {
		n, err := strconv.ParseUint(f, 16, 32)
		if err != nil || f == "" {
			return ""
		}
		v[i] = n
	}
	if v[1] > 0xff || v[2] > 0x1f || v[3] > 7 {
		return ""
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", v[0], v[1], v[2], v[3])
}

// versionString formats a CUDA version number (13000) as "13.0".
func versionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

var moduleVersionRE = regexp.MustCompile(`\s(\d+\.\d+(?:\.\d+)?)\s`)

// nvidiaModuleVersion returns the NVIDIA kernel module's version ("580.65.06"), which is
// also the version the NVIDIA OpenCL driver reports, or "" if it cannot be read.
func nvidiaModuleVersion() string {
	b, err := os.ReadFile("/proc/driver/nvidia/version")
	if err != nil {
		return ""
	}
	return parseModuleVersion(string(b))
}

// parseModuleVersion extracts the version from /proc/driver/nvidia/version's NVRM line.
func parseModuleVersion(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "NVRM version:") {
			if m := moduleVersionRE.FindStringSubmatch(line + " "); m != nil {
				return m[1]
			}
		}
	}
	return ""
}
