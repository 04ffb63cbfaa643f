// Package driver defines the interfaces a Prism compute backend implements.
//
// Like database/sql/driver, it is written for backend authors, not for users: users program
// against package engine, which validates every call before it reaches a driver. A driver
// may therefore assume that sizes are positive, offsets in range, buffers open and owned by
// the device they are used on, and launch ranges well formed; it must still report every
// failure of the underlying API as an error that names the failing call.
//
// A backend registers itself once, in an init function, with engine.Register. init must not
// load libraries or call the driver: probing happens on the first call to Driver.Devices.
//
// Optional behaviour is expressed by capability interfaces (ArgCounter, ...) that a value
// may implement; engine falls back to a generic path when one is missing. A device offers
// a vendor BLAS or FFT by implementing BLASProvider or FFTProvider (vendor.go); engine
// answers ErrUnsupported for a device that does not.
package driver
