// Package telemetry samples NVIDIA GPU telemetry (utilization, memory in use, temperature,
// power, clocks) through NVML (github.com/NVIDIA/go-nvml), by PCI bus ID, so that a device of
// either backend (cuda:0 or the same card's opencl:P:D) can be sampled.
//
// libnvidia-ml.so.1 is loaded at Open, not at import. Without it, Open returns an error
// wrapping engine.ErrUnavailable and nothing else is called: after a failed nvmlInit, any
// further NVML call (Shutdown included) ends the process with exit code 127 (go-nvml,
// measured 2026-11-21), so a Reader that failed to open never touches NVML again.
//
// A Reader is safe for concurrent use.
package telemetry

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/prism-compute/prism/engine"
)

// Sample is one reading of one GPU. Fields NVML could not read are zero and named in Missing.
type Sample struct {
	Time           time.Time `json:"time"`
	BusID          string    `json:"pci_bus_id"`
	UtilizationPct uint32    `json:"utilization_pct"`
	MemoryUsed     uint64    `json:"memory_used_bytes"`
	MemoryTotal    uint64    `json:"memory_total_bytes"`
	TemperatureC   uint32    `json:"temperature_c"`
	PowerW         float64   `json:"power_w"`
	SMClockMHz     uint32    `json:"sm_clock_mhz"`
	MemClockMHz    uint32    `json:"mem_clock_mhz"`
	Missing        []string  `json:"missing,omitempty"`
}

// Reader samples GPUs through NVML.
type Reader struct {
	mu     sync.Mutex
	lib    nvml.Interface
	closed bool
}

// libraryPath is the NVML library Open loads; tests point it at a name that does not exist.
var libraryPath = "libnvidia-ml.so.1"

// Open loads NVML and initializes it. The caller must Close the Reader.
func Open() (*Reader, error) {
	lib := nvml.New(nvml.WithLibraryPath(libraryPath))
	if ret := lib.Init(); ret != nvml.SUCCESS {
		// Nothing more may be called on lib: see the package doc.
		// Not even nvmlErrorString: once the library is loaded, go-nvml routes it into NVML.
		return nil, fmt.Errorf("telemetry: nvmlInit (%s): NVML return code %d: %w", libraryPath, int(ret), engine.ErrUnavailable)
	}
	return &Reader{lib: lib}, nil
}

// Sample reads the GPU at the PCI bus ID ("0000:17:00.0", as engine.DeviceInfo.PCIBusID).
func (r *Reader) Sample(busID string) (Sample, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return Sample{}, fmt.Errorf("telemetry: reader is closed: %w", engine.ErrClosed)
	}
	if busID == "" {
		return Sample{}, fmt.Errorf("telemetry: no PCI bus ID: %w", engine.ErrInvalidArg)
	}
	dev, ret := r.lib.DeviceGetHandleByPciBusId(busID)
	if ret != nvml.SUCCESS {
		return Sample{}, fmt.Errorf("telemetry: nvmlDeviceGetHandleByPciBusId(%q): %s: %w", busID, r.lib.ErrorString(ret), engine.ErrNotFound)
	}
	s := Sample{Time: time.Now().UTC(), BusID: busID}
	miss := func(what string, ret nvml.Return) bool {
		if ret != nvml.SUCCESS {
			s.Missing = append(s.Missing, what+": "+r.lib.ErrorString(ret))
			return true
		}
		return false
	}
	if u, ret := r.lib.DeviceGetUtilizationRates(dev); !miss("utilization", ret) {
		s.UtilizationPct = u.Gpu
	}
	if m, ret := r.lib.DeviceGetMemoryInfo(dev); !miss("memory", ret) {
		s.MemoryUsed, s.MemoryTotal = m.Used, m.Total
	}
	if t, ret := r.lib.DeviceGetTemperature(dev, nvml.TEMPERATURE_GPU); !miss("temperature", ret) {
		s.TemperatureC = t
	}
	if p, ret := r.lib.DeviceGetPowerUsage(dev); !miss("power", ret) {
		s.PowerW = float64(p) / 1000
	}
	if c, ret := r.lib.DeviceGetClockInfo(dev, nvml.CLOCK_SM); !miss("sm clock", ret) {
		s.SMClockMHz = c
	}
	if c, ret := r.lib.DeviceGetClockInfo(dev, nvml.CLOCK_MEM); !miss("memory clock", ret) {
		s.MemClockMHz = c
	}
	s.bound()
	return s, nil
}

// Bounds on what NVML may report before it is believed: far above any GPU made, so that
// only a broken driver or library exceeds them.
const (
	maxMemoryBytes  = 1 << 50 // 1 PiB
	maxTemperatureC = 200
	maxPowerW       = 100_000
	maxClockMHz     = 100_000
)

// bound clears each figure NVML reported that no GPU can have (a utilization above 100%,
// memory in use above the total, a temperature, power or clock beyond the bounds) and
// names it in Missing, so that a faulty driver cannot put an absurd figure in a report.
func (s *Sample) bound() {
	refuse := func(what string, v any) {
		s.Missing = append(s.Missing, fmt.Sprintf("%s: implausible value %v", what, v))
	}
	if s.UtilizationPct > 100 {
		refuse("utilization", s.UtilizationPct)
		s.UtilizationPct = 0
	}
	if s.MemoryTotal > maxMemoryBytes || s.MemoryUsed > s.MemoryTotal {
		refuse("memory", fmt.Sprintf("%d of %d bytes", s.MemoryUsed, s.MemoryTotal))
		s.MemoryUsed, s.MemoryTotal = 0, 0
	}
	if s.TemperatureC > maxTemperatureC {
		refuse("temperature", s.TemperatureC)
		s.TemperatureC = 0
	}
	if s.PowerW > maxPowerW {
		refuse("power", s.PowerW)
		s.PowerW = 0
	}
	if s.SMClockMHz > maxClockMHz {
		refuse("sm clock", s.SMClockMHz)
		s.SMClockMHz = 0
	}
	if s.MemClockMHz > maxClockMHz {
		refuse("memory clock", s.MemClockMHz)
		s.MemClockMHz = 0
	}
}

// String formats a sample for a terminal.
func (s Sample) String() string {
	out := fmt.Sprintf("%s: %d%% busy, %.1f/%.1f GiB, %d C, %.0f W, SM %d MHz, memory %d MHz",
		s.BusID, s.UtilizationPct, float64(s.MemoryUsed)/(1<<30), float64(s.MemoryTotal)/(1<<30),
		s.TemperatureC, s.PowerW, s.SMClockMHz, s.MemClockMHz)
	if len(s.Missing) > 0 {
		out += " (unread: " + strings.Join(s.Missing, "; ") + ")"
	}
	return out
}

// Close shuts NVML down. Idempotent.
func (r *Reader) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if ret := r.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("telemetry: nvmlShutdown: %s", r.lib.ErrorString(ret))
	}
	return nil
}
