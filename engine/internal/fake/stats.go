package fake

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/prism-compute/prism/engine/driver"
)

// Method names counted by Calls and DeviceCalls, one per method of the driver SPI.
var methods = []string{
	"Driver.Devices", "Driver.Open",
	"Device.Info", "Device.Alloc", "Device.Build", "Device.NewQueue", "Device.Close",
	"Device.Dialects", "Device.BuildSource", "Device.LaunchFeatures",
	"Device.TensorMapSupport", "Device.EncodeTensorMap",
	"Buffer.Size", "Buffer.Close",
	"Program.Kernel", "Program.Close",
	"Kernel.Name", "Kernel.NumArgs", "Kernel.MaxWorkGroupSize", "Kernel.Attributes", "Kernel.Occupancy", "Kernel.Close",
	"Queue.Write", "Queue.Read", "Queue.Copy", "Queue.Fill", "Queue.Launch", "Queue.LaunchUntimed", "Queue.Hold", "Queue.Finish", "Queue.Close",
	"Event.Wait", "Event.Elapsed", "Event.Close",
	// Host memory, asynchronous copies and waits (memory.go).
	"Device.AllocHost", "HostBuffer.Close", "Queue.WriteAsync", "Queue.ReadAsync", "Queue.WaitEvents", "Queue.Record",
	// Vendor libraries (vendor.go).
	"Device.BLAS", "BLAS.Library", "BLAS.Gemm", "BLAS.Close",
	"Device.FFT", "FFT.Library", "FFT.Plan", "FFT.Close", "FFTPlan.Run", "FFTPlan.Close",
}

// counters holds one call counter per method.
type counters map[string]*atomic.Int64

func newCounters() counters {
	c := make(counters, len(methods))
	for _, m := range methods {
		c[m] = new(atomic.Int64)
	}
	return c
}

func (c counters) get(name string) int64 {
	if name == "" {
		var n int64
		for _, v := range c {
			n += v.Load()
		}
		return n
	}
	v, ok := c[name]
	if !ok {
		panic(fmt.Sprintf("fake: no driver method %q (want Type.Method, e.g. Queue.Launch)", name))
	}
	return v.Load()
}

var (
	global     = newCounters()
	violations atomic.Int64
)

// count records one call of method name on the device d (nil for the Driver's methods).
func count(d *device, name string) {
	global[name].Add(1)
	if d != nil {
		d.calls[name].Add(1)
	}
}

// Calls returns how many times the driver method name ("Queue.Launch", "Device.Alloc",
// ...: the SPI's interface and method names) has been called on any fake device since the
// program started; name "" sums all methods. It panics on an unknown name.
func Calls(name string) int64 { return global.get(name) }

// DeviceCalls is Calls for one opened device d, as returned by (*engine.Device).Driver():
// it counts the calls made on d and on the buffers, programs, kernels, queues and events
// made from it. It panics if d is not a fake device.
func DeviceCalls(d driver.Device, name string) int64 {
	fd, ok := d.(*device)
	if !ok {
		panic(fmt.Sprintf("fake: DeviceCalls of a %T, not a fake device", d))
	}
	return fd.calls.get(name)
}

// ErrContract is wrapped by the errors of calls that break a promise the driver SPI makes
// to backends, such as a Launch whose global size is not a multiple of its local size:
// engine should have refused them.
var ErrContract = errors.New("fake: driver SPI contract violated")

// Violations returns how many calls have broken the driver SPI's contract since the
// program started. A correct engine keeps it at zero.
func Violations() int64 { return violations.Load() }

func violation(format string, args ...any) error {
	violations.Add(1)
	return fmt.Errorf("fake: "+format+": %w", append(args, ErrContract)...)
}
