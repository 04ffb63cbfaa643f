package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/platform"
	"github.com/prism-compute/prism/platform/telemetry"
	"github.com/spf13/cobra"
)

type devicesOptions struct {
	outputFlags
}

func newDevicesCmd() *cobra.Command {
	opts := &devicesOptions{}
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the compute devices of every backend",
		Long: `List every device that a backend (OpenCL, CUDA) finds, with the ID to pass to
--device or PRISM_DEVICE. A card seen through two APIs is marked in the "same card"
column. A backend that found nothing is named on stderr; --verbose (or PRISM_TRACE=1)
says why.

With --json, print {"devices": [...], "backends": [...]} with every fact the backend
reports: vendor, kind, compute units, clock, memory sizes, work-group limits, fp64/fp16,
driver and language versions, PCI bus ID, the OpenCL C versions a build may ask for
with -cl-std (opencl_c_versions), the OpenCL C 3.0 features (opencl_c_features) and the
intermediate languages (il_versions, SPIR-V) the device takes. The table is followed by a
line a device saying the same: "opencl:0:0: OpenCL C 1.0 1.1 1.2 3.0; features
__opencl_c_int64 ...; IL none". -o FILE writes the list to FILE instead of
stdout (replaced whole, or left as it was on error).

Exits with code 3 when no device is found at all.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return devicesRun(cmd, opts)
		},
	}
	opts.add(cmd.Flags(), "json")
	return cmd
}

func devicesRun(cmd *cobra.Command, opts *devicesOptions) error {
	if err := opts.check(cmd.Flags()); err != nil {
		return err
	}
	dis, err := platform.Discover(cmd.Context())
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	out := opts.writer(cmd, &buf)
	tel := sampleTelemetry(dis)
	if opts.json {
		v := struct {
			*platform.Discovery
			Telemetry map[string]telemetry.Sample `json:"telemetry,omitempty"`
		}{dis, tel}
		if err := writeJSON(out, v); err != nil {
			return err
		}
	} else {
		writeDevicesTable(out, cmd.ErrOrStderr(), dis, verbose(cmd) || engine.Tracing())
		for _, d := range dis.Devices {
			if s, ok := tel[d.ID]; ok {
				fmt.Fprintf(out, "telemetry %s: %s\n", d.ID, s)
			}
		}
	}
	if err := opts.flush(&buf); err != nil {
		return err
	}
	if len(dis.Devices) == 0 {
		return fmt.Errorf("no compute device found: %w", joinNoDevice(dis))
	}
	return nil
}

// sampleTelemetry reads NVML telemetry for every NVIDIA device with a PCI bus ID, keyed by
// device ID. Without NVML it returns nothing: telemetry is optional.
func sampleTelemetry(dis *platform.Discovery) map[string]telemetry.Sample {
	var r *telemetry.Reader
	out := map[string]telemetry.Sample{}
	for _, d := range dis.Devices {
		if d.PCIBusID == "" || !strings.Contains(strings.ToUpper(d.Vendor), "NVIDIA") {
			continue
		}
		if r == nil {
			var err error
			if r, err = telemetry.Open(); err != nil {
				return nil
			}
			defer r.Close()
		}
		if s, err := r.Sample(d.PCIBusID); err == nil {
			out[d.ID] = s
		}
	}
	return out
}

func joinNoDevice(dis *platform.Discovery) error {
	if err := dis.Unavailable(); err != nil {
		return fmt.Errorf("%w (%w)", platform.ErrNoDevice, err)
	}
	return platform.ErrNoDevice
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeDevicesTable writes the device table to out and, to errOut, a line per backend that
// found nothing: its whole error when why is set, else its name and where to learn why
// (on a machine without a GPU, the CUDA backend's error is 300 characters of library names).
func writeDevicesTable(out, errOut io.Writer, dis *platform.Discovery, why bool) {
	if len(dis.Devices) > 0 {
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tKIND\tCUs\tMHz\tMEMORY\tFP64\tDRIVER\tSAME CARD")
		for _, d := range dis.Devices {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", d.ID, d.Name, d.Kind, d.ComputeUnits, d.ClockMHz,
				bench.FormatBytes(d.GlobalMemBytes), yesNo(d.FP64), d.DriverVersion, strings.Join(d.SameCard, ","))
		}
		tw.Flush()
		for _, d := range dis.Devices {
			if line := languageLine(d.DeviceInfo); line != "" {
				fmt.Fprintf(out, "%s: %s\n", d.ID, line)
			}
		}
	}
	for _, b := range dis.Backends {
		switch {
		case b.Err != nil && why:
			fmt.Fprintln(errOut, backendError(b.Name, b.Err))
		case b.Err != nil:
			fmt.Fprintf(errOut, "%s: no device (--verbose says why)\n", b.Name)
		}
	}
}

// backendError is the line that says why a backend is unavailable: its error alone, which
// names the backend by its package's prefix ("cuda: cannot load ...", "cl: no OpenCL
// platform ..."), or, for an error without such a prefix, the error after the backend's
// name.
func backendError(name string, err error) string {
	msg := err.Error()
	if prefix, _, ok := strings.Cut(msg, ": "); ok && (prefix == name || isIdentifier(prefix)) {
		return msg
	}
	return name + ": " + msg
}

// isIdentifier reports whether s is a lowercase Go identifier, as package prefixes of
// errors are.
func isIdentifier(s string) bool {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// languageLine says what a device compiles: its OpenCL C versions, its OpenCL C 3.0
// features and the intermediate languages it takes; "" where it reports none of them.
func languageLine(in engine.DeviceInfo) string {
	if in.OpenCLCVersions == "" && in.OpenCLCFeatures == "" && in.ILVersions == "" {
		return ""
	}
	parts := []string{"OpenCL C " + cmp.Or(in.OpenCLCVersions, "(not reported)")}
	if in.OpenCLCFeatures != "" {
		parts = append(parts, "features "+in.OpenCLCFeatures)
	}
	parts = append(parts, "IL "+cmp.Or(in.ILVersions, "none"))
	return strings.Join(parts, "; ")
}
