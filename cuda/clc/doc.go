// Package clc reads OpenCL C source without compiling it: its tokens, as C's preprocessor
// sees them, and the signatures of its kernels (names, parameters, address spaces, element
// types). It is pure Go and needs no device, so that the translation of OpenCL C to CUDA
// C++ (package cuda/clc/translate, which the CUDA backend compiles with NVRTC) and the
// command line read a source the same way before any driver sees it: prism exec names the
// kernels a file defines and refuses arguments that do not fit a kernel's parameters, on
// every backend. Its functions are safe for concurrent use.
package clc
