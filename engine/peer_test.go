package engine_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// TestCopyPeerStaged copies between two fake devices through host memory in chunks
// smaller than the copy (and not dividing it), refuses a buffer of the wrong device, and
// does not start with a done context.
func TestCopyPeerStaged(t *testing.T) {
	defer engine.SetPeerStageBytes(40)() // 10 uint32 a chunk
	_, q0 := open(t, "fake:0")
	_, q1 := open(t, "fake:1")
	if got := engine.PeerPath(q1, q0); got != "host" {
		t.Fatalf("PeerPath between fake devices = %q, want host", got)
	}
	if got := engine.PeerPath(q0, q0); got != "device" {
		t.Fatalf("PeerPath within a device = %q, want device", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]uint32, 95)
	for i := range src {
		src[i] = rng.Uint32()
	}
	a, err := engine.Upload(t.Context(), q0, src)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := engine.Upload(t.Context(), q1, make([]uint32, 100))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := engine.CopyPeer(t.Context(), q1, b, 4, q0, a, 1, 93); err != nil {
		t.Fatal(err)
	}
	got, err := b.Download(t.Context(), q1)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]uint32, 100)
	copy(want[4:], src[1:94])
	if !slices.Equal(got, want) {
		t.Errorf("copied %v, want %v", got, want)
	}
	// A buffer of d0 on q1's device's queue is refused before anything moves.
	if err := engine.CopyPeer(t.Context(), q0, b, 0, q0, a, 0, 1); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("destination of another device: %v, want ErrInvalidArg", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := engine.CopyPeer(ctx, q1, b, 0, q0, a, 0, 93); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// TestReach passes a buffer to kernels through Buffer.Reach: on its own device Reach gives
// the buffer itself, which a launch then writes; from another device whose driver cannot
// reach it (the fake devices, as any two OpenCL devices) it refuses with ErrUnsupported
// naming both; nil and closed buffers and queues are refused, and a zero Remote is not a
// launch argument.
func TestReach(t *testing.T) {
	dev0, q0 := open(t, "fake:0")
	_, q1 := open(t, "fake:1")
	prog, err := dev0.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel(suitekernels.Iota)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.NewBuffer[uint32](dev0, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	arg, err := out.Reach(q0)
	if err != nil {
		t.Fatal(err)
	}
	if arg != any(out) {
		t.Fatalf("Reach on the buffer's own device gave %T, want the buffer", arg)
	}
	if err := q0.Launch(k, engine.Range1D(10, 1), int32(10), int32(0), arg); err != nil {
		t.Fatal(err)
	}
	got, err := out.Download(t.Context(), q0)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != uint32(i) {
			t.Fatalf("element %d = %d after a launch through Reach", i, v)
		}
	}
	if _, err := out.Reach(q1); !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "fake:0") || !strings.Contains(err.Error(), "fake:1") {
		t.Errorf("Reach from another fake device: %v, want ErrUnsupported naming both", err)
	}
	var nilBuf *engine.Buffer[uint32]
	if _, err := nilBuf.Reach(q0); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Reach of a nil buffer: %v", err)
	}
	if err := q0.Launch(k, engine.Range1D(10, 1), int32(10), int32(0), engine.Remote{}); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("a zero Remote as a launch argument: %v", err)
	}
	closed, err := engine.NewBuffer[uint32](dev0, 4)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	if _, err := closed.Reach(q0); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Reach of a closed buffer: %v", err)
	}
}
