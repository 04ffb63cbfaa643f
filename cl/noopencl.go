//go:build noopencl

package cl

// Built with the tag noopencl, this package is empty: no backend is registered, and
// neither OpenCL headers nor libOpenCL are needed. engine then reports no "opencl"
// backend.
