package render

import (
	"io"
	"strings"

	"github.com/prism-compute/prism/bench"
)

// Markdown writes the same content as Table as Markdown, every column: the
// metadata as a list, the legends as lists, the side-by-side results (the verdicts in a
// column of each device), the splits and the collectives as tables.
func Markdown(w io.Writer, rep *bench.Report, baseline string) error {
	r := view{rep}
	g, err := r.resultGrid(baseline, true)
	if err != nil {
		return err
	}
	ew := &errWriter{w: w}
	ew.printf("**%s**\n\n", mdEscape(r.titleLine()))
	for _, lines := range r.deviceLines() {
		ew.printf("- %s\n", mdEscape(lines[0]))
		for _, l := range lines[1:] {
			ew.printf("  - %s\n", mdEscape(l))
		}
	}
	mdGrid := func(g *resultGrid, numFrom int) {
		ew.printf("\n")
		for _, l := range g.legend {
			ew.printf("- %s\n", mdEscape(l))
		}
		ew.printf("\n|")
		for _, c := range g.cols {
			ew.printf(" %s |", mdEscape(c.head))
		}
		ew.printf("\n|")
		for i := range g.cols {
			if i < numFrom {
				ew.printf("---|")
			} else {
				ew.printf("---:|")
			}
		}
		ew.printf("\n")
		for _, row := range g.rows {
			ew.printf("|")
			for _, c := range row {
				ew.printf(" %s |", mdEscape(c))
			}
			ew.printf("\n")
		}
	}
	if len(g.rows) > 0 {
		mdGrid(g, 2)
		if lines := r.figureLines(); len(lines) > 0 {
			ew.printf("\n*figures* (the ops' own, beside their time):\n\n")
			for _, l := range lines {
				ew.printf("- %s\n", mdEscape(l))
			}
		}
		if vg := r.vendorSummaryGrid(); vg != nil { // sweep.go
			ew.printf("\n*%s*\n", mdEscape(vendorSummaryTitle))
			mdGrid(vg, 4)
		}
	}
	if len(r.Splits) > 0 {
		mdGrid(r.splitGrid(), 5) // numbers from time on
		// the splits' summary (sweep.go)
		if sg := r.splitSummaryGrid(); sg != nil {
			ew.printf("\n*%s*\n", mdEscape(splitSummaryTitle))
			mdGrid(sg, 2)
		}
	}
	if len(r.Collectives) > 0 {
		mdGrid(r.collectiveGrid(), 1)
	}
	if f := r.failures(); len(f) > 0 {
		ew.printf("\n")
		for _, l := range f {
			ew.printf("- %s\n", mdEscape(l))
		}
	}
	return ew.err
}

// mdEscaper escapes what Markdown would read as markup in a table cell or list item: the
// cell separator, emphasis, code spans and inline HTML.
var mdEscaper = strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", `\<`, "\n", " ")

func mdEscape(s string) string { return mdEscaper.Replace(s) }
