// attention.cu: FlashAttention-2 forward on the tensor cores through mma.sync (CUDA C++, NVIDIA
// sm_80 and newer).
//
// Purpose: the "cuda-mma" variant of attention/{full,causal}/{float16,bfloat16}: O =
// softmax(Q K^T * scale [+ causal mask]) V for tensors of shape [batch*heads, seq, D] (row-
// major, Q, K, V and O alike) in binary16 or bfloat16, without a seq x seq matrix. A block of
// WARPS warps takes BR = WARPS*MT*16 queries of one head; each warp owns MT tiles of 16 query
// rows. The block streams the keys and values in tiles of BC rows through shared memory
// (cp.async, double-buffered: tile j+1 loads while tile j is computed). Per tile a warp
// computes its scores S = Q K^T with mma.sync m16n8k16 (Q fragments by ldmatrix, kept in
// registers when QREG; K fragments by ldmatrix), applies the mask, updates the running max
// m and sum l of each row (online softmax in base 2: scores scaled by scale*log2(e), ex2),
// rescales its output accumulators, rounds the probabilities P to the input type in the
// register layout of an mma A operand (the C fragment of m16n8 is the A fragment of m16k16),
// and accumulates O += P V with mma.sync (V fragments by ldmatrix.trans). At the end each row
// is divided by l, rounded to the input type and stored.
//
// Arguments:
//   attention_mma(o, q, k, v, seq, sl2e, causal)
//     o, q, k, v: bh*seq*D elements (16-bit: binary16 for PREC 3, bfloat16 for PREC 4),
//     bh = gridDim.x / ceil(seq/BR) heads; sl2e = scale * log2(e) as a float, of either sign,
//     at least float32's smallest normal number in magnitude; causal != 0 masks key j > query
//     i. bh*seq*D < 2^31 (the host checks both).
//
// Tunables (-D, part of the cache key):
//   PREC   3 float16, 4 bfloat16                                       default 3
//   D      head dimension: 64 or 128 (exactly; the host refuses others) default 128
//   WARPS  warps per block                                            default 4
//   MT     16-row query tiles per warp                                default 1
//   BC     keys per tile (a multiple of 16)                           default 64
//   QREG   1: Q fragments loaded once into registers; 0: re-read from
//          shared memory per key tile (fewer registers, for MT 2)      default 1
//   Shared memory (dynamic, Range.SharedBytes): (BR + 4*BC) * (D+8) * 2 bytes: the Q tile and
//   two stages of a K and a V tile, rows padded by 16 bytes so that ldmatrix's eight row
//   addresses fall in distinct banks (attnMMAShared in mma.go).
// Builds: -DPREC=3 -DD=128 | -DPREC=4 -DD=64 | -DPREC=4 -DD=128 -DWARPS=8 | -DPREC=3 -DD=128 -DMT=2 -DQREG=0
// Launch: 1D grid of bh*ceil(seq/BR) blocks of WARPS*32 threads. Block b serves head
//   b / ceil(seq/BR) and, counting from the last, its query block b % ceil(seq/BR): the blocks
//   running at one time share a few heads, whose keys and values stay in L2 (ordered by
//   query block first, every block fetched its head's K and V from DRAM: 78% of DRAM
//   bandwidth on an H100), and each head's heaviest causal blocks start first.
// Boundaries: query, key and value rows past seq are zero-filled in shared memory; keys past
//   seq (and past the query when causal) get score -inf, so weight 0; a warp whose queries all
//   precede a causal tile skips it; rows past seq are not stored. Key 0 is unmasked for every
//   query, so the running max is finite from the first tile on.
// Accuracy: scores accumulate in float32 on the tensor cores (products of 16-bit values are
//   exact; the sum may truncate), ex2.approx errs by at most 2 ulp, l sums the float32 weights,
//   P is rounded to the input type for P V (as FlashAttention does), and O is rounded once
//   at the end: the tolerance of the 16-bit ops (ref.go) covers each of these.

#include "prism_cuda.h"

#ifndef PREC
#define PREC 3
#endif
#ifndef D
#define D 128
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef MT
#define MT 1
#endif
#ifndef BC
#define BC 64
#endif
#ifndef QREG
#define QREG 1
#endif

#if PREC != 3 && PREC != 4
#error "attention.cu: PREC must be 3 (float16) or 4 (bfloat16)"
#endif
#if D != 64 && D != 128
#error "attention.cu: D must be 64 or 128"
#endif
#if BC % 16 != 0
#error "attention.cu: BC must be a multiple of 16"
#endif

#define THREADS (WARPS * 32)
#define BR (WARPS * MT * 16) // queries per block
#define SLD (D + 8)          // shared row stride in elements
#define KT (D / 16)          // k steps of S = Q K^T (over the head dimension)
#define NS (BC / 8)          // n8 tiles of S (keys)
#define NO (D / 8)           // n8 tiles of O (head dimension)
#define CPR (D / 8)          // 16-byte chunks per row

