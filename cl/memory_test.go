//go:build !noopencl

package cl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// newTestQueue returns a queue of dev that the test closes.
func newTestQueue(t *testing.T, dev *engine.Device) *engine.Queue {
	t.Helper()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// newHost returns a host buffer of n elements of dev that the test closes.
func newHost[T engine.Scalar](t *testing.T, dev *engine.Device, n int) *engine.HostBuffer[T] {
	t.Helper()
	h, err := engine.NewHostBuffer[T](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// awaitEvent waits for ev and closes it.
func awaitEvent(t *testing.T, what string, ev *engine.Event, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer ev.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ev.Wait(ctx); err != nil {
		t.Fatalf("%s: wait: %v", what, err)
	}
}

// TestHostBuffer copies between a host buffer and a device buffer both ways, at offsets,
// and checks what Pinned says.
func TestHostBuffer(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		n := 1 << 16
		if small() {
			n = 256
		}
		q := newTestQueue(t, dev)
		h := newHost[float32](t, dev, n)
		if want := dev.Info().Kind == engine.KindGPU && !underOclgrind([]engine.DeviceInfo{dev.Info()}); h.Pinned() != want {
			t.Errorf("Pinned %v on a %v of %q; want %v", h.Pinned(), dev.Info().Kind, dev.Info().Platform, want)
		}
		s := h.Slice()
		if len(s) != n {
			t.Fatalf("slice of %d elements, want %d", len(s), n)
		}
		for i := range s {
			s[i] = float32(i)
		}
		b, err := engine.NewBuffer[float32](dev, n)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		ev, err := b.WriteAsync(q, 0, h, 0, n)
		awaitEvent(t, "WriteAsync", ev, err)
		got, err := b.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != float32(i) {
				t.Fatalf("device element %d after WriteAsync: %v, want %d", i, v, i)
			}
		}

		// Back into the middle of the host buffer; the rest must stay untouched.
		for i := range s {
			s[i] = -1
		}
		const off, hoff = 10, 20
		count := n - 30
		ev, err = b.ReadAsync(q, off, h, hoff, count)
		awaitEvent(t, "ReadAsync", ev, err)
		for i, v := range s {
			want := float32(-1)
			if i >= hoff && i < hoff+count {
				want = float32(i - hoff + off)
			}
			if v != want {
				t.Fatalf("host element %d after ReadAsync: %v, want %v", i, v, want)
			}
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		if h.Slice() != nil {
			t.Error("Slice of a closed host buffer is not nil")
		}
	})
}

// TestAsyncPipeline enqueues an asynchronous write, a kernel and an asynchronous read on
// one queue, and waits only for the read's event.
func TestAsyncPipeline(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		n, rounds := 4096, 4
		if small() {
			n, rounds = 64, 2
		}
		q := newTestQueue(t, dev)
		k := mustKernel(t, dev, "add_const")
		wg := min(64, k.MaxWorkGroupSize())
		in, out := newHost[int32](t, dev, n), newHost[int32](t, dev, n)
		v, err := engine.NewBuffer[int32](dev, n)
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		for r := range rounds {
			for i := range in.Slice() {
				in.Slice()[i] = int32(i * r)
			}
			up, err := v.WriteAsync(q, 0, in, 0, n)
			if err != nil {
				t.Fatal(err)
			}
			up.Close() // the read's completion implies the write's
			if err := q.Launch(k, engine.Range1D(engine.RoundUp(n, wg), wg), v, int32(r+1), int32(n)); err != nil {
				t.Fatal(err)
			}
			down, err := v.ReadAsync(q, 0, out, 0, n)
			awaitEvent(t, "ReadAsync", down, err)
			for i, x := range out.Slice() {
				if want := int32(i*r + r + 1); x != want {
					t.Fatalf("round %d: element %d = %d, want %d", r, i, x, want)
				}
			}
		}
	})
}

