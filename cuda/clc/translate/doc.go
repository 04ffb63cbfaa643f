// Package translate translates OpenCL C 1.2, the kernel suite's dialect, to CUDA C++ for
// NVRTC, so that one kernel source serves both backends. It is pure Go and needs no
// device or CUDA toolkit: the CUDA backend (package cuda) compiles what OpenCL returns,
// and the tests here compile the suite's kernels through it with clang-15 to PTX, on any
// machine.
//
// A translation has two parts:
//
//   - the prelude (Prelude; prelude/*.cuh, one concept a file, concatenated in the order
//     prelude.go lists), CUDA C++ templates, overloads and macros that give CUDA OpenCL's
//     work-item functions, address spaces, barriers, atomics, vector types, conversions,
//     built-in functions and half;
//   - the source translation (translate.go), which rewrites within the source's lines what
//     macros cannot carry: vector literals, swizzles, conversions with saturation or
//     rounding modes, the unprefixed qualifiers, and the __local and __constant pointer
//     parameters of kernels. Lines and columns stay the user's, so that NVRTC's messages
//     point into the source as an OpenCL compiler's would.
//
// A construct with no CUDA counterpart (images, samplers, get_work_dim, a __global or
// __constant pointer to a 3-component vector) gives an *Error with its line and column,
// which wraps engine.ErrUnsupported. The package reads sources with package clc. Its
// functions are safe for concurrent use.
package translate
