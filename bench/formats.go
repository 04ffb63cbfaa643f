package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// WriteJSON writes the report as indented JSON, in the layout of docs/bench.schema.json.
// JSON has no infinity or NaN: a figure that is not finite is written as 0, the result or
// ceiling that held it marked invalid (Result.Invalid, Ceilings.Invalid), so that the
// report is always written; r itself is not changed.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.finiteReport())
}

// CSVHeader is the first row of WriteCSV: one column per field of a result, with its device.
var CSVHeader = []string{"device", "backend", "device_name", "case", "variant", "family", "type", "size", "shape",
	"runs", "median_ns", "min_ns", "max_ns", "gbs", "gflops", "bound", "attainable_gflops", "fraction",
	"status", "error", "library", "vendor_library", "vendor_median_ns", "vs_vendor", "no_vendor",
	"working_set_bytes", "cache_resident", "link", "timing", "figures"}

// WriteCSV writes one row per result and device (RFC 4180, header first). status is ok,
// skipped, failed or invalid (verified, but no valid device time), error says why.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, d := range r.Devices {
		for _, res := range d.Results {
			status, msg := "ok", ""
			switch {
			case res.Skipped != "":
				status, msg = "skipped", res.Skipped
			case res.Err != "":
				status, msg = "failed", res.Err
			case res.Invalid != "":
				status, msg = "invalid", res.Invalid
			}
			s := res.Stats
			row := []string{d.Device.ID, d.Backend, d.Device.Name, res.Case, res.Variant, res.Family, res.Type,
				strconv.Itoa(res.Size), res.Shape, strconv.Itoa(s.Runs), strconv.FormatInt(int64(s.Median), 10),
				strconv.FormatInt(int64(s.Min), 10), strconv.FormatInt(int64(s.Max), 10), f(res.GBs), f(res.GFLOPs),
				res.Bound, f(res.AttainableGFLOPs), f(res.Fraction), status, msg, res.Library}
			vlib, vmed, vs := "", "", ""
			if v := res.Vendor; v != nil {
				vlib = v.Library
				if v.OK() {
					vmed = strconv.FormatInt(int64(v.Stats.Median), 10)
					if res.OK() && res.Stats.Median > 0 {
						vs = f(float64(v.Stats.Median) / float64(res.Stats.Median))
					}
				}
			}
			err := cw.Write(termSafeAll(append(row, vlib, vmed, vs, res.NoVendor, f(res.WorkingSetBytes), strconv.FormatBool(res.CacheResident),
				strconv.FormatBool(res.Link), res.Timing, csvFigures(res.Figures))))
			if err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvFigures writes an op's figures as name=value pairs in name order, separated by
// semicolons ("hidden_fraction=0.903;serial_ns=5.948e+07"); empty without figures.
func csvFigures(fig map[string]float64) string {
	names := slices.Sorted(maps.Keys(fig))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.FormatFloat(fig[n], 'g', 6, 64)
	}
	return strings.Join(parts, ";")
}

// BenchstatPkg is the pkg: line of WriteBenchstat.
const BenchstatPkg = "github.com/prism-compute/prism/bench"

// WriteBenchstat writes the results in the Go benchmark format that benchstat
// (golang.org/x/perf/cmd/benchstat) reads: configuration lines (goos, goarch, pkg, then per
// device its device, backend and driver), one line per timed run, so that benchstat sees the
// spread, named Benchmark<Op>/size=<n>/device=<id>[/variant=<name>]-<GOMAXPROCS> (the
// variant key for every variant but the portable one), with ns/op, GB/s and
// GFLOP/s (left out for ops that do no FLOPs); and Unit lines that say higher rates are better.
//
// Compare two runs with `benchstat old.txt new.txt`; compare devices of one run with
// `benchstat -col /device -ignore device,backend,driver run.txt`.
func (r *Report) WriteBenchstat(w io.Writer) error {
	bw := &errWriter{w: w}
	bw.printf("goos: %s\ngoarch: %s\npkg: %s\n", configValue(r.GOOS), configValue(r.GOARCH), BenchstatPkg)
	if r.Commit != "" {
		bw.printf("commit: %s\n", configValue(r.Commit))
	}
	bw.printf("Unit GB/s better=higher\nUnit GFLOP/s better=higher\n")
	procs := runtime.GOMAXPROCS(0)
	for _, d := range r.Devices {
		bw.printf("device: %s\nbackend: %s\ndriver: %s\n", configValue(d.Device.Name), configValue(d.Backend), configValue(d.Device.DriverVersion))
		var all []Result // the results, each followed by its vendor baseline (--vendor)
		for _, res := range d.Results {
			all = append(all, res)
			if res.Vendor != nil {
				all = append(all, *res.Vendor)
			}
		}
		for _, res := range all {
			if !res.OK() {
				continue
			}
			name := fmt.Sprintf("Benchmark%s/size=%d/device=%s", BenchName(res.Case), res.Size, nameValue(d.Device.ID))
			if res.Variant != "" && res.Variant != "portable" { // portable keeps the names of reports before variants
				name += "/variant=" + nameValue(res.Variant)
			}
			name += fmt.Sprintf("-%d", procs)
			samples := res.Stats.Samples
			if len(samples) == 0 { // a report without samples: its median only
				samples = append(samples, res.Stats.Median)
			}
			for _, s := range samples {
				sec := s.Seconds()
				if sec <= 0 {
					continue
				}
				bw.printf("%s\t1\t%d ns/op", name, s.Nanoseconds())
				if !res.Latency() { // a latency moves no bytes: no column of zeros
					bw.printf("\t%s GB/s", strconv.FormatFloat(res.Bytes/sec/1e9, 'f', 3, 64))
				}
				if res.Flops > 0 { // no column of zeros, which spoils benchstat's geomean
					bw.printf("\t%s GFLOP/s", strconv.FormatFloat(res.Flops/sec/1e9, 'f', 3, 64))
				}
				bw.printf("\n")
			}
		}
	}
	return bw.err
}

// BenchName turns an op name into a benchmark name: "stream/triad/float32" becomes
// "Stream_triad_float32" (benchstat splits names at slashes into key=value parts).
func BenchName(op string) string {
	s := nameValue(strings.ReplaceAll(op, "/", "_"))
	if s == "" {
		return s
	}
	rs := []rune(s)
	rs[0] = unicode.ToUpper(rs[0])
	return string(rs)
}

var nameUnsafe = regexp.MustCompile(`[\s/=]+`)

// nameValue makes s safe inside a benchmark name part (no spaces, slashes or '=').
func nameValue(s string) string { return nameUnsafe.ReplaceAllString(termSafe(s), "_") }

// configValue makes s a one-line config value.
func configValue(s string) string {
	if s = strings.Join(strings.Fields(termSafe(s)), " "); s == "" {
		return "unknown"
	}
	return s
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
