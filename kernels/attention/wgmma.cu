// wgmma.cu: FlashAttention forward on Hopper's warpgroup tensor cores, fed by TMA (CUDA C++,
// sm_90a).
//
// Purpose: the "cuda-wgmma" variant of attention/{full,causal}/{float16,bfloat16,float8e4m3}:
// O = softmax(Q K^T * scale [+ causal mask]) V for tensors [batch*heads, seq, D] in
// binary16, bfloat16 or OCP float8 E4M3, float32 softmax and accumulation, without a seq x
// seq matrix. A block of three
// warpgroups serves 128 queries of one head. Warpgroup 0 is the producer: one thread copies
// the block's Q tile once, then the K and V tiles of BC keys in turn, with TMA (boxes of 64
// head dimensions, 128-byte swizzle) into a ring of STAGES stages, each stage's K and V
// with their own "full" mbarrier. Warpgroups 1 and 2 are consumers of 64 queries each: per
// key tile, S = Q K^T by wgmma m64nBCk16 with both operands in shared memory (K-major);
// then the online softmax in registers (the accumulator layout of wgmma is mma.m16n8's per
// warp: each thread holds two rows of the tile); the probabilities P, rounded to the input
// type, become the register A operand of O += P V, wgmma m64nDk16 with V in shared memory
// (MN-major: V's rows are the keys); K's slot of the stage goes back to the producer once
// the scores are done, V's once the product is (an "empty" mbarrier per tile of a stage, one
// arrival per consumer warpgroup).
// Float8 (PREC 6): the products are wgmma k32 in E4M3, whose operands in shared memory must
// be K-major: S's are (Q and K rows hold the dimensions), but V's rows hold P V's depth, the
// keys, in their columns. So the host first writes V transposed (attention_vt, below: a
// pass over V) and the kernel copies D x 128-key tiles of that; the probabilities are
// rounded to E4M3 (P < 256: inside its range) in the order the k32 register fragment takes
// (pack_p), which attention_vt's order of the keys matches.
//
// Arguments:
//   attention_wgmma(tmQ, tmK, tmV, o, seq, sl2e, causal)
//     tmQ, tmK, tmV: tensor maps of Q, K, V as dims {D, seq, bh} (elements, fastest first),
//       boxes {64, 64, 1} (Q) and {64, BC, 1} (K, V), 128-byte swizzle: rows past seq read as
//       zeros within each head. Float8: boxes 128 wide (one 128-byte row; at D 64 the
//       64-byte row, 64-byte swizzle), and tmV maps V transposed, attention_vt's vt, as dims
//       {seqp, D, bh}, box {BC, D, 1} (BC 64: the 64-byte swizzle). o: bh*seq*D elements; sl2e = |scale| * log2(e), at least
//       float32's smallest normal number (the NEG build for a negative scale); causal != 0
//       masks key j > query i. bh*seq*D < 2^31 (the host checks both).
//
// Tunables (-D, part of the cache key):
//   PREC    3 float16, 4 bfloat16, 6 float8 E4M3 (BC 128 at D 64 and 128, 64 at 256) default 3
//   D       head dimension: 64, 128 or 256 (256: BC 64)                 default 128
//   BC      keys per tile: 64, 128 or 176 (176: FlashAttention-3's tile at head dim 128,
//           whose consumers take 240 registers, the producer 24)        default 64
//   STAGES  stages of K and V tiles in the ring (>= 2)                 default 2
//   SCHED   0: each consumer computes a key tile's S, softmax and P V in turn; 1:
//           FlashAttention-3's schedule: step t issues S_t = Q K_t^T and O += P_{t-1}
//           V_{t-1} together, the softmax of S_t running while the tensor cores finish
//           P_{t-1} V_{t-1}, and the two consumers issue their products in turn (named
//           barriers 3 and 4), so that one's softmax runs under the other's products;
//           a stage's K goes back to the producer once S is done, its V a step later  default 0
//   EMU_EXP n > 0: every nth n8 tile of S takes its exponentials from a cubic on the FMA
//           pipes (exp2_poly) rather than MUFU.EX2              default 4 in float8, else 0
//   NEG     1: the scale is negative (sl2e its magnitude): each tile's scores are negated
//           before the softmax, which otherwise takes a positive scale's order. Not a
//           tunable: the host builds it for the first call with a negative scale        default 0
// Builds: -DPREC=6 -DD=64 -DBC=128 -DSCHED=1 | -DPREC=6 -DD=256 -DBC=64 -DSCHED=1 | -DPREC=6 -DBC=128 -DSCHED=1 | -DPREC=6 -DBC=128 -DSTAGES=3 | -DPREC=6 -DBC=128 -DSCHED=1 -DNEG=1 | -DPREC=3 | -DPREC=4 -DD=64 | -DPREC=4 -DBC=128 | -DPREC=3 -DD=64 -DBC=128 -DSTAGES=3 | -DPREC=3 -DD=256 -DBC=64 | -DPREC=4 -DD=256 -DBC=64 | -DPREC=3 -DSCHED=1 | -DPREC=4 -DSCHED=1 -DSTAGES=3 | -DPREC=3 -DD=64 -DSCHED=1 | -DPREC=4 -DD=256 -DSCHED=1 | -DPREC=3 -DD=128 -DBC=128 -DSCHED=1 | -DPREC=4 -DBC=176 -DSCHED=1 | -DPREC=3 -DD=64 -DBC=176 | -DPREC=4 -DBC=128 -DSCHED=1 -DNEG=1 | -DPREC=3 -DD=256 -DNEG=1
// Shared memory (dynamic): 2*64*D*EB bytes of Q, STAGES*2*BC*D*EB of K and V (EB: 2 bytes an
//   element, 1 in float8), and 1024 to align the tiles to the swizzle's 1024-byte period
//   (attnWGMMAShared in wgmma.go).
// Launch: 1D grid of bh*ceil(seq/128) blocks of 384 threads; block b serves head
//   b / ceil(seq/128) and, counting from the last, query block b % ceil(seq/128).
// Boundaries: rows past seq are zeros (TMA); keys past seq, or past the query when causal,
//   get score -inf; rows past seq are not stored. Key 0 is unmasked for every query, so the
//   running max is finite from the first tile on. Both consumers compute every tile of the
//   block, also the causal tiles wholly past the first consumer's queries (its weights
//   there are 0): a branch around the wgmma instructions that the compiler cannot prove
//   uniform over the warpgroup makes ptxas serialize them (C7520), which costs more than the
//   skipped tile saves.
// Accuracy: as attention.cu's (scores and P V accumulated in float32 by the tensor cores,
//   ex2.approx, P rounded to the input type, O rounded once). A row's reference max moves
//   only when a tile's max passes it by more than 2^8 (RESCALE_LOG2): P stays below 256,
//   and O and the row's sum are rescaled only then.

