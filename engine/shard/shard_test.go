package shard_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	_ "github.com/prism-compute/prism/cl"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/group"
	"github.com/prism-compute/prism/engine/shard"
)

// queues opens every OpenCL device (PoCL, and Rusticl where RUSTICL_ENABLE lists
// llvmpipe; POCL_DEVICES="pthread pthread" gives two PoCL devices), the first one twice
// where that leaves one, and a queue on each, closed when the test ends.
func queues(t *testing.T) []*engine.Queue {
	t.Helper()
	infos, err := engine.Devices(t.Context(), "opencl")
	if err != nil || len(infos) == 0 {
		t.Skipf("no OpenCL device: %v", err)
	}
	var ids []string
	for _, d := range infos {
		ids = append(ids, "opencl:"+d.ID)
	}
	if len(ids) == 1 {
		ids = append(ids, ids[0])
	}
	t.Logf("devices %v", ids)
	qs := make([]*engine.Queue, len(ids))
	for i, id := range ids {
		d, err := engine.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		if qs[i], err = d.NewQueue(); err != nil {
			t.Fatal(err)
		}
	}
	return qs
}

func randFloats(seed uint64, n int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.Float64()*2 - 1)
	}
	return x
}

// TestScatterGather scatters random data in every layout at edge sizes (one element,
// sizes the device count does not divide, parts of no element) and gathers it back
// unchanged; each part holds its own range, and Like and FromBuffers keep the layout.
func TestScatterGather(t *testing.T) {
	qs := queues(t)
	k := len(qs)
	for _, n := range []int{1, 7, 257, 4097} {
		host := randFloats(uint64(n), n)
		cases := []struct {
			name   string
			l      shard.Layout
			counts []int
		}{
			{"even rows", shard.ByRows(1), shard.Even(n, k)},
			{"all on last", shard.ByRows(1), append(make([]int, k-1), n)},
			{"all on first", shard.ByRows(1), append([]int{n}, make([]int, k-1)...)},
			{"blocks of 3", shard.ByBlocks(3), nil},
			{"blocks of 256", shard.ByBlocks(256), nil},
			{"replicated", shard.Replicate(), nil},
		}
		if n%7 == 0 {
			cases = append(cases, struct {
				name   string
				l      shard.Layout
				counts []int
			}{"rows of 7", shard.ByRows(7), shard.Even(n/7, k)})
		}
		for _, c := range cases {
			b, err := shard.Scatter(t.Context(), qs, host, c.l, c.counts)
			if err != nil {
				t.Fatalf("n=%d %s: %v", n, c.name, err)
			}
			got, err := b.Gather(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, host) {
				t.Errorf("n=%d %s: gather differs from the scattered data", n, c.name)
			}
			total := 0
			for i, p := range b.Parts() {
				total += p.Len
				if (p.Buf == nil) != (p.Len == 0) {
					t.Errorf("n=%d %s: part %d holds %d elements in buffer %v", n, c.name, i, p.Len, p.Buf)
				}
				if c.l.Kind == shard.Rows && p.Len > 0 {
					own, err := p.Buf.Download(t.Context(), p.Queue)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(own, host[p.Off:p.Off+p.Len]) {
						t.Errorf("n=%d %s: part %d does not hold elements %d to %d", n, c.name, i, p.Off, p.Off+p.Len)
					}
				}
			}
			if want := n; c.l.Kind == shard.Replicated {
				want = n * k
				if total != want {
					t.Errorf("n=%d %s: parts hold %d elements, want %d", n, c.name, total, want)
				}
			} else if total != want {
				t.Errorf("n=%d %s: parts hold %d elements, want %d", n, c.name, total, want)
			}
			out, err := shard.Like(b)
			if err != nil {
				t.Fatal(err)
			}
			if err := shard.SameLayout(b, out); err != nil {
				t.Errorf("n=%d %s: Like: %v", n, c.name, err)
			}
			out.Close()
			// The parts taken over as buffers make the same Buffer.
			bufs := make([]*engine.Buffer[float32], k)
			for i, p := range b.Parts() {
				if p.Len > 0 {
					if bufs[i], err = engine.Upload(t.Context(), p.Queue, mustDownload(t, p)); err != nil {
						t.Fatal(err)
					}
				}
			}
			fb, err := shard.FromBuffers(qs, bufs, c.l)
			if err != nil {
				t.Fatalf("n=%d %s: FromBuffers: %v", n, c.name, err)
			}
			if got, err := fb.Gather(t.Context()); err != nil || !slices.Equal(got, host) {
				t.Errorf("n=%d %s: FromBuffers then Gather: %v, equal %v", n, c.name, err, slices.Equal(got, host))
			}
			fb.Close()
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Gather(t.Context()); !errors.Is(err, engine.ErrClosed) {
				t.Errorf("gather after Close: %v, want ErrClosed", err)
			}
		}
	}
}

