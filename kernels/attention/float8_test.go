package attention

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// pickInputs returns Q, K and V of shape s in S whose attention is a lookup: key j of each
// head is 20 on two dimensions of its own (a distinct pair, dim*(dim-1)/2 >= seq), zero
// elsewhere; query i equals the key pick[h][i] (at most i when causal) chosen at random; V
// is random in [-1, 1). At the default scale 1/sqrt(dim) (dim <= 256) query i scores 800*scale
// against its key and at most 400*scale against any other, 25 or more apart in e's powers,
// so that every other weight is below 2^-36 of its key's: O's row i is V's row pick[h][i],
// exactly once rounded to S, whatever the kernel rounds P to. A kernel that pairs a weight
// with another key's row of V, or stores a row in another's place, gets another row of V.
func pickInputs[S Elem](rng *rand.Rand, s AttentionShape, causal bool) (q, k, v []S, pick [][]int) {
	n := s.Elems()
	q, k = make([]S, n), make([]S, n)
	v = randElems[S](rng, n, -1, 1)
	twenty := roundTo[S](20)
	var pairs [][2]int
	for a := range s.Dim {
		for b := a + 1; b < s.Dim; b++ {
			pairs = append(pairs, [2]int{a, b})
		}
	}
	for h := range s.Batch * s.Heads {
		rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
		base := h * s.Seq * s.Dim
		for j := range s.Seq {
			k[base+j*s.Dim+pairs[j][0]] = twenty
			k[base+j*s.Dim+pairs[j][1]] = twenty
		}
		row := make([]int, s.Seq)
		for i := range s.Seq {
			keys := s.Seq
			if causal {
				keys = i + 1
			}
			row[i] = rng.IntN(keys)
			q[base+i*s.Dim+pairs[row[i]][0]] = twenty
			q[base+i*s.Dim+pairs[row[i]][1]] = twenty
		}
		pick = append(pick, row)
	}
	return q, k, v, pick
}

// runPickCase runs f on pickInputs of shape s and checks that each output row is its pick's
// row of V, value for value (a signed zero may come out either way), and that the guard
// bands are intact.
func runPickCase[S Elem](t *testing.T, q *engine.Queue, f forwarder[S], s AttentionShape, causal bool, rng *rand.Rand) {
	t.Helper()
	qh, kh, vh, pick := pickInputs[S](rng, s, causal)
	n := s.Elems()
	qb, kb, vb, ob := kerneltest.Guarded(t, q, qh), kerneltest.Guarded(t, q, kh), kerneltest.Guarded(t, q, vh), kerneltest.Guarded(t, q, make([]S, n))
	if err := f.Forward(q, ob, qb, kb, vb, s, causal, 0); err != nil {
		t.Fatal(err)
	}
	got := kerneltest.Download(t, q, "attention O", ob, n)
	g, w := make([]float64, s.Dim), make([]float64, s.Dim)
	var bad []string
	for h, row := range pick {
		for i, j := range row {
			o := (h*s.Seq + i) * s.Dim
			widen(g, got[o:o+s.Dim])
			widen(w, vh[(h*s.Seq+j)*s.Dim:(h*s.Seq+j+1)*s.Dim])
			for d := range g {
				if g[d] != w[d] {
					bad = append(bad, fmt.Sprintf("head %d, query %d (picks key %d), dim %d: %v, want %v", h, i, j, d, g[d], w[d]))
					break
				}
			}
		}
	}
	if len(bad) > 0 {
		t.Fatalf("%v causal=%v: %d rows differ from their key's row of V:\n%s", s, causal, len(bad), strings.Join(bad[:min(len(bad), 10)], "\n"))
	}
}

// pickShapes are the shapes of the lookup tests at head dim dim: seq 1, 17, 127 to 129, 300
// and 1000 (partial tiles, several tiles, the ring of stages turning) in two heads, and a
// batch of two. (Rusticl on llvmpipe ends every loop of a work-item after 65,535 iterations
// in all, Mesa's LP_MAX_TGSI_LOOP_ITERATIONS: the portable kernel's key loop at head dim 128
// reaches that near 1,700 keys there; the portable runs stop at 300.)
func pickShapes(dim int) []AttentionShape {
	var out []AttentionShape
	for _, seq := range []int{1, 17, 127, 128, 129, 300, 1000} {
		out = append(out, AttentionShape{Batch: 1, Heads: 2, Seq: seq, Dim: dim})
	}
	return append(out, AttentionShape{Batch: 2, Heads: 1, Seq: 200, Dim: dim})
}

