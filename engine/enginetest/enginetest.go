package enginetest

import (
	"context"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// Options holds a backend's deviations from the suite's defaults. The zero value runs
// everything at full size.
type Options struct {
	// MaxElems bounds the number of elements of the buffers and launches the suite makes
	// (guard bands aside). Zero means the suite's own bound: 1<<20, or 4097 when Small.
	MaxElems int
	// SkipConcurrency skips the test that shares one device among goroutines, for a
	// backend known not to survive it (say why in the calling test).
	SkipConcurrency bool
	// ZeroElapsedOK accepts an Elapsed of 0 for a launch of MaxElems work-items, for a
	// device whose timer is too coarse to time it. Negative durations always fail.
	ZeroElapsedOK bool
	// DriverCalls, when set, returns how many driver calls have been made on d and on the
	// objects made from it. The suite then checks that calls refused for invalid arguments
	// or closed objects never reached the driver. Backends over a real API leave it nil;
	// engine's own tests set it from the fake backend's counters.
	DriverCalls func(d *engine.Device) int64
	// SkipVendor, when not empty, skips the checks of the device's vendor BLAS and FFT
	// with this reason: under Oclgrind, whose checks are meant for Prism's kernels and
	// flag the libraries' own.
	SkipVendor string
	// LaunchAllocates, when not empty, says why the backend's untimed launch may allocate
	// (the fake backend runs kernels in Go); the suite then only logs the count.
	LaunchAllocates string
}

// Small reports whether the environment variable PRISM_TEST_SIZE is "small": tests then
// keep sizes at or below 4097 elements and run fewer goroutines and iterations, as under
// Oclgrind, which simulates every work-item.
func Small() bool { return os.Getenv("PRISM_TEST_SIZE") == "small" }

// seed makes every random input of the suite reproducible; each test mixes in its name.
const seed = 0x5072_6973_6d21 // "Prism!"

// guard is the number of sentinel elements on each side of an output.
const guard = 5

// suite is the state TestDevice shares among its subtests.
type suite struct {
	id         string
	dev        *engine.Device
	opts       Options
	prog       *engine.Program // suitekernels.Source, built without options
	countsArgs bool            // the backend's kernels implement driver.ArgCounter
}

// TestDevice runs the conformance suite on the device with the given full ID
// ("opencl:0:0"), which it opens with engine.Open and closes at the end. Each group of
// checks is a subtest, so `go test -run 'Conformance/.*/Launch'` selects one.
func TestDevice(t *testing.T, id string, opts Options) {
	ctx := context.Background()
	dev, err := engine.Open(ctx, id)
	if err != nil {
		t.Fatalf("engine.Open(%q): %v", id, err)
	}
	defer func() {
		if err := dev.Close(); err != nil {
			t.Errorf("closing %s: %v", id, err)
		}
	}()
	s := &suite{id: id, dev: dev, opts: opts}
	t.Run("Info", s.testInfo)
	s.prog, err = dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatalf("building the suite's kernels: %v", err) // a build error's text holds the log
	}
	s.countsArgs = s.probeArgCounter(t)

	t.Run("Buffer", s.testBuffers)
	t.Run("Launch", s.testLaunch)
	t.Run("Dialects", s.testDialects)
	t.Run("Attributes", s.testAttributes)
	t.Run("Occupancy", s.testOccupancy)
	t.Run("StaticLocal", s.testStaticLocal)
	t.Run("LocalArgs", s.testLocalArgs)
	t.Run("SharedBytes", s.testSharedBytes)
	t.Run("Clusters", s.testClusters)
	t.Run("TensorMaps", s.testTensorMaps)
	t.Run("BuildOptions", s.testBuildOptions)
	t.Run("Elapsed", s.testElapsed)
	t.Run("Timed", s.testTimed)
	t.Run("TimedHeld", s.testTimedHeld)
	t.Run("BuildError", s.testBuildError)
	t.Run("UnknownKernel", s.testUnknownKernel)
	t.Run("InvalidArgs", s.testInvalidArgs)
	t.Run("Closed", s.testClosed)
	t.Run("Concurrency", s.testConcurrency)
	t.Run("Pool", s.testPool)
	t.Run("HostBuffers", s.testHostBuffers)
	t.Run("Peer", s.testPeer)
	t.Run("Groups", s.testGroups)
	t.Run("Graphs", s.testGraphs)
	t.Run("BLAS", s.testBLAS)
	t.Run("BLAS1", s.testBLAS1)
	t.Run("FFT", s.testFFT)
	t.Run("VendorConcurrent", s.testVendorConcurrent)
}