#include "prism_cuda.h"

#ifndef PREC
#define PREC 3
#endif
#ifndef D
#define D 128
#endif
#ifndef BC
#define BC 64
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef SCHED
#define SCHED 0
#endif
#ifndef NEG
#define NEG 0
#endif

#if PREC == 3
#define WG_TYPE "f16"
#define EB 2
#elif PREC == 4
#define WG_TYPE "bf16"
#define EB 2
#elif PREC == 6
#define WG_TYPE "e4m3"
#define EB 1
#else
#error "wgmma.cu: PREC must be 3 (float16), 4 (bfloat16) or 6 (float8 E4M3)"
#endif
#if PREC == 6 && !(D <= 128 && BC == 128 || D == 256 && BC == 64)
#error "wgmma.cu: float8 (PREC 6) takes BC = 128 at D 64 and 128, BC = 64 at D 256"
#endif
// The product's k step, and the immediates after the scales: the 16-bit forms take
// transpose flags (K-major 0; V, MN-major, 1), the 8-bit ones none (K-major alone).
#if EB == 1
#define WG_K "k32"
#define WG_SS_TAIL ""
#define WG_RS_TAIL ""
#else
#define WG_K "k16"
#define WG_SS_TAIL ", 0, 0"
#define WG_RS_TAIL ", 1"
#endif
#if D != 64 && D != 128 && D != 256
#error "wgmma.cu: D must be 64, 128 or 256"
#endif
#if D == 256 && BC != 64
#error "wgmma.cu: D = 256 takes BC = 64 (O's 128 registers a thread leave room for S's 32)"
#endif
#if BC != 64 && BC != 128 && BC != 176
#error "wgmma.cu: BC must be 64, 128 or 176"
#endif
#if BC == 176 && D > 128
#error "wgmma.cu: BC = 176 takes D <= 128 (registers)"
#endif
// The registers of the producer warpgroup and of each consumer (setmaxnreg): 176 keys'
// scores, P and O need FlashAttention-3's 240 a consumer.
#if BC == 176
#define PRODUCER_REGS "24"
#define CONSUMER_REGS "240"
#else
#define PRODUCER_REGS "40"
#define CONSUMER_REGS "232"
#endif
#if STAGES < 2
#error "wgmma.cu: STAGES must be at least 2"
#endif

#define THREADS 384
#define BR 128                 // queries per block: two consumers of 64
#define QBYTES (64 * D * EB)   // one consumer's Q tile
#define KVBYTES (BC * D * EB)  // one K or V tile
// Q's and K's rows in shared memory: 128-byte rows of the 128-byte swizzle, or in float8 at
// head dim 64 the whole 64-byte row in the 64-byte swizzle. V's transposed rows (float8):
// BC keys, 128 or 64 bytes, swizzled alike.
#define QKROW (D * EB < 128 ? D * EB : 128)
#define VTROW (BC < 128 ? BC : 128)
#define BOXW (QKROW / EB)      // elements of a box's row
#define NBOX (D * EB / QKROW)  // boxes across a row of Q or K
#define BOXQ (64 * QKROW)      // bytes of a 64-row box
#define BOXKV (BC * QKROW)     // bytes of a BC-row box
#define NS (BC / 8)            // n8 tiles of S
#define NO (D / 8)             // n8 tiles of O
#define KP (32 / EB)           // keys of one k step of P V
#define NPA (BC / KP)          // k steps of P V: P's register fragments

