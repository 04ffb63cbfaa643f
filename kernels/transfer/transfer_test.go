package transfer

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// sizes are the byte counts the tests copy: one byte, a few that are no multiple of the
// pattern's 4-byte words, one past 4 KiB and 64 KiB, and a MiB and three unless small.
func sizes() []int {
	s := []int{1, 3, 4097, 64<<10 + 5}
	if !kerneltest.Small() {
		s = append(s, 1<<20+3)
	}
	return s
}

// TestTransfer runs every op of the family at the edge sizes: set up, run twice, verified;
// then Verify must fail where the data or a guard band is wrong, and before any Run (the
// destination then holds the pattern's complement).
func TestTransfer(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, op := range Family().Ops {
			for _, n := range sizes() {
				t.Run(fmt.Sprintf("%s/n=%d", op.Name, n), func(t *testing.T) { testOp(t, q, op, n) })
			}
		}
	})
}

func testOp(t *testing.T, q *engine.Queue, op kernels.Op, n int) {
	ctx := t.Context()
	inst, err := op.Setup(ctx, q, kernels.Params{Size: n, Seed: 0x1234567890abcdef})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := inst.Close(); err != nil {
			t.Error(err)
		}
	}()
	in := inst.(*transferInstance)
	if err := in.Verify(ctx, q); !errors.Is(err, kernels.ErrVerify) {
		t.Fatalf("Verify before any Run: %v, want ErrVerify (the destination holds the complement)", err)
	}
	for run := range 2 {
		if err := in.Run(ctx, q); err != nil {
			t.Fatal(err)
		}
		if err := in.Verify(ctx, q); err != nil {
			t.Fatalf("run %d (%s): %v", run, in.Shape(), err)
		}
	}
	if m := in.Model(); m.Bytes != float64(n) || m.Flops != 0 || !m.Link {
		t.Errorf("model %+v, want %d bytes over the link and no FLOPs", m, n)
	}
	// spoil sets byte i of the destination (a guard byte from n on) to v.
	spoil := func(i int, v byte) {
		if in.dir == H2D {
			if err := in.dev.Write(ctx, q, i, []byte{v}); err != nil {
				t.Fatal(err)
			}
			return
		}
		host := in.pageable
		if in.mem == Pinned {
			host = in.pinned.Slice()
		}
		host[i] = v
	}
	for _, c := range []struct {
		i    int
		v    byte
		want string
	}{
		{n - 1, ^Pattern(n-1, in.seed), fmt.Sprintf("byte %d", n-1)},
		{n + Guard - 1, ^Sentinel, fmt.Sprintf("guard byte %d", Guard-1)},
	} {
		spoil(c.i, c.v)
		if err := in.Verify(ctx, q); !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("byte %d spoiled: %v; want ErrVerify naming %s", c.i, err, c.want)
		}
		if err := in.Run(ctx, q); err != nil { // copies the data again; the guard stays spoiled
			t.Fatal(err)
		}
		if c.i >= n {
			spoil(c.i, Sentinel)
		}
		if err := in.Verify(ctx, q); err != nil {
			t.Fatalf("repaired: %v", err)
		}
	}
}

