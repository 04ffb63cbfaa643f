package userkernel

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// Guard bands. With Launch.Guard, every buffer argument is allocated with a band of bytes
// after its data, filled with a canary pattern before the first run and read back after
// it: a band that changed means the kernel wrote past the end of that buffer, an
// OverrunError naming the argument and the first and last element written there.
//
// The band is only after the data. A band before it would need the kernel to receive a
// sub-buffer whose origin is a multiple of CL_DEVICE_MEM_BASE_ADDR_ALIGN (clCreateSubBuffer;
// on CUDA a pointer into the allocation); the engine exposes neither, and adding one means a
// new optional driver interface in engine/driver, engine, cl and cuda. The writes seen in
// practice run past the end (a global size larger than the buffer), and prism exec --check
// finds writes before a buffer as well, under Oclgrind.

// Band sizes: as large as the buffer's data, at least minGuardBytes and at most
// maxGuardBytes, so that an overrun by a global size up to twice the buffer's length is
// seen whole in small buffers, at little memory in large ones.
const (
	minGuardBytes = 4 << 10
	maxGuardBytes = 1 << 20
)

// guardBytes returns the size of the band after a buffer of data bytes on dev: a multiple
// of 64 bytes (of every element size), less where the device's largest allocation leaves
// less room (0: no band).
func guardBytes(dev *engine.Device, data int) int {
	band := min(max((data+63)/64*64, minGuardBytes), maxGuardBytes)
	if m := dev.Info().MaxAllocBytes; m > 0 && int64(data+band) > m {
		band = int(max(m-int64(data), 0)) / 64 * 64
	}
	return band
}

// canary returns the pattern of the band of argument index: pseudo-random bytes (a
// splitmix64 sequence seeded by the index), so that a kernel copying one buffer's band into
// another's, or writing zeros, ones or a constant, changes it.
func canary(index, n int) []byte {
	out := make([]byte, (n+7)/8*8)
	s := uint64(index)*0x9e3779b97f4a7c15 + 0x243f6a8885a308d3
	for i := 0; i < len(out); i += 8 {
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		binary.LittleEndian.PutUint64(out[i:], z^z>>31)
	}
	return out[:n]
}

// OverrunError is a kernel's write past the end of a buffer argument, found in its guard
// band: elements First to Last after the buffer's Len (indices of the buffer, from 0)
// changed. When Last is the band's last element, the writes may reach further (AtLeast).
// It wraps bench.ErrVerify.
type OverrunError struct {
	Arg         int    // the argument's index
	Param       string // the kernel parameter's name, where known
	Spec        string // the --arg spec
	Type        string // the element type
	Len         int    // the buffer's elements
	First, Last int    // the first and last element changed past the end
	Changed     int    // elements changed in the band
	Band        int    // elements in the band
	Device      string
}

func (e *OverrunError) Error() string {
	name := ""
	if e.Param != "" {
		name = " " + e.Param
	}
	reach := ""
	if e.Last == e.Len+e.Band-1 {
		reach = " (the band's end: the writes may reach further)"
	}
	return fmt.Sprintf("userkernel: the kernel wrote past the end of argument %d%s (%s) on %s: elements %d to %d of a buffer of %d %s "+
		"(%d of the %d elements of its guard band changed%s): %v", e.Arg, name, e.Spec, e.Device, e.First, e.Last, e.Len, e.Type,
		e.Changed, e.Band, reach, bench.ErrVerify)
}

func (e *OverrunError) Unwrap() error { return bench.ErrVerify }

// guard is the band of one buffer argument.
type guard struct {
	arg    *Arg
	offset int    // bytes: the buffer's data
	want   []byte // the canary
}

// fill writes the canary into the band of b.
func (g *guard) fill(ctx context.Context, q *engine.Queue, b *engine.Buffer[uint8]) error {
	return b.Write(ctx, q, g.offset, g.want)
}

// check reads the band of b back and returns an *OverrunError when it changed.
func (g *guard) check(ctx context.Context, q *engine.Queue, b *engine.Buffer[uint8], dev string) error {
	got := make([]byte, len(g.want))
	if err := b.Read(ctx, q, g.offset, got); err != nil {
		return err
	}
	if bytes.Equal(got, g.want) {
		return nil
	}
	size := g.arg.Type.Size
	e := &OverrunError{Arg: g.arg.Index, Param: g.arg.Param, Spec: g.arg.Spec, Type: g.arg.Type.Name, Len: g.arg.Len,
		First: -1, Band: len(g.want) / size, Device: dev}
	for i := 0; i+size <= len(got); i += size {
		if !bytes.Equal(got[i:i+size], g.want[i:i+size]) {
			if e.First < 0 {
				e.First = g.arg.Len + i/size
			}
			e.Last = g.arg.Len + i/size
			e.Changed++
		}
	}
	return e
}

// checkGuards checks the bands of the buffers, returning the overruns found, joined.
func checkGuards(ctx context.Context, q *engine.Queue, guards []*guard, bufs []*engine.Buffer[uint8], dev string) error {
	var errs []error
	for i, g := range guards {
		if g == nil {
			continue
		}
		if err := g.check(ctx, q, bufs[i], dev); err != nil {
			var oe *OverrunError
			if !errors.As(err, &oe) {
				return err
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