#if EB == 1
typedef unsigned char in_t;
typedef unsigned short pair_t; // two elements of O

// pack rounds lo and hi to E4M3 (to nearest even, saturating: O and P stay far inside the
// range) and packs them, lo in the low byte.
static __device__ __forceinline__ pair_t pack(float lo, float hi) {
  unsigned short r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;\n" : "=h"(r) : "f"(lo), "f"(hi));
  return r;
}
#else
typedef unsigned short in_t;
typedef unsigned int pair_t;

static __device__ __forceinline__ pair_t pack(float lo, float hi) {
#if PREC == 3
  return prism_pack_half2(lo, hi);
#else
  return prism_pack_bfloat162(lo, hi);
#endif
}
#endif

// wgmma_wait0 waits until no wgmma group of this warpgroup is pending; it names the
// registers n registers of d as operands so that the compiler neither reads nor moves them
// while the tensor cores may still write them.
template <int N> static __device__ __forceinline__ void wgmma_wait0(float *d) {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
  for (int i = 0; i < N; ++i) {
    asm volatile("" : "+f"(d[i])::"memory");
  }
}

#if BC == 64
// wgmma_ss_n64: d (64 x 64, float) += A (descriptor da) * B (descriptor db, K-major).
PRISM_WGMMA_SS(wgmma_ss_n64, 32, "wgmma.mma_async.sync.aligned.m64n64" WG_K ".f32." WG_TYPE "." WG_TYPE, WG_SS_TAIL)
#define WGMMA_S wgmma_ss_n64
#endif
#if BC == 128
// wgmma_ss_n128: d (64 x 128, float) += A (descriptor da) * B (descriptor db, K-major).
PRISM_WGMMA_SS(wgmma_ss_n128, 64, "wgmma.mma_async.sync.aligned.m64n128" WG_K ".f32." WG_TYPE "." WG_TYPE, WG_SS_TAIL)
#define WGMMA_S wgmma_ss_n128
#endif
#if BC == 176
// wgmma_ss_n176: d (64 x 176, float) += A (descriptor da) * B (descriptor db, K-major).
PRISM_WGMMA_SS(wgmma_ss_n176, 88, "wgmma.mma_async.sync.aligned.m64n176k16.f32." WG_TYPE "." WG_TYPE, ", 0, 0")
#define WGMMA_S wgmma_ss_n176
#endif
#if D == 64
// wgmma_rs_n64: d (64 x 64, float) += A (registers a, the m16n8k16 A layout per warp, or
// m16n8k32's for float8) * B (descriptor db, MN-major; K-major for float8: V transposed).
PRISM_WGMMA_RS(wgmma_rs_n64, 32, "wgmma.mma_async.sync.aligned.m64n64" WG_K ".f32." WG_TYPE "." WG_TYPE, WG_RS_TAIL)
#define WGMMA_PV wgmma_rs_n64
#endif
#if D == 128
// wgmma_rs_n128: d (64 x 128, float) += A (registers a, the m16n8k16 A layout per warp, or
// m16n8k32's for float8) * B (descriptor db, MN-major; K-major for float8: V transposed).
PRISM_WGMMA_RS(wgmma_rs_n128, 64, "wgmma.mma_async.sync.aligned.m64n128" WG_K ".f32." WG_TYPE "." WG_TYPE, WG_RS_TAIL)
#define WGMMA_PV wgmma_rs_n128
#endif

#if D == 256
// wgmma_rs_n256: d (64 x 256, float) += A (registers a, the m16n8k16 A layout per warp, or
// m16n8k32's for float8) * B (descriptor db, MN-major; K-major for float8: V transposed).
PRISM_WGMMA_RS(wgmma_rs_n256, 128, "wgmma.mma_async.sync.aligned.m64n256" WG_K ".f32." WG_TYPE "." WG_TYPE, WG_RS_TAIL)
#define WGMMA_PV wgmma_rs_n256
#endif

// pin makes the N registers of r appear read and written here: a volatile statement before a
// wgmma.fence, so that their values are computed before the fence orders them for the
// tensor cores (the compiler does not move register arithmetic across it otherwise).
template <int N> static __device__ __forceinline__ void pin(float *r) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    asm volatile("" : "+f"(r[i]));
  }
}
template <int N> static __device__ __forceinline__ void pin(unsigned int *r) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    asm volatile("" : "+r"(r[i]));
  }
}
template <int N> static __device__ __forceinline__ void pin(unsigned long long *r) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    asm volatile("" : "+l"(r[i]));
  }
}

// zero_s zeroes S's accumulators and pins them, before a wgmma.fence.
static __device__ __forceinline__ void zero_s(float *sc) {
#pragma unroll
  for (int i = 0; i < NS * 4; ++i) {
    sc[i] = 0.f;
  }
  pin<NS * 4>(sc);
}