// TestCrossQueueWait orders one queue's commands after another's on the device: B waits
// for A's asynchronous write, then launches and reads; B waits for a marker recorded
// after many launches on A, then reads. On devices whose queues are their own
// cl_command_queue (Rusticl here, GPUs), a wait that did nothing would let B run early.
func TestCrossQueueWait(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		n, launches := 1<<18, 32
		if small() {
			n, launches = 64, 3
		}
		ctx := t.Context()
		a, b := newTestQueue(t, dev), newTestQueue(t, dev)
		k := mustKernel(t, dev, "add_const")
		wg := min(64, k.MaxWorkGroupSize())
		r := engine.Range1D(engine.RoundUp(n, wg), wg)
		in, out := newHost[int32](t, dev, n), newHost[int32](t, dev, n)
		for i := range in.Slice() {
			in.Slice()[i] = int32(i)
		}
		v, err := engine.NewBuffer[int32](dev, n)
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()

		up, err := v.WriteAsync(a, 0, in, 0, n)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Wait(ctx, up); err != nil {
			t.Fatal(err)
		}
		up.Close() // the barrier holds its own reference
		if err := b.Launch(k, r, v, int32(5), int32(n)); err != nil {
			t.Fatal(err)
		}
		down, err := v.ReadAsync(b, 0, out, 0, n)
		awaitEvent(t, "ReadAsync on B", down, err)
		for i, x := range out.Slice() {
			if x != int32(i+5) {
				t.Fatalf("after B waited for A's write: element %d = %d, want %d", i, x, i+5)
			}
		}

		for range launches {
			if err := a.Launch(k, r, v, int32(1), int32(n)); err != nil {
				t.Fatal(err)
			}
		}
		mark, err := a.Record()
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Wait(ctx, mark); err != nil {
			t.Fatal(err)
		}
		mark.Close()
		down, err = v.ReadAsync(b, 0, out, 0, n)
		awaitEvent(t, "ReadAsync on B after A's marker", down, err)
		for i, x := range out.Slice() {
			if want := int32(i + 5 + launches); x != want {
				t.Fatalf("after B waited for A's marker: element %d = %d, want %d", i, x, want)
			}
		}
	})
}

// TestRecord waits for a marker recorded after a launch, from the host, and reads its
// time: about zero, or ErrUnsupported where the device's timestamps are no clock's.
func TestRecord(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		n := 1024
		if small() {
			n = 64
		}
		q := newTestQueue(t, dev)
		k := mustKernel(t, dev, "add_const")
		v, err := engine.Upload(t.Context(), q, make([]int32, n))
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		wg := min(64, k.MaxWorkGroupSize())
		if err := q.Launch(k, engine.Range1D(engine.RoundUp(n, wg), wg), v, int32(3), int32(n)); err != nil {
			t.Fatal(err)
		}
		mark, err := q.Record()
		if err != nil {
			t.Fatal(err)
		}
		defer mark.Close()
		if err := mark.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
		d, err := mark.Elapsed(t.Context())
		if err != nil && !errors.Is(err, engine.ErrUnsupported) || d < 0 || d > time.Second {
			t.Errorf("marker Elapsed: %v, %v; want about zero, or ErrUnsupported", d, err)
		}
		t.Logf("marker Elapsed: %v, %v", d, err)
		got, err := v.Download(t.Context(), q)
		if err != nil || got[n-1] != 3 {
			t.Fatalf("after the marker: %v, %v", got[n-1], err)
		}
	})
}

// TestHostQueuePolicy checks the queue that maps host buffers: the device's one queue and
// its mutex under queue sharing; else a queue no NewQueue hands out, with no lock.
func TestHostQueuePolicy(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		d := dev.Driver().(*device)
		hq, err := d.hostQueue()
		if err != nil {
			t.Fatal(err)
		}
		dq, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		defer dq.Close()
		same := dq.(*queue).q == hq.q
		if same != d.c.shared || (hq.mu != nil) != d.c.shared {
			t.Errorf("shared %v: the host queue is NewQueue's %v, has a mutex %v; want both %v", d.c.shared, same, hq.mu != nil, d.c.shared)
		}
	})
}

// foreignHost and foreignEvent are a host buffer and an event of no OpenCL device.
type foreignHost struct{ mem [64]byte }

func (f *foreignHost) Pointer() unsafe.Pointer { return unsafe.Pointer(&f.mem[0]) }
func (f *foreignHost) Size() int64             { return int64(len(f.mem)) }
func (f *foreignHost) Pinned() bool            { return false }
func (f *foreignHost) Close() error            { return nil }

