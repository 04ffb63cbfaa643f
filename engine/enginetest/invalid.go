package enginetest

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// testInvalidArgs checks that engine refuses malformed calls with ErrInvalidArg (or
// ErrOutOfMemory for an allocation above the device's limit, ErrUnsupported for a launch
// option the device lacks), before they reach the driver (checked when Options.DriverCalls
// is set), with errors that say each prefix once, and that they change nothing.
func (s *suite) testInvalidArgs(t *testing.T) {
	ctx := context.Background()
	const n = 64
	q := s.queue(t)
	k := s.kernel(t, suitekernels.Axpy)
	r := rng(t)
	x := upload(t, q, random[float32](r, n))
	yData := random[float32](r, n)
	y := upload(t, q, yData)

	// A second handle on the same device is another Device: its objects must not mix.
	other, err := engine.Open(ctx, s.id)
	if err != nil {
		t.Fatalf("second engine.Open(%q): %v", s.id, err)
	}
	defer other.Close()
	if other == s.dev {
		t.Fatalf("engine.Open(%q) twice returned the same *Device", s.id)
	}
	otherBuf, err := engine.NewBuffer[float32](other, n)
	if err != nil {
		t.Fatalf("NewBuffer on the second device: %v", err)
	}
	otherProg, err := other.Build(suitekernels.Source)
	if err != nil {
		t.Fatalf("Build on the second device: %v", err)
	}
	otherKernel, err := otherProg.Kernel(suitekernels.Axpy)
	if err != nil {
		t.Fatalf("Kernel on the second device: %v", err)
	}

	info := s.dev.Info()
	maxWG, items := k.MaxWorkGroupSize(), info.MaxWorkItemSizes
	args := []any{int32(n), int32(0), float32(1), x, y}
	with := func(i int, v any) []any {
		a := slices.Clone(args)
		a[i] = v
		return a
	}
	launch := func(r engine.Range, a ...any) func() error {
		return func() error { return q.Launch(k, r, a...) }
	}
	ok := engine.Range1D(n, 1)
	noCount := ""
	if !s.countsArgs {
		noCount = "the backend does not count kernel arguments (no driver.ArgCounter)"
	}
	// A 2D work-group within each dimension's limit whose product exceeds maxWG.
	lx, ly := maxWG, 2
	if items[0] > 0 {
		lx = min(lx, items[0])
	}
	wg2D := ""
	if maxWG <= 0 || lx*ly <= maxWG || (items[1] > 0 && items[1] < ly) {
		wg2D = "no 2D work-group fits each dimension but exceeds the limit"
	}
	noWG := ""
	if maxWG <= 0 {
		noWG = "the device reports no work-group limit"
	}
	noZ := ""
	if items[2] <= 0 || items[2] >= maxWG {
		noZ = "MaxWorkItemSizes[2] is not below the work-group limit"
	}
	noMaxAlloc := ""
	if info.MaxAllocBytes <= 0 || info.MaxAllocBytes/4 >= math.MaxInt32 {
		noMaxAlloc = "the device reports no allocation limit, or one too large to test"
	}
	one := make([]float32, 1)

	// Launch options: what a device lacks is unsupported, what exceeds its limits invalid.
	f := s.dev.LaunchFeatures()
	unsupportedUnless := func(has bool) error {
		if has {
			return engine.ErrInvalidArg
		}
		return engine.ErrUnsupported
	}
	noSharedLimit := ""
	if f.SharedBytes && info.MaxLocalBytes() <= 0 {
		noSharedLimit = "the device reports no local memory limit"
	}
	noLocalLimit := ""
	if f.LocalArgs && info.LocalMemBytes <= 0 {
		noLocalLimit = "the device reports no local memory limit"
	}
	bigCluster := 2 * max(f.MaxClusterSize, 1) // n/1 = 64 work-groups: a power of two divides it
	noBigCluster := ""
	if n%bigCluster != 0 {
		noBigCluster = "the device's cluster limit does not fit the test's 64 work-groups"
	}
	noClusters := ""
	if f.MaxClusterSize > 0 {
		noClusters = "the device has clusters"
	}
	noShared := ""
	if f.SharedBytes {
		noShared = "the device sizes dynamic shared memory"
	}
	noLocalArgs := ""
	if f.LocalArgs {
		noLocalArgs = "the device takes LocalBytes arguments"
	}

	cases := []struct {
		name string
		want error  // nil means ErrInvalidArg
		skip string // why the case does not apply, if it does not
		call func() error
	}{
		{name: "Launch/global not a multiple of local", call: launch(engine.Range1D(100, 64), args...)},
		{name: "Launch/Dims 0", call: launch(engine.Range{Dims: 0, Global: [3]int{n, 1, 1}, Local: [3]int{1, 1, 1}}, args...)},
		{name: "Launch/Dims 4", call: launch(engine.Range{Dims: 4, Global: [3]int{n, 1, 1}, Local: [3]int{1, 1, 1}}, args...)},
		{name: "Launch/global 0", call: launch(engine.Range1D(0, 1), args...)},
		{name: "Launch/global negative", call: launch(engine.Range1D(-64, 64), args...)},
		{name: "Launch/global 0, local Auto", call: launch(engine.Range1D(0, engine.Auto), args...)},
		{name: "Launch/local Auto beside one above MaxWorkGroupSize", skip: noWG, call: launch(engine.Range2D(n, 2*maxWG, engine.Auto, 2*maxWG), args...)},
		{name: "Launch/local negative", call: launch(engine.Range1D(n, -1), args...)},
		{name: "Launch/2D global y 0", call: launch(engine.Range2D(n, 0, 1, 1), args...)},
		{name: "Launch/3D local z not dividing", call: launch(engine.Range3D(n, 1, 5, 1, 1, 2), args...)},
		{name: "Launch/global above 2^32", call: launch(engine.Range1D(1<<33, 1), args...)},
		{name: "Launch/local above MaxWorkGroupSize", skip: noWG, call: launch(engine.Range1D(2*maxWG, 2*maxWG), args...)},
		{name: "Launch/2D work-group above MaxWorkGroupSize", skip: wg2D, call: launch(engine.Range2D(lx, ly, lx, ly), args...)},
		{name: "Launch/local z above MaxWorkItemSizes", skip: noZ, call: launch(engine.Range3D(1, 1, 2*items[2], 1, 1, 2*items[2]), args...)},
		{name: "Launch/too few arguments", skip: noCount, call: launch(ok, args[:4]...)},
		{name: "Launch/too many arguments", skip: noCount, call: launch(ok, append(slices.Clone(args), int32(0))...)},
		{name: "Launch/no arguments", skip: noCount, call: launch(ok)},
		{name: "Launch/nil buffer", call: launch(ok, with(3, (*engine.Buffer[float32])(nil))...)},
		{name: "Launch/nil", call: launch(ok, with(3, nil)...)},
		{name: "Launch/int", call: launch(ok, with(0, int(n))...)},
		{name: "Launch/uint", call: launch(ok, with(0, uint(n))...)},
		{name: "Launch/string", call: launch(ok, with(0, "64")...)},
		{name: "Launch/bool", call: launch(ok, with(0, true)...)},
		{name: "Launch/slice", call: launch(ok, with(3, []float32{1})...)},
		{name: "Launch/buffer of another device", call: launch(ok, with(3, otherBuf)...)},
		{name: "Launch/kernel of another device", call: func() error { return q.Launch(otherKernel, ok, args...) }},
		{name: "Launch/nil kernel", call: func() error { return q.Launch(nil, ok, args...) }},
		{name: "Launch/nil queue", call: func() error { return (*engine.Queue)(nil).Launch(k, ok, args...) }},
		{name: "Launch/SharedBytes negative", call: launch(ok.WithSharedBytes(-1), args...)},
		{name: "Launch/SharedBytes where unsupported", want: engine.ErrUnsupported, skip: noShared, call: launch(ok.WithSharedBytes(4), args...)},
		{name: "Launch/SharedBytes above the local memory limit", want: unsupportedUnless(f.SharedBytes), skip: noSharedLimit,
			call: launch(ok.WithSharedBytes(info.MaxLocalBytes()+1), args...)},
		{name: "Launch/cluster negative", call: launch(ok.WithCluster(-2, 1, 1), args...)},
		{name: "Launch/cluster of 0 in a used dimension", call: launch(ok.WithCluster(0, 2, 1), args...)},
		{name: "Launch/cluster in an unused dimension", call: launch(ok.WithCluster(1, 1, 2), args...)},
		{name: "Launch/cluster not dividing the work-groups", call: launch(ok.WithCluster(3, 1, 1), args...)},
		{name: "Launch/cluster where unsupported", want: engine.ErrUnsupported, skip: noClusters, call: launch(ok.WithCluster(2, 1, 1), args...)},
		{name: "Launch/cluster above MaxClusterSize", want: unsupportedUnless(f.MaxClusterSize > 0), skip: noBigCluster,
			call: launch(ok.WithCluster(bigCluster, 1, 1), args...)},
		{name: "Launch/LocalBytes 0", call: launch(ok, with(4, engine.LocalBytes(0))...)},
		{name: "Launch/LocalBytes negative", call: launch(ok, with(4, engine.LocalBytes(-4))...)},
		{name: "Launch/LocalBytes where unsupported", want: engine.ErrUnsupported, skip: noLocalArgs, call: launch(ok, with(4, engine.LocalBytes(4))...)},
		{name: "Launch/LocalBytes above the local memory limit", want: unsupportedUnless(f.LocalArgs), skip: noLocalLimit,
			call: launch(ok, with(4, engine.LocalBytes(info.LocalMemBytes+1))...)},
		{name: "LaunchEvent/global not a multiple of local", call: func() error {
			ev, err := q.LaunchEvent(k, engine.Range1D(65, 64), args...)
			ev.Close()
			return err
		}},

		{name: "Write/past the end", call: func() error { return y.Write(ctx, q, n-1, make([]float32, 2)) }},
		{name: "Write/offset past the end", call: func() error { return y.Write(ctx, q, n+1, nil) }},
		{name: "Write/negative offset", call: func() error { return y.Write(ctx, q, -1, one) }},
		{name: "Write/nil queue", call: func() error { return y.Write(ctx, nil, 0, one) }},
		{name: "Write/nil context", call: func() error { return y.Write(nil, q, 0, one) }},
		{name: "Read/nil context", call: func() error { return y.Read(nil, q, 0, one) }},
		{name: "Write/nil buffer", call: func() error { return (*engine.Buffer[float32])(nil).Write(ctx, q, 0, one) }},
		{name: "Write/buffer of another device", call: func() error { return otherBuf.Write(ctx, q, 0, one) }},
		{name: "Read/past the end", call: func() error { return y.Read(ctx, q, 0, make([]float32, n+1)) }},
		{name: "Read/offset past the end", call: func() error { return y.Read(ctx, q, n, one) }},
		{name: "Read/negative offset", call: func() error { return y.Read(ctx, q, -3, one) }},
		{name: "Read/buffer of another device", call: func() error { return otherBuf.Read(ctx, q, 0, one) }},
		{name: "Download/buffer of another device", call: func() error { _, err := otherBuf.Download(ctx, q); return err }},
		{name: "Fill/past the end", call: func() error { return y.Fill(q, 1, n, 0) }},
		{name: "Fill/offset past the end", call: func() error { return y.Fill(q, n+1, 0, 0) }},
		{name: "Fill/negative offset", call: func() error { return y.Fill(q, -1, 1, 0) }},
		{name: "Fill/negative count", call: func() error { return y.Fill(q, 1, -1, 0) }},
		{name: "Fill/buffer of another device", call: func() error { return otherBuf.Fill(q, 0, 1, 0) }},
		{name: "CopyFrom/destination past the end", call: func() error { return y.CopyFrom(q, 1, x, 0, n) }},
		{name: "CopyFrom/source past the end", call: func() error { return y.CopyFrom(q, 0, x, 1, n) }},
		{name: "CopyFrom/negative offset", call: func() error { return y.CopyFrom(q, -1, x, 0, 1) }},
		{name: "CopyFrom/negative source offset", call: func() error { return y.CopyFrom(q, 0, x, -1, 1) }},
		{name: "CopyFrom/negative count", call: func() error { return y.CopyFrom(q, 0, x, 0, -1) }},
		{name: "CopyFrom/overlapping regions of one buffer", call: func() error { return y.CopyFrom(q, 1, y, 0, 2) }},
		{name: "CopyFrom/nil source", call: func() error { return y.CopyFrom(q, 0, nil, 0, 1) }},
		{name: "CopyFrom/source of another device", call: func() error { return y.CopyFrom(q, 0, otherBuf, 0, 1) }, want: engine.ErrUnsupported,
			skip: peerSkip(q, other)}, // testPeer copies from it where the driver copies between the two
		{name: "CopyFrom/destination of another device", call: func() error { return otherBuf.CopyFrom(q, 0, x, 0, 1) }},

		{name: "NewBuffer/n 0", call: func() error { _, err := engine.NewBuffer[float32](s.dev, 0); return err }},
		{name: "NewBuffer/n negative", call: func() error { _, err := engine.NewBuffer[float32](s.dev, -1); return err }},
		{name: "NewBuffer/size overflows int64", call: func() error { _, err := engine.NewBuffer[float64](s.dev, math.MaxInt/4); return err }},
		{name: "NewBuffer/nil device", call: func() error { _, err := engine.NewBuffer[float64](nil, 1); return err }},
		{name: "NewBuffer/above MaxAllocBytes", want: engine.ErrOutOfMemory, skip: noMaxAlloc, call: func() error {
			b, err := engine.NewBuffer[float32](s.dev, int(info.MaxAllocBytes/4)+1)
			b.Close()
			return err
		}},
		{name: "Upload/empty", call: func() error { _, err := engine.Upload(ctx, q, []float32{}); return err }},
		{name: "Build/empty source", call: func() error { _, err := s.dev.Build(""); return err }},
		{name: "Build/nil device", call: func() error { _, err := (*engine.Device)(nil).Build(suitekernels.Source); return err }},
		{name: "BuildSource/unknown dialect", call: func() error {
			_, err := s.dev.BuildSource(engine.Source{Dialect: engine.Dialect(99), Text: suitekernels.Source})
			return err
		}},
		{name: "BuildSource/empty CUDA C++ source", call: func() error {
			_, err := s.dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA})
			return err
		}},
		{name: "NewQueue/nil device", call: func() error { _, err := (*engine.Device)(nil).NewQueue(); return err }},
		{name: "Kernel/nil program", call: func() error { _, err := (*engine.Program)(nil).Kernel(suitekernels.Axpy); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip(c.skip)
			}
			want := c.want
			if want == nil {
				want = engine.ErrInvalidArg
			}
			before := s.driverCalls()
			err := c.call()
			if !errors.Is(err, want) {
				t.Errorf("got error %v, want one wrapping %q", err, want)
			}
			checkPrefix(t, "the refused call", err)
			s.checkNoDriverCalls(t, before, "the refused call")
		})
	}
	// The refused calls changed nothing, and the queue and kernel still work.
	checkBits(t, "y after refused calls", download(t, q, y), yData, 0)
	if err := q.Launch(k, ok, args...); err != nil {
		t.Fatalf("valid Launch after refused calls: %v", err)
	}
	xs := download(t, q, x)
	got := download(t, q, y)
	checkAxpy(t, guarded(got), 1, xs, yData)
}

// peerSkip says why a refusal of a copy from dev's memory on q does not apply: the driver
// copies between the two directly (engine.PeerPath "peer"), as CopyFrom then does.
func peerSkip(q *engine.Queue, dev *engine.Device) string {
	oq, err := dev.NewQueue()
	if err != nil {
		return ""
	}
	defer oq.Close()
	if engine.PeerPath(q, oq) == "peer" {
		return "the driver copies between the two devices directly"
	}
	return ""
}
