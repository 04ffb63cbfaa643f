package attention

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

func TestAttention(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testAttention[float32](t, dev, q) })
		t.Run("float64", func(t *testing.T) {
			if !dev.Info().FP64 {
				t.Skipf("%s reports no fp64", dev.ID())
			}
			testAttention[float64](t, dev, q)
		})
		t.Run("float16", func(t *testing.T) { testAttention[engine.Half](t, dev, q) })
		t.Run("bfloat16", func(t *testing.T) { testAttention[engine.BFloat16](t, dev, q) })
		t.Run("float8e4m3", func(t *testing.T) { testAttention[engine.Float8E4M3](t, dev, q) })
	})
}

// attnCase is one attention test: a shape, the mask, and a scale (0: the default).
type attnCase struct {
	s      AttentionShape
	causal bool
	scale  float64
}

// attnCases returns the shapes for an instance with query blocks of br, for tensors of
// type typ. float32: seq 1, 7, br-1, br+1, 100; dim 1, 16, 64 and 80 (not a power of two,
// the 128-wide tiles); batch 2 and 3 heads; causal and not; then a caller's scale, the
// 256-wide tiles, large scores and a large sampled case (where kerneltest.Large). float64:
// a few of these.
// float16, bfloat16 and float8e4m3: seq 1, 17, 64, 65, 200 (one key block and many, around
// the block sizes), dim 64, 80 and 128, batch 1 and 2 heads, causal and not, and a caller's
// scale. Under small() (Oclgrind) a handful of tiny ones (and dim 128 for the storage
// types).
func attnCases(br int, typ string) []attnCase {
	var out []attnCase
	if kerneltest.Small() { // Oclgrind: a few work-groups per case
		out = []attnCase{
			{s: AttentionShape{Batch: 1, Heads: 2, Seq: 7, Dim: 1}, causal: true},
			{s: AttentionShape{Batch: 1, Heads: 1, Seq: br + 1, Dim: 16}, causal: false},
			{s: AttentionShape{Batch: 1, Heads: 1, Seq: br + 1, Dim: 16}, causal: true},
			{s: AttentionShape{Batch: 1, Heads: 1, Seq: 7, Dim: 80}, causal: false, scale: 0.3},
		}
		if typ == "float16" || typ == "bfloat16" || typ == "float8e4m3" { // the ops' head dimension
			out = append(out, attnCase{s: AttentionShape{Batch: 1, Heads: 1, Seq: 17, Dim: 128}, causal: true})
		}
		return out
	}
	batch, heads := 2, 3
	seqs, dims := []int{1, 7, br - 1, br + 1, 100}, []int{1, 16, 64, 80}
	switch typ {
	case "float64":
		seqs, dims = []int{7, br + 1}, []int{16, 80}
	case "float16", "bfloat16", "float8e4m3":
		batch, heads = 1, 2
		seqs, dims = []int{1, 17, 64, 65, 200}, []int{64, 80, 128}
	}
	for _, seq := range seqs {
		for _, dim := range dims {
			for _, causal := range []bool{false, true} {
				out = append(out, attnCase{s: AttentionShape{Batch: batch, Heads: heads, Seq: seq, Dim: dim}, causal: causal})
			}
		}
	}
	switch typ {
	case "float32":
		out = append(out,
			// a caller's scale; a dim needing the 256-wide tiles; large scores (scale 1 at dim
			// 64: scores up to hundreds, softmax nearly one-hot)
			attnCase{s: AttentionShape{Batch: 1, Heads: 2, Seq: 70, Dim: 48}, causal: true, scale: 0.3},
			attnCase{s: AttentionShape{Batch: 1, Heads: 1, Seq: 40, Dim: 200}, causal: false},
			attnCase{s: AttentionShape{Batch: 1, Heads: 2, Seq: 130, Dim: 64}, causal: false, scale: 1},
			// a negative scale, which reverses the scores' order
			attnCase{s: AttentionShape{Batch: 1, Heads: 2, Seq: 90, Dim: 64}, causal: true, scale: -0.2},
			// over a million elements: 2 x 8 heads, seq 512, dim 128, causal (rows sampled)
			attnCase{s: AttentionShape{Batch: 2, Heads: 8, Seq: 512, Dim: 128}, causal: true},
		)
	case "float16", "bfloat16", "float8e4m3":
		// a caller's scale (not a float16 value), with batch 2; large scores
		out = append(out,
			attnCase{s: AttentionShape{Batch: 2, Heads: 1, Seq: 33, Dim: 128}, causal: true, scale: 0.1},
			attnCase{s: AttentionShape{Batch: 1, Heads: 1, Seq: 100, Dim: 64}, causal: false, scale: 1},
			attnCase{s: AttentionShape{Batch: 1, Heads: 2, Seq: 70, Dim: 128}, causal: true, scale: -0.09},
		)
	}
	return out
}