type foreignEvent struct{}

func (foreignEvent) Wait(ctx context.Context) error  { return nil }
func (foreignEvent) Elapsed() (time.Duration, error) { return 0, nil }
func (foreignEvent) Close() error                    { return nil }

// TestMemoryErrors calls the driver directly with what engine would refuse: sizes and
// ranges out of bounds, a host buffer and an event of another backend, closed objects.
func TestMemoryErrors(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		d := dev.Driver().(*device)
		want := func(what string, err error, sentinel error, says string) {
			t.Helper()
			if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), says) || !strings.HasPrefix(err.Error(), "cl: ") || strings.Count(err.Error(), "cl: ") != 1 {
				t.Errorf("%s: %v; want an error wrapping %v that says %q", what, err, sentinel, says)
			}
		}
		for _, size := range []int64{0, -1} {
			_, err := d.AllocHost(size)
			want("AllocHost", err, engine.ErrInvalidArg, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR, ")
		}
		_, err := d.AllocHost(dev.Info().MaxAllocBytes + 1)
		want("AllocHost over the max allocation", err, engine.ErrOutOfMemory, "CL_DEVICE_MAX_MEM_ALLOC_SIZE")

		hb, err := d.AllocHost(64)
		if err != nil {
			t.Fatal(err)
		}
		defer hb.Close()
		if hb.Size() != 64 || hb.Pointer() == nil {
			t.Fatalf("host buffer of %d bytes at %p", hb.Size(), hb.Pointer())
		}
		clear(unsafe.Slice((*byte)(hb.Pointer()), 64)) // for Oclgrind's uninitialized checker
		b, err := d.Alloc(64)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		dq, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		q := dq.(*queue)
		defer q.Close()

		_, err = q.WriteAsync(b, 0, &foreignHost{}, 0, 64)
		want("WriteAsync from a foreign host buffer", err, engine.ErrInvalidArg, "not an OpenCL host buffer")
		_, err = q.ReadAsync(b, 0, nil, 0, 64)
		want("ReadAsync into no host buffer", err, engine.ErrInvalidArg, "not an OpenCL host buffer")
		for _, c := range []struct{ off, hoff, size int64 }{{0, 8, 64}, {0, -1, 8}, {0, 65, 0}, {0, 0, 0}, {0, 0, -8}} {
			_, err = q.WriteAsync(b, c.off, hb, c.hoff, c.size)
			want("WriteAsync out of the host buffer", err, engine.ErrInvalidArg, "out of range for a host buffer of 64 bytes")
			_, err = q.ReadAsync(b, c.off, hb, c.hoff, c.size)
			want("ReadAsync out of the host buffer", err, engine.ErrInvalidArg, "out of range for a host buffer of 64 bytes")
		}
		small, err := d.Alloc(16)
		if err != nil {
			t.Fatal(err)
		}
		defer small.Close()
		for _, off := range []int64{-4, 0, 8, 17} {
			_, err = q.WriteAsync(small, off, hb, 0, 32)
			want("WriteAsync out of the device buffer", err, engine.ErrInvalidArg, "out of range for a buffer of 16 bytes")
			_, err = q.ReadAsync(small, off, hb, 0, 32)
			want("ReadAsync out of the device buffer", err, engine.ErrInvalidArg, "out of range for a buffer of 16 bytes")
		}
		small.Close()
		_, err = q.WriteAsync(small, 0, hb, 0, 8)
		want("WriteAsync into a closed buffer", err, engine.ErrClosed, "buffer is closed")

		ev, err := q.WriteAsync(b, 0, hb, 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.WaitEvents([]driver.Event{ev}); err != nil {
			t.Fatal(err)
		}
		if err := ev.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		ev.Close()
		err = q.WaitEvents([]driver.Event{ev})
		want("WaitEvents on a closed event", err, engine.ErrClosed, "event 0")
		mark, err := q.Record()
		if err != nil {
			t.Fatal(err)
		}
		err = q.WaitEvents([]driver.Event{mark, foreignEvent{}})
		want("WaitEvents on a foreign event", err, engine.ErrInvalidArg, "event 1: event cl.foreignEvent is not an OpenCL event")
		err = q.WaitEvents([]driver.Event{mark, (*event)(nil)})
		want("WaitEvents on a nil event", err, engine.ErrInvalidArg, "is not an OpenCL event")
		if err := q.WaitEvents(nil); err != nil {
			t.Errorf("WaitEvents of no events: %v", err)
		}
		if e, err := asEvent(&spanEvent{start: mark.(*event), end: mark.(*event)}); err != nil || e != mark {
			t.Errorf("a vendor call's span event: %v, %v; want its second marker", e, err)
		}
		mark.Close()

		if err := hb.Close(); err != nil {
			t.Fatal(err)
		}
		if err := hb.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		_, err = q.WriteAsync(b, 0, hb, 0, 8)
		want("WriteAsync from a closed host buffer", err, engine.ErrClosed, "host buffer is closed")
		_, err = q.ReadAsync(b, 0, hb, 0, 8)
		want("ReadAsync into a closed host buffer", err, engine.ErrClosed, "host buffer is closed")

		hb2, err := d.AllocHost(8)
		if err != nil {
			t.Fatal(err)
		}
		defer hb2.Close()
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		_, err = q.WriteAsync(b, 0, hb2, 0, 8)
		want("WriteAsync on a closed queue", err, engine.ErrClosed, "queue is closed")
		_, err = q.ReadAsync(b, 0, hb2, 0, 8)
		want("ReadAsync on a closed queue", err, engine.ErrClosed, "queue is closed")
		err = q.WaitEvents([]driver.Event{foreignEvent{}})
		want("WaitEvents on a closed queue", err, engine.ErrClosed, "queue is closed")
		_, err = q.Record()
		want("Record on a closed queue", err, engine.ErrClosed, "queue is closed")
	})
}