#if (BR * CPR) % THREADS != 0 || (BC * CPR) % THREADS != 0
#error "attention.cu: the Q tile and a K or V tile must be whole 16-byte chunks per thread"
#endif

typedef unsigned short in_t;

static __device__ __forceinline__ void mma(float *d, const unsigned int *a, const unsigned int *b) {
#if PREC == 3
  prism_mma_f16(d, a, b);
#else
  prism_mma_bf16(d, a, b);
#endif
}

static __device__ __forceinline__ unsigned int pack(float lo, float hi) {
#if PREC == 3
  return prism_pack_half2(lo, hi);
#else
  return prism_pack_bfloat162(lo, hi);
#endif
}

// load_tile copies rows r0..r0+ROWS of the [seq][D] matrix g into shared memory at address s
// (row stride SLD), rows past seq zero-filled.
template <int ROWS>
static __device__ __forceinline__ void load_tile(unsigned int s, const in_t *g, int r0, int seq) {
#pragma unroll
  for (int p = 0; p < ROWS * CPR / THREADS; ++p) {
    const int c = threadIdx.x + p * THREADS;
    const int r = c / CPR, cc = (c % CPR) * 8;
    const in_t *src = g;
    int bytes = 0;
    if (r0 + r < seq) {
      src = g + (long long)(r0 + r) * D + cc;
      bytes = 16;
    }
    prism_cp_async16(s + (r * SLD + cc) * 2, src, bytes);
  }
}

// load_q reads the A fragments of k step kt of the warp's query tile mt from the Q tile.
static __device__ __forceinline__ void load_q(unsigned int *f, unsigned int sq, int row0, int kt, int lane) {
  const int mi = lane / 8;
  const int row = row0 + (mi % 2) * 8 + lane % 8, col = kt * 16 + (mi / 2) * 8;
  prism_ldmatrix_x4(f, sq + (row * SLD + col) * 2);
}

extern "C" __global__ void __launch_bounds__(THREADS) attention_mma(in_t *o, const in_t *q, const in_t *k, const in_t *v, int seq,
                                                                   float sl2e, int causal) {
  extern __shared__ __align__(16) unsigned char smem[];
  const unsigned int sq = prism_smem_addr(smem);
  const unsigned int sk = sq + BR * SLD * 2; // two stages of K, then two of V
  const unsigned int sv = sk + 2 * BC * SLD * 2;
  const int stage = BC * SLD * 2;

  const int nqb = (seq + BR - 1) / BR; // query blocks per head
  const int head = blockIdx.x / nqb;
  const int q0 = (nqb - 1 - blockIdx.x % nqb) * BR;
  const long long base = (long long)head * seq * D;
  q += base;
  k += base;
  v += base;
  o += base;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wq0 = warp * MT * 16; // the warp's first query row in the block
  const int kend = causal && q0 + BR < seq ? q0 + BR : seq;
  const int tiles = (kend + BC - 1) / BC;

  load_tile<BR>(sq, q, q0, seq);
  load_tile<BC>(sk, k, 0, seq);
  load_tile<BC>(sv, v, 0, seq);
  prism_cp_async_commit();

  float acc[MT][NO][4];
  float mrow[MT][2], lrow[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int n = 0; n < NO; ++n) {
      acc[mt][n][0] = acc[mt][n][1] = acc[mt][n][2] = acc[mt][n][3] = 0.f;
    }
    mrow[mt][0] = mrow[mt][1] = -prism_inf();
    lrow[mt][0] = lrow[mt][1] = 0.f;
  }
#if QREG
  unsigned int qf[MT][KT][4];
#endif

  for (int j = 0; j < tiles; ++j) {
    const int st = j & 1;
    if (j + 1 < tiles) {
      load_tile<BC>(sk + (st ^ 1) * stage, k, (j + 1) * BC, seq);
      load_tile<BC>(sv + (st ^ 1) * stage, v, (j + 1) * BC, seq);
      prism_cp_async_commit();
      prism_cp_async_wait<1>();
    } else {
      prism_cp_async_wait<0>();
    }
    __syncthreads();
#if QREG
    if (j == 0) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int kt = 0; kt < KT; ++kt) {
          load_q(qf[mt][kt], sq, wq0 + mt * 16, kt, lane);
        }
      }
    }
#endif
    const int kbase = j * BC;
    // A warp whose queries all precede this tile's first key has nothing to add (causal).
    if (!(causal && kbase > q0 + wq0 + MT * 16 - 1)) {
      const unsigned int skt = sk + st * stage, svt = sv + st * stage;
      float s[MT][NS][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int t = 0; t < NS; ++t) {
          s[mt][t][0] = s[mt][t][1] = s[mt][t][2] = s[mt][t][3] = 0.f;
        }
      }