func mustDownload(t *testing.T, p shard.Part[float32]) []float32 {
	t.Helper()
	x, err := p.Buf.Download(t.Context(), p.Queue)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestScatterRefuses checks the arguments Scatter and FromBuffers refuse.
func TestScatterRefuses(t *testing.T) {
	qs := queues(t)
	k := len(qs)
	host := randFloats(1, 10)
	for _, c := range []struct {
		name   string
		qs     []*engine.Queue
		host   []float32
		l      shard.Layout
		counts []int
	}{
		{"no queue", nil, host, shard.ByRows(1), nil},
		{"one device twice", []*engine.Queue{qs[0], qs[0]}, host, shard.ByRows(1), []int{5, 5}},
		{"no data", qs, nil, shard.ByRows(1), make([]int, k)},
		{"counts short", qs, host, shard.ByRows(1), []int{10}},
		{"counts sum", qs, host, shard.ByRows(1), append([]int{9}, make([]int, k-1)...)},
		{"count negative", qs, host, shard.ByRows(1), append([]int{11, -1}, make([]int, k-2)...)},
		{"not whole rows", qs, host, shard.ByRows(3), shard.Even(3, k)},
		{"blocks of 0", qs, host, shard.ByBlocks(0), nil},
		{"counts for blocks", qs, host, shard.ByBlocks(2), shard.Even(10, k)},
	} {
		b, err := shard.Scatter(t.Context(), c.qs, c.host, c.l, c.counts)
		if !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("%s: %v, want ErrInvalidArg", c.name, err)
		}
		b.Close()
	}
	one, err := engine.Upload(t.Context(), qs[0], host[:3])
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	bufs := make([]*engine.Buffer[float32], k)
	bufs[k-1] = one // on device 0, given for the last
	if _, err := shard.FromBuffers(qs, bufs, shard.ByRows(1)); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("a buffer on another device: %v, want ErrInvalidArg", err)
	}
	bufs[k-1], bufs[0] = nil, one
	if _, err := shard.FromBuffers(qs, bufs, shard.Replicate()); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("replicated with a device missing: %v, want ErrInvalidArg", err)
	}
	if _, err := shard.FromBuffers(qs, bufs, shard.ByBlocks(1)); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("blocks of 1 all on device 0: %v, want ErrInvalidArg", err)
	}
}

// TestCombine reduces per-device partials through a group's all-reduce and through the
// host, with a device that computed nothing: both leave the same result on every device,
// equal to the partials reduced in device order.
func TestCombine(t *testing.T) {
	qs := queues(t)
	k := len(qs)
	devs := make([]*engine.Device, k)
	for i, q := range qs {
		devs[i] = q.Device()
	}
	g, err := group.New(t.Context(), devs, group.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, op := range []group.ReduceOp{group.ReduceSum, group.ReduceMax, group.ReduceMin} {
		for _, gr := range []*group.Group{g, nil} {
			vals := make([][]float32, k)
			parts := make([]*engine.Buffer[float32], k)
			var want []float32
			for i := range k - 1 { // the last device computed nothing
				vals[i] = randFloats(uint64(10*i+int(op)), 5)
				if parts[i], err = engine.Upload(t.Context(), qs[i], vals[i]); err != nil {
					t.Fatal(err)
				}
				if want == nil {
					want = slices.Clone(vals[i])
					continue
				}
				for j := range want {
					switch op {
					case group.ReduceSum:
						want[j] += vals[i][j]
					case group.ReduceMax:
						want[j] = max(want[j], vals[i][j])
					default:
						want[j] = min(want[j], vals[i][j])
					}
				}
			}
			r, err := shard.Combine(t.Context(), gr, qs, parts, op)
			if err != nil {
				t.Fatalf("%v via %s: %v", op, shard.Via(gr), err)
			}
			if r.Layout().Kind != shard.Replicated || r.Len() != 5 {
				t.Errorf("%v via %s: a %s buffer of %d, want replicated of 5", op, shard.Via(gr), r.Layout(), r.Len())
			}
			for i, p := range r.Parts() {
				got := mustDownload(t, p)
				for j := range got {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Errorf("%v via %s: device %d element %d = %v, want %v", op, shard.Via(gr), i, j, got[j], want[j])
					}
				}
			}
			r.Close()
		}
	}
	// One part is the result: taken over as it is, on its device.
	vals := randFloats(99, 3)
	one, err := engine.Upload(t.Context(), qs[0], vals)
	if err != nil {
		t.Fatal(err)
	}
	r, err := shard.Combine(t.Context(), nil, qs[:1], []*engine.Buffer[float32]{one}, group.ReduceSum)
	if err != nil {
		t.Fatalf("combine of one part: %v", err)
	}
	if p := r.Parts(); len(p) != 1 || p[0].Buf != one || !slices.Equal(mustDownload(t, p[0]), vals) {
		t.Errorf("combine of one part: %d parts, want the part itself holding %v", len(p), vals)
	}
	r.Close()
	if _, err := shard.Combine(t.Context(), g, qs, make([]*engine.Buffer[float32], k), group.ReduceSum); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("combine of no part: %v, want ErrInvalidArg", err)
	}
	if k > 1 {
		rev := slices.Clone(qs)
		slices.Reverse(rev)
		one, _ := engine.Upload(t.Context(), rev[0], []float32{1})
		parts := make([]*engine.Buffer[float32], k)
		parts[0] = one
		if _, err := shard.Combine(t.Context(), g, rev, parts, group.ReduceSum); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("group of other order: %v, want ErrInvalidArg", err)
		}
		one.Close()
	}
}

