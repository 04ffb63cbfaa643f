package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/internal/term"
)

// CSVHeader is the first row of CSV: one column per field of a result, with its device.
var CSVHeader = []string{"device", "backend", "device_name", "case", "variant", "family", "type", "size", "shape",
	"runs", "median_ns", "min_ns", "max_ns", "gbs", "gflops", "bound", "attainable_gflops", "fraction",
	"status", "error", "library", "vendor_library", "vendor_median_ns", "vs_vendor", "no_vendor",
	"working_set_bytes", "cache_resident", "link", "timing", "figures", "verdict", "verdict_text", "kind"}

// CSV writes one row per result and device (RFC 4180, header first), then one per
// split, per device alone of each split and per collective, told apart by the last
// column, kind (KindCase, KindSplit, KindAlone, KindCollective). A result's verdict
// (bench.Result.Verdict) is in verdict (its kind) and verdict_text (its line), empty where
// it has none. status is ok, skipped,
// failed or invalid (verified, but no valid device time), error says why. A split's row
// has its speedups and shares in figures ("speedup=1.8;share_opencl:0:1=0.48"), an alone
// row the one-device op's time (resident_ns), a collective's row its library, ranks and
// bytes, algbw in gbs and busbw in figures. A text cell that a spreadsheet would run as a
// formula (one beginning with =, +, -, @, a tab or a carriage return, and not a number)
// is written with a single quote before it.
func CSV(w io.Writer, rep *bench.Report) error {
	r := view{rep}
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
			err := cw.Write(csvCells(append(row, vlib, vmed, vs, res.NoVendor, f(res.WorkingSetBytes), strconv.FormatBool(res.CacheResident),
				strconv.FormatBool(res.Link), res.Timing, csvFigures(res.Figures), res.Verdict.Kind, res.Verdict.Text, bench.KindCase)))
			if err != nil {
				return err
			}
		}
	}
	for _, g := range r.GroupRows() {
		s, res := g.Result.Stats, g.Result
		status, msg := "ok", ""
		if res.Err != "" {
			status, msg = "failed", res.Err
		}
		row := []string{g.Device, "", "", res.Case, res.Variant, res.Family, res.Type, strconv.Itoa(res.Size), res.Shape,
			strconv.Itoa(s.Runs), strconv.FormatInt(int64(s.Median), 10), strconv.FormatInt(int64(s.Min), 10), strconv.FormatInt(int64(s.Max), 10),
			f(res.GBs), f(res.GFLOPs), "", "", "", status, msg, res.Library, "", "", "", "", "", "", "", bench.TimingHost, csvFigures(res.Figures), "", "", g.Kind}
		if err := cw.Write(csvCells(row)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvCells makes each cell of a CSV row safe, in place: escaped as every text output is
// (term.Safe), and neutralised where a spreadsheet would run it as a formula (csvCell).
func csvCells(row []string) []string {
	for i, c := range row {
		row[i] = csvCell(term.Safe(c))
	}
	return row
}

// csvNumber matches a decimal number as the CSV writes its figures: "-3.5", "1e+06".
var csvNumber = regexp.MustCompile(`^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$`)

// csvCell returns cell with a single quote before it where a spreadsheet would read it as
// a formula (OWASP's rule against CSV injection): a cell that begins with =, +, -, @, a
// tab or a carriage return, as a device name "=HYPERLINK(...)" from a report of another
// machine would. A number ("-3.5", "+1e-05") is left as it is, a number, which no
// spreadsheet runs.
func csvCell(cell string) string {
	if cell == "" || !strings.ContainsRune("=+-@\t\r", rune(cell[0])) || csvNumber.MatchString(cell) {
		return cell
	}
	return "'" + cell
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

// BenchstatPkg is the pkg: line of Benchstat.
const BenchstatPkg = "github.com/prism-compute/prism/bench"

// Benchstat writes the results in the Go benchmark format that benchstat
// (golang.org/x/perf/cmd/benchstat) reads: configuration lines (goos, goarch, pkg, then per
// device its device, backend and driver), one line per timed run, so that benchstat sees the
// spread, named Benchmark<Op>/size=<n>/device=<id>[/variant=<name>]-<GOMAXPROCS> (the
// variant key for every variant but the portable one), with ns/op, GB/s and
// GFLOP/s (left out for ops that do no FLOPs); and Unit lines that say higher rates are better.
//
// Compare two runs with `benchstat old.txt new.txt`; compare devices of one run with
// `benchstat -col /device -ignore device,backend,driver run.txt`.
func Benchstat(w io.Writer, rep *bench.Report) error {
	r := view{rep}
	bw := &errWriter{w: w}
	bw.printf("goos: %s\ngoarch: %s\npkg: %s\n", configValue(r.GOOS), configValue(r.GOARCH), BenchstatPkg)
	if r.Commit != "" {
		bw.printf("commit: %s\n", configValue(r.Commit))
	}
	bw.printf("Unit GB/s better=higher\nUnit GFLOP/s better=higher\n")
	if len(r.Collectives) > 0 {
		bw.printf("Unit busbw-GB/s better=higher\n")
	}
	procs := runtime.GOMAXPROCS(0)
	for _, d := range r.Devices {
		bw.printf("device: %s\nbackend: %s\ndriver: %s\n", configValue(d.Device.Name), configValue(d.Backend), configValue(d.Device.DriverVersion))
		var all []bench.Result // the results, each followed by its vendor baseline (--vendor)
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
			if res.Dims != "" { // two shapes of one size are two benchmarks
				name += "/shape=" + nameValue(res.Dims)
			}
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
					bw.printf("\t%s GB/s", benchValue(res.Bytes/sec/1e9))
				}
				if res.Flops > 0 { // no column of zeros, which spoils benchstat's geomean
					bw.printf("\t%s GFLOP/s", benchValue(res.Flops/sec/1e9))
				}
				bw.printf("\n")
			}
		}
	}
	r.writeGroupBenchstat(bw, procs)
	return bw.err
}