// sw_desc returns the K-major descriptor of an operand at addr whose rows of rowb bytes (128
// or 64) are swizzled over that span: 8-row groups 8*rowb bytes apart, in the 128-byte
// swizzle (mode 1) or the 64-byte one (mode 2).
static __device__ __forceinline__ unsigned long long sw_desc(unsigned int addr, unsigned int rowb) {
  return prism_wgmma_desc_swizzle(addr, 16, 8 * rowb, rowb == 128 ? 1 : 2);
}

// s_group issues S = Q K^T's wgmmas (Q at sqc, K at sk, 32 bytes of depth a step: 16
// dimensions, 32 in float8) into sc and commits them as a group; the caller has fenced.
static __device__ __forceinline__ void s_group(float *sc, unsigned int sqc, unsigned int sk) {
#pragma unroll
  for (int ks = 0; ks < D * EB / 32; ++ks) {
    const int per = QKROW / 32; // k steps in a box's row
    const unsigned int off = 32 * (ks % per);
    WGMMA_S(sc, sw_desc(sqc + (ks / per) * BOXQ + off, QKROW), sw_desc(sk + (ks / per) * BOXKV + off, QKROW), 1);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// issue_s issues S = Q K^T for one key tile as a wgmma group (committed, not waited for):
// sc (zeroed here) gets the 64 x BC scores of the consumer's queries (Q at sqc) against the
// tile's keys (K at sk).
static __device__ __forceinline__ void issue_s(float *sc, unsigned int sqc, unsigned int sk) {
  zero_s(sc);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  s_group(sc, sqc, sk);
}

// pv_desc returns the descriptor of V's k step kk in the tile at sv: 16 key rows (2048
// bytes) a step of the MN-major 16-bit tile; in float8, whose tile is V transposed (D rows
// of 128 keys, K-major), 32 keys (bytes) along the rows.
static __device__ __forceinline__ unsigned long long pv_desc(unsigned int sv, int kk) {
#if EB == 1
  return sw_desc(sv + (kk / (VTROW / 32)) * (D * VTROW) + 32 * (kk % (VTROW / 32)), VTROW);
#else
  return prism_wgmma_desc(sv + 2048 * kk, BOXKV, 1024);
#endif
}

// issue_pv issues O += P V for one key tile as a wgmma group (committed, not waited for): P
// in registers as the A operand (k step kk: keys KP*kk.., pack_p), V's descriptors from
// pv_desc. pa must keep its values until the group is waited for.
static __device__ __forceinline__ void issue_pv(float *acc, unsigned int (*pa)[4], unsigned int sv) {
  pin<NPA * 4>(&pa[0][0]);
  pin<NO * 4>(acc);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int kk = 0; kk < NPA; ++kk) {
    WGMMA_PV(acc, pa[kk], pv_desc(sv, kk), 1);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// issue_s_pv issues S = Q K_t^T (into sc, zeroed here) and O += P V (P in pa, V's
// descriptors in dv) as two wgmma groups behind one fence (FA3's step), S's first, so that
// waiting for one group leaves the product running. Every register the two read is defined
// before the fence, and the caller keeps pa and dv live until the product is waited for: a
// register an in-flight wgmma reads that is defined again before its wait (by the program
// or by the register allocator reusing it) makes ptxas serialize the wgmmas (C7513).
static __device__ __forceinline__ void issue_s_pv(float *sc, unsigned int sqc, unsigned int sk, float *acc, unsigned int (*pa)[4],
                                                  unsigned long long *dv) {
  zero_s(sc);
  pin<NPA * 4>(&pa[0][0]);
  pin<NO * 4>(acc);
  pin<NPA>(dv);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  s_group(sc, sqc, sk);
#pragma unroll
  for (int kk = 0; kk < NPA; ++kk) {
    WGMMA_PV(acc, pa[kk], dv[kk], 1);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// EMU_EXP (float8 builds): one n8 tile of S in EMU_EXP takes its exponentials from
// exp2_poly, on the FMA pipes, rather than from MUFU.EX2. In float8 a tile's exponentials
// cost the quarter-rate unit about as many cycles as the tile's products cost the tensor
// cores, and ncu found MUFU.EX2 the most sampled stall (22.6%, wait and MIO throttle, on
// an H200), so a share of them moves to the pipes with room (FlashAttention-4's trick).
#ifndef EMU_EXP
#define EMU_EXP (EB == 1 ? 4 : 0)
#endif

// exp2_poly returns 2^x for x <= 8 (a probability against the row's reference max) within
// 1e-4 relatively (2^-13): x is held at -126 or above, split into j = round(x) (an addition
// of 1.5*2^23, which leaves j in the low bits) and f = x - j in [-0.5, 0.5]; 2^f is a cubic
// (interpolated at Chebyshev nodes: 9.97e-5 at most in float32), its exponent raised by j.
// The probabilities are rounded to E4M3 (2^-4) next, and l sums them; the tolerance counts
// the cubic's error (AttentionToleranceOf).
static __device__ __forceinline__ float exp2_poly(float x) {
  x = fmaxf(x, -126.f);
  const float t = x + 12582912.f;
  const float f = x - (t - 12582912.f);
  float p = fmaf(f, 0.05583828315138817f, 0.2426394820213318f);
  p = fmaf(p, f, 0.6931367516517639f);
  p = fmaf(p, f, 0.9999245405197144f);
  unsigned int pb, tb;
  asm("mov.b32 %0, %1;" : "=r"(pb) : "f"(p));
  asm("mov.b32 %0, %1;" : "=r"(tb) : "f"(t));
  float r;
  asm("mov.b32 %0, %1;" : "=f"(r) : "r"(pb + (tb << 23))); // tb's low 9 bits are j: the exponent's step
  return r;
}

// RESCALE_LOG2 is how far, in base 2, a tile's max may pass a row's reference max before the
// reference moves (lazy rescaling, as FlashAttention-4 does): the probabilities then stay
// below 2^8 = 256 (exact in float, well inside float16's and bfloat16's range), and most
// tiles after the first few skip the rescaling of O.
#define RESCALE_LOG2 8.0f

// mask_scores sets the scores of keys past seq, or past the query when causal, to -inf in
// the key tile from kbase (r0 is this thread's first row). Each row's limit is worked out
// once and every score compared with it by a select: a test of each key inside the
// softmax's loops became a branch a score (BSSY, BRA, BSYNC), taken on every tile, masked
// or not, which cost the consumers about 40% of their issue slots (ncu, H200).
static __device__ __forceinline__ void mask_scores(float *sc, int kbase, int seq, int causal, int r0, int lane) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    // Key kbase + 2*(lane&3) + 8i + e stays where 8i + e < lim.
    const int lim = (causal && r0 + 8 * h + 1 < seq ? r0 + 8 * h + 1 : seq) - kbase - 2 * (lane & 3);
#pragma unroll
    for (int i = 0; i < NS; ++i) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        sc[4 * i + 2 * h + e] = 8 * i + e < lim ? sc[4 * i + 2 * h + e] : -prism_inf();
      }
    }
  }
}

// softmax_scores turns the scores sc of the key tile from kbase into probabilities: masks
// them where the tile reaches past seq, or past the consumer's first query q0c when causal
// (one branch a tile), updates the reference max (of the unscaled scores, whose order a
// positive scale keeps; moved only past RESCALE_LOG2) and the sum of this thread's two rows,
// leaves the probabilities 2^(s*sl2e - max*sl2e) in sc, one FFMA and one ex2 a score
// (FlashAttention-3's form: no separate scaling pass), and the factors O's rows must be
// scaled by in alpha (1 where the reference stayed). The maxima and sums run as two chains
// a row, so that four independent chains hide the latency of each FMNMX and FADD. The NEG
// build (a negative scale, which reverses the scores' order; sl2e is then its magnitude)
// negates the scores first, -s * |c| being s * c, so that the reference, the mask's -inf
// and the probabilities below hold as for a positive scale.
static __device__ __forceinline__ void softmax_scores(float *sc, float *alpha, float *mrow, float *lrow, int kbase, int seq, int causal,
                                                      int q0c, int r0, int lane, float sl2e) {
#if NEG
#pragma unroll
  for (int i = 0; i < NS * 4; ++i) {
    sc[i] = -sc[i];
  }
#endif
  if (kbase + BC > seq || (causal && kbase + BC - 1 > q0c)) {
    mask_scores(sc, kbase, seq, causal, r0, lane);
  }
  float mx[2][2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    mx[h][0] = fmaxf(mrow[h], sc[2 * h]);
    mx[h][1] = sc[2 * h + 1];
  }
#pragma unroll
  for (int i = 1; i < NS; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        mx[h][e] = fmaxf(mx[h][e], sc[4 * i + 2 * h + e]);
      }
    }
  }
  float m[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    m[h] = fmaxf(mx[h][0], mx[h][1]);
  }
