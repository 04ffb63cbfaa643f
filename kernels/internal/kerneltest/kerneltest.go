package kerneltest

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	_ "github.com/prism-compute/prism/cl" // the backends every family's tests run on
	_ "github.com/prism-compute/prism/cuda"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/platform"
)

// Small reports whether the tests run at small sizes (PRISM_TEST_SIZE=small: under
// Oclgrind).
func Small() bool { return enginetest.Small() }

// Slow reports whether dev runs kernels at a small fraction of a CPU OpenCL's speed:
// Mesa's llvmpipe, Rusticl's software device, ran the suite's quick sizes about ten times
// slower than PoCL on the same cores. What it adds is a second, stricter compiler and its
// own limits (32 work-items for every kernel), which the smaller cases reach.
func Slow(dev *engine.Device) bool {
	return strings.Contains(strings.ToLower(dev.Info().Name), "llvmpipe")
}

// Spot reports whether the tests run a spot check of their long matrices of cases on dev
// (each size, pattern and order once or so, not every combination): at small sizes, and on
// a Slow device, where the same kernel source runs every combination on PoCL and what the
// device adds, its compiler and its limits, the spot check reaches.
func Spot(dev *engine.Device) bool { return Small() || Slow(dev) }

// Large reports whether the tests run their largest cases (a million elements and more,
// there for the index arithmetic and the passes over many groups) on dev: not at small
// sizes, and not on a Slow device, whose kernels are the same source that PoCL runs at
// these sizes.
func Large(dev *engine.Device) bool { return !Small() && !Slow(dev) }

// LoopGroups checks a family's cap on work-groups, maxGroups, against dev's loop limit
// (kernels.LoopLimit): without a limit the cap is perCU groups a compute unit; with one (Mesa's
// llvmpipe) it is no lower, and iters, a work-item's loop iterations at the family's largest
// input over the groups it takes there (with what names them, for the message), stays
// within 90% of the limit.
func LoopGroups(t *testing.T, dev *engine.Device, maxGroups, perCU int, iters func() (n int, what string)) {
	t.Helper()
	base := max(dev.Info().ComputeUnits, 1) * perCU
	limit := kernels.LoopLimit(dev)
	if limit == 0 {
		if maxGroups != base {
			t.Errorf("%d groups at most without a loop limit; want %d", maxGroups, base)
		}
		return
	}
	if maxGroups < base {
		t.Errorf("%d groups at most under a loop limit of %d; want at least %d", maxGroups, limit, base)
	}
	if n, what := iters(); n > limit/10*9 {
		t.Errorf("%s: about %d loop iterations a work-item, past 90%% of %d", what, n, limit)
	}
}

// ForEachDevice runs f as a subtest on every device of every backend. A backend that is
// unavailable is skipped with its reason, or fails the test when PRISM_REQUIRE names it.
func ForEachDevice(t *testing.T, f func(t *testing.T, dev *engine.Device, q *engine.Queue)) {
	t.Helper()
	ctx := context.Background()
	dis, err := platform.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range dis.Backends {
		if b.Err != nil || b.Devices == 0 {
			if enginetest.Required(b.Name) {
				t.Fatalf("backend %s is required by PRISM_REQUIRE but unavailable: %v", b.Name, b.Err)
			}
			t.Logf("skipping backend %s: %v", b.Name, b.Err)
		}
	}
	if len(dis.Devices) == 0 {
		t.Skipf("no compute device found: %v", dis.Unavailable())
	}
	for _, d := range dis.Devices {
		t.Run(d.ID, func(t *testing.T) {
			dev, err := engine.Open(ctx, d.ID)
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			q, err := dev.NewQueue()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("device %s: %s (%s)", d.ID, d.Name, d.Platform)
			f(t, dev, q)
		})
	}
}

// ForEachCUDADevice runs f as a subtest on every CUDA device, for a variant written in CUDA
// C++ (what names it in messages). Every other device must refuse it: refuse builds the
// variant there and must return an error wrapping engine.ErrUnsupported; the subtest then
// skips. When PRISM_REQUIRE names cuda and no CUDA device ran f, the test fails.
func ForEachCUDADevice(t *testing.T, what string, refuse func(dev *engine.Device) error, f func(t *testing.T, dev *engine.Device, q *engine.Queue)) {
	t.Helper()
	ran := false
	ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		if dev.Backend() != "cuda" {
			if err := refuse(dev); !errors.Is(err, engine.ErrUnsupported) {
				t.Errorf("%s on %s: %v, want ErrUnsupported", what, dev.ID(), err)
			}
			t.Skipf("%s is CUDA C++; %s is %s", what, dev.ID(), dev.Backend())
		}
		ran = true
		f(t, dev, q)
	})
	if !ran && enginetest.Required("cuda") {
		t.Fatalf("PRISM_REQUIRE names cuda, but no CUDA device ran %s", what)
	}
}