func testAttention[S Elem](t *testing.T, dev *engine.Device, q *engine.Queue) {
	stored, _ := elemTypes[S]()
	insts := map[int]*Attention[S]{}
	inst := func(dim int) *Attention[S] {
		dmax := 64
		for dmax < dim {
			dmax *= 2
		}
		if a := insts[dmax]; a != nil {
			return a
		}
		a, err := NewAttention[S](dev, dim)
		if err != nil {
			t.Fatal(err)
		}
		if a.MaxDim() != dmax {
			t.Fatalf("NewAttention(%d).MaxDim() = %d, want %d", dim, a.MaxDim(), dmax)
		}
		t.Logf("dim <= %d: work-group %d, BR %d, BC %d", dmax, a.WorkGroup(), a.BlockQueries(), a.BlockKeys())
		insts[dmax] = a
		return a
	}
	defer func() {
		for _, a := range insts {
			a.Close()
		}
	}()
	rng := kernels.NewRand(9, 0xa77e)
	for _, c := range attnCases(inst(64).BlockQueries(), stored.Name) {
		s := c.s
		if s.Batch*s.Heads*s.Seq*s.Dim >= 1<<20 && !kerneltest.Large(q.Device()) {
			continue
		}
		t.Run(fmt.Sprintf("b=%d,h=%d,seq=%d,dim=%d,causal=%v,scale=%g", s.Batch, s.Heads, s.Seq, s.Dim, c.causal, c.scale), func(t *testing.T) {
			runAttnCase(t, q, inst(s.Dim), c, rng)
		})
	}
}

// runAttnCase runs case c through f on random inputs of its shape in guarded buffers and
// checks the output against the float64 reference (every row, or a sample of large cases),
// the inputs unchanged and the guard bands intact.
func runAttnCase[S Elem](t *testing.T, q *engine.Queue, a forwarder[S], c attnCase, rng *rand.Rand) {
	t.Helper()
	s := c.s
	n := s.Elems()
	qh, kh, vh := randElems[S](rng, n, -2, 2), randElems[S](rng, n, -2, 2), randElems[S](rng, n, -1, 1)
	qb, kb, vb, ob := kerneltest.Guarded(t, q, qh), kerneltest.Guarded(t, q, kh), kerneltest.Guarded(t, q, vh), kerneltest.Guarded(t, q, make([]S, n))
	if err := a.Forward(q, ob, qb, kb, vb, s, c.causal, c.scale); err != nil {
		t.Fatal(err)
	}
	got := kerneltest.Download(t, q, "attention O", ob, n)
	for _, in := range []struct {
		name string
		b    *engine.Buffer[S]
		want []S
	}{{"Q", qb, qh}, {"K", kb, kh}, {"V", vb, vh}} {
		if x := kerneltest.Download(t, q, "attention "+in.name, in.b, n); !slices.Equal(x, in.want) {
			t.Fatalf("attention changed its input %s", in.name)
		}
	}
	rows := s.Batch * s.Heads * s.Seq
	var idx []int
	if rows*s.Seq*s.Dim <= 1<<24 {
		for r := range rows {
			idx = append(idx, r)
		}
	} else { // sampled: the first and last rows and 64 seeded ones
		idx = append(idx, 0, rows-1)
		for range 64 {
			idx = append(idx, rng.IntN(rows))
		}
	}
	if err := checkAttnRows(a.BlockKeys(), got, qh, kh, vh, s, c.causal, AttentionScale[S](c.scale, s.Dim), idx); err != nil {
		t.Fatal(err)
	}
}

// TestAttentionStorageTolerance checks AttentionToleranceOf for float16 and bfloat16 on
// the host: the reference rounded to the storage type (what a kernel that computed exactly
// would store) passes; one element moved three tolerances away from the reference, then
// rounded, fails with ErrVerify, at the first, a middle and the last element; and the
// tolerance stays within a few units of the storage type relative to w.
func TestAttentionStorageTolerance(t *testing.T) {
	t.Run("float16", func(t *testing.T) { testStorageTolerance[engine.Half](t) })
	t.Run("bfloat16", func(t *testing.T) { testStorageTolerance[engine.BFloat16](t) })
	t.Run("float8e4m3", func(t *testing.T) { testStorageTolerance[engine.Float8E4M3](t) })
}

