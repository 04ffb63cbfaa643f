// Package kernels is Prism's kernel suite: OpenCL C sources (embedded), one typed Go
// launcher per operation, float64 CPU references and the FLOP and byte models the
// benchmark uses.
//
// Every kernel is written once, in the OpenCL C 1.2 dialect that DESIGN.md fixes, and runs
// unchanged on every backend. Tunables are -D defines with defaults in each file's header;
// the launcher picks them per device.
//
// Families so far: stream (copy, scale, add, triad, dot) in float32 and float64.
//
// Launchers are safe for concurrent use from several goroutines, each with its own Queue.
// Package kernels has no cgo: it imports only engine.
package kernels
