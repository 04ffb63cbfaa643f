package kernels_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestTuned checks the tuning file: nothing before a save, an entry after, replaced by a
// later save of the same op and variant, kept beside another's, and a damaged file read as
// none and replaced by the next save.
func TestTuned(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PRISM_CACHE_DIR", dir)
	if got := kernels.TunedDir(); got != filepath.Join(dir, "tuning") {
		t.Fatalf("TunedDir() = %s, want %s", got, filepath.Join(dir, "tuning"))
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if _, ok := kernels.LookupTuned(dev, "gemm/nn/float32", "portable"); ok {
			t.Fatal("a tuning before any was saved")
		}
		for _, e := range []kernels.Tuned{
			{Op: "gemm/nn/float32", Variant: "portable", Tunables: "TS=64 TSK=16 WPT=4", Size: 1024, MedianNS: 5},
			{Op: "gemm/nn/float32", Variant: "portable", Tunables: "TS=128 TSK=32 WPT=16", Size: 1024, MedianNS: 4},
			{Op: "gemm/nn/tf32", Variant: "portable", Tunables: "TS=64 TSK=32 WPT=4", Size: 1024, MedianNS: 3},
		} {
			if err := kernels.SaveTuned(dev, e); err != nil {
				t.Fatal(err)
			}
		}
		got, ok := kernels.LookupTuned(dev, "gemm/nn/float32", "portable")
		if !ok || got.Tunables != "TS=128 TSK=32 WPT=16" || got.MedianNS != 4 || got.Date == "" {
			t.Errorf("after two saves: %+v, %v; want the second, dated", got, ok)
		}
		if got, ok := kernels.LookupTuned(dev, "gemm/nn/tf32", "portable"); !ok || got.Tunables != "TS=64 TSK=32 WPT=4" {
			t.Errorf("the other op's tuning: %+v, %v", got, ok)
		}
		files, err := filepath.Glob(filepath.Join(dir, "tuning", "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no tuning file in %s (%v)", dir, err)
		}
		for _, f := range files {
			if err := os.WriteFile(f, []byte("{not json"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, ok := kernels.LookupTuned(dev, "gemm/nn/float32", "portable"); ok {
			t.Error("a damaged file gave a tuning")
		}
		if err := kernels.SaveTuned(dev, kernels.Tuned{Op: "gemm/nn/float32", Variant: "portable", Tunables: "TS=64 TSK=8 WPT=4"}); err != nil {
			t.Fatal(err)
		}
		if got, ok := kernels.LookupTuned(dev, "gemm/nn/float32", "portable"); !ok || got.Tunables != "TS=64 TSK=8 WPT=4" {
			t.Errorf("after replacing a damaged file: %+v, %v", got, ok)
		}
	})
}

// TestParseTunableInts checks the shared parser of integer tunables: fields in any order
// and case, kept values with all false, and each kind of bad field refused, naming it.
func TestParseTunableInts(t *testing.T) {
	var a, b int
	fields := func() []kernels.TunableInt {
		return []kernels.TunableInt{{Key: "WG", Dst: &a, Min: 1, Max: 1024}, {Key: "UNROLL", Dst: &b, Min: 0, Max: 8}}
	}
	if err := kernels.ParseTunableInts("t", " unroll=0  WG=64 ", true, fields()...); err != nil || a != 64 || b != 0 {
		t.Errorf("got %d %d, %v", a, b, err)
	}
	a, b = 7, 3
	if err := kernels.ParseTunableInts("t", "WG=8", false, fields()...); err != nil || a != 8 || b != 3 {
		t.Errorf("a key left out: got %d %d, %v", a, b, err)
	}
	// An optional key may be left out with all: it keeps its default; the others are wanted.
	opt := func() []kernels.TunableInt {
		f := fields()
		f[1].Optional = true
		return f
	}
	a, b = 7, 3
	if err := kernels.ParseTunableInts("t", "WG=8", true, opt()...); err != nil || a != 8 || b != 3 {
		t.Errorf("an optional key left out: got %d %d, %v", a, b, err)
	}
	if err := kernels.ParseTunableInts("t", "UNROLL=2", true, opt()...); err == nil || !strings.Contains(err.Error(), "want all of WG (UNROLL may be left out); WG missing") {
		t.Errorf("a required key left out beside an optional one: %v", err)
	}
	for s, want := range map[string]string{
		"WG=8":                 "want all of WG, UNROLL; UNROLL missing",
		"WG=8 UNROLL":          `"UNROLL" is not KEY=integer`,
		"WG=8 UNROLL=+2":       `"UNROLL=+2" is not KEY=integer`,
		"WG=8 UNROLL=x":        `"UNROLL=x" is not KEY=integer`,
		"WG=8 UNROLL=2 WG=16":  "WG given twice",
		"WG=8 UNROLL=9":        "UNROLL=9 is out of its range 0..8",
		"WG=0 UNROLL=1":        "WG=0 is out of its range 1..1024",
		"WG=8 UNROLL=1 COPY=2": "unknown key COPY (want WG, UNROLL)",
	} {
		err := kernels.ParseTunableInts("t", s, true, fields()...)
		if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an ErrInvalidArg saying %q", s, err, want)
		}
	}
}

// TestTunedHostileFile checks that a tuning file that is no regular file (a FIFO with no
// writer, a link to /dev/zero, a directory) or is larger than 1 MiB is no tuning, found at
// once: before, a FIFO waited for a writer for ever and /dev/zero was read until memory
// ran out. A save then replaces the FIFO and the link with a regular file.
func TestTunedHostileFile(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		dir := t.TempDir()
		t.Setenv("PRISM_CACHE_DIR", dir)
		e := kernels.Tuned{Op: "gemm/nn/float32", Variant: "portable", Tunables: "TS=64 TSK=16 WPT=4"}
		if err := kernels.SaveTuned(dev, e); err != nil {
			t.Fatal(err)
		}
		files, err := filepath.Glob(filepath.Join(dir, "tuning", "*.json"))
		if err != nil || len(files) != 1 {
			t.Fatalf("tuning files %v (%v), want one", files, err)
		}
		path := files[0]
		makers := map[string]func() error{
			"FIFO":              func() error { return syscall.Mkfifo(path, 0o644) },
			"link to /dev/zero": func() error { return os.Symlink("/dev/zero", path) },
			"directory":         func() error { return os.Mkdir(path, 0o755) },
			"2 MiB file":        func() error { return os.WriteFile(path, make([]byte, 2<<20), 0o644) },
		}
		for name, mk := range makers {
			t.Run(name, func(t *testing.T) {
				if err := os.RemoveAll(path); err != nil {
					t.Fatal(err)
				}
				if err := mk(); err != nil {
					t.Skipf("cannot make a %s here: %v", name, err)
				}
				done := make(chan bool, 1)
				go func() {
					_, ok := kernels.LookupTuned(dev, e.Op, e.Variant)
					done <- ok
				}()
				select {
				case ok := <-done:
					if ok {
						t.Error("a tuning read from it")
					}
				case <-time.After(5 * time.Second):
					t.Fatal("LookupTuned still reading after 5 s")
				}
				if name == "directory" {
					return // a save cannot replace a directory; the lookup is what matters
				}
				if err := kernels.SaveTuned(dev, e); err != nil {
					t.Fatalf("a save over it: %v", err)
				}
				if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
					t.Errorf("after a save: %v, %v; want a regular file", st.Mode(), err)
				}
				if got, ok := kernels.LookupTuned(dev, e.Op, e.Variant); !ok || got.Tunables != e.Tunables {
					t.Errorf("after a save: %+v, %v", got, ok)
				}
			})
		}
	})
}
