package enginetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// testBuffers runs the data-movement tests for every element type.
func (s *suite) testBuffers(t *testing.T) {
	t.Run("float32", func(t *testing.T) { bufferTests[float32](t, s) })
	t.Run("float64", func(t *testing.T) { bufferTests[float64](t, s) })
	t.Run("int32", func(t *testing.T) { bufferTests[int32](t, s) })
	t.Run("uint32", func(t *testing.T) { bufferTests[uint32](t, s) })
	t.Run("int64", func(t *testing.T) { bufferTests[int64](t, s) })
	t.Run("uint8", func(t *testing.T) { bufferTests[uint8](t, s) })
	// The 16- and 8-bit floating-point types hold random bit patterns (NaNs, infinities
	// and subnormals among them), which every copy and fill must keep bit for bit.
	t.Run("float16", func(t *testing.T) { bufferTests[engine.Half](t, s); specialFills(t, s, halfSpecials) })
	t.Run("bfloat16", func(t *testing.T) { bufferTests[engine.BFloat16](t, s); specialFills(t, s, bfloat16Specials) })
	t.Run("float8e4m3", func(t *testing.T) { bufferTests[engine.Float8E4M3](t, s); specialFills(t, s, e4m3Specials) })
	t.Run("float8e5m2", func(t *testing.T) { bufferTests[engine.Float8E5M2](t, s); specialFills(t, s, e5m2Specials) })
	t.Run("Cancelled", s.testCancelled)
}

// The special values of the 16- and 8-bit floating-point types: zeros of both signs, the
// smallest subnormal, the largest finite value, infinities (none in E4M3) and NaNs, quiet
// and signaling.
var (
	halfSpecials     = []engine.Half{0x0000, 0x8000, 0x0001, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFC01, 0x3C00}
	bfloat16Specials = []engine.BFloat16{0x0000, 0x8000, 0x0001, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0xFF81, 0x3F80}
	e4m3Specials     = []engine.Float8E4M3{0x00, 0x80, 0x01, 0x7E, 0xFE, 0x7F, 0xFF, 0x38}
	e5m2Specials     = []engine.Float8E5M2{0x00, 0x80, 0x01, 0x7B, 0xFB, 0x7C, 0xFC, 0x7E, 0xFD, 0x3C}
)

// specialFills fills guarded buffers of odd lengths with each of a type's special values
// (see halfSpecials), whole and in a window, and checks their bits: a backend must store a
// fill's pattern as bytes, never convert it.
func specialFills[T engine.Scalar](t *testing.T, s *suite, specials []T) {
	for _, n := range s.fit([]int{1, 7, 255, 257}) {
		t.Run(fmt.Sprintf("SpecialFill/n=%d", n), func(t *testing.T) {
			q := s.queue(t)
			r := rng(t)
			model := guarded(random[T](r, n))
			b := upload(t, q, model)
			for i, v := range specials {
				off, cnt := guard, n // the whole interior, then a window of it
				if i%2 == 1 && n >= 3 {
					off, cnt = guard+1, n-2
				}
				if err := b.Fill(q, off, cnt, v); err != nil {
					t.Fatalf("Fill of %d at %d with %v (%#x): %v", cnt, off, v, bitsOf(v), err)
				}
				for j := off; j < off+cnt; j++ {
					model[j] = v
				}
				checkBits(t, fmt.Sprintf("after Fill of %d at %d with %v (%#x)", cnt, off, v, bitsOf(v)), download(t, q, b), model, guard)
			}
		})
	}
}

// testCancelled: Read, Write, Upload and Download with a context already done return an
// error wrapping its cause, and move nothing.
func (s *suite) testCancelled(t *testing.T) {
	q := s.queue(t)
	want := []int32{1, 2, 3, 4}
	b := upload(t, q, want)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	got := make([]int32, len(want))
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"Write", func() error { return b.Write(ctx, q, 0, []int32{9, 9, 9, 9}) }},
		{"Read", func() error { return b.Read(ctx, q, 0, got) }},
		{"Upload", func() error { _, err := engine.Upload(ctx, q, want); return err }},
		{"Download", func() error { _, err := b.Download(ctx, q); return err }},
	} {
		if err := c.call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want an error wrapping context.Canceled", c.name, err)
		}
	}
	if got[0] != 0 {
		t.Errorf("Read with a cancelled context wrote %v into its destination", got)
	}
	checkBits(t, "after a cancelled Write", download(t, q, b), want, 0)
}

