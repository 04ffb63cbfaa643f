// Package ceiling holds the measurement kernels of the benchmark (ceiling.cl): an
// FMA-bound kernel that measures a device's floating-point peak (Peak), a copy kernel for
// its bandwidth (Copy) and an empty kernel for the cost of a launch (Empty), with the Go
// launchers and the host check of the peak kernel's results. They are OpenCL C of the
// suite's dialect, so that both APIs run the same text and the CUDA translation check
// covers them; package bench times them.
package ceiling
