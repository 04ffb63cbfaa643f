// Package ceiling holds the measurement kernels of the benchmark (ceiling.cl): an
// FMA-bound kernel that measures a device's floating-point peak (Peak) and a copy kernel
// for its bandwidth (Copy), with the Go launchers and the host check of the peak kernel's
// results (the cost of a launch is the launch family's, kernels/launch). They are OpenCL C
// of the suite's dialect, so that both APIs run the same text and the CUDA translation
// check covers them; package bench times them.
package ceiling
