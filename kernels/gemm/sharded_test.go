package gemm

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/shard"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// shardedSentinel fills the padding of D's rows: the GEMM must leave it as it was.
var shardedSentinel = float32(math.Float32frombits(0x7fc0dead))

// TestShardedGEMM multiplies sharded data on every split device (PoCL and Rusticl, or two
// PoCL devices): A and C by rows, B replicated, at edge sizes (M that the device count
// does not divide, M = 1 so that a device holds no row, every row on the last device, N
// and K across the tiles of every device's tunables, padded rows), and checks D against
// the float64 reference, each row bit for bit against the one-device GEMM of the device
// holding it run over the whole problem, the padding of D's rows unchanged (A's and B's
// padding is NaN: read, it would spoil D), and the inputs unchanged.
func TestShardedGEMM(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	k := len(devs)
	qs := kerneltest.Queues(t, devs)
	prec := precisionOf("float32")
	sg, err := NewShardedGEMM[float32, float32](devs, prec)
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	shapes := [][3]int{{1, 5, 3}, {7, 33, 17}, {129, 130, 131}, {257, 65, 200}}
	if kerneltest.Small() {
		// Under Oclgrind each 9x34x35 case took 3.5 s (30 s for the eight): the two smaller
		// shapes keep a device without rows and rows not divisible by the devices.
		shapes = [][3]int{{1, 5, 3}, {7, 33, 17}}
	}
	for _, d := range shapes {
		for _, pad := range []bool{false, true} {
			if kerneltest.Small() && !pad && d[0] > 1 {
				// Under Oclgrind 7x33x17 runs with padded rows only (about 2 s a case): the
				// same kernels over the same parts, a read past a row's end landing on NaN
				// padding that would spoil D; M = 1 runs packed and padded.
				continue
			}
			for _, tb := range []bool{false, true} {
				for _, place := range []string{"even", "all on last"} {
					s := GEMMShape{M: d[0], N: d[1], K: d[2], TransB: tb}
					if pad {
						_, colsB := s.StoredB()
						s.LDA, s.LDB, s.LDC = s.K+3, colsB+2, s.N+5
					}
					s = s.WithDefaults()
					counts := shard.Even(s.M, k)
					if place == "all on last" {
						counts = append(make([]int, k-1), s.M)
					}
					name := fmt.Sprintf("%s/%s", s, place)
					t.Run(name, func(t *testing.T) { testShardedGEMM(t, sg, qs, s, counts) })
				}
			}
		}
	}
}

