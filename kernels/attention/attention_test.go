package attention

import (
	"errors"
	"fmt"
	"math"
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
	})
}

// attnCase is one attention test: a shape, the mask, and a scale (0: the default).
type attnCase struct {
	s      AttentionShape
	causal bool
	scale  float64
}

// attnCases returns the shapes for an instance with query blocks of br: seq 1, 7, br-1,
// br+1, 100; dim 1, 16, 64 and 80 (not a power of two, the 128-wide tiles); batch 2 and 3
// heads; causal and not. Under small() (Oclgrind) a handful of tiny ones.
func attnCases(br int, double bool) []attnCase {
	var out []attnCase
	if kerneltest.Small() { // Oclgrind: a few work-groups per case
		return []attnCase{
			{s: AttentionShape{Batch: 1, Heads: 2, Seq: 7, Dim: 1}, causal: true},
			{s: AttentionShape{Batch: 1, Heads: 1, Seq: br + 1, Dim: 16}, causal: false},
			{s: AttentionShape{Batch: 1, Heads: 1, Seq: br + 1, Dim: 16}, causal: true},
			{s: AttentionShape{Batch: 1, Heads: 1, Seq: 7, Dim: 80}, causal: false, scale: 0.3},
		}
	}
	seqs, dims := []int{1, 7, br - 1, br + 1, 100}, []int{1, 16, 64, 80}
	if double {
		seqs, dims = []int{7, br + 1}, []int{16, 80}
	}
	for _, seq := range seqs {
		for _, dim := range dims {
			for _, causal := range []bool{false, true} {
				out = append(out, attnCase{s: AttentionShape{Batch: 2, Heads: 3, Seq: seq, Dim: dim}, causal: causal})
			}
		}
	}
	if !double {
		out = append(out,
			// a caller's scale; a dim needing the 256-wide tiles; large scores (scale 1 at dim
			// 64: scores up to hundreds, softmax nearly one-hot)
			attnCase{s: AttentionShape{Batch: 1, Heads: 2, Seq: 70, Dim: 48}, causal: true, scale: 0.3},
			attnCase{s: AttentionShape{Batch: 1, Heads: 1, Seq: 40, Dim: 200}, causal: false},
			attnCase{s: AttentionShape{Batch: 1, Heads: 2, Seq: 130, Dim: 64}, causal: false, scale: 1},
			// over a million elements: 2 x 8 heads, seq 512, dim 128, causal (rows sampled)
			attnCase{s: AttentionShape{Batch: 2, Heads: 8, Seq: 512, Dim: 128}, causal: true},
		)
	}
	return out
}

func testAttention[T kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue) {
	var z T
	_, double := any(z).(float64)
	insts := map[int]*Attention[T]{}
	inst := func(dim int) *Attention[T] {
		dmax := 64
		for dmax < dim {
			dmax *= 2
		}
		if a := insts[dmax]; a != nil {
			return a
		}
		a, err := NewAttention[T](dev, dim)
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
	for _, c := range attnCases(inst(64).BlockQueries(), double) {
		s := c.s
		t.Run(fmt.Sprintf("b=%d,h=%d,seq=%d,dim=%d,causal=%v,scale=%g", s.Batch, s.Heads, s.Seq, s.Dim, c.causal, c.scale), func(t *testing.T) {
			a := inst(s.Dim)
			n := s.Elems()
			qh, kh, vh := kernels.RandFloats[T](rng, n, -2, 2), kernels.RandFloats[T](rng, n, -2, 2), kernels.RandFloats[T](rng, n, -1, 1)
			qb, kb, vb, ob := kerneltest.Guarded(t, q, qh), kerneltest.Guarded(t, q, kh), kerneltest.Guarded(t, q, vh), kerneltest.Guarded(t, q, make([]T, n))
			if err := a.Forward(q, ob, qb, kb, vb, s, c.causal, T(c.scale)); err != nil {
				t.Fatal(err)
			}
			got := kerneltest.Download(t, q, "attention O", ob, n)
			scale := T(c.scale)
			if scale == 0 {
				scale = DefaultAttentionScale[T](s.Dim)
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
			if err := checkAttnRows(a, got, qh, kh, vh, s, c.causal, float64(scale), idx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestAttentionInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, d := range []int{0, -1, 257} {
			if _, err := NewAttention[float32](dev, d); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("NewAttention(maxDim %d): %v, want ErrInvalidArg", d, err)
			}
		}
		a, err := NewAttention[float32](dev, 64)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		buf := func(n int) *engine.Buffer[float32] { return kerneltest.NewBuffer[float32](t, dev, n) }
		ok := AttentionShape{Batch: 2, Heads: 3, Seq: 5, Dim: 8}
		full, short := buf(ok.Elems()), buf(ok.Elems()-1)
		for _, c := range []struct {
			name       string
			o, q, k, v *engine.Buffer[float32]
			s          AttentionShape
			scale      float32
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
			{"scale NaN", full, full, full, full, ok, float32(math.NaN())},
			{"scale Inf", full, full, full, full, ok, float32(math.Inf(-1))},
			{"over 2^31 elements", full, full, full, full, AttentionShape{1 << 10, 1 << 10, 1 << 10, 64}, 0},
		} {
			if err := a.Forward(q, c.o, c.q, c.k, c.v, c.s, false, c.scale); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, err)
			}
		}
	})
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
