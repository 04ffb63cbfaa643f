// Package enginetest is the conformance suite for Prism backends, in the manner of
// testing/fstest.TestFS and gonum's blas/testblas: every backend's tests call it with one
// line, and a fake backend runs it too, so that all backends keep the same contract.
//
//	func TestConformance(t *testing.T) {
//		for _, id := range enginetest.DeviceIDs(t, "opencl") {
//			t.Run(id, func(t *testing.T) { enginetest.TestDevice(t, id, enginetest.Options{}) })
//		}
//	}
//
// TestDevice opens one device through package engine and checks, in subtests: buffer round
// trips of several element types, the 16- and 8-bit floating-point ones (engine.Half,
// BFloat16, Float8E4M3, Float8E5M2) among them, at sizes around work-group edges (1, 7,
// 255, 256, 257, 4097 and 1<<20) with seeded random data (random bit patterns for the
// 16- and 8-bit floats), partial reads and writes; Fill and CopyFrom at odd offsets inside
// guard bands filled with a sentinel (NaN bits for floats, 0xDEADBEEF for integers) that
// must stay untouched, and fills of 2- and 1-byte patterns with every special value of
// those formats (zeros, subnormals, infinities, NaNs), kept bit for bit; kernel launches
// in one, two and three dimensions with global sizes rounded up to local sizes of 1, 64 and
// 256 (capped by the kernel's limit), against Go references; the source dialects the
// device builds, and the refusal (ErrUnsupported, naming dialect and device) of those it
// does not; kernel attributes, and occupancy (or ErrUnsupported) at block sizes up to the
// kernel's limit;
// local memory staged through a kernel-scope __local array, through a __local pointer
// parameter sized with engine.LocalBytes (where the device takes them), and through CUDA
// C++ dynamic shared memory sized with Range.SharedBytes up to the device's opt-in limit
// (where it builds CUDA C++); thread-block clusters (where it has them); -D build options;
// event timing and Queue.Timed; build errors that carry the compiler's log; the refusal of
// invalid arguments, of launch options the device lacks or cannot fit, and of closed
// objects, with errors that repeat no prefix (RepeatedPrefix); one device shared by
// many goroutines; and the device's vendor BLAS and FFT (GEMMs of every
// transpose with wide leading dimensions, strided batches and NaN in every gap; c2c and
// r2c FFTs in one and two dimensions) against float64 references, timed by Queue.Timed and
// called from several goroutines, skipped when the library is not installed
// (RequireVendorOrSkip).
//
// Backend deviations are passed in Options. Under Oclgrind, or anywhere time is short, set
// PRISM_TEST_SIZE=small (see Small): sizes stay at or below 4097 and the concurrency test
// shrinks.
//
// RequireOrSkip and DeviceIDs serve every test of the project that needs a backend: they
// skip with a reason when the backend is unavailable, unless PRISM_REQUIRE names it.
//
// docs/ARCHITECTURE.md (Testing) says where the suite runs: PoCL in CI, every backend on
// the GPU machine, with PRISM_REQUIRE.
package enginetest
