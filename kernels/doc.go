// Package kernels is the base of Prism's kernel suite: what an operation is (Op, Params,
// Instance, Model, Family, ErrVerify), the element-type descriptors (Type, TypeOf) and the
// OpenCL C conversions of the storage types (ConvertSource), the rotation of input sets
// (Inputs, Rotated) and the helpers every family's verification and launches share
// (CheckClose, Gamma, VerifyIndices, CompensatedSum, WorkGroup, Header, ...).
// Element-wise families make their inputs and verify their outputs a chunk at a time
// (NewInputsChunked, CheckElementwise), so that the host holds chunks, not whole arrays.
// It imports only engine and has no cgo.
//
// # Layout
//
// The suite is a tree of packages, one layer each:
//
//	kernels/                  this base package: small, and no family's code
//	kernels/<family>/         one package per family: its OpenCL C source (<family>.cl,
//	                          embedded), its launcher (NewGEMM, ...), its operations
//	                          (Family), its float64 reference and tolerance, its tests
//	kernels/suite/            the ordered list of families and the catalog of their
//	                          operations: Ops, Lookup, Match, Family
//	kernels/ceiling/          the measurement kernels of the benchmark (FMA peak, copy
//	                          bandwidth), held to the families' rules
//	kernels/fuse/             the expression compiler (prism exec --expr, the fused
//	                          family): no family, it imports this package and engine only
//	kernels/internal/kerneltest/  the test helpers every family's tests share
//
// The families, in the suite's order: stream (copy, scale, add, triad, dot), access
// (sequential, strided, gather and scatter copies), maps (family "map": axpy, axpby, exp,
// relu, sigmoid, fma), transpose, reduce (sum, min, max, argmin, argmax; whole array and
// per row), scan (inclusive, exclusive), sort (LSD radix, stable, keys or key-value pairs),
// histogram, stencil (2D 5-point, 3D 7- and 27-point), conv (2D NCHW), gemm (transposes,
// alpha/beta, strided batched), fft (Stockham; batched, 2D, real input), rows (families
// "softmax" and "layernorm", which share their row machinery), attention (tiled, online
// softmax, optional causal mask; float32, float16, bfloat16), montecarlo
// (Philox-4x32-10: the same bits on every device; pi, a European option), and the
// families that time data movement between host and device rather than kernels: transfer
// (pinned and pageable copies each way), overlap (a copy-compute-copy pipeline on 1 to 4
// queues, with the share of the copy time it hides as a figure, FigureReporter), alloc
// (allocate and free through the memory pool and through the driver: a latency) and
// launch (an empty kernel launched back to back, with a round trip, and as a captured
// graph: latencies, the time per launch a figure).
//
// A family (and ceiling) imports this package, engine and kernels/fuse only, never another
// family: what two families share moves here under a name that says what it is. A test in
// the module's root (arch_test.go) keeps it so.
//
// # Splits
//
// An Op with Split divides its work across devices (SplitInstance): PlanShares measures
// each device and shares the units so that all finish together, SplitRun runs the parts
// (one per device, concurrently) and, on sharded data, drives the family's Sharded
// (scatter, run where the data lies, release). The op's second run checks a measured plan
// that split against each device the plan timed alone (at most four, fastest predicted
// first) and keeps the split only where it ran at least 1.03 times the fastest one's speed (CheckedRun; Recheck checks at once). Share says what
// was measured and chosen, PlanSummary says it in a line.
//
// # The catalog
//
// There is no registry and nothing registers itself at import. Each family package
// returns its Family (name, source, operations); kernels/suite holds the one explicit list
// of families, in the order listings and reports show them, and builds the catalog from
// it: suite.Ops, suite.Lookup and suite.Match select operations, suite.Family gives a
// family's source, whose header Header and HeaderSection read. `prism run`, `prism bench`
// and the suite's BenchmarkOps all run the same Instances.
//
// # A new family
//
// A new family is a package kernels/<name> with <name>.cl (the header of the other .cl
// files first: purpose, arguments, tunables with defaults, variants, launch; in the
// dialect docs/ARCHITECTURE.md describes), a launcher, a func Family() kernels.Family
// listing its operations, a float64 reference with a tolerance that says where it comes from, a doc.go, and tests through
// kerneltest at sizes around its work-group and tile edges; then one line in
// suite.Families. The Makefile, the Oclgrind pass and the CUDA translation check
// (cuda/clc/translate/prelude_test.go) find it by its directory.
//
// Every portable kernel is written once, in OpenCL C 1.2, and runs unchanged on every
// backend; an op may add variants (Op.Variants: CUDA C++ with warp shuffles, vendor
// libraries as baselines), which Op.Pick chooses among per device. See
// docs/ARCHITECTURE.md for the layers, the dialect and where new work goes. Tunables are
// -D defines with defaults in each file's header; the launcher picks them per device.
// Launchers are safe for concurrent use from several goroutines, each with its own Queue.
package kernels