// TestHostBufferClosedDevice allocates on a closed device, and closes a host buffer after
// its device (which engine never lets happen): an error, and a Close that does nothing,
// the device having closed the buffer. On Oclgrind a buffer released after its context
// corrupts the heap, and a later test crashes.
func TestHostBufferClosedDevice(t *testing.T) {
	infos := testDevices(t)
	dev, err := engine.Open(context.Background(), "opencl:"+infos[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	d := dev.Driver().(*device)
	hb, err := d.AllocHost(256)
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Close(); err != nil {
		t.Fatal(err)
	}
	if !hb.(*hostBuffer).closed.Load() {
		t.Error("the device's Close left its host buffer open")
	}
	if _, err := d.AllocHost(256); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("AllocHost on a closed device: %v, want ErrClosed", err)
	}
	if err := hb.Close(); err != nil {
		t.Errorf("Close after the device: %v", err)
	}
}

// TestAsyncConcurrent runs goroutines that each copy asynchronously through their own
// queue and host buffers, and launch, at once: on devices with a cl_command_queue per
// queue they overlap; on PoCL they go through the shared queue.
func TestAsyncConcurrent(t *testing.T) {
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		goroutines, n, iters := 4, 1<<14, 8
		if small() {
			goroutines, n, iters = 2, 64, 2
		}
		k := mustKernel(t, dev, "add_const")
		wg := min(64, k.MaxWorkGroupSize())
		var group sync.WaitGroup
		for g := range goroutines {
			group.Go(func() {
				if err := asyncWorker(dev, k, wg, g, n, iters); err != nil {
					t.Errorf("goroutine %d: %v", g, err)
				}
			})
		}
		group.Wait()
	})
}

func asyncWorker(dev *engine.Device, k *engine.Kernel, wg, g, n, iters int) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := dev.NewQueue()
	if err != nil {
		return err
	}
	defer q.Close()
	in, err := engine.NewHostBuffer[int32](dev, n)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := engine.NewHostBuffer[int32](dev, n)
	if err != nil {
		return err
	}
	defer out.Close()
	v, err := engine.NewBuffer[int32](dev, n)
	if err != nil {
		return err
	}
	defer v.Close()
	for it := range iters {
		for i := range in.Slice() {
			in.Slice()[i] = int32(g*i + it)
		}
		up, err := v.WriteAsync(q, 0, in, 0, n)
		if err != nil {
			return err
		}
		up.Close()
		if err := q.Launch(k, engine.Range1D(engine.RoundUp(n, wg), wg), v, int32(g+1), int32(n)); err != nil {
			return err
		}
		down, err := v.ReadAsync(q, 0, out, 0, n)
		if err != nil {
			return err
		}
		err = down.Wait(ctx)
		down.Close()
		if err != nil {
			return err
		}
		for i, x := range out.Slice() {
			if want := int32(g*i + it + g + 1); x != want {
				return fmt.Errorf("iteration %d: element %d = %d, want %d", it, i, x, want)
			}
		}
	}
	return nil
}