func testStorageTolerance[S Elem](t *testing.T) {
	stored, _ := elemTypes[S]()
	const bc = 16
	for _, c := range []attnCase{
		{s: AttentionShape{Batch: 1, Heads: 2, Seq: 65, Dim: 80}, causal: false},
		{s: AttentionShape{Batch: 1, Heads: 2, Seq: 17, Dim: 128}, causal: true},
	} {
		s := c.s
		rng := kernels.NewRand(3, 0x701)
		n := s.Elems()
		qh, kh, vh := randElems[S](rng, n, -2, 2), randElems[S](rng, n, -2, 2), randElems[S](rng, n, -1, 1)
		scale := AttentionScale[S](0, s.Dim)
		ref := AttentionRef(qh, kh, vh, s, c.causal, scale)
		got := make([]S, n)
		for i, x := range ref {
			got[i] = roundTo[S](x)
		}
		rows := make([]int, s.Batch*s.Heads*s.Seq)
		for r := range rows {
			rows[r] = r
		}
		if err := checkAttnRows(bc, got, qh, kh, vh, s, c.causal, scale, rows); err != nil {
			t.Fatalf("%v causal=%v: the reference rounded to %s fails: %v", s, c.causal, stored.Name, err)
		}
		r := newAttnRefRow(s.Seq, s.Dim)
		for _, e := range []int{0, n / 2, n - 1} {
			row, d := e/s.Dim, e%s.Dim
			attnRefCompute(r, qh, kh, vh, s, row/s.Seq, row%s.Seq, c.causal, scale)
			tol := attnRowTol[S](r, s, bc, d)
			if max := 4 * stored.Unit * r.w[d]; !(tol < max) {
				t.Errorf("%v: tolerance %.3g of element %d above 4 units of %s times w = %.3g", s, tol, e, stored.Name, max)
			}
			bad := slices.Clone(got)
			bad[e] = roundTo[S](ref[e] + 3*tol)
			x := make([]float64, 1)
			widen(x, bad[e:e+1])
			if !(math.Abs(x[0]-ref[e]) > tol) {
				t.Fatalf("%v: element %d moved to %v, within the tolerance %.3g of %v", s, e, x[0], tol, ref[e])
			}
			err := checkAttnRows(bc, bad, qh, kh, vh, s, c.causal, scale, []int{row})
			if !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), fmt.Sprintf("element %d ", d)) {
				t.Errorf("%v: element %d moved by 3 tolerances: %v, want ErrVerify naming element %d of its row", s, e, err, d)
			}
		}
	}
}

func TestAttentionInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testAttentionInvalid[float32](t, dev, q) })
		t.Run("float16", func(t *testing.T) { testAttentionInvalid[engine.Half](t, dev, q) })
	})
}

func testAttentionInvalid[S Elem](t *testing.T, dev *engine.Device, q *engine.Queue) {
	for _, d := range []int{0, -1, 257} {
		if _, err := NewAttention[S](dev, d); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewAttention(maxDim %d): %v, want ErrInvalidArg", d, err)
		}
	}
	a, err := NewAttention[S](dev, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	buf := func(n int) *engine.Buffer[S] { return kerneltest.NewBuffer[S](t, dev, n) }
	ok := AttentionShape{Batch: 2, Heads: 3, Seq: 5, Dim: 8}
	full, short := buf(ok.Elems()), buf(ok.Elems()-1)
	for _, c := range []struct {
		name       string
		o, q, k, v *engine.Buffer[S]
		s          AttentionShape
		scale      float64
	}{
		{"batch=0", full, full, full, full, AttentionShape{0, 3, 5, 8}, 0},
		{"heads=0", full, full, full, full, AttentionShape{2, 0, 5, 8}, 0},
		{"seq=0", full, full, full, full, AttentionShape{2, 3, 0, 8}, 0},
		{"dim=0", full, full, full, full, AttentionShape{2, 3, 5, 0}, 0},
		{"seq<0", full, full, full, full, AttentionShape{2, 3, -5, 8}, 0},
		{"dim>max", full, full, full, full, AttentionShape{1, 1, 1, 65}, 0},
		{"nil o", nil, full, full, full, ok, 0},
		{"nil q", full, nil, full, full, ok, 0},
		{"nil k", full, full, nil, full, ok, 0},
		{"nil v", full, full, full, nil, ok, 0},
		{"short o", short, full, full, full, ok, 0},
		{"short q", full, short, full, full, ok, 0},
		{"short k", full, full, short, full, ok, 0},
		{"short v", full, full, full, short, ok, 0},
		{"scale NaN", full, full, full, full, ok, math.NaN()},
		{"scale Inf", full, full, full, full, ok, math.Inf(-1)},
		{"scale beyond float32", full, full, full, full, ok, 1e39},
		{"over 2^31 elements", full, full, full, full, AttentionShape{1 << 10, 1 << 10, 1 << 10, 64}, 0},
	} {
		if err := a.Forward(q, c.o, c.q, c.k, c.v, c.s, false, c.scale); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%s: %v, want ErrInvalidArg", c.name, err)
		}
	}
}

