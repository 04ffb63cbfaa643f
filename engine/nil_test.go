package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// TestNilAndZeroValues calls the exported methods of every engine type on a nil pointer
// and on a zero value made without engine.Open: none may panic, and those that return an
// error return one wrapping ErrInvalidArg (or ErrClosed for a closed object's use).
func TestNilAndZeroValues(t *testing.T) {
	ctx := context.Background()
	dev, q := open(t, "fake:0")
	var (
		nilDev  *engine.Device
		zeroDev = &engine.Device{}
		nilQ    *engine.Queue
		zeroQ   = &engine.Queue{}
		nilBuf  *engine.Buffer[float32]
		zeroBuf = &engine.Buffer[float32]{}
		nilProg *engine.Program
		zeroPrg = &engine.Program{}
		nilK    *engine.Kernel
		zeroK   = &engine.Kernel{}
		nilEv   *engine.Event
		zeroEv  = &engine.Event{}
	)
	good, err := engine.NewBuffer[float32](dev, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	prog, err := dev.Build(suitekernels.Source)
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel(suitekernels.Iota)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{}
	for name, d := range map[string]*engine.Device{"nil": nilDev, "zero": zeroDev} {
		calls[name+" Device.NewQueue"] = func() error { _, err := d.NewQueue(); return err }
		calls[name+" Device.Build"] = func() error { _, err := d.Build(suitekernels.Source); return err }
		calls[name+" NewBuffer"] = func() error { _, err := engine.NewBuffer[float32](d, 4); return err }
		calls[name+" Device getters"] = func() error {
			_, _, _, _, _, _ = d.ID(), d.Backend(), d.Info(), d.Dialects(), d.LaunchFeatures(), d.String()
			return errInvalid
		}
		calls[name+" Device.TensorMapSupport"] = d.TensorMapSupport
	}
	for name, qq := range map[string]*engine.Queue{"nil": nilQ, "zero": zeroQ} {
		calls[name+" Queue.Finish"] = func() error { return qq.Finish(ctx) }
		calls[name+" Queue.Launch"] = func() error { return qq.Launch(k, engine.Range1D(4, 4), int32(4), int32(0), good) }
		calls[name+" Queue.Timed"] = func() error { _, err := qq.Timed(ctx, func() error { return nil }); return err }
		calls[name+" Buffer.Download on it"] = func() error { _, err := good.Download(ctx, qq); return err }
		calls[name+" Queue.Device"] = func() error { _ = qq.Device(); return errInvalid }
	}
	for name, b := range map[string]*engine.Buffer[float32]{"nil": nilBuf, "zero": zeroBuf} {
		calls[name+" Buffer.Download"] = func() error { _, err := b.Download(ctx, q); return err }
		calls[name+" Buffer.Write"] = func() error { return b.Write(ctx, q, 0, []float32{1}) }
		calls[name+" Buffer.Read"] = func() error { return b.Read(ctx, q, 0, make([]float32, 1)) }
		calls[name+" Buffer.Fill"] = func() error { return b.Fill(q, 0, 1, 1) }
		calls[name+" Buffer.CopyFrom"] = func() error { return b.CopyFrom(q, 0, good, 0, 1) }
		calls[name+" Buffer.CopyFrom source"] = func() error { return good.CopyFrom(q, 0, b, 0, 1) }
		calls[name+" Buffer getters"] = func() error { _, _, _ = b.Len(), b.Bytes(), b.Device(); return errInvalid }
		calls[name+" Launch with it"] = func() error { return q.Launch(k, engine.Range1D(4, 4), int32(4), int32(0), b) }
		calls[name+" NewTensorMap of it"] = func() error {
			_, err := engine.NewTensorMap(b, engine.TensorMapDesc{Dims: []int64{4}, Box: []int{4}})
			return err
		}
	}
	for name, m := range map[string]*engine.TensorMap{"nil": nil, "zero": {}} {
		calls[name+" TensorMap getters"] = func() error { _, _, _ = m.Device(), m.Desc(), m.String(); return errInvalid }
		calls[name+" Launch with a TensorMap"] = func() error { return q.Launch(k, engine.Range1D(4, 4), int32(4), m, good) }
	}
	for name, p := range map[string]*engine.Program{"nil": nilProg, "zero": zeroPrg} {
		calls[name+" Program.Kernel"] = func() error { _, err := p.Kernel(suitekernels.Iota); return err }
	}
	for name, kk := range map[string]*engine.Kernel{"nil": nilK, "zero": zeroK} {
		calls[name+" Launch of it"] = func() error { return q.Launch(kk, engine.Range1D(4, 4), int32(4), int32(0), good) }
		calls[name+" Kernel getters"] = func() error { _, _, _ = kk.Name(), kk.MaxWorkGroupSize(), kk.Attributes(); return errInvalid }
		calls[name+" Kernel.Occupancy"] = func() error { _, err := kk.Occupancy(64, 0); return err }
	}
	for name, e := range map[string]*engine.Event{"nil": nilEv, "zero": zeroEv} {
		calls[name+" Event.Wait"] = func() error { return e.Wait(ctx) }
		calls[name+" Event.Elapsed"] = func() error { _, err := e.Elapsed(ctx); return err }
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panic: %v", p)
					}
				}()
				err = call()
			}()
			if !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("got %v, want an error wrapping ErrInvalidArg", err)
			}
		})
	}
	// Closing nil and zero values is a no-op, as Close is idempotent.
	for name, c := range map[string]func() error{"device": nilDev.Close, "queue": nilQ.Close, "buffer": nilBuf.Close, "program": nilProg.Close, "kernel": nilK.Close, "event": nilEv.Close, "zero event": zeroEv.Close} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("Close of a nil %s: panic %v", name, p)
				}
			}()
			if err := c(); err != nil {
				t.Errorf("Close of a nil %s: %v", name, err)
			}
		}()
	}
}

