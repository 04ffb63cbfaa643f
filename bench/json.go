package bench

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the report as indented JSON, in the layout of docs/bench.schema.json,
// with its VendorSummaries as "vendor_summary" and its SplitSummaries as "split_summary"
// (computed from the report as written, and ignored when one is read back: a merged report
// gets its own). JSON has no infinity or
// NaN: a figure that is not finite is written as 0, the result or ceiling that held it
// marked invalid (Result.Invalid, Ceilings.Invalid), so that the report is always
// written; r itself is not changed.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		*Report
		VendorSummary []VendorSummary `json:"vendor_summary,omitempty"`
		SplitSummary  []SplitSummary  `json:"split_summary,omitempty"`
	}{r.finiteReport(), r.VendorSummaries(), r.SplitSummaries()})
}
