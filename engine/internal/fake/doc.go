// Package fake is a compute backend written entirely in Go, for testing package engine and
// the conformance suite (engine/enginetest) on any machine: no cgo, no GPU, no OpenCL.
//
// It registers as "fake" (call Register) and offers two devices, "fake:0" (a GPU) and
// "fake:1" (a CPU), with plausible limits: work-groups of up to 256 items, 256 MiB per
// allocation, 64 KiB of local memory (96 KiB with opt-in on the GPU). Buffers are Go
// memory; Write, Read, Copy and Fill really move bytes. Build does not compile: it finds
// the kernels a source declares (`__kernel void NAME(` in OpenCL C, `__global__ void
// NAME(` in CUDA C++) and binds each to a Go implementation of the same name. It knows the
// conformance suite's kernels (engine/internal/suitekernels) and nothing else; a source
// that declares any other kernel fails to build with a *driver.BuildError whose log quotes
// that kernel's lines, as a compiler's log would quote the offending line. Launch runs the
// Go implementation once per work-item of the global range, synchronously, and times it
// with the host clock (Elapsed is never zero). -D options reach the kernels as macros.
//
// The GPU implements every optional capability of the driver SPI: it builds OpenCL C and
// CUDA C++; its launches take LocalBytes arguments, dynamic shared memory and thread-block
// clusters of up to 8 work-groups; it encodes tensor maps (tensormap.go: 128 bytes of its
// own layout, which the Go kernel of the suite's TMA copy decodes). The CPU builds OpenCL
// C only, takes LocalBytes arguments only and has no tensor maps, as an OpenCL device
// does. Kernels report their attributes, and on the GPU their occupancy (occupancy.go: a
// multiprocessor of 1024 work-items, 8 work-groups and 128 KiB of local memory); the CPU
// answers ErrUnsupported for occupancy, as OpenCL does. Its devices offer a vendor BLAS
// and FFT (vendor.go): a GEMM and a DFT computed in float64 and rounded once, behind the
// same SPI as cuBLAS or clFFT.
//
// # Checking the front end
//
// Every call of every driver method is counted (Calls, DeviceCalls), so that tests can
// prove that engine refused a call before it reached the driver. The fake also checks the
// promises the driver SPI makes to backends (sizes positive, offsets in range, objects open
// and of this device, ranges well formed, Device.Close last): a call that breaks one fails
// with an error wrapping ErrContract and is counted by Violations. A kernel that reads or
// writes out of its buffers' bounds fails its launch with an error naming the work-item,
// instead of corrupting memory.
//
// All objects are safe for concurrent use, beyond what the SPI asks.
package fake