// newBytes returns a device buffer of n bytes, closed when the test ends (kerneltest's
// helpers hold the suite's element types, not bytes).
func newBytes(t *testing.T, dev *engine.Device, n int) *engine.Buffer[uint8] {
	t.Helper()
	b, err := engine.NewBuffer[uint8](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestPattern checks that the device's pattern (transfer_fill) is the host's, byte for
// byte, with and without the complement, its guard band Sentinel, and that Check finds
// exactly the bytes that differ, guard band included.
func TestPattern(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		tr, err := NewTransfer(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		const seed = 0xfeedface00c0ffee
		for _, n := range []int{1, 5, tr.WorkGroup() + 3, 70001} {
			buf := newBytes(t, dev, n+Guard)
			for _, mask := range []uint8{0, 0xff} {
				if err := tr.Fill(q, buf, n, Guard, seed, mask); err != nil {
					t.Fatal(err)
				}
				got, err := buf.Download(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				want := make([]byte, n)
				PatternInto(want, 0, seed, mask)
				if err := kernels.CheckEqual(fmt.Sprintf("pattern n=%d mask=%#x", n, mask), got[:n], want); err != nil {
					t.Fatal(err)
				}
				if err := CheckGuard("fill", got[n:], n); err != nil {
					t.Fatal(err)
				}
				bad, err := tr.Check(t.Context(), q, buf, n, Guard, seed)
				if err != nil {
					t.Fatal(err)
				}
				if wantBad := (Mismatch{Count: 0, First: -1}); mask == 0 && bad != wantBad {
					t.Errorf("n=%d: Check of the pattern = %+v, want %+v", n, bad, wantBad)
				}
				if wantBad := (Mismatch{Count: n, First: 0}); mask == 0xff && bad != wantBad {
					t.Errorf("n=%d: Check of the complement = %+v, want %+v", n, bad, wantBad)
				}
			}
			// One wrong byte in the data and one in the guard band.
			if err := tr.Fill(q, buf, n, Guard, seed, 0); err != nil {
				t.Fatal(err)
			}
			if err := buf.Write(t.Context(), q, n+Guard/2, []byte{0}); err != nil {
				t.Fatal(err)
			}
			if err := buf.Write(t.Context(), q, n-1, []byte{^Pattern(n-1, seed)}); err != nil {
				t.Fatal(err)
			}
			bad, err := tr.Check(t.Context(), q, buf, n, Guard, seed)
			if err != nil {
				t.Fatal(err)
			}
			if want := (Mismatch{Count: 2, First: n - 1}); bad != want {
				t.Errorf("n=%d: Check = %+v, want %+v", n, bad, want)
			}
		}
	})
}

// TestPatternHost pins the pattern's first bytes for two seeds (a change to the pattern
// changes what every report verified against), and checks that PatternInto and
// CheckPattern agree with Pattern across their parallel chunks.
func TestPatternHost(t *testing.T) {
	for _, c := range []struct {
		seed uint64
		want []byte
	}{
		{0, []byte{0x0e, 0x2f, 0xca, 0x92, 0xed, 0x3b, 0x65, 0x50}},
		{0x1234567890abcdef, []byte{0x10, 0xa4, 0xd6, 0xfd, 0xa7, 0x55, 0xce, 0x09}},
	} {
		for i, b := range c.want {
			if got := Pattern(i, c.seed); got != b {
				t.Errorf("seed %#x: byte %d = %#02x, want %#02x", c.seed, i, got, b)
			}
		}
	}
	if got, want := fmix(1), uint32(0x514e28b7); got != want { // MurmurHash3's fmix32(1)
		t.Errorf("fmix(1) = %#x, want %#x", got, want)
	}
	const seed = 42
	n := 2*parallelChunk + 7
	got := make([]byte, n)
	PatternInto(got, 5, seed, 0)
	for _, i := range []int{0, 1, parallelChunk - 1, parallelChunk, n - 1} {
		if got[i] != Pattern(5+i, seed) {
			t.Fatalf("PatternInto byte %d = %#x, want %#x", i, got[i], Pattern(5+i, seed))
		}
	}
	if err := CheckPattern("host", got, 5, seed); err != nil {
		t.Fatal(err)
	}
	got[parallelChunk+3] ^= 1
	got[n-1] ^= 1
	err := CheckPattern("host", got, 5, seed)
	if want := fmt.Sprintf("2 of %d bytes differ from the pattern; the first is byte %d", n, 5+parallelChunk+3); !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), want) {
		t.Errorf("CheckPattern = %v; want ErrVerify saying %q", err, want)
	}
}

// TestTransferArgs checks the refusals: sizes out of range (before anything is
// allocated), and launches on buffers too short for the span asked.
func TestTransferArgs(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		op := Family().Ops[0]
		for _, size := range []int{0, MaxBytes + 1} {
			if _, err := op.Setup(t.Context(), q, kernels.Params{Size: size}); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("size %d: %v, want ErrInvalidArg", size, err)
			}
		}
		tr, err := NewTransfer(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		buf := newBytes(t, dev, 100)
		for _, c := range []struct {
			name string
			err  error
		}{
			{"fill past the end", tr.Fill(q, buf, 101, 0, 1, 0)},
			{"fill with a guard past the end", tr.Fill(q, buf, 50, Guard, 1, 0)},
			{"fill of 0 bytes", tr.Fill(q, buf, 0, 0, 1, 0)},
			{"fill of nil", tr.Fill(q, nil, 1, 0, 1, 0)},
			{"check with a guard past the end", func() error { _, err := tr.Check(t.Context(), q, buf, 90, Guard, 1); return err }()},
		} {
			if !errors.Is(c.err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, c.err)
			}
		}
		if _, err := NewTransfer(nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewTransfer(nil): %v, want ErrInvalidArg", err)
		}
	})
}

// TestHeader checks that transfer.cl opens with the header of the suite's files.
func TestHeader(t *testing.T) {
	src := Family().Source
	if h := kernels.Header(src); !strings.HasPrefix(h, "transfer.cl: ") {
		t.Errorf("header starts %q", strings.SplitN(h, "\n", 2)[0])
	}
	for _, section := range []string{"Purpose", "Arguments", "Tunables", "Variants", "Launch", "Boundaries"} {
		if kernels.HeaderSection(src, section) == "" {
			t.Errorf("transfer.cl's header has no %s section", section)
		}
	}
}