#pragma unroll
  for (int x = 1; x <= 2; x *= 2) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      m[h] = fmaxf(m[h], prism_shfl_xor(m[h], x));
    }
  }
  float ms[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    // The row's reference max moves only when the tile's passes it by more than
    // RESCALE_LOG2 in base 2 (always on the first tile, from -inf): else the probabilities
    // stay below 2^RESCALE_LOG2 against the old one, and O and the sum need no rescaling.
    if ((m[h] - mrow[h]) * sl2e > RESCALE_LOG2) {
      alpha[h] = prism_exp2((mrow[h] - m[h]) * sl2e);
      mrow[h] = m[h];
    } else {
      alpha[h] = 1.f;
    }
    ms[h] = mrow[h] * sl2e;
  }
  float sum[2][2] = {{0.f, 0.f}, {0.f, 0.f}};
#pragma unroll
  for (int i = 0; i < NS; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float x = fmaf(sc[4 * i + 2 * h + e], sl2e, -ms[h]);
        const float p = EMU_EXP > 0 && i % EMU_EXP == EMU_EXP - 1 ? exp2_poly(x) : prism_exp2(x);
        sc[4 * i + 2 * h + e] = p;
        sum[h][e] += p;
      }
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    lrow[h] = lrow[h] * alpha[h] + (sum[h][0] + sum[h][1]);
  }
}