// errInvalid stands for "no error to check" in TestNilAndZeroValues: the getters have no
// error, only the promise not to panic.
var errInvalid = fmt.Errorf("getter: %w", engine.ErrInvalidArg)

// TestClearErrors checks two messages that used to confuse: a source with a NUL byte is
// refused naming the offset, and a buffer used with a second opening of its device says so
// instead of "belongs to fake:0, not fake:0".
func TestClearErrors(t *testing.T) {
	dev, _ := open(t, "fake:0")
	if _, err := dev.Build("__kernel void k() {}\x00 trailing"); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "NUL byte at offset 20") {
		t.Errorf("Build of a source with a NUL: %v", err)
	}
	_, q2 := open(t, "fake:0")
	b, err := engine.NewBuffer[float32](dev, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.Fill(q2, 0, 4, 1)
	if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "another opening of fake:0") {
		t.Errorf("a buffer on a queue of another opening of its device: %v", err)
	}
}

// TestAllocationTotal checks that the live buffers of a device may not together exceed its
// global memory, each within the largest allocation, and that closing one makes room again.
func TestAllocationTotal(t *testing.T) {
	dev, _ := open(t, "fake:0")
	info := dev.Info()
	chunk := int(min(info.MaxAllocBytes, info.GlobalMemBytes/3))
	var bufs []*engine.Buffer[byte]
	defer func() {
		for _, b := range bufs {
			b.Close()
		}
	}()
	for int64(len(bufs)+1)*int64(chunk) <= info.GlobalMemBytes {
		b, err := engine.NewBuffer[byte](dev, chunk)
		if err != nil {
			t.Fatalf("buffer %d of %d bytes: %v", len(bufs), chunk, err)
		}
		bufs = append(bufs, b)
	}
	if got, want := dev.AllocatedBytes(), int64(len(bufs))*int64(chunk); got != want {
		t.Errorf("AllocatedBytes = %d, want %d", got, want)
	}
	_, err := engine.NewBuffer[byte](dev, chunk)
	if !errors.Is(err, engine.ErrOutOfMemory) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("a buffer past the device's memory: %v, want ErrOutOfMemory naming what is in use", err)
	}
	bufs[0].Close()
	b, err := engine.NewBuffer[byte](dev, chunk)
	if err != nil {
		t.Fatalf("after a Close: %v", err)
	}
	bufs[0] = b
	zero := &engine.Buffer[byte]{}
	if err := zero.Close(); err != nil {
		t.Errorf("Close of a zero Buffer: %v", err)
	}
}