// TestAttentionTiles checks the tile choice: within 48 KiB and the work-group limit for
// every max dim and type, and the preferred tiles where they fit.
func TestAttentionTiles(t *testing.T) {
	for _, dmax := range []int{64, 128, 256} {
		for _, es := range []int{4, 8} {
			for _, maxWG := range []int{0, 1024, 256, 64} {
				c, err := pickAttnTiles(dmax, es, maxWG, 64<<10)
				if err != nil {
					t.Fatalf("dmax %d, %d-byte elements, max WG %d: %v", dmax, es, maxWG, err)
				}
				if c.localElems()*es > attnLocalBudget || (maxWG > 0 && c.wg() > maxWG) || c.bc%c.tpr != 0 || dmax%c.tpr != 0 {
					t.Errorf("dmax %d, %d-byte elements, max WG %d: tiles %+v break a limit", dmax, es, maxWG, c)
				}
			}
		}
	}
	if c, _ := pickAttnTiles(64, 4, 1024, 48<<10); c.br != 64 || c.wg() != 256 {
		t.Errorf("float, dim 64: tiles %+v, want BR 64 on 256 items", c)
	}
}

// TestAttentionLoopLimit checks the portable kernel's guard for devices that end a
// work-item's loops early (kernels.LoopLimit: Mesa's llvmpipe, behind Rusticl): there a
// shape whose work-items would loop past 90% of the limit (float32, seq 2000, head dim
// 128: wrong rows from about 1,700 keys on, unguarded) is refused with ErrUnsupported
// naming the device's limit, at Forward and at the op's Setup, while seq 1000 runs and
// verifies; elsewhere seq 2000 runs and verifies.
func TestAttentionLoopLimit(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if kerneltest.Small() {
			t.Skip("Oclgrind: the long shape takes minutes there")
		}
		a, err := NewAttention[float32](dev, 128)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		long := attnCase{s: AttentionShape{Batch: 1, Heads: 1, Seq: 2000, Dim: 128}}
		short := attnCase{s: AttentionShape{Batch: 1, Heads: 1, Seq: 1000, Dim: 128}}
		limit, n := kernels.LoopLimit(dev), a.loopIterations(long.s.Seq, long.s.Dim)
		t.Logf("loop limit %d; seq 2000 at head dim 128 counts %d iterations a work-item (BR %d, BC %d)", limit, n, a.BlockQueries(), a.BlockKeys())
		rng := kernels.NewRand(21, 0x100)
		if limit == 0 {
			runAttnCase(t, q, forwarder[float32](a), long, rng)
			return
		}
		if n <= limit/10*9 {
			t.Fatalf("seq 2000 counts %d iterations, within the limit %d: the test wants a shape past it", n, limit)
		}
		n32 := long.s.Elems()
		buf := func() *engine.Buffer[float32] { return kerneltest.Guarded(t, q, make([]float32, n32)) }
		err = a.Forward(q, buf(), buf(), buf(), buf(), long.s, false, 0)
		if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "llvmpipe") || !strings.Contains(err.Error(), fmt.Sprint(limit)) {
			t.Errorf("Forward at %v: %v; want ErrUnsupported naming llvmpipe's limit %d", long.s, err, limit)
		}
		for _, v := range attentionOp(false).Variants {
			if v.Name != "portable" {
				continue
			}
			in, err := v.Setup(t.Context(), q, kernels.Params{Shape: "1x1x2000x128", Variant: v.Name, Seed: 1})
			if err == nil {
				in.Close()
			}
			if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "llvmpipe") {
				t.Errorf("Setup at 1x1x2000x128: %v; want ErrUnsupported naming llvmpipe", err)
			}
		}
		runAttnCase(t, q, forwarder[float32](a), short, rng)
	})
}
