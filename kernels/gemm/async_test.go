package gemm

import (
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestAAsync checks on the host which calls read A through the kernel's own copies
// (aAsync): tf32 with A's rows off 16-byte boundaries, K-major, alone, without clusters;
// not an aligned A, a transposed or batched one, 3xTF32 (whose parts are copies), other
// precisions, or clusters.
func TestAAsync(t *testing.T) {
	tf32, _ := LookupPrecision("tf32")
	x3, _ := LookupPrecision("float32x3tf32")
	f16, _ := LookupPrecision("float16")
	w := &WGMMA[float32]{p: tf32, t: WGMMADefaults(PrecTF32)}
	wc := &WGMMA[float32]{p: tf32, t: WGMMATunables{BN: 128, Stages: 4, Cluster: 2, GroupM: 8}}
	w3 := &WGMMA[float32]{p: x3, t: WGMMADefaults(PrecFloat32x3TF32)}
	w16 := &WGMMA[engine.Half]{p: f16, t: WGMMADefaults(PrecFloat16)}
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"tf32 4095 x 128 x 4095", w.aAsync(GEMMShape{M: 4095, N: 128, K: 4095}.WithDefaults()), true},
		{"tf32 lda 102", w.aAsync(GEMMShape{M: 130, N: 72, K: 100, LDA: 102, TransB: true}.WithDefaults()), true},
		{"tf32 aligned", w.aAsync(GEMMShape{M: 130, N: 72, K: 100}.WithDefaults()), false},
		{"tf32 transposed", w.aAsync(GEMMShape{M: 77, N: 72, K: 77, TransA: true}.WithDefaults()), false},
		{"tf32 batch 2", w.aAsync(GEMMShape{M: 77, N: 72, K: 77, Batch: 2}.WithDefaults()), false},
		{"tf32 clusters of 2", wc.aAsync(GEMMShape{M: 77, N: 72, K: 77}.WithDefaults()), false},
		{"3xtf32", w3.aAsync(GEMMShape{M: 77, N: 72, K: 77}.WithDefaults()), false},
		{"float16", w16.aAsync(GEMMShape{M: 77, N: 72, K: 77}.WithDefaults()), false},
	} {
		if c.got != c.want {
			t.Errorf("%s: aAsync %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestWGMMATF32Async runs tf32 on wgmma where the kernel copies A itself (wgmma.cu's
// A_ASYNC: rows off 16-byte boundaries, read with 4-byte cp.async into the swizzled
// stages): nn and nt, a tail of rows and of k, one row, split K, rows 2 mod 4, the
// persistent grid, two stages (each stage's arrival right after its copies) and the
// sweep's 4095 x 128 x 4095, with beta, against float64; it checks that A was not copied,
// and that a batch still copies it.
func TestWGMMATF32Async(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		needWGMMA(t, dev)
		defer func(f int) { wgmmaFillSMs = f }(wgmmaFillSMs)
		wgmmaFillSMs = 0 // the device's multiprocessors: narrow tiles and splits as calls choose
		rng := rand.New(rand.NewPCG(11, 11))
		p, _ := LookupPrecision("tf32")
		for _, tn := range []WGMMATunables{WGMMADefaults(PrecTF32), {BN: 128, Stages: 2, Cluster: 1, GroupM: 8, Persistent: 1}} {
			w, err := NewWGMMAWith[float32](dev, p, tn)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []GEMMShape{
				{M: 131, N: 72, K: 77, TransB: true},              // a tail of rows and of k
				{M: 1, N: 64, K: 33, TransB: true},                // one row
				{M: 301, N: 200, K: 157},                          // nn: B copied by gemm_split
				{M: 130, N: 72, K: 100, LDA: 102, TransB: true},   // rows 2 mod 4
				{M: 64, N: 128, K: 4095, TransB: true, LDB: 4096}, // few tiles: split K
				{M: 1000, N: 900, K: 333, TransB: true, LDB: 336}, // many tiles
				{M: 4095, N: 128, K: 4095},                        // the sweep's shape
			} {
				if !w.aAsync(s.WithDefaults()) {
					t.Fatalf("%v: the kernel would not copy A", s)
				}
				if err := wgmmaProductBeta(t, q, w, s, 0.5, rng); err != nil {
					t.Errorf("%s %v: %v", tn, s, err)
				}
				if sc := w.scratch[q]; sc != nil && sc.aBig != nil {
					t.Errorf("%s %v: gemm_split copied A, which the kernel reads", tn, s)
				}
			}
			batch := GEMMShape{M: 67, N: 99, K: 45, Batch: 2, TransB: true, LDB: 48}
			if err := wgmmaProductBeta(t, q, w, batch, -1, rng); err != nil {
				t.Errorf("%s %v: %v", tn, batch, err)
			}
			if sc := w.scratch[q]; sc == nil || sc.aBig == nil {
				t.Errorf("%s %v: a batch's A was not copied", tn, batch)
			}
			w.Close()
		}
	})
}
