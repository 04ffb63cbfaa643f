package engine

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prism-compute/prism/engine/driver"
)

// Device is an opened compute device. It is safe for concurrent use.
type Device struct {
	id       string
	backend  string
	info     DeviceInfo
	dialects []Dialect
	features LaunchFeatures
	drv      driver.Device

	// tensorMaps is nil where the device encodes tensor maps, else why it does not
	// (tensormap.go): the backend is asked once, at Open.
	tensorMaps error

	mu       sync.Mutex
	closed   bool
	children map[resource]struct{}
	// builds counts the BuildSourceContext compiles still running, abandoned ones
	// included; closeLater is set by a Close that found some, and the last one to end
	// closes the backend's device. Guarded by mu.
	builds     int
	closeLater bool

	vendor vendorLibraries // the vendor BLAS and FFT, loaded on first use (vendor.go)

	// progs shares and keeps compiled programs (progcache.go).
	progs progCache

	// pool holds the memory of closed buffers for reuse (pool.go); queues are the open
	// queues, whose progress says when a freed block may be reused. Guarded by mu.
	pool   *pool
	queues map[*Queue]struct{}

	// holding counts the queues whose commands a Timed call holds (Queue.release).
	holding atomic.Int32

	// hostTiming is set once an event has shown that the device reports no usable
	// timestamps: Queue.Timed measures host time from then on.
	hostTiming atomic.Bool
}

// AllocatedBytes returns the bytes the device's live buffers asked for
// (PoolStats.InUseBytes). NewBuffer checks what the pool holds, live and cached, with
// the new buffer, against the device's global memory.
func (d *Device) AllocatedBytes() int64 {
	if d == nil || d.pool == nil {
		return 0
	}
	return d.pool.stats().InUseBytes
}

// EventTiming reports whether Queue.Timed measures with the device's event timestamps.
// It turns false, for good, once a timed command has shown that the device reports none
// that a clock gives (Mesa's Rusticl 22.3 answers placeholders); Timed then measures host
// time around the work, launch overheads included.
func (d *Device) EventTiming() bool { return d == nil || !d.hostTiming.Load() }

// resource is anything made from a Device that Device.Close must release.
type resource interface {
	closeResource() error
	order() int // lower closes first
}

func newDevice(id, backend string, d driver.Device) (*Device, error) {
	info := d.Info()
	info.ID = id
	p, err := newPool(d)
	if err != nil {
		return nil, err
	}
	dev := &Device{id: id, backend: backend, info: info, drv: d, children: map[resource]struct{}{}, pool: p, queues: map[*Queue]struct{}{}}
	dev.dialects = []Dialect{DialectOpenCL}
	if b, ok := d.(driver.DialectBuilder); ok {
		dev.dialects = b.Dialects()
	}
	if f, ok := d.(driver.LaunchFeaturer); ok {
		dev.features = f.LaunchFeatures()
	}
	dev.tensorMaps = tensorMapSupport(backend, d)
	return dev, nil
}

// ID returns the device's ID, e.g. "opencl:0:0".
func (d *Device) ID() string {
	if d == nil {
		return ""
	}
	return d.id
}

// Backend returns the name of the device's backend, e.g. "opencl".
func (d *Device) Backend() string {
	if d == nil {
		return ""
	}
	return d.backend
}

// Info returns what the backend reports about the device; Info().ID is the full ID.
func (d *Device) Info() DeviceInfo {
	if d == nil {
		return DeviceInfo{}
	}
	return d.info
}

// Dialects returns the source dialects the device builds (see BuildSource), OpenCL C
// first: every backend builds OpenCL C, the CUDA backend CUDA C++ too.
func (d *Device) Dialects() []Dialect {
	if d == nil {
		return nil
	}
	return slices.Clone(d.dialects)
}

// Builds reports whether the device builds sources in dialect dl.
func (d *Device) Builds(dl Dialect) bool { return d != nil && slices.Contains(d.dialects, dl) }

