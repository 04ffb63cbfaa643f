// tensor.cl: the tensor-core peak through NVIDIA's OpenCL: mma.sync in inline PTX.
//
// Purpose: the tf32, float16 and bfloat16 peaks of `prism bench` on NVIDIA GPUs of sm_80 and
// newer seen through NVIDIA's OpenCL, whose compiler takes inline PTX (the opencl-mma GEMM
// of kernels/gemm computes those precisions so; tensor_mma.cu is the CUDA form). Each warp
// holds constant A and B fragments in registers (every element a, or b) and CH independent
// accumulators, and repeats iters times one mma.sync per accumulator (independent, so that
// the tensor pipe always has work while an mma's result is pending). Every accumulator then
// holds iters * K * a * b, exact (small integers); each work-item writes the sum of its
// accumulators (below 2^24: exact in float).
//
// Arguments:
//   tensor_peak_mma(out, abits, bbits, iters)
//     out: one float per work-item, out[global id] = CH * 4 * iters * K * a * b
//     abits, bbits: a and b replicated in a 32-bit word (2 16-bit values, or 1 tf32)
//     iters: trips of the loop of CH instructions
//
// Tunables (-D, part of the cache key):
//   PREC      1 tf32 m16n8k8, 3 float16 m16n8k16, 4 bfloat16 m16n8k16 (gemm's numbering) default 3
//   CH        independent accumulators per warp                                        default 8
//   THREADS   work-items per group, a multiple of 32                                   default 256
//   PRISM_PTX defined by the host on NVIDIA's OpenCL: the inline PTX is compiled (the CUDA
//             prelude's PRISM_CUDA too: clang emits it as text there); neither: #error
// Variants: PREC 1, 3 and 4, on NVIDIA's OpenCL only (the host refuses other devices).
// Launch: 1D, local THREADS (NVIDIA runs consecutive local ids as warps), global any
//   multiple of THREADS.

#if !defined(PRISM_PTX) && !defined(PRISM_CUDA)
#error "tensor.cl is inline PTX for NVIDIA's OpenCL: the host defines PRISM_PTX there"
#endif
#ifndef PREC
#define PREC 3
#endif
#ifndef CH
#define CH 8
#endif
#ifndef THREADS
#define THREADS 256
#endif
#if PREC == 1
#define MMA_OP "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
#elif PREC == 3
#define MMA_OP "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#elif PREC == 4
#define MMA_OP "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
#else
#error "tensor.cl: PREC must be 1 (tf32), 3 (float16) or 4 (bfloat16)"
#endif

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void tensor_peak_mma(__global float *out, uint abits, uint bbits, int iters) {
    float acc[CH][4];
    for (int c = 0; c < CH; ++c) {
        acc[c][0] = 0.0f;
        acc[c][1] = 0.0f;
        acc[c][2] = 0.0f;
        acc[c][3] = 0.0f;
    }
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int c = 0; c < CH; ++c) {
            asm volatile(MMA_OP " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                         : "r"(abits), "r"(abits), "r"(abits), "r"(abits), "r"(bbits), "r"(bbits));
        }
    }
    float s = 0.0f;
    for (int c = 0; c < CH; ++c) {
        s += (acc[c][0] + acc[c][1]) + (acc[c][2] + acc[c][3]);
    }
    out[get_global_id(0)] = s;
}
