package kernels_test

import (
	"os"
	"path/filepath"
	"testing"

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
