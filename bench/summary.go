package bench

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Summary counts the cases of a report by outcome: the line a run ends with.
type Summary struct {
	Cases    int // every case of every device
	Verified int // verified and validly timed
	// Skipped counts the cases a device cannot run, by reason ("no fp64": 10).
	Skipped map[string]int
	// Failed counts the cases that failed to run, differed from their reference
	// (Mismatched, counted in Failed too) or have no valid time, and the devices that
	// failed before their cases.
	Failed, Mismatched int
}

// Summary counts rep's cases by outcome.
func (r *Report) Summary() Summary {
	s := Summary{Skipped: map[string]int{}}
	for _, d := range r.Devices {
		if d.Err != "" {
			s.Failed++
		}
		for _, res := range d.Results {
			s.Cases++
			switch {
			case res.OK():
				s.Verified++
			case res.Skipped != "":
				s.Skipped[SkipReason(res.Skipped, d.Device.ID)]++
			default:
				s.Failed++
				if res.Mismatch {
					s.Mismatched++
				}
			}
		}
	}
	return s
}

// String writes the summary as one line: "231 cases: 221 verified, 10 skipped (no fp64:
// 10), 0 failed".
func (s Summary) String() string {
	skipped := 0
	var reasons []string
	for why, n := range s.Skipped {
		skipped += n
		reasons = append(reasons, fmt.Sprintf("%s: %d", why, n))
	}
	slices.Sort(reasons)
	cases := "cases"
	if s.Cases == 1 {
		cases = "case"
	}
	line := fmt.Sprintf("%d %s: %d verified, %d skipped", s.Cases, cases, s.Verified, skipped)
	if len(reasons) > 0 {
		line += " (" + strings.Join(reasons, ", ") + ")"
	}
	line += fmt.Sprintf(", %d failed", s.Failed)
	if s.Mismatched > 0 {
		line += fmt.Sprintf(" (%d differ from the reference)", s.Mismatched)
	}
	return line
}

// needs matches the capability a skip message names: "has no fp64", "portable needs fp64".
var needs = regexp.MustCompile(`(?:has no|needs|without) ([A-Za-z0-9_.+-]+)`)

// SkipReason shortens the reason a case was skipped to what the device lacks, so that
// skips can be counted by cause: "kernels: opencl:1:0 has no fp64: unsupported" and "no
// variant of fused/axpy-exp/float64 runs on opencl:1:0 (portable needs fp64)" are both
// "no fp64". A message naming no capability is kept whole, less its package prefix, the
// device's ID and the sentinel at its end.
func SkipReason(msg, deviceID string) string {
	if strings.HasPrefix(msg, quickLeftOut) {
		return quickLeftOut
	}
	if m := needs.FindStringSubmatch(msg); m != nil {
		return "no " + strings.TrimRight(m[1], ".,;:)")
	}
	msg = strings.TrimPrefix(msg, "kernels: ")
	for _, sentinel := range []string{": unsupported", ": not found"} {
		msg = strings.TrimSuffix(msg, sentinel)
	}
	if deviceID != "" {
		msg = strings.ReplaceAll(msg, deviceID, "the device")
	}
	return msg
}
