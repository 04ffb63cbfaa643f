// Package ceiling holds the measurement kernels of the benchmark: an FMA-bound kernel that
// measures a device's floating-point peak (Peak) and a copy kernel for its bandwidth (Copy),
// both OpenCL C of the suite's dialect (ceiling.cl), so that both APIs run the same text and
// the CUDA translation check covers them; and the tensor-core peaks (Tensor) in tf32,
// float16, bfloat16, float8 and float64, which only NVIDIA GPUs run: wgmma on Hopper
// (tensor_wgmma.cu), mma.sync and DMMA elsewhere through CUDA (tensor_mma.cu), mma.sync in
// inline PTX through NVIDIA's OpenCL (tensor.cl). Each comes with its Go launcher and the
// host check of its results (the cost of a launch is the launch family's, kernels/launch);
// package bench times them.
package ceiling