// EdgeSizes returns lengths that straddle work-group edges for a work-group of wg items,
// and one over a million elements unless the tests run small.
func EdgeSizes(wg int) []int {
	s := []int{1, 7, wg - 1, wg, wg + 1, 4097}
	if !Small() {
		s = append(s, 1<<20+3)
	}
	return s
}

// Element is the set of element types the helpers' buffers hold: the suite's Numbers, the
// 16-bit storage types and float8 E4M3.
type Element interface {
	kernels.Number | engine.Half | engine.BFloat16 | engine.Float8E4M3
}

// Sentinel returns the guard-band value: for floats a NaN with a payload no kernel
// produces (for float16 and bfloat16 too); for integers a value random test inputs do not
// reach; for float8 E4M3, whose only NaNs are 0x7f and 0xff, -448 (0xfe), the most negative
// finite value, which the tests' outputs do not reach.
func Sentinel[T Element]() T {
	var z T
	switch any(z).(type) {
	case float32:
		return any(math.Float32frombits(0x7fc0dead)).(T)
	case float64:
		return any(math.Float64frombits(0x7ff8deaddeadbeef)).(T)
	case int32:
		return any(int32(-0x21524111)).(T) // 0xdeadbeef
	case uint32:
		return any(uint32(0xdeadbeef)).(T)
	case engine.Half:
		return any(engine.Half(0x7ead)).(T)
	case engine.BFloat16:
		return any(engine.BFloat16(0x7fed)).(T)
	case engine.Float8E4M3:
		return any(engine.Float8E4M3(0xfe)).(T)
	}
	panic("sentinel: unsupported type")
}

// IsSentinel reports whether v is Sentinel (bit for bit, for the NaNs).
func IsSentinel[T Element](v T) bool {
	switch x := any(v).(type) {
	case float32:
		return math.Float32bits(x) == 0x7fc0dead
	case float64:
		return math.Float64bits(x) == 0x7ff8deaddeadbeef
	}
	return v == Sentinel[T]()
}

// Guard is the number of sentinel elements after every output.
const Guard = 64

// WithGuard returns data followed by Guard sentinels.
func WithGuard[T Element](data []T) []T {
	out := append(make([]T, 0, len(data)+Guard), data...)
	for range Guard {
		out = append(out, Sentinel[T]())
	}
	return out
}

// NewBuffer returns an uninitialized device buffer of n elements, closed when the test ends.
func NewBuffer[T Element](t *testing.T, dev *engine.Device, n int) *engine.Buffer[T] {
	t.Helper()
	b, err := engine.NewBuffer[T](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// Guarded returns a device buffer holding data followed by Guard sentinels, closed when the
// test ends.
func Guarded[T Element](t *testing.T, q *engine.Queue, data []T) *engine.Buffer[T] {
	t.Helper()
	b, err := engine.Upload(t.Context(), q, WithGuard(data))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// Download reads buf back, checks that its guard band after n elements is untouched, and
// returns the first n elements.
func Download[T Element](t *testing.T, q *engine.Queue, what string, buf *engine.Buffer[T], n int) []T {
	t.Helper()
	got, err := buf.Download(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	CheckGuard(t, what, got, n)
	return got[:n]
}

// CheckGuard fails the test if any element of got past n is not the sentinel.
func CheckGuard[T Element](t *testing.T, what string, got []T, n int) {
	t.Helper()
	for i := n; i < len(got); i++ {
		if !IsSentinel(got[i]) {
			t.Fatalf("%s: guard element %d (n=%d) was overwritten with %v", what, i-n, n, got[i])
		}
	}
}

// ForEachBenchDevice runs f on every device of backend, each opened with a queue and closed
// after f: the benchmarks that compare builds of a backend's variant. Backend probing follows
// enginetest.DeviceIDs: skipped when unavailable, failed under PRISM_REQUIRE.
func ForEachBenchDevice(b *testing.B, backend string, f func(b *testing.B, id string, dev *engine.Device, q *engine.Queue)) {
	b.Helper()
	for _, id := range enginetest.DeviceIDs(b, backend) {
		dev, err := engine.Open(b.Context(), id)
		if err != nil {
			b.Fatal(err)
		}
		q, err := dev.NewQueue()
		if err != nil {
			dev.Close()
			b.Fatal(err)
		}
		f(b, id, dev, q)
		q.Close()
		dev.Close()
	}
}
