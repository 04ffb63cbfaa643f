package bench

import (
	"fmt"
	"strings"
)

// Kinds of the rows of a report (GroupRow.Kind, Change.Kind, the "kind" column of its CSV).
const (
	KindCase       = "case"       // a case on one device
	KindSplit      = "split"      // an op split across devices ("device": their IDs joined by "+")
	KindAlone      = "alone"      // a split's op on one device alone, timed as the split
	KindCollective = "collective" // a collective ("device": this process's devices joined by "+")
)

// GroupRow is a split, a device alone of a split or a collective as a Result, for the
// formats that list results (CSV, benchstat) and for Compare.
type GroupRow struct {
	Kind   string // KindSplit, KindAlone or KindCollective
	Device string // the device's ID, or the devices' joined by "+"
	Result *Result
}

// GroupRows returns the report's splits (each followed by its devices alone) and
// collectives as results: the split's or collective's stats, rates and error, its shares,
// speedups, bandwidths in Figures; the variant says what ran ("split", "alone", the
// collective's library).
func (r *Report) GroupRows() []GroupRow {
	var out []GroupRow
	caseOf := func(name string, size int) Result {
		res := Result{Case: name, Size: size}
		if parts := strings.Split(name, "/"); len(parts) == 3 {
			res.Family, res.Type = parts[0], parts[2]
		}
		return res
	}
	for _, s := range r.Splits {
		res := caseOf(s.Case, s.Size)
		res.Variant, res.Shape, res.Stats, res.GBs, res.GFLOPs, res.Verified, res.Err = KindSplit, s.Shape, s.Stats, s.GBs, s.GFLOPs, s.Verified, s.Err
		res.Figures = map[string]float64{}
		if s.Speedup > 0 {
			res.Figures["speedup"] = s.Speedup
		}
		if s.SpeedupResident > 0 {
			res.Figures["speedup_resident"] = s.SpeedupResident
		}
		for _, sh := range s.Shares {
			res.Figures["share_"+sh.Device] = sh.Fraction
		}
		out = append(out, GroupRow{KindSplit, s.devicesText(), &res})
		for _, sd := range s.Single {
			a := caseOf(s.Case, s.Size)
			a.Variant, a.Shape, a.Stats, a.Verified, a.Err = KindAlone, s.Shape, sd.Stats, sd.Err == "", sd.Err
			if sd.Err == "" && sd.Stats.Median > 0 && s.Stats.Median > 0 {
				// the same work as the split's, in its time
				t := float64(s.Stats.Median) / float64(sd.Stats.Median)
				a.GBs, a.GFLOPs = s.GBs*t, s.GFLOPs*t
			}
			if sd.Resident.Median > 0 {
				a.Figures = map[string]float64{"resident_ns": float64(sd.Resident.Median)}
			}
			out = append(out, GroupRow{KindAlone, sd.Device, &a})
		}
	}
	for _, c := range r.Collectives {
		res := caseOf(c.Case, c.Count)
		res.Variant, res.Library, res.Stats, res.Bytes, res.GBs, res.Verified, res.Err = KindCollective, c.Library, c.Stats, float64(c.Bytes), c.AlgBW, c.Verified, c.Err
		res.Shape = fmt.Sprintf("count=%d ranks=%d", c.Count, c.Ranks)
		res.Figures = map[string]float64{"busbw_gbs": c.BusBW, "ranks": float64(c.Ranks)}
		out = append(out, GroupRow{KindCollective, strings.Join(c.Devices, "+"), &res})
	}
	return out
}
