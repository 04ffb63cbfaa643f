package render

import (
	"bytes"
	"context"
	"encoding/xml"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
)

// savedRun is the H100 run of docs/results: three devices, the whole suite at 4M.
const savedRun = "../../docs/results/2026-11-21-h100-suite-bench.json"

func savedReport(t *testing.T) *bench.Report {
	t.Helper()
	rep, err := bench.ReadReportFile(savedRun)
	if err != nil {
		t.Skip(err)
	}
	return rep
}

// TestHTML renders the page of a saved run and checks its structure: the title, the
// tables, one SVG per chart, each well-formed, and nothing loaded from anywhere.
func TestHTML(t *testing.T) {
	rep := savedReport(t)
	var buf bytes.Buffer
	if err := HTML(&buf, rep, ""); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, `<html lang="en">`) || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
		t.Error("not an HTML document")
	}
	title := regexp.MustCompile(`<title>([^<]+)</title>`).FindStringSubmatch(page)
	if title == nil || !strings.Contains(title[1], "prism bench vm, 2026-11-21") {
		t.Errorf("title %q", title)
	}
	// The run's metadata, the devices with their ceilings, the results.
	for _, want := range []string{
		`<th>commit</th><td><code>de572035ab1cc4729dd60f9d5d38b55bb9a24e8f</code>`,
		`<th>command</th><td><code>prism bench --all-devices=true --count=5`,
		"<th>host</th><td>vm (linux/amd64",
		"<td><code>cuda:0</code></td><td class=\"wrap\">NVIDIA H100 80GB HBM3</td>",
		`<td class="num">2821</td><td class="num">66193</td><td class="num">33545</td>`,
		"overheads: stream build",
		`<tr class="family"><td colspan="17">gemm</td></tr>`,
		"<td>gemm/nn/float32</td><td>-</td><td>4M</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<table"); n != 3 {
		t.Errorf("%d tables, want run, devices, results", n)
	}
	// The results table has the columns of the Markdown report, and a row per case.
	header, rows, _ := view{rep}.grid("")
	var th []string
	for _, m := range regexp.MustCompile(`<th(?: class="num")?>([^<]*)</th>`).FindAllStringSubmatch(page[strings.Index(page, `class="grid results"`):], -1) {
		th = append(th, m[1])
	}
	if strings.Join(th, "|") != strings.Join(header, "|") {
		t.Errorf("results columns %q, want %q", th, header)
	}
	if n := strings.Count(page, "<tr><td>"); n != len(rows)+len(rep.Devices) {
		t.Errorf("%d plain rows, want %d cases and %d devices", n, len(rows), len(rep.Devices))
	}
	// One SVG per chart: the bars and a roofline per device; each parses.
	svgs := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(page, -1)
	if len(svgs) != 1+len(rep.Devices) || strings.Count(page, "<svg") != len(svgs) {
		t.Fatalf("%d SVGs, want %d", len(svgs), 1+len(rep.Devices))
	}
	for i, s := range svgs {
		dec := xml.NewDecoder(strings.NewReader(s))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("SVG %d does not parse: %v", i, err)
			}
		}
	}
	// Self-contained: no scripts, no style sheets, no image or link to another place.
	for _, re := range []string{`(?i)\b(src|href)\s*=\s*["']?[^"'>\s]*http`, `(?i)<script`, `(?i)<link`, `(?i)@import`, `(?i)url\(\s*["']?http`} {
		if m := regexp.MustCompile(re).FindString(page); m != "" {
			t.Errorf("page loads from elsewhere: %q", m)
		}
	}
	for _, m := range regexp.MustCompile(`(?i)\b(?:src|href)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "#") {
			t.Errorf("link to %q", m[1])
		}
	}
	// A baseline that is not in the report is an error, as for the table.
	if err := HTML(io.Discard, rep, "opencl:9:9"); err == nil {
		t.Error("unknown baseline accepted")
	}
}

// chromium returns the path of a headless-capable Chromium or Chrome, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestHTMLScreenshot renders the page of a saved run with headless Chromium and checks
// that the screenshot decodes and shows something: a white page, or one whose charts did
// not render, has almost no variance.
func TestHTMLScreenshot(t *testing.T) {
	browser := chromium()
	if browser == "" {
		t.Skip("no chromium on PATH (apt-get install chromium) to render the page")
	}
	rep := savedReport(t)
	dir := t.TempDir()
	page, shot := filepath.Join(dir, "report.html"), filepath.Join(dir, "report.png")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := HTML(f, rep, ""); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot, "--window-size=1280,2000", "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, out)
	}
	r, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer r.Close()
	img, err := png.Decode(r)
	if err != nil {
		t.Fatalf("the screenshot does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 2000 {
		t.Errorf("screenshot is %v, want 1280x2000", b)
	}
	mean, variance, coloured := pixelStats(img)
	t.Logf("luminance mean %.1f, variance %.1f, %.1f%% coloured pixels", mean, variance, 100*coloured)
	if variance < 100 || coloured < 0.01 {
		t.Errorf("the screenshot looks blank: luminance variance %.1f, %.2f%% coloured pixels", variance, 100*coloured)
	}
}

// pixelStats returns the mean and variance of the luminance (0-255) of img, and the
// fraction of its pixels in colour (the bars), which text and grey rules do not give.
func pixelStats(img image.Image) (mean, variance, coloured float64) {
	b := img.Bounds()
	var sum, sum2 float64
	n, col := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 257
			sum += l
			sum2 += l * l
			n++
			if max(r, g, bl)-min(r, g, bl) > 60*257 {
				col++
			}
		}
	}
	mean = sum / float64(n)
	return mean, sum2/float64(n) - mean*mean, float64(col) / float64(n)
}