// TestAttentionFloat8Pick checks the float8e4m3 attention where its answer is exact
// (pickInputs): the portable kernel on every device at head dims 64 and 128, and the wgmma
// kernel on CUDA GPUs of sm_90 with each of its candidates, full and causal. Random inputs
// (TestAttention, TestAttentionWGMMA) meet a tolerance of float8's units, within which a
// wrong pairing of weights and keys could hide; here it cannot.
func TestAttentionFloat8Pick(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		rng := kernels.NewRand(17, 0xf8)
		t.Run("portable", func(t *testing.T) {
			dims := []int{64, 128}
			// 1,000 keys turn the wgmma kernel's ring of stages; the portable kernel has none,
			// and its loop over key tiles runs several times at 300 (on Rusticl the four
			// cases of 1,000 took 22 of this test's 28 s).
			shapes := func(dim int) []AttentionShape {
				return slices.DeleteFunc(pickShapes(dim), func(s AttentionShape) bool { return s.Seq > 300 })
			}
			if kerneltest.Small() { // Oclgrind: one small case
				dims = []int{128}
				shapes = func(dim int) []AttentionShape { return []AttentionShape{{Batch: 1, Heads: 1, Seq: 9, Dim: dim}} }
			}
			for _, dim := range dims {
				a, err := NewAttention[engine.Float8E4M3](dev, dim)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				for _, s := range shapes(dim) {
					for _, causal := range []bool{false, true} {
						t.Run(fmt.Sprintf("%v,causal=%v", s, causal), func(t *testing.T) { runPickCase(t, q, a, s, causal, rng) })
					}
				}
			}
		})
		t.Run("wgmma", func(t *testing.T) {
			// Head dim 128 with each candidate (a seq of 4096 too), 64 and 256 with their
			// defaults (the 64-byte swizzle of Q and K at 64, of V's copy at 256).
			type trial struct {
				dim int
				t   WGMMATunables
			}
			var trials []trial
			for _, tn := range wgmmaFloat8Candidates {
				trials = append(trials, trial{128, tn})
			}
			trials = append(trials, trial{64, WGMMADefaults(64)}, trial{256, WGMMADefaults(256)})
			for _, tr := range trials {
				w, err := NewWGMMAWith[engine.Float8E4M3](dev, tr.dim, tr.t)
				if errors.Is(err, engine.ErrUnsupported) {
					if dev.Backend() == "cuda" && dev.Info().ComputeCapability == 90 {
						t.Fatalf("%s should run the float8 wgmma attention: %v", dev.ID(), err)
					}
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				// and 2000 keys (at most dim*(dim-1)/2: 2016 at dim 64), 4096 at 128
				shapes := append(pickShapes(tr.dim), AttentionShape{Batch: 1, Heads: 1, Seq: 2000, Dim: tr.dim})
				if tr.dim >= 128 {
					shapes = append(shapes, AttentionShape{Batch: 1, Heads: 2, Seq: 4096, Dim: tr.dim})
				}
				for _, s := range shapes {
					for _, causal := range []bool{false, true} {
						t.Run(fmt.Sprintf("%s/%v,causal=%v", strings.ReplaceAll(tr.t.String(), " ", ","), s, causal), func(t *testing.T) {
							runPickCase(t, q, w, s, causal, rng)
						})
					}
				}
			}
		})
	})
}

// TestAttentionFloat8Refusals checks that the float8 wgmma attention refuses what it does
// not take, naming it: a head dim other than 64, 128 and 256 (ErrUnsupported, on every
// device), and, where the device runs it, tiles of other than 128 keys at head dims 64 and
// 128 and of 128 keys at 256 (ErrInvalidArg).
func TestAttentionFloat8Refusals(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		runs := dev.Backend() == "cuda" && dev.Info().ComputeCapability == 90
		w, err := NewWGMMA[engine.Float8E4M3](dev, 80)
		if err == nil {
			w.Close()
		}
		if !errors.Is(err, engine.ErrUnsupported) || runs && !strings.Contains(err.Error(), "not 80") {
			t.Errorf("dim 80: %v; want ErrUnsupported naming the head dim", err)
		}
		if !runs {
			return
		}
		for _, c := range []struct {
			dim  int
			t    WGMMATunables
			want string
		}{
			{128, WGMMATunables{Stages: 2, Sched: 1, BC: 64}, "BC=128"},
			{64, WGMMATunables{Stages: 2, Sched: 1, BC: 176}, "BC=128"},
			{256, WGMMATunables{Stages: 2, Sched: 1, BC: 128}, "BC=64"},
		} {
			w, err := NewWGMMAWith[engine.Float8E4M3](dev, c.dim, c.t)
			if err == nil {
				w.Close()
			}
			if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("dim %d, %s: %v; want ErrInvalidArg naming %s", c.dim, c.t, err, c.want)
			}
		}
	})
}
