// Package kernels is Prism's kernel suite: OpenCL C sources (embedded), one typed Go
// launcher per operation, float64 CPU references and the FLOP and byte models the
// benchmark uses.
//
// Every kernel is written once, in the OpenCL C 1.2 dialect that DESIGN.md fixes, and runs
// unchanged on every backend. Tunables are -D defines with defaults in each file's header;
// the launcher picks them per device.
//
// Families (one .cl file each; `prism kernels` lists every operation with its variants
// and tunables): stream (copy, scale, add, triad, dot), map (axpy, axpby, exp, relu,
// sigmoid, fma), transpose, reduce (sum, min, max, argmin, argmax; whole array and per
// row), scan (inclusive, exclusive), sort (LSD radix, stable, keys or key-value pairs),
// histogram, stencil (2D 5-point, 3D 7- and 27-point), conv (2D NCHW), gemm (transposes,
// alpha/beta, strided batched), fft (Stockham; batched, 2D, real input), softmax,
// layernorm, attention (tiled, online softmax, optional causal mask) and montecarlo
// (Philox-4x32-10: the same bits on every device; pi, a European option).
//
// Each family has a typed launcher (NewGEMM, NewScan, ...), a float64 reference
// (GEMMRef, ScanRef, ...) and a tolerance whose doc comment derives it. The catalog (Ops,
// Lookup, Match) registers every operation with seeded inputs, verification and a FLOP and
// byte model: `prism run`, `prism bench` and BenchmarkOps all run those same instances.
//
// Launchers are safe for concurrent use from several goroutines, each with its own Queue.
// Package kernels has no cgo: it imports only engine.
package kernels