// BenchmarkTransfer copies 64 MiB to and from the device: blocking Write and Read from Go
// memory against WriteAsync and ReadAsync through a host buffer, whose pinned memory (on
// GPUs) the copy engines reach directly. enqueue-µs is how long an asynchronous call took
// to return: the host's share of the copy.
func BenchmarkTransfer(b *testing.B) {
	const n = 16 << 20 // float32s
	infos, err := engine.Devices(context.Background(), "opencl")
	if err != nil || len(infos) == 0 {
		b.Skipf("no OpenCL device: %v", err)
	}
	for _, info := range infos {
		b.Run(info.ID, func(b *testing.B) { benchTransfer(b, "opencl:"+info.ID, n) })
	}
}

func benchTransfer(b *testing.B, id string, n int) {
	dev, err := engine.Open(context.Background(), id)
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Close()
	{
		q, err := dev.NewQueue()
		if err != nil {
			b.Fatal(err)
		}
		defer q.Close()
		buf, err := engine.NewBuffer[float32](dev, n)
		if err != nil {
			b.Fatal(err)
		}
		defer buf.Close()
		h, err := engine.NewHostBuffer[float32](dev, n)
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close()
		clear(h.Slice())
		goMem := make([]float32, n)
		ctx := context.Background()
		b.Run("Write", func(b *testing.B) {
			b.SetBytes(4 * int64(n))
			for b.Loop() {
				if err := buf.Write(ctx, q, 0, goMem); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Read", func(b *testing.B) {
			b.SetBytes(4 * int64(n))
			for b.Loop() {
				if err := buf.Read(ctx, q, 0, goMem); err != nil {
					b.Fatal(err)
				}
			}
		})
		async := func(b *testing.B, copy func() (*engine.Event, error)) {
			b.SetBytes(4 * int64(n))
			var enqueue time.Duration
			for b.Loop() {
				start := time.Now()
				ev, err := copy()
				enqueue += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				err = ev.Wait(ctx)
				ev.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(enqueue.Microseconds())/float64(b.N), "enqueue-µs")
		}
		b.Run(fmt.Sprintf("WriteAsync/pinned=%v", h.Pinned()), func(b *testing.B) {
			async(b, func() (*engine.Event, error) { return buf.WriteAsync(q, 0, h, 0, n) })
		})
		b.Run(fmt.Sprintf("ReadAsync/pinned=%v", h.Pinned()), func(b *testing.B) {
			async(b, func() (*engine.Event, error) { return buf.ReadAsync(q, 0, h, 0, n) })
		})
		// A write on one queue beside a read on another: with a cl_command_queue each (not
		// PoCL's shared one) and a copy engine each way, they overlap.
		b.Run("WriteAsync+ReadAsync/two-queues", func(b *testing.B) {
			q2, err := dev.NewQueue()
			if err != nil {
				b.Fatal(err)
			}
			defer q2.Close()
			buf2, err := engine.NewBuffer[float32](dev, n)
			if err != nil {
				b.Fatal(err)
			}
			defer buf2.Close()
			h2, err := engine.NewHostBuffer[float32](dev, n)
			if err != nil {
				b.Fatal(err)
			}
			defer h2.Close()
			b.SetBytes(8 * int64(n))
			for b.Loop() {
				up, err := buf.WriteAsync(q, 0, h, 0, n)
				if err != nil {
					b.Fatal(err)
				}
				down, err := buf2.ReadAsync(q2, 0, h2, 0, n)
				if err != nil {
					b.Fatal(err)
				}
				for _, ev := range []*engine.Event{up, down} {
					if err := ev.Wait(ctx); err != nil {
						b.Fatal(err)
					}
					ev.Close()
				}
			}
		})
	}
}
