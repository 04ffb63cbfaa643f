package engine_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/prism-compute/prism/engine"
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
