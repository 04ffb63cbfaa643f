package main

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/prism-compute/prism/bench"
)

// splitRow is the newest verified split of one case, size and placement of the data over
// one set of devices.
type splitRow struct {
	s   bench.SplitResult
	src *source
}

// splitTable holds the current splits over one set of devices, named by their names.
type splitTable struct {
	name    string     // the devices' names joined by " + ", in the split's order
	rows    []splitRow // by case, size, placement
	sources []*source  // the reports its rows come from, newest first
}

// splitDevices names the devices of split s of rep: their names in the split's order
// (each ID's name among the report's devices, the ID where none matches), or the report's
// devices where the split did not record its own (reports from before it did).
func splitDevices(rep *bench.Report, s bench.SplitResult) string {
	ids := s.Devices
	if len(ids) == 0 {
		for i := range rep.Devices {
			ids = append(ids, rep.Devices[i].Device.ID)
		}
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = id
		for j := range rep.Devices {
			if rep.Devices[j].Device.ID == id && rep.Devices[j].Device.Name != "" {
				names[i] = rep.Devices[j].Device.Name
				break
			}
		}
	}
	return strings.Join(names, " + ")
}

// givenShares reports whether split s ran with shares given (--fractions), an experiment
// rather than the planner's choice.
func givenShares(s bench.SplitResult) bool {
	return strings.Contains(s.Plan, "shares given")
}

// currentSplits picks, for every set of devices of the sources' splits, the newest
// verified split of each case, size and placement that the planner planned (splits with
// given shares are left out), by the date of its report.
func currentSplits(sources []*source) []*splitTable {
	type rkey struct {
		cas, place string
		size       int
	}
	tables := map[string]*splitTable{}
	rows := map[string]map[rkey]splitRow{}
	for _, src := range sources {
		for _, s := range src.rep.Splits {
			if !s.Verified || s.Err != "" || s.Speedup <= 0 || givenShares(s) {
				continue
			}
			name := splitDevices(src.rep, s)
			if tables[name] == nil {
				tables[name], rows[name] = &splitTable{name: name}, map[rkey]splitRow{}
			}
			k := rkey{s.Case, s.Where(), s.Size}
			if old, ok := rows[name][k]; ok && !newerSource(src, old.src) {
				continue
			}
			rows[name][k] = splitRow{s: s, src: src}
		}
	}
	var out []*splitTable
	for name, t := range tables {
		for _, r := range rows[name] {
			t.rows = append(t.rows, r)
			if !slices.Contains(t.sources, r.src) {
				t.sources = append(t.sources, r.src)
			}
		}
		slices.SortFunc(t.rows, func(a, b splitRow) int {
			return cmp.Or(strings.Compare(a.s.Case, b.s.Case), cmp.Compare(a.s.Size, b.s.Size), strings.Compare(a.s.Where(), b.s.Where()))
		})
		slices.SortFunc(t.sources, func(a, b *source) int {
			if newerSource(a, b) {
				return -1
			}
			return 1
		})
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *splitTable) int { return strings.Compare(a.name, b.name) })
	return out
}

// renderSplits writes the tables of splits: per set of devices its reports, then a row
// per case, size and placement with the plan, the split's time, its speedup over the
// fastest device alone and that speedup's 95% interval.
func renderSplits(b *strings.Builder, tables []*splitTable, linkDir string) {
	for _, t := range tables {
		b.WriteString("\n### Splits over " + cell(t.name) + "\n\n")
		b.WriteString("Reports, newest first:\n\n")
		writeSources(b, t.sources, linkDir, nil)
		b.WriteString("\n| case | size | data | plan | time | speedup | 95% interval | report |\n")
		b.WriteString("|---|---|---|---|--:|--:|--:|--:|\n")
		for _, r := range t.rows {
			interval := "-"
			if lo, hi, ok := r.s.SpeedupInterval(0); ok {
				interval = fmt.Sprintf("%.2f-%.2f", lo, hi)
			}
			plan, _, _ := strings.Cut(r.s.Plan, " (")
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %.2fx | %s | %d |\n", cell(r.s.Case), formatSize(r.s.Size), r.s.Where(),
				cell(orDash(plan)), formatTime(r.s.Stats.Median), r.s.Speedup, interval, slices.Index(t.sources, r.src)+1)
		}
	}
}

// writeSources writes the numbered list of reports, each with its date, commit, command
// and link, and what beside (when not nil) adds to its line.
func writeSources(b *strings.Builder, sources []*source, linkDir string, beside func(*source) string) {
	for i, s := range sources {
		fmt.Fprintf(b, "%d. %s, %s: %s; [%s](%s)", i+1, s.rep.Date.UTC().Format("2006-01-02 15:04 UTC"),
			commit(s.rep.Commit), command(s.rep.Command), s.file, path.Join(linkDir, s.file))
		if beside != nil {
			b.WriteString(beside(s))
		}
		b.WriteString("\n")
	}
}
