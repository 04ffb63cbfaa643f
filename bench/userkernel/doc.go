// Package userkernel runs an OpenCL C kernel of the user's own on a device: its arguments
// from specs (buf:float32:1M:random, scalar:int32:64, local:1K, out:float32:1M), the
// launch timed by device events, its outputs kept, written as NumPy .npy files and
// compared across devices or builds, and the kernel tuned over lists of -D values. It is
// the library behind prism exec and prism tune FILE.cl.
//
// Element types are kernels' descriptors (kernels.AllTypes): the integer types of 8 to 64
// bits and float16, float32 and float64, those NumPy has too.
//
// An Arg, once parsed, is read only: it is safe for concurrent use. Run and Tuner.Tune use one
// device each; several may run at once on different devices.
package userkernel
