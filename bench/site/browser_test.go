package site

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The browser test loads the published site in a real headless Chromium (Debian's chromium
// package, which make deps installs), driven through the DevTools protocol by chromedp:
// every page loads without a console error, an uncaught exception, a failed request or a
// response other than 200 (or 304, a file cached); every chart is an SVG of non-zero size whose lines have a
// length; the style sheet applies; and every link of every page answers 200. Screenshots
// of the index and a case's page are kept in PRISM_SCREENSHOTS where it names a directory
// (else a temporary one, logged).

// chromium returns Chromium's or Chrome's executable, "" where there is none.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserProblems collects what a page did wrong, from the browser's events.
type browserProblems struct {
	mu   sync.Mutex
	page string
	list []string
}

func (b *browserProblems) add(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.list = append(b.list, b.page+": "+fmt.Sprintf(format, args...))
}

// take returns the problems since the last call, and names the next page.
func (b *browserProblems) take(next string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.list
	b.list, b.page = nil, next
	return out
}

// listen records console errors and warnings, uncaught exceptions, the browser's error
// log (a resource that failed, a blocked request), failed requests and HTTP errors. It
// runs in the tab's message loop: it returns at once.
func (b *browserProblems) listen(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, strings.Trim(string(a.Value), `"`)+a.Description)
			}
			b.add("console.%s: %s", ev.Type, strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		b.add("uncaught exception: %s", text)
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			b.add("browser log (%s, %s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
		}
	case *network.EventLoadingFailed:
		b.add("request failed: %s %s", ev.Type, ev.ErrorText)
	case *network.EventResponseReceived:
		if ev.Response.Status != http.StatusOK && ev.Response.Status != http.StatusNotModified {
			b.add("HTTP %d for %s", ev.Response.Status, ev.Response.URL)
		}
	}
}

// pageFacts is what the test reads in a loaded page.
type pageFacts struct {
	Charts []struct {
		W, H       float64
		Lines      int
		LineWidths []float64
	}
	Links      []string
	HeaderBG   string
	Title      string
	Scripts    int
	Resources  []string
	BodyHeight float64
}

const factsJS = `(() => {
  const charts = [...document.querySelectorAll('svg.chart')].map(s => {
    const r = s.getBoundingClientRect();
    const lines = [...s.querySelectorAll('polyline')];
    return {W: r.width, H: r.height, Lines: lines.length, LineWidths: lines.map(l => l.getBBox().width)};
  });
  return {
    Charts: charts,
    Links: [...document.querySelectorAll('a[href]')].map(a => new URL(a.getAttribute('href'), document.baseURI).href),
    HeaderBG: getComputedStyle(document.querySelector('header')).backgroundColor,
    Title: document.title,
    Scripts: document.scripts.length,
    Resources: performance.getEntriesByType('resource').map(e => e.name),
    BodyHeight: document.body.getBoundingClientRect().height,
  };
})()`