// pack_p writes the probabilities sc, rounded to the input type, into pa: S's layout as
// wgmma's A operand. In 16 bits the layouts agree: register r of k step kk holds row g +
// 8*(r&1), keys 16kk + 8*(r>>1) + 2t and the next (g = lane/4, t = lane%4), the two values
// of S's n8 tile 2kk + (r>>1) in that row. In float8 register r holds four keys of a 32-key
// step, row g + 8*(r&1), positions 16*(r>>1) + 4t + b (byte b), where this thread's S has
// keys 16*(r>>1) + 2t + (b&1) + 8*(b>>1): pack_p puts those there, and V's transposed copy
// (attention_vt) stores key 16i + 2t + (b&1) + 8*(b>>1) at position 16i + 4t + b, so that
// P V pairs every weight with its key's row of V.
static __device__ __forceinline__ void pack_p(const float *sc, unsigned int (*pa)[4]) {
#pragma unroll
  for (int kk = 0; kk < NPA; ++kk) {
#if EB == 1
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const float *x = sc + 16 * kk + 8 * (r >> 1) + 2 * (r & 1); // tiles 4kk + 2(r>>1) and the next, row half r&1
      pa[kk][r] = (unsigned int)pack(x[0], x[1]) | (unsigned int)pack(x[4], x[5]) << 16;
    }
#else
    pa[kk][0] = pack(sc[8 * kk + 0], sc[8 * kk + 1]);
    pa[kk][1] = pack(sc[8 * kk + 2], sc[8 * kk + 3]);
    pa[kk][2] = pack(sc[8 * kk + 4], sc[8 * kk + 5]);
    pa[kk][3] = pack(sc[8 * kk + 6], sc[8 * kk + 7]);
#endif
  }
}

// softmax_tile is softmax_scores, then pack_p into pa.
static __device__ __forceinline__ void softmax_tile(float *sc, unsigned int (*pa)[4], float *alpha, float *mrow, float *lrow, int kbase,
                                                    int seq, int causal, int q0c, int r0, int lane, float sl2e) {
  softmax_scores(sc, alpha, mrow, lrow, kbase, seq, causal, q0c, r0, lane, sl2e);
  pack_p(sc, pa);
}

// warp_any reports whether p holds on any lane of the warp (vote.sync.any).
static __device__ __forceinline__ bool warp_any(bool p) {
  unsigned int r;
  asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, %1, 0;\n\tvote.sync.any.pred q, p, 0xffffffff;\n\tselp.u32 %0, 1, 0, q;\n\t}"
               : "=r"(r)
               : "r"((unsigned int)p));
  return r != 0;
}

