package attention

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// flashTestTunables are the tiles TestFlash builds for head dimensions up to 64 (above
// it, the defaults): the defaults (FlashDefaults); small tiles that give several query and
// key blocks at small sizes (16 queries x 8 keys on 16 work-items: 4 x 2 scores, 4 x 16
// outputs); two work-items per query row (8 x 8 on 8 items, TK = 4: the row maxima read
// one by one).
var flashTestTunables = []FlashTunables{
	{},
	{BQ: 16, BK: 8, TQ: 4, TK: 2},
	{BQ: 8, BK: 8, TQ: 2, TK: 4},
}

// flashCases returns TestFlash's cases for tiles t (bq queries per work-group, bk keys per
// block): attnCases (seq 1, 7, bq-1, bq+1 and 100, dims 1, 16, 64 and 80, batch 2 x 3
// heads, causal and not, a caller's scale, dim 200, large scores, a large sampled case),
// plus seq bk-1, bk, bk+1 and 3*bq+5 at dim 64 (one key block, several, a partial last
// query block). Under small() (Oclgrind) a few tiny ones.
func flashCases(bq, bk int) []attnCase {
	if kerneltest.Small() {
		return []attnCase{
			{s: AttentionShape{Batch: 2, Heads: 1, Seq: 5, Dim: 3}, causal: true},
			{s: AttentionShape{Batch: 1, Heads: 1, Seq: 1, Dim: 8}, causal: false},
			{s: AttentionShape{Batch: 1, Heads: 1, Seq: max(bq, bk) + 3, Dim: 8}, causal: true},
			{s: AttentionShape{Batch: 1, Heads: 2, Seq: bk + 1, Dim: 4}, causal: false, scale: 0.3},
		}
	}
	out := attnCases(bq, "float32")
	for _, seq := range []int{bk - 1, bk, bk + 1, 3*bq + 5} {
		for _, causal := range []bool{false, true} {
			out = append(out, attnCase{s: AttentionShape{Batch: 1, Heads: 2, Seq: max(seq, 1), Dim: 64}, causal: causal})
		}
	}
	return out
}

// TestFlash checks the flash-simt kernel (attention_flash.cl) against the float64
// reference with the family's tolerances on every device, CPUs included (NewFlash builds
// there; only the variant's Needs turns them away), with each of flashTestTunables, on
// flashCases: guard bands intact, inputs unchanged.
func TestFlash(t *testing.T) {
	first := true
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		// Every tile set and head width on the first device; the default tiles and heads up
		// to 64 on the others (Rusticl runs this kernel in tiles shrunk to 16 items, seconds
		// a case, and each wider head is a build of its own).
		tunables, wide := flashTestTunables, first
		if !first {
			tunables = tunables[:1]
		}
		first = false
		for _, tun := range tunables {
			name := "default"
			if tun != (FlashTunables{}) {
				name = strings.ReplaceAll(tun.String(), " ", ",")
			}
			t.Run(name, func(t *testing.T) { testFlash(t, dev, q, tun, wide) })
		}
	})
}

// testFlash runs flashCases with tiles tun; heads wider than 64 only with wide.
func testFlash(t *testing.T, dev *engine.Device, q *engine.Queue, tun FlashTunables, wide bool) {
	insts := map[int]*Flash{}
	inst := func(dim int) *Flash {
		dmax := 64
		for dmax < dim {
			dmax *= 2
		}
		if f := insts[dmax]; f != nil {
			return f
		}
		tt := tun
		if dmax > 64 {
			// The defaults: small tiles of wide heads hold hundreds of accumulators per
			// work-item, which take PoCL half a minute to compile.
			tt = FlashTunables{}
		}
		f, err := NewFlash(dev, dim, tt)
		if err != nil {
			t.Fatal(err)
		}
		if f.MaxDim() != dmax {
			t.Fatalf("NewFlash(%d).MaxDim() = %d, want %d", dim, f.MaxDim(), dmax)
		}
		at := f.k.Attributes()
		t.Logf("dim <= %d: %s, %d work-items, %d bytes local, %d registers, %d bytes private", dmax, f.Tunables(), f.Tunables().Items(), at.LocalBytes, at.Registers, at.PrivateBytes)
		insts[dmax] = f
		return f
	}
	defer func() {
		for _, f := range insts {
			f.Close()
		}
	}()
	rng := kernels.NewRand(11, 0xf1a5)
	f64 := inst(64).Tunables()
	for _, c := range flashCases(f64.BQ, f64.BK) {
		s := c.s
		if s.Dim > 64 && !wide {
			continue
		}
		t.Run(fmt.Sprintf("b=%d,h=%d,seq=%d,dim=%d,causal=%v,scale=%g", s.Batch, s.Heads, s.Seq, s.Dim, c.causal, c.scale), func(t *testing.T) {
			runAttnCase[float32](t, q, inst(s.Dim), c, rng)
		})
	}
}