func testShardedGEMM(t *testing.T, sg *ShardedGEMM[float32, float32], qs []*engine.Queue, s GEMMShape, counts []int) {
	ctx := t.Context()
	rng := kernels.NewRand(uint64(s.M*1000+s.N), 7)
	_, lb, _ := s.Lens()
	// A and B hold NaN in their padding; C and D hold their rows' full width.
	a := make([]float32, s.M*s.LDA)
	b := make([]float32, lb)
	for _, x := range [][]float32{a, b} {
		for i := range x {
			x[i] = float32(math.NaN())
		}
	}
	rowsB, colsB := s.StoredB()
	for i := range s.M {
		copy(a[i*s.LDA:], kernels.RandFloats[float32](rng, s.K, -1, 1))
	}
	for i := range rowsB {
		copy(b[i*s.LDB:], kernels.RandFloats[float32](rng, colsB, -1, 1))
	}
	c := kernels.RandFloats[float32](rng, s.M*s.LDC, -1, 1)
	d := make([]float32, s.M*s.LDC)
	for i := range d {
		d[i] = shardedSentinel
	}
	const alpha, beta = float32(1.5), float32(-0.75)
	sa, err := shard.Scatter(ctx, qs, a, shard.ByRows(s.LDA), counts)
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	sb, err := shard.Scatter(ctx, qs, b, shard.Replicate(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	sc, err := shard.Scatter(ctx, qs, c, shard.ByRows(s.LDC), counts)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	sd, err := shard.Scatter(ctx, qs, d, shard.ByRows(s.LDC), counts)
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Close()
	if err := sg.Run(s, alpha, sa, sb, beta, sc, sd); err != nil {
		t.Fatal(err)
	}
	got, err := sd.Gather(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The float64 reference, from the packed inputs.
	ps := GEMMShape{M: s.M, N: s.N, K: s.K, TransB: s.TransB}.WithDefaults()
	pa, pb := make([]float32, s.M*s.K), make([]float32, rowsB*colsB)
	for i := range s.M {
		copy(pa[i*s.K:], a[i*s.LDA:i*s.LDA+s.K])
	}
	for i := range rowsB {
		copy(pb[i*colsB:], b[i*s.LDB:i*s.LDB+colsB])
	}
	pc := make([]float32, s.M*s.N)
	for i := range s.M {
		copy(pc[i*s.N:], c[i*s.LDC:i*s.LDC+s.N])
	}
	want, mag := GEMMRef(ps, float64(alpha), pa, pb, float64(beta), pc)
	owner := make([]int, s.M)
	for i, p := range sd.Parts() {
		for r := p.Off / s.LDC; r < (p.Off+p.Len)/s.LDC; r++ {
			owner[r] = i
		}
	}
	for i := range s.M {
		for j := range s.LDC {
			g := got[i*s.LDC+j]
			if j >= s.N {
				if math.Float32bits(g) != math.Float32bits(shardedSentinel) {
					t.Fatalf("D[%d][%d], padding past N=%d: %v, want it unchanged", i, j, s.N, g)
				}
				continue
			}
			w, tol := want[i*s.N+j], prec32.Tolerance(s.K, float64(alpha), mag[i*s.N+j])
			if diff := math.Abs(float64(g) - w); !(diff <= tol) {
				t.Fatalf("D[%d][%d] on %s = %v, want %v (|diff| %.3g > %.3g)", i, j, qs[owner[i]].Device().ID(), g, w, diff, tol)
			}
		}
	}
	// Bit for bit the one-device GEMM, over the whole problem, on the device holding each row.
	for dev, q := range qs {
		if counts[dev] == 0 {
			continue
		}
		one := oneDeviceGEMM(t, sg.gs[dev], q, s, alpha, a, b, beta, c)
		for i := range s.M {
			if owner[i] != dev {
				continue
			}
			for j := range s.N {
				if g, o := got[i*s.LDC+j], one[i*s.LDC+j]; math.Float32bits(g) != math.Float32bits(o) {
					t.Fatalf("D[%d][%d] on %s = %v, the one-device GEMM there %v", i, j, q.Device().ID(), g, o)
				}
			}
		}
	}
	for name, x := range map[string]struct {
		b    *shard.Buffer[float32]
		host []float32
	}{"A": {sa, a}, "B": {sb, b}, "C": {sc, c}} {
		back, err := x.b.Gather(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(back, x.host, func(p, q float32) bool { return math.Float32bits(p) == math.Float32bits(q) }) {
			t.Fatalf("input %s changed", name)
		}
	}
}

// prec32 is the float32 precision, for its tolerance.
var prec32 = precisionOf("float32")

// oneDeviceGEMM runs g over the whole problem on q and returns D.
func oneDeviceGEMM(t *testing.T, g Runner[float32, float32], q *engine.Queue, s GEMMShape, alpha float32, a, b []float32, beta float32, c []float32) []float32 {
	t.Helper()
	ctx := t.Context()
	ba, err := engine.Upload(ctx, q, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ba.Close()
	bb, err := engine.Upload(ctx, q, b)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	bc, err := engine.Upload(ctx, q, c)
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close()
	bd, err := engine.NewBuffer[float32](q.Device(), len(c))
	if err != nil {
		t.Fatal(err)
	}
	defer bd.Close()
	if err := g.RunInto(q, s, alpha, ba, bb, beta, bc, bd); err != nil {
		t.Fatal(err)
	}
	d, err := bd.Download(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestShardedGEMMApply chains: D = A*B on the devices, then E = D*B from D's rows where
// they lie, and checks E against the float64 reference of the two products.
func TestShardedGEMMApply(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	qs := kerneltest.Queues(t, devs)
	sg, err := NewShardedGEMM[float32, float32](devs, prec32)
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	ctx := t.Context()
	const n = 37
	rng := kernels.NewRand(5, 7)
	a, b := kernels.RandFloats[float32](rng, n*n, -1, 1), kernels.RandFloats[float32](rng, n*n, -1, 1)
	zero := make([]float32, n*n)
	counts := shard.Even(n, len(qs))
	sa, err := shard.Scatter(ctx, qs, a, shard.ByRows(n), counts)
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	sb, err := shard.Scatter(ctx, qs, b, shard.Replicate(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	sz, err := shard.Scatter(ctx, qs, zero, shard.ByRows(n), counts)
	if err != nil {
		t.Fatal(err)
	}
	defer sz.Close()
	s := GEMMShape{M: n, N: n, K: n}
	d, err := sg.Apply(s, 1, sa, sb, 0, sz)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	e, err := sg.Apply(s, 1, d, sb, 0, sz)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got, err := e.Gather(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ab, _ := GEMMRef(s, 1, widen(a), widen(b), 0, make([]float64, n*n))
	want, mag := GEMMRef(s, 1, ab, widen(b), 0, make([]float64, n*n))
	for i, w := range want {
		// Two products: the first's error, carried through the second, at most doubles the bound.
		if tol := 2 * prec32.Tolerance(2*n, 1, mag[i]); !(math.Abs(float64(got[i])-w) <= tol) {
			t.Fatalf("E[%d] = %v, want %v within %.3g", i, got[i], w, tol)
		}
	}
}

// TestShardedGEMMRefuses checks the calls Run refuses before any device works: A
// transposed, a batch, A in blocks or in rows of another width, B not replicated, M not
// A's rows, C and D of different layouts.
func TestShardedGEMMRefuses(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	k := len(devs)
	qs := kerneltest.Queues(t, devs)
	sg, err := NewShardedGEMM[float32, float32](devs, prec32)
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	ctx := t.Context()
	const n = 8
	mk := func(l shard.Layout, counts []int) *shard.Buffer[float32] {
		b, err := shard.Scatter(ctx, qs, make([]float32, n*n), l, counts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	rows, rep := mk(shard.ByRows(n), shard.Even(n, k)), mk(shard.Replicate(), nil)
	blocks, narrow := mk(shard.ByBlocks(n), nil), mk(shard.ByRows(n/2), shard.Even(2*n, k))
	other := mk(shard.ByRows(n), append(make([]int, k-1), n))
	d := mk(shard.ByRows(n), shard.Even(n, k))
	s := GEMMShape{M: n, N: n, K: n}
	for _, c := range []struct {
		name       string
		s          GEMMShape
		a, b, c, d *shard.Buffer[float32]
		want       error
	}{
		{"A transposed", GEMMShape{M: n, N: n, K: n, TransA: true}, rows, rep, rows, d, engine.ErrUnsupported},
		{"batched", GEMMShape{M: n, N: n, K: n, Batch: 2}, rows, rep, rows, d, engine.ErrUnsupported},
		{"A in blocks", s, blocks, rep, rows, d, engine.ErrInvalidArg},
		{"A in rows of lda/2", s, narrow, rep, rows, d, engine.ErrInvalidArg},
		{"B by rows", s, rows, rows, rows, d, engine.ErrInvalidArg},
		{"M not A's rows", GEMMShape{M: n - 1, N: n, K: n}, rows, rep, rows, d, engine.ErrInvalidArg},
		{"C and D apart", s, rows, rep, rows, other, engine.ErrInvalidArg},
		{"A's rows apart from C's", s, other, rep, rows, d, engine.ErrInvalidArg},
	} {
		if err := sg.Run(c.s, 1, c.a, c.b, 0, c.c, c.d); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}
