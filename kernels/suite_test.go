package kernels

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	_ "github.com/prism-compute/prism/cl"
	_ "github.com/prism-compute/prism/cuda"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
	"github.com/prism-compute/prism/platform"
)

// small reports whether the tests run at small sizes (under Oclgrind).
func small() bool { return enginetest.Small() }

// forEachDevice runs f as a subtest on every device of every backend. A backend that is
// unavailable is skipped with its reason, or fails the test when PRISM_REQUIRE names it.
func forEachDevice(t *testing.T, f func(t *testing.T, dev *engine.Device, q *engine.Queue)) {
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

// edgeSizes are lengths that straddle work-group edges for a work-group of wg items, and
// one over a million elements unless the tests run small.
func edgeSizes(wg int) []int {
	s := []int{1, 7, wg - 1, wg, wg + 1, 4097}
	if !small() {
		s = append(s, 1<<20+3)
	}
	return s
}

// randFloats returns n seeded uniform values in [-1, 1).
func randFloats[T Float](rng *rand.Rand, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = T(2*rng.Float64() - 1)
	}
	return out
}

// sentinel is the guard-band value: for floats a NaN with a payload no kernel produces; for
// integers a value random test inputs do not reach.
func sentinel[T Number]() T {
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
	}
	panic("sentinel: unsupported type")
}

func isSentinel[T Number](v T) bool {
	switch x := any(v).(type) {
	case float32:
		return math.Float32bits(x) == 0x7fc0dead
	case float64:
		return math.Float64bits(x) == 0x7ff8deaddeadbeef
	}
	return v == sentinel[T]()
}

// guard is the number of sentinel elements after every output.
const guard = 64

// withGuard returns data followed by guard sentinels.
func withGuard[T Number](data []T) []T {
	out := append(make([]T, 0, len(data)+guard), data...)
	for range guard {
		out = append(out, sentinel[T]())
	}
	return out
}

// newBuffer returns an uninitialized device buffer of n elements, closed when the test ends.
func newBuffer[T Number](t *testing.T, dev *engine.Device, n int) *engine.Buffer[T] {
	t.Helper()
	b, err := engine.NewBuffer[T](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// guarded returns a device buffer holding data followed by guard sentinels.
func guarded[T Number](t *testing.T, q *engine.Queue, data []T) *engine.Buffer[T] {
	t.Helper()
	b, err := engine.Upload(q, withGuard(data))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// download reads buf back, checks that its guard band after n elements is untouched, and
// returns the first n elements.
func download[T Number](t *testing.T, q *engine.Queue, what string, buf *engine.Buffer[T], n int) []T {
	t.Helper()
	got, err := buf.Download(q)
	if err != nil {
		t.Fatal(err)
	}
	checkGuard(t, what, got, n)
	return got[:n]
}

// checkGuard fails the test if any element of got past n is not the sentinel.
func checkGuard[T Number](t *testing.T, what string, got []T, n int) {
	t.Helper()
	for i := n; i < len(got); i++ {
		if !isSentinel(got[i]) {
			t.Fatalf("%s: guard element %d (n=%d) was overwritten with %v", what, i-n, n, got[i])
		}
	}
}
