package enginetest

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// testPeer checks engine.CopyPeer within the suite's device and between two handles of
// it (two engine devices, which a backend may or may not copy between directly: PeerPath
// says which): random elements at offsets, guard bands and the rest of the destination
// untouched, the source left as it was, the source's queue's earlier commands (a fill)
// finished before the copy; then the refusals: a buffer on the wrong queue, a region past
// the end, nil buffers, a nil context, a done context, a queue capturing a graph; and
// Buffer.CopyFrom from the other handle's memory, where the driver copies between them.
func (s *suite) testPeer(t *testing.T) {
	hs := s.handles(t, 2)
	qs := make([]*engine.Queue, len(hs))
	for i, h := range hs {
		qs[i] = newQueue(t, h)
	}
	own := s.queue(t)
	for _, c := range []struct {
		name   string
		dq, sq *engine.Queue
	}{{"within", own, own}, {"between", qs[1], qs[0]}} {
		for _, n := range s.fit([]int{1, 4097, 1 << 18}) {
			t.Run(c.name+"/n="+strconv.Itoa(n), func(t *testing.T) {
				t.Logf("path %s", engine.PeerPath(c.dq, c.sq))
				r := rng(t)
				srcData := random[uint32](r, n+7)
				src := upload(t, c.sq, srcData)
				defer src.Close()
				// The source's queue fills its first 3 elements before the copy: CopyPeer
				// must see them.
				if err := src.Fill(c.sq, 0, 3, 0xA5A5A5A5); err != nil {
					t.Fatal(err)
				}
				for i := range 3 {
					srcData[i] = 0xA5A5A5A5
				}
				before := guarded(random[uint32](r, n+11))
				dst := upload(t, c.dq, before)
				defer dst.Close()
				at, from, count := guard+5, 2, n
				if err := engine.CopyPeer(t.Context(), c.dq, dst, at, c.sq, src, from, count); err != nil {
					t.Fatalf("CopyPeer: %v", err)
				}
				want := append([]uint32(nil), before...)
				copy(want[at:], srcData[from:from+count])
				checkBits(t, "destination", download(t, c.dq, dst), want, guard)
				checkBits(t, "source", download(t, c.sq, src), srcData, 0)
			})
		}
	}
	// CopyFrom takes a buffer of the other handle where the driver copies between the two
	// (the caller having finished the source's queue), and refuses it elsewhere.
	t.Run("CopyFrom", func(t *testing.T) {
		r := rng(t)
		data := random[uint32](r, 4097)
		src := upload(t, qs[0], data)
		defer src.Close()
		dst := upload(t, qs[1], guarded(make([]uint32, 4097)))
		defer dst.Close()
		if err := qs[0].Finish(t.Context()); err != nil {
			t.Fatal(err)
		}
		err := dst.CopyFrom(qs[1], guard, src, 0, len(data))
		if engine.PeerPath(qs[1], qs[0]) != "peer" {
			if !errors.Is(err, engine.ErrUnsupported) {
				t.Errorf("CopyFrom a buffer of another device through %s: %v, want ErrUnsupported", engine.PeerPath(qs[1], qs[0]), err)
			}
			return
		}
		if err != nil {
			t.Fatalf("CopyFrom a buffer of another device: %v", err)
		}
		checkBits(t, "destination", download(t, qs[1], dst), guarded(data), guard)
	})
	t.Run("Refused", func(t *testing.T) {
		ctx := t.Context()
		a := upload(t, qs[0], make([]uint32, 16))
		defer a.Close()
		b := upload(t, qs[1], make([]uint32, 16))
		defer b.Close()
		for _, c := range []struct {
			what string
			err  error
		}{
			{"source on the destination's queue", engine.CopyPeer(ctx, qs[1], b, 0, qs[1], a, 0, 4)},
			{"destination on the source's queue", engine.CopyPeer(ctx, qs[0], b, 0, qs[0], a, 0, 4)},
			{"past the destination's end", engine.CopyPeer(ctx, qs[1], b, 14, qs[0], a, 0, 4)},
			{"past the source's end", engine.CopyPeer(ctx, qs[1], b, 0, qs[0], a, 13, 4)},
			{"nil destination", engine.CopyPeer(ctx, qs[1], nil, 0, qs[0], a, 0, 4)},
			{"nil source", engine.CopyPeer[uint32](ctx, qs[1], b, 0, qs[0], nil, 0, 4)},
			{"nil context", engine.CopyPeer(nil, qs[1], b, 0, qs[0], a, 0, 4)},
		} {
			if !errors.Is(c.err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.what, c.err)
			}
		}
		done, cancel := context.WithCancel(ctx)
		cancel()
		if err := engine.CopyPeer(done, qs[1], b, 0, qs[0], a, 0, 4); !errors.Is(err, context.Canceled) {
			t.Errorf("a done context: %v, want context.Canceled", err)
		}
		if err := engine.CopyPeer(ctx, qs[1], b, 0, qs[0], a, 0, 0); err != nil {
			t.Errorf("no elements: %v", err)
		}
		if !qs[0].CanCapture() {
			return
		}
		g, err := qs[0].Capture(func() error {
			if err := engine.CopyPeer(ctx, qs[1], b, 0, qs[0], a, 0, 4); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("inside a capture of the source's queue: %v, want ErrInvalidArg", err)
			}
			return nil
		})
		if err != nil && !errors.Is(err, engine.ErrUnsupported) {
			t.Errorf("capture: %v", err)
		}
		g.Close()
	})
}
