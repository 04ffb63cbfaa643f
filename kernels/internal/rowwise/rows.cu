// rows.cu: softmax and layer normalization of short rows, one warp per row (CUDA C++,
// NVIDIA only).
//
// Purpose: the "cuda-warp" variant of softmax/rows and layernorm/rows. The portable kernels
// give each row a work-group and reduce through local memory, with a barrier per tree level;
// here a row of up to 32*4*VECS floats is one warp's: 16-byte loads, the row kept in
// registers (read from memory once), maxima and sums reduced with shfl.xor, no shared memory
// and no barrier. ROWS warps per block, one row each. A lane sums its slots in order, then
// the warp in a 5-level tree: the error model of a 32-item work-group.
//
// Arguments (row-major float matrices of rows x cols; y may be x):
//   softmax_rows_warp  (y, x, rows, cols)                y = exp(x - rowmax) / rowsum
//   layernorm_rows_warp(y, x, gamma, beta, rows, cols, eps)
//                      y = (x - mean) / sqrt(var + eps) * gamma + beta, var the mean of
//                      (x - mean)^2 (two passes over the registers, as layernorm.cl)
//
// Tunables (-D, part of the cache key):
//   ROWS   rows (warps) per block                                  default 8
//   VECS   elements per lane / 4: rows of up to 128*VECS floats      default 8
// Builds: -DROWS=8 -DVECS=8 | -DROWS=4 -DVECS=2
// Launch: 1D, block 32*ROWS, grid ceil(rows/ROWS); 0 < cols <= 128*VECS (the launcher
//   checks). Rows whose width is a multiple of 4 are loaded and stored 16 bytes at a time
//   (every row then starts 16-byte aligned), others one float at a time.
// Boundaries: warps past the last row return at once (no barrier is used); a lane's slots
//   past the row's end hold -inf (softmax) or 0 and are neither counted nor stored; nothing
//   outside the rows is touched.

#include "prism_cuda.h"

#ifndef ROWS
#define ROWS 8
#endif
#ifndef VECS
#define VECS 8
#endif

static __device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int m = 16; m > 0; m /= 2) v = fmaxf(v, prism_shfl_xor(v, m));
  return v;
}

static __device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int m = 16; m > 0; m /= 2) v += prism_shfl_xor(v, m);
  return v;
}

// Each lane holds N = 4*VECS elements of its row in v: with 16-byte loads (cols a multiple
// of 4, so that every row starts 16-byte aligned) slot 4i+k is element 4*(lane + 32i) + k;
// else slot j is element lane + 32j. present says whether slot j holds an element.
#define N (4 * VECS)

static __device__ __forceinline__ int slot_col(int j, int lane, bool vec) {
  return vec ? 4 * (lane + 32 * (j / 4)) + j % 4 : lane + 32 * j;
}

// load_row fills v with the lane's elements of row xr (cols of them), fill where absent.
static __device__ __forceinline__ void load_row(float *v, const float *xr, int cols, int lane, bool vec, float fill) {
  if (vec) {
    const float4 *x4 = reinterpret_cast<const float4 *>(xr);
#pragma unroll
    for (int i = 0; i < VECS; i++) {
      const int c = lane + 32 * i;
      const float4 t = c < cols / 4 ? x4[c] : make_float4(fill, fill, fill, fill);
      v[4 * i] = t.x, v[4 * i + 1] = t.y, v[4 * i + 2] = t.z, v[4 * i + 3] = t.w;
    }
  } else {
#pragma unroll
    for (int j = 0; j < N; j++) {
      const int c = lane + 32 * j;
      v[j] = c < cols ? xr[c] : fill;
    }
  }
}

extern "C" __global__ void __launch_bounds__(32 * ROWS)
softmax_rows_warp(float *y, const float *x, int rows, int cols) {
  const int lane = threadIdx.x % 32;
  const int r = blockIdx.x * ROWS + threadIdx.x / 32;
  if (r >= rows) return;
  const bool vec = cols % 4 == 0;
  const float *xr = x + (long long)r * cols;
  float *yr = y + (long long)r * cols;
  float v[N];
  load_row(v, xr, cols, lane, vec, -prism_inf());
  float m = v[0];
#pragma unroll
  for (int j = 1; j < N; j++) m = fmaxf(m, v[j]);
  m = warp_max(m);
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < N; j++) {
    v[j] = expf(v[j] - m); // exp(-inf) = 0 for absent slots
    s += v[j];
  }
  s = warp_sum(s);
  if (vec) {
    float4 *y4 = reinterpret_cast<float4 *>(yr);
#pragma unroll
    for (int i = 0; i < VECS; i++) {
      const int c = lane + 32 * i;
      if (c < cols / 4) y4[c] = make_float4(v[4 * i] / s, v[4 * i + 1] / s, v[4 * i + 2] / s, v[4 * i + 3] / s);
    }
  } else {
#pragma unroll
    for (int j = 0; j < N; j++) {
      const int c = lane + 32 * j;
      if (c < cols) yr[c] = v[j] / s;
    }
  }
}

extern "C" __global__ void __launch_bounds__(32 * ROWS)
layernorm_rows_warp(float *y, const float *x, const float *gamma, const float *beta, int rows, int cols, float eps) {
  const int lane = threadIdx.x % 32;
  const int r = blockIdx.x * ROWS + threadIdx.x / 32;
  if (r >= rows) return;
  const bool vec = cols % 4 == 0;
  const float *xr = x + (long long)r * cols;
  float *yr = y + (long long)r * cols;
  float v[N];
  load_row(v, xr, cols, lane, vec, 0.0f);
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < N; j++) s += v[j];
  const float mean = warp_sum(s) / (float)cols;
  float q = 0.0f;
#pragma unroll
  for (int j = 0; j < N; j++) {
    const float d = v[j] - mean;
    if (slot_col(j, lane, vec) < cols) q += d * d;
  }
  const float inv = 1.0f / sqrtf(warp_sum(q) / (float)cols + eps);
  if (vec) {
    const float4 *g4 = reinterpret_cast<const float4 *>(gamma), *b4 = reinterpret_cast<const float4 *>(beta);
    float4 *y4 = reinterpret_cast<float4 *>(yr);
#pragma unroll
    for (int i = 0; i < VECS; i++) {
      const int c = lane + 32 * i;
      if (c < cols / 4) {
        const float4 g = g4[c], b = b4[c];
        y4[c] = make_float4((v[4 * i] - mean) * inv * g.x + b.x, (v[4 * i + 1] - mean) * inv * g.y + b.y,
                            (v[4 * i + 2] - mean) * inv * g.z + b.z, (v[4 * i + 3] - mean) * inv * g.w + b.w);
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < N; j++) {
      const int c = lane + 32 * j;
      if (c < cols) yr[c] = (v[j] - mean) * inv * gamma[c] + beta[c];
    }
  }
}