#pragma unroll
      for (int kt = 0; kt < KT; ++kt) {
#if !QREG
        unsigned int qf[MT][1][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          load_q(qf[mt][0], sq, wq0 + mt * 16, kt, lane);
        }
#define QF(mt) qf[mt][0]
#else
#define QF(mt) qf[mt][kt]
#endif
#pragma unroll
        for (int np = 0; np < NS / 2; ++np) {
          unsigned int b[4];
          const int mi = lane / 8;
          const int key = np * 16 + (mi / 2) * 8 + lane % 8, dim = kt * 16 + (mi % 2) * 8;
          prism_ldmatrix_x4(b, skt + (key * SLD + dim) * 2);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            mma(s[mt][2 * np], QF(mt), b);
            mma(s[mt][2 * np + 1], QF(mt), b + 2);
          }
        }
#undef QF
      }

      // Scale to base 2; then mask where the tile reaches past seq or, when causal, past
      // the warp's first query (after the scaling, so that a masked score is -inf whatever
      // the scale's sign): one branch a tile, each row's limit worked out once and every
      // score compared with it by a select (a test of each key inside the loops below
      // became a branch a score, taken on every tile); then each row's running max.
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int t = 0; t < NS; ++t) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            s[mt][t][e] *= sl2e;
          }
        }
      }
      if (kbase + BC > seq || (causal && kbase + BC - 1 > q0 + wq0)) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int qrow = q0 + wq0 + mt * 16 + lane / 4 + 8 * h;
            // Key kbase + (lane%4)*2 + 8t + e stays where 8t + e < lim.
            const int lim = (causal && qrow + 1 < seq ? qrow + 1 : seq) - kbase - (lane % 4) * 2;
#pragma unroll
            for (int t = 0; t < NS; ++t) {
#pragma unroll
              for (int e = 0; e < 2; ++e) {
                s[mt][t][2 * h + e] = t * 8 + e < lim ? s[mt][t][2 * h + e] : -prism_inf();
              }
            }
          }
        }
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float mx = mrow[mt][h];
#pragma unroll
          for (int t = 0; t < NS; ++t) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              mx = fmaxf(mx, s[mt][t][2 * h + e]);
            }
          }
          mx = fmaxf(mx, prism_shfl_xor(mx, 1));
          mx = fmaxf(mx, prism_shfl_xor(mx, 2));
          const float alpha = prism_exp2(mrow[mt][h] - mx);
          mrow[mt][h] = mx;
          float sum = 0.f;
#pragma unroll
          for (int t = 0; t < NS; ++t) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const float p = prism_exp2(s[mt][t][2 * h + e] - mx);
              s[mt][t][2 * h + e] = p;
              sum += p;
            }
          }
          lrow[mt][h] = lrow[mt][h] * alpha + sum;
#pragma unroll
          for (int n = 0; n < NO; ++n) {
            acc[mt][n][2 * h] *= alpha;
            acc[mt][n][2 * h + 1] *= alpha;
          }
        }
      }

      // O += P V, P rounded to the input type in A-fragment order.
#pragma unroll
      for (int kk = 0; kk < BC / 16; ++kk) {
        unsigned int pa[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          pa[mt][0] = pack(s[mt][2 * kk][0], s[mt][2 * kk][1]);
          pa[mt][1] = pack(s[mt][2 * kk][2], s[mt][2 * kk][3]);
          pa[mt][2] = pack(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
          pa[mt][3] = pack(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
        }
#pragma unroll
        for (int np = 0; np < NO / 2; ++np) {
          unsigned int b[4];
          const int mi = lane / 8;
          const int key = kk * 16 + (mi % 2) * 8 + lane % 8, dim = np * 16 + (mi / 2) * 8;
          prism_ldmatrix_x4_trans(b, svt + (key * SLD + dim) * 2);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            mma(acc[mt][2 * np], pa[mt], b);
            mma(acc[mt][2 * np + 1], pa[mt], b + 2);
          }
        }
      }
    }
    __syncthreads(); // the next iteration's loads overwrite this stage
  }

#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float l = lrow[mt][h];
      l += prism_shfl_xor(l, 1);
      l += prism_shfl_xor(l, 2);
      const float inv = 1.f / l;
      const int row = q0 + wq0 + mt * 16 + lane / 4 + 8 * h;
      if (row < seq) {
        unsigned int *dst = (unsigned int *)(o + (long long)row * D + (lane % 4) * 2);
#pragma unroll
        for (int n = 0; n < NO; ++n) {
          dst[n * 4] = pack(acc[mt][n][2 * h] * inv, acc[mt][n][2 * h + 1] * inv);
        }
      }
    }
  }
}