// TestEachDevice checks that EachDevice calls f for every part, one without elements too
// (Each skips it), and joins the errors in device order, each naming its device; and that
// InTurnDevice does the same, in device order.
func TestEachDevice(t *testing.T) {
	qs := queues(t)
	if len(qs) < 2 {
		t.Skip("EachDevice needs two devices")
	}
	counts := make([]int, len(qs))
	counts[len(qs)-1] = 5 // every part but the last holds nothing
	b, err := shard.Scatter(t.Context(), qs, randFloats(1, 5), shard.ByRows(1), counts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var mu sync.Mutex
	seen := map[int]bool{}
	err = b.EachDevice(func(i int) error {
		mu.Lock()
		seen[i] = true
		mu.Unlock()
		if i == 0 {
			return errors.New("part zero fails")
		}
		return nil
	})
	if len(seen) != len(qs) {
		t.Errorf("f called for parts %v; want all %d", seen, len(qs))
	}
	if err == nil || !strings.Contains(err.Error(), qs[0].Device().ID()+": part zero fails") {
		t.Errorf("EachDevice = %v; want part zero's error naming %s", err, qs[0].Device().ID())
	}
	each := 0
	if err := b.Each(func(int, shard.Part[float32]) error { each++; return nil }); err != nil || each != 1 {
		t.Errorf("Each called f %d times (%v); want once, for the part with elements", each, err)
	}
	var order []int
	err = b.InTurnDevice(func(i int) error {
		order = append(order, i)
		return fmt.Errorf("part %d fails", i)
	})
	want := make([]int, len(qs))
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(order, want) {
		t.Errorf("InTurnDevice called f for parts %v; want %v", order, want)
	}
	for i := range qs {
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s: part %d fails", qs[i].Device().ID(), i)) {
			t.Errorf("InTurnDevice = %v; want part %d's error naming %s", err, i, qs[i].Device().ID())
		}
	}
}

// TestInTurn checks that InTurn calls f for every part with elements, in device order,
// goes on past a part's error, and joins the errors in device order, each naming its
// device.
func TestInTurn(t *testing.T) {
	qs := queues(t)
	if len(qs) < 2 {
		t.Skip("InTurn needs two devices")
	}
	counts := make([]int, len(qs))
	for i := range counts {
		counts[i] = 3
	}
	counts[0] = 0 // the first part holds nothing
	n := 3 * (len(qs) - 1)
	b, err := shard.Scatter(t.Context(), qs, randFloats(1, n), shard.ByRows(1), counts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var order []int
	err = b.InTurn(func(i int, p shard.Part[float32]) error {
		order = append(order, i)
		if p.Len != 3 {
			return fmt.Errorf("part %d of %d elements", i, p.Len)
		}
		if i >= 1 {
			return fmt.Errorf("part %d fails", i)
		}
		return nil
	})
	var want []int
	for i := 1; i < len(qs); i++ {
		want = append(want, i)
	}
	if !slices.Equal(order, want) {
		t.Errorf("InTurn called f for parts %v; want %v (in order, the empty part left out, on past errors)", order, want)
	}
	for i := 1; i < len(qs); i++ {
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s: part %d fails", qs[i].Device().ID(), i)) {
			t.Errorf("InTurn = %v; want part %d's error naming %s", err, i, qs[i].Device().ID())
		}
	}
	if err != nil && strings.Index(err.Error(), "part 1 fails") > strings.Index(err.Error(), fmt.Sprintf("part %d fails", len(qs)-1)) {
		t.Errorf("InTurn = %v; want the errors in device order", err)
	}
}
