package driver

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is the class of a device.
type Kind int

// Device kinds, in the order automatic selection prefers them.
const (
	KindGPU Kind = iota
	KindAccelerator
	KindCPU
	KindOther
)

// String returns the lowercase name used in device specs ("gpu", "cpu", ...).
func (k Kind) String() string {
	switch k {
	case KindGPU:
		return "gpu"
	case KindAccelerator:
		return "accelerator"
	case KindCPU:
		return "cpu"
	}
	return "other"
}

// MarshalText encodes the kind as its name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText decodes a kind from its name.
func (k *Kind) UnmarshalText(b []byte) error {
	v, ok := ParseKind(string(b))
	if !ok {
		return fmt.Errorf("driver: unknown device kind %q (want gpu, accelerator, cpu or other)", b)
	}
	*k = v
	return nil
}

// ParseKind returns the kind with the given name and whether the name is known.
func ParseKind(s string) (Kind, bool) {
	for _, k := range []Kind{KindGPU, KindAccelerator, KindCPU, KindOther} {
		if strings.EqualFold(s, k.String()) {
			return k, true
		}
	}
	return KindOther, false
}

// DeviceInfo is what a backend reports about one device. Zero values mean "not reported".
type DeviceInfo struct {
	ID              string `json:"id"` // backend-local ID, e.g. "1:0"
	Name            string `json:"name"`
	Vendor          string `json:"vendor"`
	Platform        string `json:"platform,omitempty"`
	Kind            Kind   `json:"kind"`
	APIVersion      string `json:"api_version"`
	DriverVersion   string `json:"driver_version"`
	LanguageVersion string `json:"language_version,omitempty"` // OpenCL C version, or compute capability
	ComputeUnits    int    `json:"compute_units"`
	ClockMHz        int    `json:"clock_mhz"`
	GlobalMemBytes  int64  `json:"global_mem_bytes"`
	MaxAllocBytes   int64  `json:"max_alloc_bytes"`
	LocalMemBytes   int64  `json:"local_mem_bytes"`
	// CacheBytes is the device's last-level cache in front of global memory: the L2 of a
	// GPU, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE on OpenCL (a CPU's last level); 0 when not
	// reported. Benchmarks use it to tell a cache-resident case from a DRAM-bound one.
	CacheBytes int64 `json:"cache_bytes,omitempty"`
	// LocalMemOptInBytes is the most local (shared) memory one work-group may use when its
	// kernel opts in to more than LocalMemBytes (CUDA's
	// CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN); zero where there is no
	// opt-in, and LocalMemBytes is the limit.
	LocalMemOptInBytes int64  `json:"local_mem_optin_bytes,omitempty"`
	MaxWorkGroupSize   int    `json:"max_work_group_size"`
	MaxWorkItemSizes   [3]int `json:"max_work_item_sizes"`
	FP64               bool   `json:"fp64"`
	FP16               bool   `json:"fp16"`
	// Int64Atomics: 64-bit integer atomics on global memory (OpenCL's
	// cl_khr_int64_base_atomics; every CUDA device). Subgroups: work-items of a group that
	// execute together and exchange values without local memory (cl_khr_subgroups, which
	// OpenCL 3.0 devices with the __opencl_c_subgroups feature report too; warps on CUDA).
	// Kernels that use either query it and keep an OpenCL 1.2 path for devices without.
	Int64Atomics bool `json:"int64_atomics,omitempty"`
	Subgroups    bool `json:"subgroups,omitempty"`
	// ComputeCapability is an NVIDIA GPU's compute capability as major*10+minor (90 for
	// sm_90), zero for other devices or where the API does not report it.
	ComputeCapability int `json:"compute_capability,omitempty"`
	// PCIBusID is the domain:bus:device.function address ("0000:17:00.0") where the API
	// reports it, so that the views of one card through two APIs can be matched.
	PCIBusID string `json:"pci_bus_id,omitempty"`
	// OpenCLCVersions are the OpenCL C versions the device compiles, "major.minor" separated
	// by spaces ("1.0 1.1 1.2 3.0"), each of which a build may ask for with
	// -cl-std=CL<version>: CL_DEVICE_OPENCL_C_ALL_VERSIONS on an OpenCL 3.0 device, else
	// the version of CL_DEVICE_OPENCL_C_VERSION and those before it. Empty where not
	// reported; a build's -cl-std is then not checked.
	OpenCLCVersions string `json:"opencl_c_versions,omitempty"`
	// OpenCLCFeatures are the optional OpenCL C 3.0 features the device has, separated by
	// spaces (CL_DEVICE_OPENCL_C_FEATURES: __opencl_c_generic_address_space,
	// __opencl_c_program_scope_global_variables, __opencl_c_subgroups, ...), which a
	// kernel built with -cl-std=CL3.0 sees as macros.
	OpenCLCFeatures string `json:"opencl_c_features,omitempty"`
	// ILVersions are the intermediate languages the device builds programs from, separated
	// by spaces (CL_DEVICE_IL_VERSION: "SPIR-V_1.0 SPIR-V_1.2"); empty where it takes none.
	ILVersions string `json:"il_versions,omitempty"`
}

// CompilesOpenCLC reports whether the device compiles OpenCL C version ("1.2", "3.0"),
// as OpenCLCVersions says; true for every version where the device reports none.
func (in DeviceInfo) CompilesOpenCLC(version string) bool {
	return in.OpenCLCVersions == "" || slices.Contains(strings.Fields(in.OpenCLCVersions), version)
}

// HasOpenCLCFeature reports whether OpenCLCFeatures names feature
// ("__opencl_c_subgroups").
func (in DeviceInfo) HasOpenCLCFeature(feature string) bool {
	return slices.Contains(strings.Fields(in.OpenCLCFeatures), feature)
}

// TakesSPIRV reports whether ILVersions names a version of SPIR-V.
func (in DeviceInfo) TakesSPIRV() bool {
	for _, il := range strings.Fields(in.ILVersions) {
		if strings.HasPrefix(il, "SPIR-V") {
			return true
		}
	}
	return false
}

// MaxLocalBytes returns the most local memory one work-group may use: LocalMemOptInBytes
// where the device has an opt-in, else LocalMemBytes (zero when not reported).
func (in DeviceInfo) MaxLocalBytes() int64 {
	if in.LocalMemOptInBytes > in.LocalMemBytes {
		return in.LocalMemOptInBytes
	}
	return in.LocalMemBytes
}
