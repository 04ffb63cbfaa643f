package site

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/regress"
	"github.com/prism-compute/prism/bench/store"
	"github.com/prism-compute/prism/engine"
)

// DefaultTitle names the site where Options.Title is empty.
const DefaultTitle = "Prism results"

// Options tune Publish. The zero value is the default.
type Options struct {
	// Title names the site at the top of every page; "" is DefaultTitle.
	Title string
	// Detect tunes the detector that finds the steps of each series (regress.Detect); the
	// zero value is its defaults.
	Detect regress.DetectOptions
}

// Summary says what Publish wrote.
type Summary struct {
	Dir     string // the site's directory, absolute
	Runs    int    // runs, each with a page
	Cases   int    // cases, each with a page
	Devices int    // device fingerprints, the index's columns
	Pages   int    // HTML pages written
	Slower  int    // series whose latest step is a slowdown (listed on the index)
}

// ErrNotSite is wrapped by Publish's error for a destination that is neither empty nor a
// site Publish wrote: it is never replaced.
var ErrNotSite = errors.New("not a published site")

// Publish writes the site of every run in st to dir (see the package comment), replacing
// a site published there before whole: the new site is written beside dir and then put in
// its place, so that dir holds the old site or the new one, never a part, and a failed or
// cancelled publish leaves it as it was. dir may not exist (its parent must); if it
// exists it must be a directory that is empty or holds a site Publish wrote, else the
// error wraps ErrNotSite. The same store gives the same files, byte for byte.
func Publish(ctx context.Context, st *store.Store, dir string, opt Options) (Summary, error) {
	if st == nil {
		return Summary{}, fmt.Errorf("site: no store to publish: %w", engine.ErrInvalidArg)
	}
	if dir == "" {
		return Summary{}, fmt.Errorf("site: no directory to publish to: %w", engine.ErrInvalidArg)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Summary{}, fmt.Errorf("site: %s: %w", dir, err)
	}
	if err := replaceable(abs); err != nil {
		return Summary{}, err
	}
	parent := filepath.Dir(abs)
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(abs)+".new-")
	if err != nil {
		return Summary{}, fmt.Errorf("site: creating the new site beside %s: %w", abs, err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	sum, err := write(ctx, st, tmp, opt)
	if err != nil {
		return Summary{}, err
	}
	sum.Dir = abs
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp's 0700 is for the writing only
		return Summary{}, fmt.Errorf("site: %s: %w", tmp, err)
	}
	if err := ctx.Err(); err != nil {
		return Summary{}, fmt.Errorf("site: publishing %s: %w", abs, err)
	}
	if err := swap(tmp, abs); err != nil {
		return Summary{}, err
	}
	done = true
	return sum, nil
}

// replaceable checks that dir does not exist, or is an empty directory or a site Publish
// wrote.
func replaceable(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if st, err := os.Stat(filepath.Dir(dir)); err != nil || !st.IsDir() {
			return fmt.Errorf("site: cannot create %s: its directory %s does not exist: %w", dir, filepath.Dir(dir), os.ErrNotExist)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("site: %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("site: %s is a file, not a directory for a site: %w", dir, ErrNotSite)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("site: %s: %w", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil || !bytes.Contains(index, []byte(`<meta name="generator" content="`+generator+`" />`)) {
		return fmt.Errorf("site: %s holds files that are not a site prism published: publish to a new or empty directory (nothing was replaced): %w", dir, ErrNotSite)
	}
	return nil
}

// writer writes the pages of one site.
type writer struct {
	dir   string
	title string
	runs  int
}

// page is the common part of a page titled title at root ("" or "../").
func (s *writer) page(title, root string) page {
	return page{Site: s.title, Title: title, Root: root, Generator: generator,
		Footer: fmt.Sprintf("Written by prism publish from %d runs of the results store.", s.runs)}
}

// file writes a file of the site.
func (s *writer) file(name string, data []byte) error {
	if err := os.WriteFile(filepath.Join(s.dir, name), data, 0o644); err != nil {
		return fmt.Errorf("site: writing %s: %w", name, err)
	}
	return nil
}

// write writes the whole site into the empty directory dir.
func write(ctx context.Context, st *store.Store, dir string, opt Options) (Summary, error) {
	s := &writer{dir: dir, title: opt.Title}
	if s.title == "" {
		s.title = DefaultTitle
	}
	for _, sub := range []string{"runs", "cases"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			return Summary{}, fmt.Errorf("site: %w", err)
		}
	}
	var sum Summary
	m, err := collect(ctx, st, opt.Detect, func(runs []*runInfo, run *runInfo, rep *bench.Report) error {
		w := *s
		w.runs = len(runs)
		b, err := w.runPage(runs, run, rep)
		if err != nil {
			return err
		}
		return w.file(filepath.Join("runs", strconv.FormatInt(int64(run.sum.ID), 10)+".html"), b)
	})
	if err != nil {
		return Summary{}, err
	}
	s.runs = len(m.runs)
	cases := m.sortedCases()
	if err := parallel(ctx, len(cases), func(i int) error {
		b, err := s.casePage(m, cases[i])
		if err != nil {
			return err
		}
		return s.file(filepath.Join("cases", cases[i].slug+".html"), b)
	}); err != nil {
		return Summary{}, err
	}
	index, err := s.indexPage(m)
	if err != nil {
		return Summary{}, err
	}
	runs, err := s.runsPage(m)
	if err != nil {
		return Summary{}, err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"index.html", index}, {"runs.html", runs}, {"style.css", styleCSS}} {
		if err := s.file(f.name, f.data); err != nil {
			return Summary{}, err
		}
	}
	sum.Runs, sum.Cases, sum.Devices = len(m.runs), len(cases), len(m.devices)
	sum.Pages = len(m.runs) + len(cases) + 2
	for _, c := range cases {
		for _, se := range c.series {
			if p := se.lastStep(); p != nil && p.change.slower() {
				sum.Slower++
			}
		}
	}
	return sum, nil
}

// parallel calls f(0), ..., f(n-1) on as many goroutines as there are processors, and
// returns the first error (the calls not yet started are not made).
func parallel(ctx context.Context, n int, f func(int) error) error {
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	for range max(1, min(n, runtime.GOMAXPROCS(0))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if first == nil {
					first = ctx.Err()
				}
				if first != nil || next >= n {
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// swap puts the new site tmp in place of dir: an atomic exchange where the system has one
// (then the old site, now at tmp, is removed), else dir moved aside, tmp renamed to dir
// and the old site removed (on failure, the old site is moved back).
func swap(tmp, dir string) error {
	syncTree(tmp)
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("site: putting the site in place: %w", err)
		}
		syncDir(filepath.Dir(dir))
		return nil
	}
	if exchange(tmp, dir) == nil {
		syncDir(filepath.Dir(dir))
		os.RemoveAll(tmp) // the old site
		return nil
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil {
		return fmt.Errorf("site: moving the old site aside: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if back := os.Rename(old, dir); back != nil {
			return fmt.Errorf("site: putting the site in place: %w (and moving the old site back from %s: %v)", err, old, back)
		}
		return fmt.Errorf("site: putting the site in place: %w", err)
	}
	syncDir(filepath.Dir(dir))
	os.RemoveAll(old)
	return nil
}

// syncDir makes a directory's entries durable, as far as the system allows.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
