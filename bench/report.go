package bench

import (
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// SchemaVersion is the version of the report's JSON layout, written as "schema" in every
// report and described in docs/BENCH.md and docs/bench.schema.json. It changes when a field
// changes meaning or goes away; new fields do not change it.
const SchemaVersion = 1

// Report is the result of every kind of run: Run (one device or several side by side, with
// or without vendor baselines), RunSplits and RunCollectives, and of reports merged by
// ReadFiles. It holds the metadata, the configuration, one entry per device, and the
// splits and collectives measured across those devices. A device of a split or collective
// run has no Results and no measured ceilings: the group's results are in Splits and
// Collectives.
type Report struct {
	Schema    int       `json:"schema"`
	Prism     string    `json:"prism_version"`
	Commit    string    `json:"commit,omitempty"`
	Date      time.Time `json:"date"`
	Host      string    `json:"host"`
	GoVersion string    `json:"go_version"`
	GOOS      string    `json:"goos"`
	GOARCH    string    `json:"goarch"`
	// HostCPU is the host's CPU model ("AMD EPYC 7B13 64-Core Processor"), empty where
	// unknown; Env holds the environment variables set for the run that change its results
	// (ResultEnv: PoCL's, Rusticl's, CUDA's, OpenMP's, Prism's own, ...). Both are part of
	// what decides whether two runs may be compared.
	HostCPU string            `json:"host_cpu,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Command is the command line that produced the report, when the caller sets it.
	Command []string       `json:"command,omitempty"`
	Config  ConfigInfo     `json:"config"`
	Devices []DeviceReport `json:"devices"`
	// Interrupted is set when the run was cancelled (a signal in the CLI) before it
	// finished: the report holds what was done. InterruptedAt names the step that was
	// running ("opencl:0:0 gemm/nn/float32 4M"), whose result is missing or partial.
	Interrupted   bool   `json:"interrupted,omitempty"`
	InterruptedAt string `json:"interrupted_at,omitempty"`
	// Splits are the ops split across devices (RunSplits), Collectives the collectives
	// measured across them (RunCollectives); absent from the reports of Run.
	Splits      []SplitResult      `json:"splits,omitempty"`
	Collectives []CollectiveResult `json:"collectives,omitempty"`
}

// ConfigInfo records the Config of a run.
type ConfigInfo struct {
	Ops      []string `json:"ops,omitempty"`    // the patterns given (empty: the whole suite)
	Sizes    []int    `json:"sizes,omitempty"`  // empty: each op's default (or quick) size
	Shapes   []string `json:"shapes,omitempty"` // --shapes (MxNxK, the sweep expanded) instead of sizes
	Quick    bool     `json:"quick"`
	Count    int      `json:"count"`
	Warmup   int      `json:"warmup"`
	Seed     uint64   `json:"seed"`
	Portable bool     `json:"portable"`
	// Variants are the variants every case ran with (--variant); empty: the one each op
	// picks on each device.
	Variants []string `json:"variants,omitempty"`
	// Vendor: each case also ran through the device's vendor library (--vendor).
	Vendor bool `json:"vendor,omitempty"`
}

// DeviceReport holds the metadata, ceilings, telemetry and results of one device.
type DeviceReport struct {
	Device    engine.DeviceInfo `json:"device"`
	Backend   string            `json:"backend"`
	Ceilings  Ceilings          `json:"ceilings"`
	Overheads Overheads         `json:"overheads"`
	Telemetry Telemetry         `json:"telemetry"`
	Results   []Result          `json:"results"`
	Err       string            `json:"error,omitempty"`
	// Timing says how the times were measured: TimingEvents (the device's event
	// timestamps), TimingHeld (the same, with the queue held until each run was enqueued,
	// so that the host's enqueueing is not timed) or TimingHost (host time around each
	// run, launch overheads included, where the device reports no usable timestamps).
	Timing string `json:"timing,omitempty"`
	// Budget is the time bound the device's cases were fitted to (their sizes and runs),
	// where the sizes were not given: --quick, or a CPU's defaults (see Budget).
	Budget *Budget `json:"budget,omitempty"`
}

// Ceilings are a device's measured limits, from the same run as its results.
type Ceilings struct {
	// CopyGBs is the device-to-device copy bandwidth, counting bytes read plus bytes
	// written: the ceiling of memory-bound cases. It is the better of the API's buffer copy
	// and the suite's copy kernel; CopyHow says which, CopyBytes the size of each buffer.
	// CopyGBs is 0 when neither gave a valid time (Invalid says why).
	CopyGBs   float64 `json:"copy_gbs"`
	CopyHow   string  `json:"copy_how"`
	CopyBytes int64   `json:"copy_bytes"`
	// FP32GFLOPs and FP64GFLOPs are the FMA-bound peaks measured by the peak kernel (see
	// peak.go), counting a multiply-add as two operations. FP64GFLOPs is 0 where the device
	// has no fp64; FP64Absent then says why.
	FP32GFLOPs float64 `json:"fp32_gflops"`
	FP64GFLOPs float64 `json:"fp64_gflops"`
	FP64Absent string  `json:"fp64_absent,omitempty"`
	PeakHow    string  `json:"peak_how"`
	// CopyAbsent and FP32Absent say why the copy ceiling or the fp32 peak is missing
	// (its measurement failed; the cases ran all the same, without that roof).
	CopyAbsent string `json:"copy_absent,omitempty"`
	FP32Absent string `json:"fp32_absent,omitempty"`
	// Invalid says which ceilings are 0 because their device times were not valid
	// measurements (zero or negative), and why ("copy: 2 of 2 device times are not
	// positive ..."); empty when every ceiling measured is valid.
	Invalid string `json:"invalid,omitempty"`
	// TF32GFLOPs, FP16GFLOPs, BF16GFLOPs, FP8GFLOPs and FP64TensorGFLOPs are the tensor-core
	// peaks measured by the tensor peak kernels (package kernels/ceiling: wgmma on sm_90,
	// mma.sync on other NVIDIA GPUs of sm_80 and newer, DMMA for float64; peak.go), a
	// multiply-add counted as two. FP8GFLOPs is E4M3's, and is E5M2's roof too (the two
	// run at one rate). Each is absent where it was not measured: TensorAbsent then says
	// why, by key ("tf32", "fp16", "bf16", "fp8", "fp64_tensor"). TensorHow says how each
	// was measured, or why the device has none.
	TF32GFLOPs       float64           `json:"tf32_gflops,omitempty"`
	FP16GFLOPs       float64           `json:"fp16_gflops,omitempty"`
	BF16GFLOPs       float64           `json:"bf16_gflops,omitempty"`
	FP8GFLOPs        float64           `json:"fp8_gflops,omitempty"`
	FP64TensorGFLOPs float64           `json:"fp64_tensor_gflops,omitempty"`
	TensorHow        string            `json:"tensor_how,omitempty"`
	TensorAbsent     map[string]string `json:"tensor_absent,omitempty"`
	// FP32Roof lists the result types that the device computes in float32 arithmetic
	// after converting their inputs, having no tensor-core kernel of the suite for them:
	// all six on a CPU, PoCL or any OpenCL device but NVIDIA's, and below sm_80; float8
	// below sm_89; float8 and float32x3tf32 through NVIDIA's OpenCL. FP32GFLOPs is their
	// roof.
	FP32Roof []string `json:"fp32_roof,omitempty"`
}

// PeakGFLOPs returns the compute ceiling of results of type typ: the best rate that the
// device's measured units reach in that arithmetic, or 0 when none was measured for it
// (integer types, fp64 missing, a tensor peak that failed).
//
//	float32                  the fp32 FMA peak
//	float64                  the better of the fp64 FMA peak and the fp64 tensor (DMMA) peak
//	tf32                     the tf32 tensor peak
//	float32x3tf32            the tf32 tensor peak / 3: three tf32 products per float32 product
//	float16, bfloat16        their tensor peaks
//	float8e4m3, float8e5m2   the float8 tensor peak (measured in E4M3; E5M2 runs at its rate)
//	any type of FP32Roof     the fp32 FMA peak: the device computes it in float32
func (c Ceilings) PeakGFLOPs(typ string) float64 {
	if slices.Contains(c.FP32Roof, typ) {
		return c.FP32GFLOPs
	}
	switch typ {
	case "float32":
		return c.FP32GFLOPs
	case "float64":
		return max(c.FP64GFLOPs, c.FP64TensorGFLOPs)
	case "tf32":
		return c.TF32GFLOPs
	case "float32x3tf32":
		return c.TF32GFLOPs / 3
	case "float16":
		return c.FP16GFLOPs
	case "bfloat16":
		return c.BF16GFLOPs
	case "float8e4m3", "float8e5m2":
		return c.FP8GFLOPs
	}
	return 0
}

// PeakName returns the name of the ceiling PeakGFLOPs(typ) takes ("fp16 tensor", "fp32",
// "fp64 DMMA"), or "" when there is none.
func (c Ceilings) PeakName(typ string) string {
	if slices.Contains(c.FP32Roof, typ) {
		return "fp32"
	}
	switch typ {
	case "float32":
		return "fp32"
	case "float64":
		if c.FP64TensorGFLOPs > c.FP64GFLOPs {
			return "fp64 DMMA"
		}
		return "fp64"
	}
	if k := tensorKey(typ); k != "" {
		if k == "tf32" && typ == "float32x3tf32" {
			return "tf32 tensor / 3"
		}
		return k + " tensor"
	}
	return ""
}

// peakPhrase names the roof of PeakGFLOPs(typ) in a verdict: "fp32 FMA peak", "fp64 DMMA
// peak", "fp16 tensor peak", "tf32 tensor peak / 3".
func (c Ceilings) peakPhrase(typ string) string {
	switch name := c.PeakName(typ); name {
	case "fp32", "fp64", "":
		if typ == "float64" {
			return "fp64 FMA peak"
		}
		return "fp32 FMA peak"
	case "tf32 tensor / 3":
		return "tf32 tensor peak / 3"
	default:
		return name + " peak"
	}
}

// tensorKey returns the key of the tensor peak that is typ's roof where the device has
// tensor cores for it ("tf32" for tf32 and float32x3tf32, "fp16", "bf16", "fp8"), or "".
func tensorKey(typ string) string {
	switch typ {
	case "tf32", "float32x3tf32":
		return "tf32"
	case "float16":
		return "fp16"
	case "bfloat16":
		return "bf16"
	case "float8e4m3", "float8e5m2":
		return "fp8"
	}
	return ""
}

// peakMissing says why results of type typ, which do FLOPs in an arithmetic with no
// measured roof, have none: the tensor peak's failure where it was tried, else that no
// ceiling measures that arithmetic (a report from before the tensor peaks).
func (c Ceilings) peakMissing(typ string) string {
	if k := tensorKey(typ); k != "" && c.TensorAbsent[k] != "" {
		return k + " tensor peak missing: " + c.TensorAbsent[k]
	}
	return "no ceiling measures " + typ + " arithmetic"
}

// The bounds of a result: which roof of the roofline limits it.
const (
	BoundMemory  = "memory"
	BoundCompute = "compute"
)

// Result is one case (an op at one size) on one device.
type Result struct {
	Case   string `json:"case"` // the op's name, "stream/triad/float32"
	Family string `json:"family"`
	Type   string `json:"type"`
	Size   int    `json:"size"`  // the size asked for (elements of the main operand)
	Shape  string `json:"shape"` // the shape set up, e.g. "M=N=K=1024"
	// Dims is the shape asked for where the case ran at a shape (--shapes) that its size
	// does not give: "4096x1024x512" (MxNxK). It is part of the case's identity (Key):
	// two shapes of one size are two cases. Empty for a case run at a size, and for a
	// square shape, which is the case of its size (M*N).
	Dims string `json:"dims,omitempty"`
	// SizeNote says why the case ran at another size than its op's starting size: the
	// device's budget reduced it (DeviceReport.Budget).
	SizeNote string `json:"size_note,omitempty"`
	// Variant is the implementation that ran ("portable", "cuda-shfl", "cuBLAS"); Requested
	// the variant the run asked for (--variant), empty when the op picked its own.
	// VendorLibrary marks a vendor library's routine, a baseline rather than Prism's kernel.
	Variant       string `json:"variant,omitempty"`
	Requested     string `json:"requested_variant,omitempty"`
	VendorLibrary bool   `json:"vendor_library,omitempty"`
	// Tunables are the variant's tunables and their source, for variants that have them
	// ("BM=128 BN=256 BK=32 WARPS=2x4 STAGES=3 GROUP_M=8 (tuned)": prism tune's, the
	// architecture's table, or forced).
	Tunables string `json:"tunables,omitempty"`
	// Launches are the kernels a timed run launched, one per kernel and work-group
	// shape, with their registers, local and private memory and, where the backend
	// reports it (CUDA), their theoretical occupancy and its limiting factor
	// (LaunchesOf). Absent where a run launched no kernel through engine (a vendor
	// library).
	Launches []Launch `json:"launches,omitempty"`
	// Timing is TimingHost where the case's runs were timed by the host clock although
	// its device reports timestamps (the run enqueued nothing timed on the measured
	// queue: blocking copies, allocations, launches on queues of its own); empty where the
	// device's timing (DeviceReport.Timing) holds.
	Timing string `json:"timing,omitempty"`
	Stats  Stats  `json:"stats"`
	// Warmup is the untimed runs before the timed ones (the config's, more where the case
	// warmed up for 10 ms without a budget, or fewer where the device's budget fitted the
	// case; the run that measured its pace counts as one).
	Warmup int `json:"warmup,omitempty"`
	// Flops and Bytes are the work of one run (the op's model); Link marks bytes that
	// cross the host-device link, not device memory (kernels.Model.Link): no measured
	// ceiling is their roof.
	Flops  float64 `json:"flops"`
	Bytes  float64 `json:"bytes"`
	Link   bool    `json:"link,omitempty"`
	GBs    float64 `json:"gbs"`    // Bytes over the median time
	GFLOPs float64 `json:"gflops"` // Flops over the median time
	// Bound says which roof limits the case: "memory" when the copy bandwidth times the
	// case's FLOPs per byte is below the compute peak of its type (or it does no FLOPs, or
	// no peak exists for its type), else "compute".
	Bound string `json:"bound,omitempty"`
	// AttainableGFLOPs is the roofline: min(peak of the type, CopyGBs * Flops/Bytes); 0 when
	// the case does no FLOPs.
	AttainableGFLOPs float64 `json:"attainable_gflops"`
	// Fraction is achieved over attainable: GBs/CopyGBs when memory-bound, GFLOPs/peak when
	// compute-bound.
	Fraction float64 `json:"fraction"`
	// WorkingSetBytes is the memory one run touches (the model's bytes: inputs read once,
	// outputs written once). CacheResident marks a memory-bound case above 100% of the DRAM
	// copy roof whose working set fits in the device's last-level cache
	// (DeviceInfo.CacheBytes): reports say "cache-resident" instead of an impossible fraction.
	WorkingSetBytes float64 `json:"working_set_bytes,omitempty"`
	CacheResident   bool    `json:"cache_resident,omitempty"`
	// RoofMissing says why the case has no roofline fraction: the ceiling of its bound
	// failed to measure on its device.
	RoofMissing string `json:"roof_missing,omitempty"`
	// Verdict says what limits the case, from the roofline and the device's fixed costs:
	// memory, compute, launches, the cache, the host link, or nothing measured (see the
	// rules at judge). Absent where the case failed, was skipped or has no valid time.
	Verdict  Verdict `json:"verdict,omitzero"`
	Verified bool    `json:"verified"`
	Mismatch bool    `json:"mismatch,omitempty"` // the result differed from the reference
	Skipped  string  `json:"skipped,omitempty"`
	Err      string  `json:"error,omitempty"`
	// Invalid says why the case, verified and timed, has no valid measurement: a device
	// time of zero or less (the driver's profiling gave none), or a figure that came out
	// infinite or NaN. It starts with InvalidPrefix. The samples are kept; the rates, the
	// roof and the fraction are 0, and OK reports false.
	Invalid string `json:"invalid,omitempty"`
	// Figures are what the op measures beside its time (kernels.FigureReporter), by name,
	// the unit at the end: the overlap family's stage times ("serial_ns", "copy_in_ns",
	// ...) and the share of its copy time the pipeline hid ("hidden_fraction") against the
	// median. Absent for ops without figures and for cases that were not validly timed.
	Figures map[string]float64 `json:"figures,omitempty"`
	// FiguresNA names the figures that mean nothing on the device, each with why
	// (kernels.FigureMeaning: the overlap family's hidden share on a CPU): reports show
	// them as n/a.
	FiguresNA map[string]string `json:"figures_na,omitempty"`
	// Library is the vendor library that ran a vendor variant, with its version
	// ("cuBLAS 13.0.2"); empty for Prism's own kernels.
	Library string `json:"library,omitempty"`
	// Vendor is the same case run by the vendor library of the same device (cuBLAS, cuFFT,
	// CLBlast, clFFT) in the same run, on the same inputs, timed the same way (--vendor):
	// the baseline of the "vs vendor" columns and of the "vendor" chart metric. Nil without
	// --vendor, or when the op has no vendor equivalent on the device's backend (NoVendor
	// then says so); where it is nil VendorBaseline also looks for a pseudo-device
	// "vendor:<device ID>" (scripts/vendor.py).
	Vendor   *Result `json:"vendor,omitempty"`
	NoVendor string  `json:"no_vendor,omitempty"`
}

// OK reports whether the result was verified and validly timed.
func (r Result) OK() bool {
	return r.Verified && r.Err == "" && r.Skipped == "" && r.Invalid == "" && r.Stats.Runs > 0
}

// Latency reports whether the result is a latency: its op's model does no work (zero
// FLOPs and bytes, and so no rates: the alloc family), so that its time is its figure, and
// it has no rate, bound or roofline.
func (r Result) Latency() bool { return r.Flops == 0 && r.Bytes == 0 && r.GBs == 0 && r.GFLOPs == 0 }

// Rate returns the result's main rate and its unit: GB/s when memory-bound, GFLOP/s when
// compute-bound.
func (r Result) Rate() (float64, string) {
	if r.Bound == BoundCompute || (r.Bound == "" && r.Flops > 0 && r.Bytes > 0 && r.Flops/r.Bytes > 4) {
		// Compute-bound, or, where no roofline was drawn (no ceilings measured), an
		// intensity above 4 FLOP/byte, which is compute-bound on every device measured.
		return r.GFLOPs, "GFLOP/s"
	}
	return r.GBs, "GB/s"
}

// roofline fills Bound, AttainableGFLOPs and Fraction from the device's ceilings, and
// marks a memory-bound case CacheResident when its working set fits in the device's
// last-level cache (cacheBytes) and it beats the DRAM copy roof: its fraction is then of a
// roof it did not run under.
func (r *Result) roofline(c Ceilings, cacheBytes int64) {
	if r.Latency() {
		return // no roof: its time is its figure
	}
	r.WorkingSetBytes = r.Bytes
	peak := c.PeakGFLOPs(r.Type)
	r.Bound, r.AttainableGFLOPs, r.Fraction = BoundMemory, 0, 0
	if r.Link && r.Flops == 0 {
		r.RoofMissing = "its bytes cross the host link, which no ceiling here measures (scripts/vendor.py's pinned copies are its baseline)"
		return
	}
	if r.Flops > 0 && r.Bytes > 0 && c.CopyGBs > 0 && !r.Link { // link bytes: the compute roof alone
		r.AttainableGFLOPs = c.CopyGBs * r.Flops / r.Bytes
	}
	if r.Flops > 0 && peak > 0 && (r.AttainableGFLOPs == 0 || peak < r.AttainableGFLOPs) {
		r.Bound, r.AttainableGFLOPs = BoundCompute, peak
	}
	// Tensor-core arithmetic whose peak is missing (it failed, or the report predates the
	// tensor peaks) and whose memory roof lies above the measured float32 peak:
	// compute-bound on a roof no ceiling measures, so no bound and no fraction rather than
	// a memory fraction.
	if r.Flops > 0 && peak == 0 && c.FP32GFLOPs > 0 && r.AttainableGFLOPs > c.FP32GFLOPs && r.Type != "float32" && r.Type != "float64" {
		r.Bound, r.AttainableGFLOPs = "", 0
		r.RoofMissing = c.peakMissing(r.Type)
		r.CacheResident = false
		return
	}
	switch {
	case r.Bound == BoundCompute:
		r.Fraction = r.GFLOPs / peak
	case c.CopyGBs > 0:
		r.Fraction = r.GBs / c.CopyGBs
	case c.CopyAbsent != "":
		r.RoofMissing = "copy ceiling missing: " + c.CopyAbsent
	}
	if r.Flops > 0 && (r.Type == "float32" || slices.Contains(c.FP32Roof, r.Type)) && c.FP32Absent != "" {
		r.RoofMissing, r.Fraction = "fp32 peak missing: "+c.FP32Absent, 0
	}
	r.CacheResident = r.Bound == BoundMemory && r.Fraction > 1 && cacheBytes > 0 && r.WorkingSetBytes <= float64(cacheBytes)
}

// ErrVerify is wrapped by every verification failure (it is kernels.ErrVerify).
var ErrVerify = kernels.ErrVerify

// Check returns an error wrapping ErrVerify if any result differed from its reference or
// a split or collective did not verify (or did not run), or another error if any device
// or case failed to run or has an invalid measurement (Result.Invalid, Ceilings.Invalid);
// nil when everything passed.
func (r *Report) Check() error {
	if err := r.checkGroup(); err != nil {
		return err
	}
	failed, mismatched, invalid := 0, 0, 0
	for _, d := range r.Devices {
		if d.Err != "" {
			failed++
		}
		if d.Ceilings.Invalid != "" {
			invalid++
		}
		for _, res := range d.Results {
			switch {
			case res.Mismatch:
				mismatched++
			case res.Err != "":
				failed++
			case res.Invalid != "":
				invalid++
			}
		}
	}
	switch {
	case mismatched > 0:
		return fmt.Errorf("bench: %d results differ from the reference, %d other failures, %d invalid measurements: %w", mismatched, failed, invalid, ErrVerify)
	case failed > 0:
		return fmt.Errorf("bench: %d devices or cases failed to run, %d invalid measurements; see the report", failed, invalid)
	case invalid > 0:
		return fmt.Errorf("bench: %d cases or ceilings have no valid device time (a time of zero or less from the driver); see \"invalid\" in the report", invalid)
	}
	return nil
}

// Device returns the report of the device with the given ID, or nil.
func (r *Report) Device(id string) *DeviceReport {
	for i := range r.Devices {
		if r.Devices[i].Device.ID == id {
			return &r.Devices[i]
		}
	}
	return nil
}

// Version returns the module version and VCS revision of the running binary.
func Version() (version, commit string) {
	version, commit = "devel", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				commit = s.Value
			}
			if s.Key == "vcs.modified" && s.Value == "true" {
				commit += "-dirty"
			}
		}
	}
	return version, commit
}

// CaseKey identifies a case of a report across its devices (a row of its side-by-side
// table): an op at a size, with the variant the run asked for (empty where each device ran
// the variant its op picks) and the shape asked for where its size does not give it
// (Result.Dims).
type CaseKey struct {
	Case    string
	Size    int
	Variant string
	Dims    string
}

// Key returns the case res is a result of.
func (res *Result) Key() CaseKey { return CaseKey{res.Case, res.Size, res.Requested, res.Dims} }
