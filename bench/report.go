package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes one table per device: every case with its time, bandwidth, FLOP rate,
// fraction of the device-copy ceiling and verification.
func (r *Report) WriteTable(w io.Writer) error {
	commit := r.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	fmt.Fprintf(w, "prism %s %s  %s  host %s  n=%d  median of %d runs, device-event timing\n",
		r.Prism, commit, r.Date.Format(time.RFC3339), r.Host, r.Size, r.Count)
	for _, d := range r.Devices {
		fmt.Fprintf(w, "\n%s  %s  (%s, %d CUs, %d MHz, driver %s)\n", d.Device.ID, d.Device.Name, d.Device.Kind, d.Device.ComputeUnits, d.Device.ClockMHz, d.Device.DriverVersion)
		if d.Err != "" {
			fmt.Fprintf(w, "  error: %s\n", d.Err)
			continue
		}
		fmt.Fprintf(w, "  device-copy ceiling: %.1f GB/s (%s)\n", d.CopyGBs, d.CopyHow)
		o := d.Overheads
		fmt.Fprintf(w, "  stream build: first %s, second %s; empty-kernel launch: %s async, %s with a round trip\n",
			fmtDur(o.FirstBuild), fmtDur(o.SecondBuild), fmtDur(o.LaunchAsync), fmtDur(o.LaunchSync))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  case\tmedian\tmin\tmax\tGB/s\tGFLOP/s\tof copy\tcheck\t")
		for _, res := range d.Results {
			switch {
			case res.Skipped != "":
				fmt.Fprintf(tw, "  %s\t-\t-\t-\t-\t-\t-\tskipped\t\n", res.Case)
			case res.Err != "":
				fmt.Fprintf(tw, "  %s\t-\t-\t-\t-\t-\t-\tFAILED\t\n", res.Case)
			default:
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%.1f\t%.1f\t%.0f%%\tok\t\n", res.Case,
					fmtDur(res.Stats.Median), fmtDur(res.Stats.Min), fmtDur(res.Stats.Max),
					res.GBs, res.GFLOPs, 100*res.Fraction)
			}
		}
		tw.Flush()
		for _, res := range d.Results {
			if res.Err != "" {
				fmt.Fprintf(w, "  FAILED %s: %s\n", res.Case, res.Err)
			}
		}
	}
	return nil
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	}
}