func bufferTests[T engine.Scalar](t *testing.T, s *suite) {
	for _, n := range s.sizes() {
		t.Run(fmt.Sprintf("RoundTrip/n=%d", n), func(t *testing.T) { roundTrip[T](t, s, n) })
	}
	for _, n := range s.sizes() {
		t.Run(fmt.Sprintf("Partial/n=%d", n), func(t *testing.T) { partial[T](t, s, n) })
	}
	for _, n := range s.sizes() {
		t.Run(fmt.Sprintf("Fill/n=%d", n), func(t *testing.T) { fill[T](t, s, n) })
	}
	for _, n := range s.sizes() {
		t.Run(fmt.Sprintf("Copy/n=%d", n), func(t *testing.T) { copyFrom[T](t, s, n) })
	}
	t.Run("ZeroLength", func(t *testing.T) { zeroLength[T](t, s) })
}

// newBuffer allocates n elements on the suite's device, closed when t ends.
func newBuffer[T engine.Scalar](t testing.TB, s *suite, n int) *engine.Buffer[T] {
	t.Helper()
	b, err := engine.NewBuffer[T](s.dev, n)
	if err != nil {
		t.Fatalf("NewBuffer(%d): %v", n, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// upload copies data to a new buffer, closed when t ends.
func upload[T engine.Scalar](t testing.TB, q *engine.Queue, data []T) *engine.Buffer[T] {
	t.Helper()
	b, err := engine.Upload(t.Context(), q, data)
	if err != nil {
		t.Fatalf("Upload of %d elements: %v", len(data), err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// download reads the whole buffer.
func download[T engine.Scalar](t testing.TB, q *engine.Queue, b *engine.Buffer[T]) []T {
	t.Helper()
	got, err := b.Download(t.Context(), q)
	if err != nil {
		t.Fatalf("Download: %v", err)
	}
	return got
}

// roundTrip writes random data and reads it back, whole, through Upload, Write and Read.
func roundTrip[T engine.Scalar](t *testing.T, s *suite, n int) {
	q := s.queue(t)
	r := rng(t)
	want := random[T](r, n)
	b := upload(t, q, want)
	if b.Len() != n || b.Bytes() != int64(n*engine.SizeOf[T]()) || b.Device() != s.dev {
		t.Errorf("Len() = %d, Bytes() = %d, Device() = %v; want %d, %d, %v", b.Len(), b.Bytes(), b.Device(), n, n*engine.SizeOf[T](), s.dev)
	}
	checkBits(t, "Upload then Download", download(t, q, b), want, 0)

	want = random[T](r, n)
	if err := b.Write(t.Context(), q, 0, want); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got := make([]T, n)
	if err := b.Read(t.Context(), q, 0, got); err != nil {
		t.Fatalf("Read: %v", err)
	}
	checkBits(t, "Write then Read", got, want, 0)
}

// windows returns (offset, count) pairs inside n elements: the ends, odd middles, and an
// empty window at the end.
func windows(n int) [][2]int {
	w := [][2]int{{0, 1}, {n - 1, 1}, {n / 3, n / 2}, {n, 0}}
	if n >= 3 {
		w = append(w, [2]int{1, n - 2}, [2]int{n / 2, (n + 1) / 2})
	}
	return w
}

// partial writes and reads windows at offsets, checked against a host copy.
func partial[T engine.Scalar](t *testing.T, s *suite, n int) {
	q := s.queue(t)
	r := rng(t)
	model := random[T](r, n)
	b := upload(t, q, model)
	for _, w := range windows(n) {
		off, cnt := w[0], w[1]
		data := random[T](r, cnt)
		if err := b.Write(t.Context(), q, off, data); err != nil {
			t.Fatalf("Write of %d at %d: %v", cnt, off, err)
		}
		copy(model[off:], data)
		for _, rw := range windows(n) {
			got := make([]T, rw[1])
			if err := b.Read(t.Context(), q, rw[0], got); err != nil {
				t.Fatalf("Read of %d at %d: %v", rw[1], rw[0], err)
			}
			checkBits(t, fmt.Sprintf("after Write of %d at %d, Read of %d at %d", cnt, off, rw[1], rw[0]), got, model[rw[0]:rw[0]+rw[1]], 0)
		}
	}
	checkBits(t, "whole buffer", download(t, q, b), model, 0)
}

// fill fills windows of the interior of a guarded buffer.
func fill[T engine.Scalar](t *testing.T, s *suite, n int) {
	q := s.queue(t)
	r := rng(t)
	model := guarded(random[T](r, n))
	b := upload(t, q, model)
	for _, w := range windows(n) {
		off, cnt := guard+w[0], w[1]
		v := random[T](r, 1)[0]
		if err := b.Fill(q, off, cnt, v); err != nil {
			t.Fatalf("Fill of %d at %d: %v", cnt, off, err)
		}
		for i := off; i < off+cnt; i++ {
			model[i] = v
		}
		checkBits(t, fmt.Sprintf("after Fill of %d at %d with %v", cnt, off, v), download(t, q, b), model, guard)
	}
}

// copyFrom copies windows of a source into the interior of a guarded buffer, and between
// disjoint regions of one buffer.
func copyFrom[T engine.Scalar](t *testing.T, s *suite, n int) {
	q := s.queue(t)
	r := rng(t)
	srcData := random[T](r, n)
	src := upload(t, q, srcData)
	model := sentinels[T](n + 2*guard)
	dst := upload(t, q, model)
	cases := [][3]int{{0, 0, n}, {n - 1, 0, 1}, {0, n - 1, 1}, {n, 0, 0}} // dst offset, src offset, count
	if n >= 3 {
		cases = append(cases, [3]int{1, 2, n - 3}, [3]int{2, 1, n - 3}, [3]int{n / 2, n / 3, n - n/2})
	}
	for _, c := range cases {
		doff, soff, cnt := guard+c[0], c[1], c[2]
		if err := dst.CopyFrom(q, doff, src, soff, cnt); err != nil {
			t.Fatalf("CopyFrom(%d, src, %d, %d): %v", doff, soff, cnt, err)
		}
		copy(model[doff:doff+cnt], srcData[soff:soff+cnt])
		checkBits(t, fmt.Sprintf("after CopyFrom(%d, src, %d, %d)", doff, soff, cnt), download(t, q, dst), model, guard)
	}
	// Within one buffer: the first half onto the disjoint back half.
	if half := n / 2; half > 0 {
		doff, soff := guard+n-half, guard
		if err := dst.CopyFrom(q, doff, dst, soff, half); err != nil {
			t.Fatalf("CopyFrom within one buffer (%d, %d, %d): %v", doff, soff, half, err)
		}
		copy(model[doff:doff+half], model[soff:soff+half])
		checkBits(t, "after CopyFrom within one buffer", download(t, q, dst), model, guard)
	}
}

// zeroLength checks that empty Reads, Writes, Fills and copies at the end of a buffer
// succeed and change nothing.
func zeroLength[T engine.Scalar](t *testing.T, s *suite) {
	q := s.queue(t)
	want := random[T](rng(t), 7)
	b := upload(t, q, want)
	calls := s.driverCalls()
	for _, op := range []struct {
		name string
		err  error
	}{
		{"Write", b.Write(t.Context(), q, 7, nil)},
		{"Read", b.Read(t.Context(), q, 7, nil)},
		{"Fill", b.Fill(q, 7, 0, sentinel[T]())},
		{"CopyFrom", b.CopyFrom(q, 7, b, 0, 0)},
	} {
		if op.err != nil {
			t.Errorf("%s of 0 elements at the end: %v", op.name, op.err)
		}
	}
	s.checkNoDriverCalls(t, calls, "empty operations")
	checkBits(t, "after empty operations", download(t, q, b), want, 0)
}

// driverCalls returns Options.DriverCalls of the suite's device, or -1 without it.
func (s *suite) driverCalls() int64 { return s.callsOn(s.dev) }

func (s *suite) callsOn(d *engine.Device) int64 {
	if s.opts.DriverCalls == nil {
		return -1
	}
	return s.opts.DriverCalls(d)
}

// checkNoDriverCalls fails t when the device's driver was called since before was taken.
func (s *suite) checkNoDriverCalls(t testing.TB, before int64, what string) {
	t.Helper()
	s.checkNoDriverCallsOn(t, s.dev, before, what)
}

func (s *suite) checkNoDriverCallsOn(t testing.TB, d *engine.Device, before int64, what string) {
	t.Helper()
	if before < 0 {
		return
	}
	if after := s.callsOn(d); after != before {
		t.Errorf("%s reached the driver: %d driver calls", what, after-before)
	}
}