// TestFlashVariant checks the float32 ops' variant lists: flash-simt first, the portable
// kernel last; Fits accepts flash-simt on GPUs and on CPUs whose local memory holds the
// default tiles, and refuses it on other CPUs, naming the local memory.
func TestFlashVariant(t *testing.T) {
	for _, causal := range []bool{false, true} {
		op := attentionOp(causal)
		if n := len(op.Variants); n != 2 || op.Variants[0].Name != FlashName || op.Variants[n-1].Name != kernels.PortableName {
			t.Fatalf("%s: variants %v, want [%s %s]", op.Name, op.Variants, FlashName, kernels.PortableName)
		}
	}
	v := attentionOp(false).Variants[0]
	need := FlashDefaults(attnOpDim).localBytes(attnOpDim, 4)
	for _, c := range []struct {
		info engine.DeviceInfo
		ok   bool
	}{
		{engine.DeviceInfo{Kind: engine.KindGPU, LocalMemBytes: 16 << 10}, true},
		{engine.DeviceInfo{Kind: engine.KindCPU, LocalMemBytes: need}, true},
		{engine.DeviceInfo{Kind: engine.KindCPU, LocalMemBytes: 32 << 10}, false},
		{engine.DeviceInfo{Kind: engine.KindCPU}, false},
	} {
		if err := v.Needs(c.info); (err == nil) != c.ok || (err != nil && !strings.Contains(err.Error(), "local memory")) {
			t.Errorf("Needs(%v, %d bytes of local memory) = %v, want ok %v", c.info.Kind, c.info.LocalMemBytes, err, c.ok)
		}
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		info := dev.Info()
		err := v.Fits(dev)
		if want := info.Kind != engine.KindCPU || info.LocalMemBytes >= need; (err == nil) != want || (err != nil && !errors.Is(err, engine.ErrUnsupported)) {
			t.Errorf("flash-simt on %s (%v, %d bytes of local memory): Fits = %v, want fits %v", dev.ID(), info.Kind, info.LocalMemBytes, err, want)
		}
	})
}

// TestFlashTunables checks ParseFlashTunables, Validate and the shrinking to a device's
// limits on the host: String round-trips, the candidates and defaults are valid and fit
// 48 KiB, malformed and out-of-range sets fail with ErrInvalidArg, and shrink keeps the
// constraints down to 32 work-items (Rusticl's limit).
func TestFlashTunables(t *testing.T) {
	for _, dmax := range []int{64, 128, 256} {
		d := FlashDefaults(dmax)
		if err := d.Validate(dmax); err != nil {
			t.Errorf("defaults for %d: %v", dmax, err)
		}
		if b := d.localBytes(dmax, 4); b > flashLocalBudget {
			t.Errorf("defaults for %d: %d bytes of local memory, more than %d", dmax, b, flashLocalBudget)
		}
	}
	for _, c := range flashCandidates {
		if err := c.Validate(attnOpDim); err != nil {
			t.Errorf("candidate %s: %v", c, err)
		}
		if b := c.localBytes(attnOpDim, 4); b > flashLocalBudget {
			t.Errorf("candidate %s: %d bytes of local memory, more than %d", c, b, flashLocalBudget)
		}
		got, err := ParseFlashTunables(c.String())
		if err != nil || got != c {
			t.Errorf("ParseFlashTunables(%q) = %v, %v; want %v", c.String(), got, err, c)
		}
		for s := c; ; {
			if err := s.Validate(attnOpDim); err != nil {
				t.Errorf("%s shrunk to %s: %v", c, s, err)
			}
			n, ok := s.shrink()
			if !ok {
				if s.Items() > 32 {
					t.Errorf("%s shrinks no further than %s, %d work-items", c, s, s.Items())
				}
				break
			}
			if n.Items() >= s.Items() {
				t.Errorf("%s: shrink %s -> %s does not lower the work-items", c, s, n)
			}
			s = n
		}
	}
	for _, s := range []string{"", "BQ=64 BK=32 TQ=8", "BQ=64 BK=32 TQ=8 TK=2 TK=2", "BQ=64 BK=32 TQ=8 TK=x",
		"BQ=64 BK=2 TQ=8 TK=2", "BQ=0 BK=32 TQ=8 TK=2", "BQ=64 BK=32 TQ=8 TK=2 WG=128"} {
		if _, err := ParseFlashTunables(s); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("ParseFlashTunables(%q): %v, want ErrInvalidArg", s, err)
		}
	}
	for _, c := range []FlashTunables{
		{BQ: 60, BK: 32, TQ: 8, TK: 2}, // TQ does not divide BQ
		{BQ: 64, BK: 30, TQ: 8, TK: 2}, // BK not a multiple of 4
		{BQ: 64, BK: 32, TQ: 8, TK: 1}, // 4*BK/TK = 128 does not divide 64
		{BQ: 256, BK: 32, TQ: 1, TK: 2},
	} {
		if err := c.Validate(64); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%s.Validate(64): %v, want ErrInvalidArg", c, err)
		}
	}
	if _, _, err := flashTunablesFor(nil, "attention/full/float32", "BQ=64 BK=32 TQ=8 TK=1", attnOpDim); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("forced tunables that break the constraints: %v, want ErrInvalidArg", err)
	}
}

