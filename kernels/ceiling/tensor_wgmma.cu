// tensor_wgmma.cu: the tensor-core peak of Hopper (CUDA C++, sm_90a): wgmma.mma_async on
// operands held in shared memory.
//
// Purpose: the tf32, float16, bfloat16 and float8 peaks of `prism bench` on GPUs of compute
// capability 9.0, whose warpgroup instructions (wgmma, HGMMA in SASS) reach rates that
// mma.sync does not (tensor_mma.cu is the form of the other architectures). A block of WGS
// warpgroups fills a tile of A (64 rows) and one of B (BN rows), one 128-byte row of k each,
// in shared memory with the values a and b, then each warpgroup repeats, iters times, four
// wgmma.mma_async m64nNk(32 bytes of k) instructions that walk the four 32-byte columns of
// the tiles (128-byte-swizzled K-major descriptors, as wgmma.cu's), accumulating in its BN/2
// float registers per thread, one group kept in flight while the next is issued. Every
// element of the accumulators then holds iters * 4 * K * a * b, exact (small integers).
// Each thread writes the sum of its accumulators (below 2^24: exact in float).
//
// Arguments:
//   tensor_peak_wgmma(out, abits, bbits, iters)
//     out: one float per thread of the launch, out[block * WGS*128 + thread] = the sum of
//       the thread's BN/2 accumulators = BN/2 * iters * 4 * K * a * b
//     abits, bbits: the 32-bit words that fill the tiles of A and B (a and b replicated:
//       4 fp8, 2 16-bit or 1 tf32 value per word)
//     iters: trips of the loop of four instructions
//
// Tunables (-D, part of the cache key):
//   PREC   1 tf32 (k8), 3 float16 (k16), 4 bfloat16 (k16), 6 float8 e4m3 (k32),
//          7 float8 e5m2 (k32): gemm's numbering                         default 3
//   BN     columns of an instruction: 128 or 256 (m64n128, m64n256)       default 256
//   WGS    warpgroups per block (1 to 4)                                   default 2
// Builds: -DPREC=1 | -DPREC=3 | -DPREC=4 -DBN=128 | -DPREC=6 -DWGS=3 | -DPREC=7 -DBN=128 -DWGS=4
// Launch: 1D grid of any number of blocks of WGS*128 threads, no dynamic shared memory
//   (the tiles take 8 KiB + BN*128 bytes + 1 KiB of alignment, static).
// Semantics: the inputs are exact small powers of two, so the tensor cores' alignment and
//   truncation lose nothing: the host checks every output for equality.

#include "prism_cuda.h"

#ifndef PREC
#define PREC 3
#endif
#ifndef BN
#define BN 256
#endif
#ifndef WGS
#define WGS 2
#endif

#if PREC == 1
#define WG_TYPE "tf32"
#define WG_K "8"
#define WG_TAIL ""
#elif PREC == 3
#define WG_TYPE "f16"
#define WG_K "16"
#define WG_TAIL ", 0, 0"
#elif PREC == 4
#define WG_TYPE "bf16"
#define WG_K "16"
#define WG_TAIL ", 0, 0"
#elif PREC == 6
#define WG_TYPE "e4m3"
#define WG_K "32"
#define WG_TAIL ""
#elif PREC == 7
#define WG_TYPE "e5m2"
#define WG_K "32"
#define WG_TAIL ""
#else
#error "tensor_wgmma.cu: PREC must be 1 (tf32), 3 (float16), 4 (bfloat16), 6 (e4m3) or 7 (e5m2)"
#endif
#if BN != 128 && BN != 256
#error "tensor_wgmma.cu: BN must be 128 or 256"
#endif
#if WGS < 1 || WGS > 4
#error "tensor_wgmma.cu: WGS must be 1 to 4"
#endif

#define THREADS (WGS * 128)
#define A_BYTES (64 * 128)
#define B_BYTES (BN * 128)

// desc returns the matrix descriptor of a K-major operand at shared address addr in the
// 128-byte swizzled layout (wgmma.cu's): 8-row groups 1024 bytes apart.
static __device__ __forceinline__ unsigned long long desc(unsigned int addr) { return prism_wgmma_desc(addr, 16, 1024); }

static __device__ __forceinline__ void wgmma_n128(float *d, unsigned long long da, unsigned long long db, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k" WG_K ".f32." WG_TYPE "." WG_TYPE " "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1" WG_TAIL ";\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db), "r"(accumulate));
}

static __device__ __forceinline__ void wgmma_n256(float *d, unsigned long long da, unsigned long long db, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k" WG_K ".f32." WG_TYPE "." WG_TYPE " "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1" WG_TAIL ";\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db), "r"(accumulate));
}

#if BN == 128
#define WGMMA wgmma_n128
#else
#define WGMMA wgmma_n256
#endif

// fence_acc tells the compiler that the accumulators may have changed (the tensor cores
// write them), so that it neither reads nor moves them across a wait.
static __device__ __forceinline__ void fence_acc(float *d) {
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) {
    asm volatile("" : "+f"(d[i])::"memory");
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) tensor_peak_wgmma(float *out, unsigned int abits, unsigned int bbits, int iters) {
  __shared__ unsigned int raw[(A_BYTES + B_BYTES + 1024) / 4];
  const unsigned int at = prism_smem_addr(raw), base = (at + 1023u) & ~1023u;
  unsigned int *tiles = raw + (base - at) / 4;
  for (int i = threadIdx.x; i < (A_BYTES + B_BYTES) / 4; i += THREADS) {
    tiles[i] = i < A_BYTES / 4 ? abits : bbits;
  }
  // The tensor cores read shared memory through the async proxy: make the stores visible
  // to it before any warpgroup starts.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  float acc[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) {
    acc[i] = 0.0f;
  }
  const unsigned int sa = base, sb = base + A_BYTES;
  for (int it = 0; it < iters; ++it) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      WGMMA(acc, desc(sa + 32 * ks), desc(sb + 32 * ks), 1);
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    fence_acc(acc);
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  fence_acc(acc);
  float s = 0.0f; // integers below 2^24: exact
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) {
    s += acc[i];
  }
  out[(long long)blockIdx.x * THREADS + threadIdx.x] = s;
}