func TestBrowser(t *testing.T) {
	exe := chromium()
	if exe == "" {
		if strings.Contains(os.Getenv("PRISM_REQUIRE"), "browser") {
			t.Fatal("PRISM_REQUIRE names browser, and no Chromium is installed (chromium, chromium-browser or google-chrome on PATH): make deps installs Debian's chromium")
		}
		t.Skip("no Chromium (chromium, chromium-browser or google-chrome on PATH): make deps installs Debian's chromium; PRISM_REQUIRE=browser makes this a failure")
	}
	start := time.Now()
	st := testStore(t)
	dir := filepath.Join(t.TempDir(), "site")
	if _, err := Publish(context.Background(), st, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	files := siteFiles(t, dir)
	var pages []string
	for name := range files {
		if strings.HasSuffix(name, ".html") {
			pages = append(pages, name)
		}
	}
	slices.Sort(pages)
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(dir)))
	// A page with every kind of problem, to show that the test sees them.
	mux.HandleFunc("/selfcheck/bad.html", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!DOCTYPE html><html><head><title>bad</title><link rel="stylesheet" href="missing.css"></head><body>`+
			`<script>console.error("a console error"); throw new Error("an exception");</script></body></html>`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	shots := os.Getenv("PRISM_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-gpu", true),
		chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	problems := &browserProblems{page: "start"}
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithListener(problems.listen))
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	launched := time.Since(start)

	// The self-check: the bad page's three problems are seen.
	problems.take("selfcheck/bad.html")
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/selfcheck/bad.html")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the events of the load arrive with it or just after
	bad := strings.Join(problems.take("index.html"), "\n")
	for _, want := range []string{"a console error", "an exception", "HTTP 404"} {
		if !strings.Contains(bad, want) {
			t.Errorf("the self-check page's problems were not all seen: no %q in\n%s", want, bad)
		}
	}

	checked := map[string]bool{}
	client := srv.Client()
	for _, name := range pages {
		for _, p := range problems.take(name) { // the previous page's
			t.Error(p)
		}
		url := srv.URL + "/" + name
		if err := chromedp.Do(bctx, chromedp.Navigate(url)); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		facts, err := chromedp.Run(bctx, chromedp.Evaluate[pageFacts](factsJS))
		if err != nil {
			t.Errorf("%s: reading the page: %v", name, err)
			continue
		}
		if facts.HeaderBG != "rgb(38, 50, 56)" {
			t.Errorf("%s: the header's background is %q: style.css did not apply", name, facts.HeaderBG)
		}
		if facts.Scripts != 0 {
			t.Errorf("%s: %d scripts", name, facts.Scripts)
		}
		if facts.Title == "" || facts.BodyHeight < 100 {
			t.Errorf("%s: title %q, body %.0f px high", name, facts.Title, facts.BodyHeight)
		}
		for _, r := range facts.Resources {
			if !strings.HasPrefix(r, srv.URL+"/") {
				t.Errorf("%s: loads %s, outside the site", name, r)
			}
		}
		if strings.HasPrefix(name, "cases/") && len(facts.Charts) == 0 {
			t.Errorf("%s: no chart", name)
		}
		for i, c := range facts.Charts {
			if c.W < 300 || c.H < 100 || c.Lines == 0 {
				t.Errorf("%s: chart %d is %.0fx%.0f with %d lines", name, i, c.W, c.H, c.Lines)
			}
		}
		if name == "cases/stream_triad_float32.html" {
			long := 0
			for _, c := range facts.Charts {
				for _, w := range c.LineWidths {
					if w > 100 {
						long++
					}
				}
			}
			if long == 0 {
				t.Errorf("%s: no line of the history spans the chart: %+v", name, facts.Charts)
			}
		}
		for _, link := range facts.Links {
			target, _, _ := strings.Cut(link, "#")
			if checked[target] {
				continue
			}
			checked[target] = true
			if !strings.HasPrefix(target, srv.URL+"/") {
				t.Errorf("%s: link %s leaves the site", name, link)
				continue
			}
			resp, err := client.Get(target)
			if err != nil {
				t.Errorf("%s: link %s: %v", name, link, err)
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: link %s: HTTP %d", name, link, resp.StatusCode)
			}
		}
		if name == "index.html" || name == "cases/stream_triad_float32.html" || name == "runs/2.html" {
			png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Errorf("%s: screenshot: %v", name, err)
			} else if err := os.WriteFile(filepath.Join(shots, strings.ReplaceAll(strings.TrimSuffix(name, ".html"), "/", "-")+".png"), png, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	time.Sleep(100 * time.Millisecond)
	for _, p := range problems.take("") {
		t.Error(p)
	}
	if len(checked) < len(pages) {
		t.Errorf("the pages link %d distinct pages of %d: some page is not linked", len(checked), len(pages))
	}
	t.Logf("%d pages and %d links checked in Chromium (%s) in %v, of which %v to start it; screenshots in %s",
		len(pages), len(checked), filepath.Base(exe), time.Since(start).Round(time.Millisecond), launched.Round(time.Millisecond), shots)
}