// rescale multiplies O's accumulators of this thread's two rows by alpha, unless no row of
// the warp's moved its reference max (alpha 1 throughout: the multiplies are skipped, the
// branch uniform over the warp).
static __device__ __forceinline__ void rescale(float *acc, const float *alpha) {
  if (!warp_any(alpha[0] != 1.f || alpha[1] != 1.f)) {
    return;
  }
#pragma unroll
  for (int n = 0; n < NO; ++n) {
    acc[4 * n] *= alpha[0];
    acc[4 * n + 1] *= alpha[0];
    acc[4 * n + 2] *= alpha[1];
    acc[4 * n + 3] *= alpha[1];
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    attention_wgmma(const PRISM_GRID_CONSTANT prism_tensor_map tmQ, const PRISM_GRID_CONSTANT prism_tensor_map tmK,
                    const PRISM_GRID_CONSTANT prism_tensor_map tmV, in_t *o, int seq, float sl2e, int causal) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __attribute__((aligned(8))) unsigned long long bars[1 + 4 * STAGES]; // Q, K full, V full, K empty, V empty
  const unsigned int sq = (prism_smem_addr(smem_raw) + 1023u) & ~1023u;
  const unsigned int skv = sq + 2 * QBYTES; // stage s: K at skv + 2*s*KVBYTES, V after it
  const unsigned int qbar = prism_smem_addr(bars), kfull = qbar + 8, vfull = kfull + 8 * STAGES;
  const unsigned int kempty = vfull + 8 * STAGES, vempty = kempty + 8 * STAGES;

  const int nqb = (seq + BR - 1) / BR;
  const int head = blockIdx.x / nqb;
  const int q0 = (nqb - 1 - blockIdx.x % nqb) * BR;
  const int kend = causal && q0 + BR < seq ? q0 + BR : seq;
  const int tiles = (kend + BC - 1) / BC;
  const int wg = threadIdx.x >> 7;

  if (threadIdx.x == 0) {
    prism_mbar_init(qbar, 1);
    for (int s = 0; s < STAGES; ++s) {
      prism_mbar_init(kfull + 8 * s, 1);
      prism_mbar_init(vfull + 8 * s, 1);
      // One arrival per consumer warpgroup: K's when its scores are done, V's when its
      // product is, so that the next K tile may land while this V is still read.
      prism_mbar_init(kempty + 8 * s, 2);
      prism_mbar_init(vempty + 8 * s, 2);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 " PRODUCER_REGS ";\n");
    if (threadIdx.x == 0) {
      prism_mbar_expect_tx(qbar, 2 * QBYTES);
#pragma unroll
      for (int c = 0; c < 2; ++c) {
#pragma unroll
        for (int j = 0; j < NBOX; ++j) {
          prism_tma_load_3d(sq + c * QBYTES + j * BOXQ, &tmQ, BOXW * j, q0 + 64 * c, head, qbar);
        }
      }
      for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        const unsigned int sk = skv + 2 * s * KVBYTES, sv = sk + KVBYTES;
        if (t >= STAGES) {
          prism_mbar_wait(kempty + 8 * s, ((t / STAGES) + 1) & 1);
        }
        prism_mbar_expect_tx(kfull + 8 * s, KVBYTES);
#pragma unroll
        for (int j = 0; j < NBOX; ++j) {
          prism_tma_load_3d(sk + j * BOXKV, &tmK, BOXW * j, t * BC, head, kfull + 8 * s);
        }
        if (t >= STAGES) {
          prism_mbar_wait(vempty + 8 * s, ((t / STAGES) + 1) & 1);
        }
        prism_mbar_expect_tx(vfull + 8 * s, KVBYTES);
#if EB == 1
        // V transposed: boxes of D rows by VTROW keys.
#pragma unroll
        for (int j = 0; j < BC / VTROW; ++j) {
          prism_tma_load_3d(sv + j * (D * VTROW), &tmV, t * BC + VTROW * j, 0, head, vfull + 8 * s);
        }
#else
#pragma unroll
        for (int j = 0; j < D / 64; ++j) {
          prism_tma_load_3d(sv + j * BOXKV, &tmV, 64 * j, t * BC, head, vfull + 8 * s);
        }
#endif
      }
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 " CONSUMER_REGS ";\n");
  const int c = wg - 1;                  // consumer: queries q0 + 64c ..
  const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int r0 = q0 + 64 * c + 16 * warp + (lane >> 2); // this thread's rows: r0 and r0 + 8
  const unsigned int sqc = sq + c * QBYTES;

  float acc[NO * 4];
  float mrow[2] = {-prism_inf(), -prism_inf()}, lrow[2] = {0.f, 0.f};
#pragma unroll
  for (int i = 0; i < NO * 4; ++i) {
    acc[i] = 0.f;
  }
  prism_mbar_wait(qbar, 0);

#if SCHED == 1
  // FlashAttention-3's schedule. Step t issues S_t = Q K_t^T and O += P_{t-1} V_{t-1} as
  // two groups; the softmax of S_t runs while the tensor cores finish P_{t-1} V_{t-1}
  // (intra-warpgroup overlap), and the two consumers issue their products in turn (named
  // barriers 3 and 4: consumer c waits on 3 + c; consumer 1 lets consumer 0 go first), so
  // that one's softmax runs under the other's products (ping-pong). As in FA3, the softmax
  // of S_t works on S's floats in place and rounds them into pa only once P_{t-1} V_{t-1}
  // is done: P_{t-1} and V's descriptors stay in their registers while the product may
  // read them, and no second set of P's registers is live beside them.
  unsigned int pa[NPA][4];
  float alpha[2];
  if (c == 1) {
    asm volatile("bar.arrive 3, 256;\n" ::: "memory");
  }
  {
    float sc[NS * 4];
    prism_mbar_wait(kfull, 0);
    asm volatile("bar.sync %0, 256;\n" ::"r"(3 + c) : "memory");
    issue_s(sc, sqc, skv);
    asm volatile("bar.arrive %0, 256;\n" ::"r"(4 - c) : "memory");
    wgmma_wait0<NS * 4>(sc);
    if ((threadIdx.x & 127) == 0) {
      prism_mbar_arrive(kempty);
    }
    softmax_tile(sc, pa, alpha, mrow, lrow, 0, seq, causal, q0 + 64 * c, r0, lane, sl2e);
  }
  for (int t = 1; t < tiles; ++t) {
    const int s = t % STAGES, sp = (t - 1) % STAGES;
    const unsigned int sk = skv + 2 * s * KVBYTES, svp = skv + 2 * sp * KVBYTES + KVBYTES;
    float sc[NS * 4];
    unsigned long long dv[NPA];
#pragma unroll
    for (int kk = 0; kk < NPA; ++kk) {
      dv[kk] = pv_desc(svp, kk);
    }
    rescale(acc, alpha);
    prism_mbar_wait(kfull + 8 * s, (t / STAGES) & 1);
    prism_mbar_wait(vfull + 8 * sp, ((t - 1) / STAGES) & 1);
    asm volatile("bar.sync %0, 256;\n" ::"r"(3 + c) : "memory");
    issue_s_pv(sc, sqc, sk, acc, pa, dv);
    asm volatile("bar.arrive %0, 256;\n" ::"r"(4 - c) : "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); // S_t is done: K_t is free
    pin<NS * 4>(sc);
    if ((threadIdx.x & 127) == 0) {
      prism_mbar_arrive(kempty + 8 * s);
    }
    softmax_scores(sc, alpha, mrow, lrow, t * BC, seq, causal, q0 + 64 * c, r0, lane, sl2e);
    wgmma_wait0<NO * 4>(acc); // and P_{t-1} V_{t-1}: V_{t-1} is free
    pin<NPA * 4>(&pa[0][0]); // pa and dv live until here
    pin<NPA>(dv);
    if ((threadIdx.x & 127) == 0) {
      prism_mbar_arrive(vempty + 8 * sp);
    }
    pack_p(sc, pa);
  }
  {
    const int sp = (tiles - 1) % STAGES;
    rescale(acc, alpha);
    prism_mbar_wait(vfull + 8 * sp, ((tiles - 1) / STAGES) & 1);
    asm volatile("bar.sync %0, 256;\n" ::"r"(3 + c) : "memory");
    issue_pv(acc, pa, skv + 2 * sp * KVBYTES + KVBYTES);
    if (c == 0) { // consumer 1's last issue has no one after it
      asm volatile("bar.arrive 4, 256;\n" ::: "memory");
    }
    wgmma_wait0<NO * 4>(acc);
    if ((threadIdx.x & 127) == 0) {
      prism_mbar_arrive(vempty + 8 * sp);
    }
  }
#else
  for (int t = 0; t < tiles; ++t) {
    const int s = t % STAGES, ph = (t / STAGES) & 1;
    const unsigned int sk = skv + 2 * s * KVBYTES, sv = sk + KVBYTES;
    float sc[NS * 4];
    unsigned int pa[NPA][4];
    float alpha[2];
    prism_mbar_wait(kfull + 8 * s, ph);
    issue_s(sc, sqc, sk);
    wgmma_wait0<NS * 4>(sc);
    if ((threadIdx.x & 127) == 0) { // the warpgroup's reads of K_t are done
      prism_mbar_arrive(kempty + 8 * s);
    }
    softmax_tile(sc, pa, alpha, mrow, lrow, t * BC, seq, causal, q0 + 64 * c, r0, lane, sl2e);
    rescale(acc, alpha);
    prism_mbar_wait(vfull + 8 * s, ph);
    issue_pv(acc, pa, sv);
    wgmma_wait0<NO * 4>(acc);
    if ((threadIdx.x & 127) == 0) { // and of V_t
      prism_mbar_arrive(vempty + 8 * s);
    }
  }
#endif

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = lrow[h];
    l += prism_shfl_xor(l, 1);
    l += prism_shfl_xor(l, 2);
    const float inv = 1.f / l;
    const int row = r0 + 8 * h;
    if (row < seq) {
      pair_t *dst = (pair_t *)(o + ((long long)head * seq + row) * D + 2 * (lane & 3));
#pragma unroll
      for (int n = 0; n < NO; ++n) {
        dst[4 * n] = pack(acc[4 * n + 2 * h] * inv, acc[4 * n + 2 * h + 1] * inv);
      }
    }
  }
}

// attention_vt writes V transposed for the float8 product (its B operand must be K-major):
// vt[h][d][p] = V[h][key(p)][d] for p < seqp (seq rounded up to 16, so that vt's rows lie
// on 16-byte boundaries for TMA), with key(p) = 16*(p/16) + 2*(q/4) + (q&1) + 8*((q/2)&1),
// q = p%16, the order pack_p puts each thread's probabilities in; keys past seq give zeros.
// Launch: grid (ceil(seqp/64), D/64, bh) of 256 threads; a block moves 64 keys by 64 dims
// through shared memory, 16 bytes a thread each way. Every build has it; the host runs it
// for float8 alone.
extern "C" __global__ void __launch_bounds__(256) attention_vt(const unsigned char *v, unsigned char *vt, int seq, int seqp) {
  __shared__ __attribute__((aligned(16))) unsigned char tile[64][64 + 16]; // [key][dim], rows padded
  const int k0 = blockIdx.x * 64, d0 = blockIdx.y * 64, head = blockIdx.z;
  const int tid = threadIdx.x;
  {
    const int r = tid >> 2, c = 16 * (tid & 3);
    uint4 x = make_uint4(0u, 0u, 0u, 0u);
    if (k0 + r < seq) {
      x = *(const uint4 *)(v + ((long long)head * seq + k0 + r) * D + d0 + c);
    }
    *(uint4 *)&tile[r][c] = x;
  }
  __syncthreads();
  const int dd = tid >> 2, g = 16 * (tid & 3);
  if (k0 + g < seqp) {
    unsigned int w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      unsigned int x = 0u;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const int q = 4 * j + b;
        x |= (unsigned int)tile[g + 2 * (q >> 2) + (q & 1) + 8 * ((q >> 1) & 1)][dd] << (8 * b);
      }
      w[j] = x;
    }
    *(uint4 *)(vt + ((long long)head * D + d0 + dd) * seqp + k0 + g) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}