// TestFlashInvalid checks NewFlash's and Forward's argument checks: max dims outside 1 to
// 256, a nil device, tiles that break the constraints, a dim above the instance's, a nil
// buffer and a scale whose product with log2(e) overflows float32 fail with ErrInvalidArg.
func TestFlashInvalid(t *testing.T) {
	if _, err := NewFlash(nil, 64, FlashTunables{}); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("NewFlash(nil device): %v, want ErrInvalidArg", err)
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, d := range []int{0, -1, 257} {
			if _, err := NewFlash(dev, d, FlashTunables{}); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("NewFlash(maxDim %d): %v, want ErrInvalidArg", d, err)
			}
		}
		if _, err := NewFlash(dev, 64, FlashTunables{BQ: 64, BK: 32, TQ: 8, TK: 1}); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewFlash with 4*BK/TK = 128 > 64: %v, want ErrInvalidArg", err)
		}
		f, err := NewFlash(dev, 64, FlashTunables{})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ok := AttentionShape{Batch: 1, Heads: 2, Seq: 5, Dim: 8}
		buf := kerneltest.NewBuffer[float32](t, dev, 2*65)
		for _, c := range []struct {
			name       string
			o, q, k, v *engine.Buffer[float32]
			s          AttentionShape
			scale      float64
		}{
			{"dim>max", buf, buf, buf, buf, AttentionShape{1, 1, 1, 65}, 0},
			{"seq=0", buf, buf, buf, buf, AttentionShape{1, 1, 0, 8}, 0},
			{"nil v", buf, buf, buf, nil, ok, 0},
			{"scale*log2(e) beyond float32", buf, buf, buf, buf, ok, 3e38},
		} {
			if err := f.Forward(q, c.o, c.q, c.k, c.v, c.s, false, c.scale); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, err)
			}
		}
	})
}

// TestFlashLoopLimit checks that Forward refuses, naming the limit, a shape whose
// work-items would loop past 90% of the device's loop limit (kernels.LoopLimit: Mesa's
// llvmpipe), where attention_flash.cl would return wrong rows, and runs a short one there;
// a device without a limit takes the long shape.
func TestFlashLoopLimit(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		f, err := NewFlash(dev, 64, FlashTunables{})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		long := AttentionShape{Batch: 1, Heads: 1, Seq: 2000, Dim: 64}
		limit := kernels.LoopLimit(dev)
		if limit == 0 {
			if err := f.checkLoops(long); err != nil {
				t.Errorf("checkLoops at %v without a loop limit: %v", long, err)
			}
			return
		}
		n := long.Elems()
		buf := func() *engine.Buffer[float32] { return kerneltest.Guarded(t, q, make([]float32, n)) }
		err = f.Forward(q, buf(), buf(), buf(), buf(), long, true, 0)
		if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "llvmpipe") || !strings.Contains(err.Error(), fmt.Sprint(limit)) {
			t.Errorf("Forward at %v: %v; want ErrUnsupported naming llvmpipe's limit %d", long, err, limit)
		}
		if kerneltest.Small() {
			return
		}
		short := attnCase{s: AttentionShape{Batch: 1, Heads: 1, Seq: 300, Dim: 64}, causal: true}
		runAttnCase(t, q, forwarder[float32](f), short, kernels.NewRand(22, 0x200))
	})
}