// LaunchFeatures returns the launch options the device accepts beyond a range's shape:
// LocalBytes arguments, Range.SharedBytes and Range.Cluster. Launches that use an option
// the device lacks fail with ErrUnsupported.
func (d *Device) LaunchFeatures() LaunchFeatures {
	if d == nil {
		return LaunchFeatures{}
	}
	return d.features
}

// Driver returns the backend's device, for packages that extend a backend.
func (d *Device) Driver() driver.Device {
	if d == nil {
		return nil
	}
	return d.drv
}

func (d *Device) String() string {
	if d == nil {
		return "<nil device>"
	}
	return d.id + " (" + d.info.Name + ")"
}

// adopt registers r as a child, or reports that the device is closed.
func (d *Device) adopt(r resource) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return d.closedErr()
	}
	d.children[r] = struct{}{}
	return nil
}

func (d *Device) release(r resource) {
	d.mu.Lock()
	delete(d.children, r)
	d.mu.Unlock()
}

func (d *Device) check() error {
	if d == nil {
		return fmt.Errorf("engine: nil device: %w", ErrInvalidArg)
	}
	if d.drv == nil {
		return fmt.Errorf("engine: a Device not made by engine.Open: %w", ErrInvalidArg)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return d.closedErr()
	}
	return nil
}

func (d *Device) closedErr() error {
	return fmt.Errorf("engine: device %s is closed: %w", d.id, ErrClosed)
}

// Close releases the device and everything made from it that is still open: queues first
// (after they finish), then kernels, programs and buffers. It is idempotent.
func (d *Device) Close() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	kids := make([]resource, 0, len(d.children))
	for r := range d.children {
		kids = append(kids, r)
	}
	d.children = nil
	d.mu.Unlock()

	var errs []error
	for pass := 0; pass < 4; pass++ {
		for _, r := range kids {
			if r.order() == pass {
				errs = append(errs, r.closeResource())
			}
		}
	}
	errs = append(errs, d.progs.drain(), d.pool.drain())
	d.mu.Lock()
	later := d.builds > 0
	d.closeLater = later
	d.mu.Unlock()
	if later {
		Tracef("closed %s but for the backend's device, which the compile still running closes when it ends", d.id)
		return errors.Join(errs...)
	}
	if err := d.drv.Close(); err != nil {
		errs = append(errs, fmt.Errorf("engine: close %s: %w", d.id, err))
	}
	Tracef("closed %s", d.id)
	return errors.Join(errs...)
}

// startBuild counts a compile of BuildSourceContext, or reports that the device is closed.
func (d *Device) startBuild() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return d.closedErr()
	}
	d.builds++
	return nil
}

// endBuild counts the compile's end; the last one after a Close closes the backend's
// device.
func (d *Device) endBuild() {
	d.mu.Lock()
	d.builds--
	last := d.builds == 0 && d.closeLater
	d.closeLater = d.closeLater && !last
	d.mu.Unlock()
	if last {
		d.drv.Close()
		Tracef("closed %s after its last compile", d.id)
	}
}

// handle is the closed flag and owner shared by every device resource.
type handle struct {
	dev    *Device
	closed atomic.Bool
	what   string
}

func (h *handle) check() error {
	if h == nil {
		return fmt.Errorf("engine: nil object: %w", ErrInvalidArg)
	}
	if h.closed.Load() {
		return fmt.Errorf("engine: %s is closed: %w", h.what, ErrClosed)
	}
	return h.dev.check()
}

// sameDevice checks that h belongs to dev.
func (h *handle) sameDevice(dev *Device) error {
	if h.dev != dev {
		if h.dev != nil && dev != nil && h.dev.id == dev.id {
			return fmt.Errorf("engine: %s belongs to another opening of %s: each engine.Open is a device of its own, and buffers, programs and queues do not pass between openings: %w", h.what, dev.id, ErrInvalidArg)
		}
		return fmt.Errorf("engine: %s belongs to %s, not %s: %w", h.what, h.dev.ID(), dev.ID(), ErrInvalidArg)
	}
	return nil
}
