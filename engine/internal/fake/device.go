package fake

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// device is an opened fake device. It tracks the objects made from it that are still open,
// to check that Device.Close comes last.
type device struct {
	spec
	info  driver.DeviceInfo
	calls counters

	mu        sync.Mutex
	closed    bool
	live      map[any]string // open buffers, programs, kernels and queues
	allocated int64
}

var (
	_ driver.Device         = (*device)(nil)
	_ driver.DialectBuilder = (*device)(nil)
	_ driver.LaunchFeaturer = (*device)(nil)
)

func (d *device) Info() driver.DeviceInfo {
	count(d, "Device.Info")
	return d.info
}

// adopt records a new child object, or reports a closed device.
func (d *device) adopt(obj any, what string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return violation("%s on a closed device", what)
	}
	d.live[obj] = what
	return nil
}

func (d *device) isClosed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}

// drop forgets a closed child; closing one twice is a violation.
func (d *device) drop(obj any, what string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.live[obj]; !ok {
		return violation("%s closed twice", what)
	}
	delete(d.live, obj)
	if b, ok := obj.(*buffer); ok {
		d.allocated -= int64(len(b.mem))
	}
	return nil
}

func (d *device) Alloc(size int64) (driver.Buffer, error) {
	count(d, "Device.Alloc")
	if size <= 0 {
		return nil, violation("Alloc of %d bytes", size)
	}
	if size > d.info.MaxAllocBytes {
		return nil, fmt.Errorf("fake: Alloc of %d bytes exceeds the largest allocation (%d): %w", size, d.info.MaxAllocBytes, engine.ErrOutOfMemory)
	}
	d.mu.Lock()
	if d.allocated+size > d.info.GlobalMemBytes {
		d.mu.Unlock()
		return nil, fmt.Errorf("fake: Alloc of %d bytes: %d of %d bytes in use: %w", size, d.allocated, d.info.GlobalMemBytes, engine.ErrOutOfMemory)
	}
	d.allocated += size
	d.mu.Unlock()
	// Back the bytes with uint64s so that every element type is aligned in kernels.
	words := make([]uint64, (size+7)/8)
	b := &buffer{dev: d, id: bufferIDs.Add(1), mem: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), size)}
	if err := d.adopt(b, "Alloc"); err != nil {
		d.mu.Lock()
		d.allocated -= size
		d.mu.Unlock()
		return nil, err
	}
	return b, nil
}

func (d *device) Build(source string, options []string) (driver.Program, error) {
	count(d, "Device.Build")
	return d.build(driver.Source{Dialect: driver.DialectOpenCL, Text: source}, options)
}

// Dialects returns the dialects the device builds: OpenCL C, and CUDA C++ on the GPU.
func (d *device) Dialects() []driver.Dialect {
	count(d, "Device.Dialects")
	return slices.Clone(d.dialects)
}

// BuildSource builds src in one of the device's dialects; another one is a violation
// (engine refuses it).
func (d *device) BuildSource(src driver.Source, options []string) (driver.Program, error) {
	count(d, "Device.BuildSource")
	if !slices.Contains(d.dialects, src.Dialect) {
		return nil, violation("BuildSource in %s on a device that builds %v", src.Dialect, d.dialects)
	}
	return d.build(src, options)
}

func (d *device) build(src driver.Source, options []string) (driver.Program, error) {
	if d.isClosed() {
		return nil, violation("Build on a closed device")
	}
	p, err := build(d, src, options)
	if err != nil {
		return nil, err
	}
	if err := d.adopt(p, "Build"); err != nil {
		return nil, err
	}
	return p, nil
}

// LaunchFeatures returns the device's launch options: all of them on the GPU, LocalBytes
// arguments on the CPU.
func (d *device) LaunchFeatures() driver.LaunchFeatures {
	count(d, "Device.LaunchFeatures")
	return d.features
}

func (d *device) NewQueue() (driver.Queue, error) {
	count(d, "Device.NewQueue")
	q := &queue{dev: d}
	if err := d.adopt(q, "NewQueue"); err != nil {
		return nil, err
	}
	return q, nil
}

// Close closes the device. The SPI promises that every object made from it is closed
// already; one still open is reported as a violation (and released).
func (d *device) Close() error {
	count(d, "Device.Close")
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return violation("Device.Close called twice")
	}
	d.closed = true
	if len(d.live) > 0 {
		var open []string
		for _, what := range d.live {
			open = append(open, what)
		}
		sort.Strings(open)
		d.live = map[any]string{}
		return violation("Device.Close with %d objects still open (made by %s)", len(open), strings.Join(open, ", "))
	}
	return nil
}

// buffer is device memory: Go memory, 8-byte aligned.
type buffer struct {
	dev    *device
	id     uint64 // for tensor maps (tensormap.go)
	mem    []byte
	closed atomic.Bool
}

var _ driver.Buffer = (*buffer)(nil)

func (b *buffer) Size() int64 {
	count(b.dev, "Buffer.Size")
	return int64(len(b.mem))
}

func (b *buffer) Close() error {
	count(b.dev, "Buffer.Close")
	if b.closed.Swap(true) {
		return violation("Buffer.Close called twice")
	}
	mapped.Delete(b.id)
	return b.dev.drop(b, "Alloc")
}

// use checks that b can be used by a command on d, for size bytes at offset.
func (b *buffer) use(d *device, op string, offset, size int64) error {
	switch {
	case b == nil:
		return violation("%s: nil buffer", op)
	case b.dev != d:
		return violation("%s: buffer of another device", op)
	case b.closed.Load():
		return violation("%s: closed buffer", op)
	case size <= 0 || offset < 0 || offset > int64(len(b.mem)) || size > int64(len(b.mem))-offset:
		return violation("%s of %d bytes at offset %d: out of range for a buffer of %d", op, size, offset, len(b.mem))
	}
	return nil
}

// asBuffer returns db as a fake buffer, or nil when it is not one.
func asBuffer(db driver.Buffer) *buffer {
	b, _ := db.(*buffer)
	return b
}