func (s *suite) testInfo(t *testing.T) {
	in := s.dev.Info()
	if s.dev.ID() != s.id || in.ID != s.id {
		t.Errorf("ID() = %q, Info().ID = %q, want %q", s.dev.ID(), in.ID, s.id)
	}
	if backend, _, _ := engine.SplitID(s.id); s.dev.Backend() != backend {
		t.Errorf("Backend() = %q, want %q", s.dev.Backend(), backend)
	}
	if in.Name == "" {
		t.Error("Info().Name is empty")
	}
	if in.MaxWorkGroupSize < 0 || in.MaxAllocBytes < 0 || in.GlobalMemBytes < 0 {
		t.Errorf("negative limits in %+v", in)
	}
	if in.MaxWorkGroupSize > 0 && in.MaxWorkItemSizes[0] <= 0 {
		t.Errorf("MaxWorkGroupSize %d but MaxWorkItemSizes %v", in.MaxWorkGroupSize, in.MaxWorkItemSizes)
	}
	t.Logf("%s: %s, %s, %s, %d CUs, max work-group %d, items %v, max alloc %d MiB",
		s.id, in.Name, in.Vendor, in.Kind, in.ComputeUnits, in.MaxWorkGroupSize, in.MaxWorkItemSizes, in.MaxAllocBytes>>20)
}

// probeArgCounter checks the backend's optional driver.ArgCounter, through the driver, and
// reports whether the backend implements it (engine then refuses wrong argument counts).
func (s *suite) probeArgCounter(t *testing.T) bool {
	counts := false
	t.Run("ArgCounter", func(t *testing.T) {
		dp, err := s.dev.Driver().Build(suitekernels.Source, nil)
		if err != nil {
			t.Fatalf("driver Build: %v", err)
		}
		defer dp.Close()
		for _, name := range slices.Sorted(maps.Keys(suitekernels.NumArgs)) {
			dk, err := dp.Kernel(name)
			if err != nil {
				t.Fatalf("driver Kernel(%q): %v", name, err)
			}
			c, ok := dk.(driver.ArgCounter)
			if ok {
				if got, want := c.NumArgs(), suitekernels.NumArgs[name]; got != want {
					t.Errorf("%s: NumArgs() = %d, want %d", name, got, want)
				}
			}
			if l, ok := dk.(driver.WorkGroupLimiter); ok {
				if m := l.MaxWorkGroupSize(); m <= 0 || (s.dev.Info().MaxWorkGroupSize > 0 && m > s.dev.Info().MaxWorkGroupSize) {
					t.Errorf("%s: MaxWorkGroupSize() = %d, device's %d", name, m, s.dev.Info().MaxWorkGroupSize)
				}
			}
			dk.Close()
			counts = ok
		}
		if !counts {
			t.Skip("the backend's kernels do not implement driver.ArgCounter: argument counts are not checked")
		}
	})
	return counts
}

// maxElems is the largest number of elements a test may use.
func (s *suite) maxElems() int {
	m := 1 << 20
	if Small() {
		m = 4097
	}
	if s.opts.MaxElems > 0 {
		m = min(m, s.opts.MaxElems)
	}
	if a := s.dev.Info().MaxAllocBytes; a > 0 {
		m = min(m, int(a/8)-2*guard)
	}
	return m
}

// sizes returns the element counts the buffer tests use, around work-group edges.
func (s *suite) sizes() []int {
	return s.fit([]int{1, 7, 255, 256, 257, 4097, 1 << 20})
}

// fit drops sizes that are not positive or above maxElems, and duplicates.
func (s *suite) fit(ns []int) []int {
	var out []int
	for _, n := range ns {
		if n > 0 && n <= s.maxElems() && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// rng returns a random source seeded by the suite's seed and the test's name, so that
// every test's data is reproducible whatever runs before it.
func rng(t testing.TB) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// queue returns a new queue on the suite's device, closed when t ends.
func (s *suite) queue(t testing.TB) *engine.Queue {
	t.Helper()
	return newQueue(t, s.dev)
}

// newQueue returns a new queue on dev, closed when t ends.
func newQueue(t testing.TB, dev *engine.Device) *engine.Queue {
	t.Helper()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatalf("NewQueue on %s: %v", dev.ID(), err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// kernel returns the named kernel of the suite's program, closed when t ends.
func (s *suite) kernel(t testing.TB, name string) *engine.Kernel {
	t.Helper()
	k, err := s.prog.Kernel(name)
	if err != nil {
		t.Fatalf("Kernel(%q): %v", name, err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// locals returns the 1D work-group sizes to launch k with: 1, 64 and 256, capped by the
// kernel's and the device's limits.
func (s *suite) locals(k *engine.Kernel) []int {
	limit := k.MaxWorkGroupSize()
	if m := s.dev.Info().MaxWorkItemSizes[0]; m > 0 && (limit <= 0 || m < limit) {
		limit = m
	}
	var out []int
	for _, l := range []int{1, 64, 256} {
		if limit > 0 {
			l = min(l, limit)
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}
