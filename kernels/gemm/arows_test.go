package gemm

import (
	"math/rand/v2"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestARows checks on the host in how many classes of rows wgmma.cu reads A in place
// (aRows): one where its rows start on 16-byte boundaries; two or four where every second
// or fourth row does (tf32 with lda odd or 2 mod 4; float16 with lda 2 mod 4 or 4 mod 8;
// float8 with lda 4 mod 8 or 8 mod 16); none (a copy) where it takes more, A is
// transposed or batched, A has fewer rows than classes, or the precision is 3xTF32.
func TestARows(t *testing.T) {
	tf32, _ := LookupPrecision("tf32")
	x3, _ := LookupPrecision("float32x3tf32")
	f16, _ := LookupPrecision("float16")
	f8, _ := LookupPrecision("float8e4m3")
	w32, w3 := &WGMMA[float32]{p: tf32}, &WGMMA[float32]{p: x3}
	w16, w8 := &WGMMA[engine.Half]{p: f16}, &WGMMA[engine.Float8E4M3]{p: f8}
	for _, c := range []struct {
		name string
		got  int
		want int
	}{
		{"tf32 lda 64", w32.aRows(GEMMShape{M: 64, N: 64, K: 64}.WithDefaults()), 1},
		{"tf32 lda 4095", w32.aRows(GEMMShape{M: 4095, N: 128, K: 4095}.WithDefaults()), 4},
		{"tf32 lda 102", w32.aRows(GEMMShape{M: 130, N: 72, K: 100, LDA: 102}.WithDefaults()), 2},
		{"tf32 lda 77, 3 rows", w32.aRows(GEMMShape{M: 3, N: 72, K: 77}.WithDefaults()), 0},
		{"tf32 lda 77, transposed", w32.aRows(GEMMShape{M: 77, N: 72, K: 77, TransA: true}.WithDefaults()), 0},
		{"tf32 lda 77, batch 2", w32.aRows(GEMMShape{M: 77, N: 72, K: 77, Batch: 2}.WithDefaults()), 0},
		{"3xtf32 lda 77", w3.aRows(GEMMShape{M: 77, N: 72, K: 77}.WithDefaults()), 0},
		{"float16 lda 98", w16.aRows(GEMMShape{M: 200, N: 136, K: 96, LDA: 98}.WithDefaults()), 4},
		{"float16 lda 100", w16.aRows(GEMMShape{M: 200, N: 136, K: 100}.WithDefaults()), 2},
		{"float16 lda 77", w16.aRows(GEMMShape{M: 200, N: 136, K: 77}.WithDefaults()), 0},
		{"float8 lda 100", w8.aRows(GEMMShape{M: 200, N: 128, K: 100, TransB: true}.WithDefaults()), 4},
		{"float8 lda 120", w8.aRows(GEMMShape{M: 200, N: 128, K: 120, TransB: true}.WithDefaults()), 2},
		{"float8 lda 98", w8.aRows(GEMMShape{M: 200, N: 128, K: 98, TransB: true}.WithDefaults()), 0},
	} {
		if c.got != c.want {
			t.Errorf("%s: aRows %d, want %d", c.name, c.got, c.want)
		}
	}
}

// TestWGMMAARows runs shapes whose rows of A TMA cannot read as stored but every second or
// fourth of which it can (wgmma.cu's A_ROWS): A read in place in classes of rows, each
// stored back in its place; tf32 (nn and nt, four classes and two, a tail of rows, K not
// a multiple of a k step, split K), float16 (four and two, nn and nt) and float8 (four
// and two, one tile a block and the ping-pong kernel), with beta, against float64; it
// checks that A was not copied.
func TestWGMMAARows(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		needWGMMA(t, dev)
		defer func(f, r int) { wgmmaFillSMs, wgmmaSwapRows = f, r }(wgmmaFillSMs, wgmmaSwapRows)
		wgmmaFillSMs = 0 // the device's multiprocessors: narrow tiles and splits as calls choose
		rng := rand.New(rand.NewPCG(11, 11))
		run := func(name string, shapes []GEMMShape, copied func() bool, product func(GEMMShape) error, classes func(GEMMShape) int) {
			for _, s := range shapes {
				if c := classes(s.WithDefaults()); c < 2 {
					t.Fatalf("%s %v: aRows %d; the test wants A in classes", name, s, c)
				}
				if err := product(s); err != nil {
					t.Errorf("%s %v: %v", name, s, err)
				}
				if copied() {
					t.Errorf("%s %v: the call copied A, which it reads in classes of rows", name, s)
				}
			}
		}
		p32, _ := LookupPrecision("tf32")
		w32, err := NewWGMMA[float32](dev, p32)
		if err != nil {
			t.Fatal(err)
		}
		defer w32.Close()
		run("tf32", []GEMMShape{
			{M: 131, N: 72, K: 77, TransB: true},              // four classes, a tail of rows
			{M: 4, N: 64, K: 33, TransB: true},                // one row a class
			{M: 301, N: 200, K: 157},                          // nn: B copied
			{M: 130, N: 72, K: 100, LDA: 102, TransB: true},   // two classes
			{M: 64, N: 128, K: 4095, TransB: true, LDB: 4096}, // few tiles: split K
			{M: 4095, N: 128, K: 4095},                        // the sweep's shape
		}, func() bool { sc := w32.scratch[q]; return sc != nil && sc.aBig != nil },
			func(s GEMMShape) error { return wgmmaProductBeta(t, q, w32, s, 0.5, rng) }, w32.aRows)
		p16, _ := LookupPrecision("float16")
		w16, err := NewWGMMA[engine.Half](dev, p16)
		if err != nil {
			t.Fatal(err)
		}
		defer w16.Close()
		run("float16", []GEMMShape{
			{M: 200, N: 136, K: 96, LDA: 98, TransB: true}, // four classes
			{M: 200, N: 136, K: 100, TransB: true},         // two
			{M: 300, N: 256, K: 90},                        // nn, four
		}, func() bool { p := w16.padded[q]; return p != nil && p[0] != nil },
			func(s GEMMShape) error { return wgmmaProductBeta(t, q, w16, s, -1, rng) }, w16.aRows)
		p8, _ := LookupPrecision("float8e4m3")
		w8, err := NewWGMMA[engine.Float8E4M3](dev, p8)
		if err != nil {
			t.Fatal(err)
		}
		defer w8.Close()
		run("float8e4m3", []GEMMShape{
			{M: 200, N: 128, K: 100, TransB: true, LDB: 112},   // four classes
			{M: 150, N: 128, K: 120, TransB: true, LDB: 128},   // two
			{M: 4000, N: 1024, K: 100, TransB: true, LDB: 112}, // more tiles than multiprocessors: ping-pong
		}, func() bool { p := w8.padded[q]; return p != nil && p[0] != nil },
			func(s GEMMShape) error { return wgmmaProductBeta(t, q, w8, s, 0.5, rng) }, w8.aRows)
	})
}