// writeGroupBenchstat writes the splits, their devices alone and the collectives, one
// line per timed run: Benchmark<Op>/size=<n>/device=<IDs joined by +>/mode=split, the
// same with mode=alone and each device, Benchmark<Collective>/size=<count>/ranks=<n>;
// ns/op, and GB/s where the rate is known (a collective's algbw, with its busbw as
// busbw-GB/s). Their config lines name the devices "group" and the backend "host clock".
func (r view) writeGroupBenchstat(bw *errWriter, procs int) {
	rows := r.GroupRows()
	if len(rows) == 0 {
		return
	}
	bw.printf("device: group\nbackend: host clock\ndriver: unknown\n")
	for _, g := range rows {
		res := g.Result
		if !res.OK() || res.Stats.Median <= 0 {
			continue
		}
		name := fmt.Sprintf("Benchmark%s/size=%d", BenchName(res.Case), res.Size)
		switch g.Kind {
		case bench.KindCollective:
			name += fmt.Sprintf("/ranks=%d", int(res.Figures["ranks"]))
		default:
			name += "/device=" + nameValue(g.Device) + "/mode=" + g.Kind
		}
		name += fmt.Sprintf("-%d", procs)
		samples := res.Stats.Samples
		if len(samples) == 0 {
			samples = append(samples, res.Stats.Median)
		}
		med := res.Stats.Median.Seconds()
		for _, s := range samples {
			sec := s.Seconds()
			if sec <= 0 {
				continue
			}
			bw.printf("%s\t1\t%d ns/op", name, s.Nanoseconds())
			// The rates scale with the median's: each run's is the work over its own time.
			if res.GBs > 0 {
				bw.printf("\t%s GB/s", benchValue(res.GBs*med/sec))
			}
			if res.GFLOPs > 0 {
				bw.printf("\t%s GFLOP/s", benchValue(res.GFLOPs*med/sec))
			}
			if bus := res.Figures["busbw_gbs"]; g.Kind == bench.KindCollective && bus > 0 {
				bw.printf("\t%s busbw-GB/s", benchValue(bus*med/sec))
			}
			bw.printf("\n")
		}
	}
}

// benchValue writes a rate for benchstat with at least 4 significant digits (3 decimals
// would make 0.0031 and 0.0044 GB/s into 0.003 and 0.004), without an exponent.
func benchValue(v float64) string {
	if !finite(v) || v == 0 {
		return "0"
	}
	decimals := 3 - int(math.Floor(math.Log10(math.Abs(v))))
	decimals = min(max(decimals, 3), 20)
	return strconv.FormatFloat(v, 'f', decimals, 64)
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
func nameValue(s string) string { return nameUnsafe.ReplaceAllString(term.Safe(s), "_") }

// configValue makes s a one-line config value.
func configValue(s string) string {
	if s = strings.Join(strings.Fields(term.Safe(s)), " "); s == "" {
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
