package render

import (
	"time"

	"github.com/prism-compute/prism/bench"
)

// minimalReport is the smallest report the readers accept: schema 1, one device.
const minimalReport = `{"schema": 1, "devices": [{"device": {"id": "opencl:0:0"}, "results": []}]}`

func near(a, b float64) bool { return a == b || (a-b)/(a+b) < 1e-9 && (b-a)/(a+b) < 1e-9 }

// result returns an OK result of case c with the given median, min and max in µs.
func result(c string, med, lo, hi int) bench.Result {
	us := time.Microsecond
	return bench.Result{Case: c, Size: 1024, Verified: true, Stats: bench.Stats{Runs: 3, Median: time.Duration(med) * us, Min: time.Duration(lo) * us, Max: time.Duration(hi) * us}}
}

// report returns a report of one device, opencl:0:0, with the given results.
func report(results ...bench.Result) *bench.Report {
	d := bench.DeviceReport{Results: results}
	d.Device.ID = "opencl:0:0"
	return &bench.Report{Schema: bench.SchemaVersion, Devices: []bench.DeviceReport{d}}
}
