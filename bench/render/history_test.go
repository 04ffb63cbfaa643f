package render

import (
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
)

func historyOf(series ...HistorySeries) History {
	return History{Title: "prism history triad", Runs: []string{"1 abc1234", "2 abc1234", "3 def5678"}, Series: series}
}

// TestHistoryChart draws two series over three runs, in SVG and PNG: the title, the runs'
// labels, the legend and the time unit are in the SVG, and the PNG is 1100 pixels wide.
func TestHistoryChart(t *testing.T) {
	us := time.Microsecond
	h := historyOf(
		HistorySeries{Name: "stream/triad/float32 on opencl:0:0 (portable, 1M)", Points: []HistoryPoint{
			{Run: 0, Median: 120 * us, Min: 110 * us, Max: 150 * us}, {Run: 1, Median: 118 * us, Min: 117 * us, Max: 125 * us},
			{Run: 2, Median: 240 * us, Min: 230 * us, Max: 260 * us}}},
		HistorySeries{Name: "stream/triad/float32 on opencl:1:0 (portable, 1M)", Points: []HistoryPoint{
			{Run: 1, Median: 300 * us, Min: 290 * us, Max: 310 * us}}},
	)
	dir := t.TempDir()
	svg := filepath.Join(dir, "h.svg")
	if err := SaveHistory(svg, h); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	text, shapes := svgTexts(t, data)
	for _, want := range []string{"prism history triad", "opencl:0:0 (portable, 1M)", "opencl:1:0", "abc1234", "def5678", "µs"} {
		if !strings.Contains(text, want) {
			t.Errorf("the chart's text lacks %q: %s", want, text)
		}
	}
	if shapes < 4 {
		t.Errorf("%d shapes drawn, want the lines, points and bars", shapes)
	}
	pngPath := filepath.Join(dir, "h.png")
	if err := SaveHistory(pngPath, h); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if w := img.Bounds().Dx(); w != 1100 {
		t.Errorf("PNG %d pixels wide, want 1100", w)
	}
}

// TestHistoryChartRefuses checks the errors: nothing to draw, a point outside the runs, an
// unknown format; the file is not written.
func TestHistoryChartRefuses(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		path string
		h    History
	}{
		"empty":    {"e.svg", historyOf(HistorySeries{Name: "none"})},
		"off runs": {"o.svg", historyOf(HistorySeries{Name: "x", Points: []HistoryPoint{{Run: 3, Median: 1, Min: 1, Max: 1}}})},
		"bad ext":  {"h.gif", historyOf(HistorySeries{Name: "x", Points: []HistoryPoint{{Run: 0, Median: 1, Min: 1, Max: 1}}})},
	} {
		p := filepath.Join(dir, c.path)
		err := SaveHistory(p, c.h)
		if !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%s: %v, want an error wrapping ErrInvalidArg", name, err)
		}
		if _, serr := os.Stat(p); serr == nil {
			t.Errorf("%s: %s written", name, p)
		}
	}
}
