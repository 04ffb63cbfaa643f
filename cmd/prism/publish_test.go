package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/site"
)

// recordTestdata records bench/render's test reports (real runs on PoCL and Rusticl) in
// the store at path: run 1 multi.json, run 2 single.json.
func recordTestdata(t *testing.T, path string) {
	t.Helper()
	s := openTestStore(t, path)
	for _, f := range []string{"multi.json", "single.json"} {
		r, err := bench.ReadReportFile(filepath.Join("..", "..", "bench", "render", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPublishCommand(t *testing.T) {
	recordTestdata(t, useStore(t))
	dir := filepath.Join(t.TempDir(), "site")
	out, _, err := prismOutput(t, "publish", dir, "--title", "Lab results")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "index.html") + ": 2 runs, 3 cases, 2 devices\n"; out != want {
		t.Errorf("prism publish printed %q, want %q", out, want)
	}
	for _, f := range []string{"index.html", "runs.html", "style.css", "runs/1.html", "runs/2.html", "cases/stream_triad_float32.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the site lacks %s: %v", f, err)
		}
	}
	index, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if !strings.Contains(string(index), "Lab results") {
		t.Errorf("--title is not on the index")
	}
	// Again over the site: replaced.
	if _, _, err := prismOutput(t, "publish", dir); err != nil {
		t.Errorf("publishing over a site: %v", err)
	}
	// Never over other files, nor without a store, nor without DIR: bad usage (exit code 2).
	mine := t.TempDir()
	if err := os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"publish", mine},
		{"publish", filepath.Join(mine, "no", "such")},
		{"publish", dir, "--no-store"},
		{"publish"},
	} {
		if code := run(context.Background(), args); code != exitUsage {
			t.Errorf("prism %s: exit code %d, want %d", strings.Join(args, " "), code, exitUsage)
		}
	}
	if _, _, err := prismOutput(t, "publish", mine); !errors.Is(err, site.ErrNotSite) || !strings.Contains(err.Error(), "not a site prism published") {
		t.Errorf("publish over other files: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(mine, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("a directory of other files was changed")
	}
}

// startServe runs prism serve with args, and returns the URL it serves and the function
// that stops it and returns the command's error.
func startServe(t *testing.T, args ...string) (url string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	root := newRootCmd()
	root.SetOut(pw)
	root.SetErr(io.Discard)
	root.SetArgs(append([]string{"serve"}, args...))
	done := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	found := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if m := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops\)`).FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			cancel()
			t.Fatalf("prism serve %s stopped: %v", strings.Join(args, " "), <-done)
		}
		url = u
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("prism serve printed no URL in 30 s")
	}
	return url, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			return errors.New("prism serve did not stop within 10 s of its cancellation")
		}
	}
}

// get fetches url and returns its status, body and Cache-Control.
func get(t *testing.T, url string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Cache-Control")
}

// TestServeStore: prism serve without DIR publishes the store to a temporary directory,
// serves it on 127.0.0.1 until it is stopped, and removes it.
func TestServeStore(t *testing.T) {
	recordTestdata(t, useStore(t))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the temporary site goes
	url, stop := startServe(t, "--addr", "127.0.0.1:0", "--title", "Served")
	code, body, cache := get(t, url)
	if code != http.StatusOK || !strings.Contains(body, "Devices by op · Served") || cache != "no-cache" {
		t.Errorf("GET %s: %d, cache %q, body:\n%.300s", url, code, cache, body)
	}
	for _, p := range []string{"runs/2.html", "cases/reduce_sum_float64.html", "style.css"} {
		if code, _, _ := get(t, url+p); code != http.StatusOK {
			t.Errorf("GET %s: %d", url+p, code)
		}
	}
	if code, _, _ := get(t, url+"runs/3.html"); code != http.StatusNotFound {
		t.Errorf("GET a run that is not there: %d, want 404", code)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Errorf("%d temporary directories while serving, want 1", len(entries))
	}
	if err := stop(); err != nil {
		t.Errorf("prism serve stopped with %v, want nil", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("the temporary site was not removed: %v", entries)
	}
	if _, err := http.Get(url); err == nil {
		t.Errorf("%s still answers after prism serve stopped", url)
	}
}

// TestServeDir: prism serve DIR serves a published site, and refuses what is not one.
func TestServeDir(t *testing.T) {
	recordTestdata(t, useStore(t))
	dir := filepath.Join(t.TempDir(), "site")
	if _, _, err := prismOutput(t, "publish", dir); err != nil {
		t.Fatal(err)
	}
	url, stop := startServe(t, dir, "--addr", "127.0.0.1:0")
	if code, body, _ := get(t, url+"index.html"); code != http.StatusOK || !strings.Contains(body, `<meta name="generator" content="prism publish" />`) {
		t.Errorf("GET index.html: %d", code)
	}
	if err := stop(); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
		t.Errorf("prism serve DIR removed the site: %v", err)
	}
	for _, args := range [][]string{
		{"serve", t.TempDir()},                              // no index.html
		{"serve", dir, "--addr", "8000"},                    // no host
		{"serve", dir, "--title", "x"},                      // the title of a site already written
		{"serve", dir, filepath.Join(dir, "runs"), "extra"}, // two directories
	} {
		if code := run(context.Background(), args); code != exitUsage {
			t.Errorf("prism %s: exit code %d, want %d", strings.Join(args, " "), code, exitUsage)
		}
	}
}

// TestServeSignal stops a real prism serve with SIGINT: its line on stderr says that the
// server stops (not that a measurement writes what was done), and it exits once stopped.
func TestServeSignal(t *testing.T) {
	recordTestdata(t, useStore(t))
	dir := filepath.Join(t.TempDir(), "site")
	if _, _, err := prismOutput(t, "publish", dir); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PRISM_TEST_RUN_MAIN="+strings.Join([]string{"serve", dir, "--addr", "127.0.0.1:0"}, "\x1f"))
	var errOut strings.Builder
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	serving := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "serving ") {
				serving <- sc.Text()
			}
		}
	}()
	select {
	case <-serving:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("prism serve did not start within a minute; stderr:\n%s", errOut.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("prism serve still runs 30 s after SIGINT; stderr:\n%s", errOut.String())
	}
	out := errOut.String()
	if !strings.Contains(out, "SIGINT: stopping the server") || strings.Contains(out, "writing what was done") {
		t.Errorf("stderr after SIGINT:\n%s\nwant the line saying the server stops", out)
	}
	t.Logf("exit: %v; stderr:\n%s", err, out)
}
