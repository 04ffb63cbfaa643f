// prism_cuda.h: the headers Prism embeds for CUDA C++ sources, which NVRTC compiles without
// a CUDA toolkit's include directory (NVRTC ships no cuda_fp16.h or cuda_bf16.h, and no C
// library headers). Include it as "prism_cuda.h"; the CUDA backend hands it to NVRTC with
// every CUDA C++ build.
//
// What it declares:
//   - the fixed-width integer types of <stdint.h> (int8_t ... uint64_t), unless
//     PRISM_NO_STDINT is defined (for a source that brings its own);
//   - prism_half and prism_bfloat16, storage types holding the 16 bits of an IEEE
//     binary16 and of a bfloat16, with conversions to and from float through inline PTX
//     (cvt), rounding to nearest even, NaN staying NaN: fp16 and bf16 kernels compute in
//     float, or in PTX of their own (mma.sync, wgmma), and need neither cuda_fp16.h nor
//     cuda_bf16.h;
//   - prism_pack2, which packs two 16-bit values in the 32-bit register layout that
//     f16x2/bf16x2 PTX instructions and mma fragments use (lo in bits 0-15), and
//     prism_pack_half2 / prism_pack_bfloat162, which round two floats into that layout;
//   - on sm_80 and newer, the PTX the tensor-core kernels share: prism_smem_addr (a
//     generic pointer to shared memory as a 32-bit shared address), prism_cp_async16,
//     prism_cp_async_commit and prism_cp_async_wait<N> (cp.async of 16 bytes, zero-filled
//     past a byte count), prism_ldmatrix_x4 and prism_ldmatrix_x4_trans (four 8x8 b16
//     matrices into mma fragments), prism_mma_f16 and prism_mma_bf16 (mma.sync m16n8k16,
//     float accumulators);
//   - for Hopper (sm_90a; the PTX is emitted for any target, ptxas accepts it on sm_90 only):
//     prism_tensor_map (a CUtensorMap as the host's engine.NewTensorMap encodes it, passed by
//     value as a `const PRISM_GRID_CONSTANT prism_tensor_map` parameter), prism_tma_load_3d
//     (one box of a tensor map into shared memory, completing on an mbarrier),
//     prism_mbar_init, prism_mbar_expect_tx, prism_mbar_arrive and prism_mbar_wait (phase
//     parity) on 64-bit shared-memory barriers;
//   - prism_wgmma_desc (a wgmma matrix descriptor of a 128-byte swizzled operand), and
//     PRISM_WGMMA_SS / PRISM_WGMMA_RS, which define wrappers of wgmma.mma_async with float
//     accumulators (operands from shared memory; A from registers);
//   - thread-block clusters (sm_90): prism_tma_load_3d_multicast (one copy into every block
//     of a mask), prism_cluster_rank, prism_cluster_sync and prism_mbar_arrive_cluster (an
//     arrival on a barrier of another block of the cluster);
//   - prism_exp2 (ex2.approx.ftz: 2^x within 2 ulp, -inf to 0), prism_inf (+infinity as a
//     float, without math.h) and prism_shfl_xor (a float from lane ^ mask of the warp).
//
// The backend compiles CUDA C++ for the device's architecture-specific target where there
// is one (compute_90a on sm_90): Hopper-only PTX (wgmma, setmaxnreg, mbarrier with
// transaction counts) is available there, and __CUDA_ARCH_FEAT_SM90_ALL is defined.
//
// Every function is __device__ __forceinline__ and static.

#ifndef PRISM_CUDA_H
#define PRISM_CUDA_H

#ifndef PRISM_NO_STDINT
#if defined(__INT8_TYPE__) && defined(__INT16_TYPE__) && defined(__INT32_TYPE__) && defined(__INT64_TYPE__) && \
    defined(__UINT8_TYPE__) && defined(__UINT16_TYPE__) && defined(__UINT32_TYPE__) && defined(__UINT64_TYPE__)
typedef __INT8_TYPE__ int8_t;
typedef __INT16_TYPE__ int16_t;
typedef __INT32_TYPE__ int32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __UINT16_TYPE__ uint16_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __UINT64_TYPE__ uint64_t;
#else
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t; // LP64, as the host: NVRTC runs on 64-bit Linux
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
#endif
#endif // PRISM_NO_STDINT

// prism_half holds the bits of an IEEE 754 binary16 (CUDA's __half).
typedef struct {
  unsigned short bits;
} prism_half;

// prism_bfloat16 holds the bits of a bfloat16: the upper half of a float (CUDA's
// __nv_bfloat16).
typedef struct {
  unsigned short bits;
} prism_bfloat16;

// prism_half_to_float converts exactly.
static __device__ __forceinline__ float prism_half_to_float(prism_half h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
  return f;
}

// prism_float_to_half rounds to nearest even; out-of-range values become infinities.
static __device__ __forceinline__ prism_half prism_float_to_half(float f) {
  prism_half h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
  return h;
}

// prism_bfloat16_to_float converts exactly: the bits become the upper half of a float.
static __device__ __forceinline__ float prism_bfloat16_to_float(prism_bfloat16 b) {
  float f;
  asm("mov.b32 %0, %1;" : "=f"(f) : "r"((unsigned int)b.bits << 16));
  return f;
}

// prism_float_to_bfloat16 rounds to nearest even: with cvt.rn.bf16.f32 on sm_80 and
// newer, with integer arithmetic before.
static __device__ __forceinline__ prism_bfloat16 prism_float_to_bfloat16(float f) {
  prism_bfloat16 b;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b.bits) : "f"(f));
#else
  unsigned int u;
  asm("mov.b32 %0, %1;" : "=r"(u) : "f"(f));
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    b.bits = (unsigned short)((u >> 16) | 0x0040u); // NaN: keep it a (quiet) NaN
  } else {
    b.bits = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
#endif
  return b;
}

// prism_pack2 packs two 16-bit values in one 32-bit register: lo in bits 0-15.
static __device__ __forceinline__ unsigned int prism_pack2(unsigned short lo, unsigned short hi) {
  return (unsigned int)lo | (unsigned int)hi << 16;
}

// prism_pack_half2 rounds lo and hi to binary16 (nearest even) and packs them, lo in bits 0-15.
static __device__ __forceinline__ unsigned int prism_pack_half2(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned int r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
#else
  return prism_pack2(prism_float_to_half(lo).bits, prism_float_to_half(hi).bits);
#endif
}

// prism_pack_bfloat162 rounds lo and hi to bfloat16 (nearest even) and packs them, lo in bits 0-15.
static __device__ __forceinline__ unsigned int prism_pack_bfloat162(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned int r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
#else
  return prism_pack2(prism_float_to_bfloat16(lo).bits, prism_float_to_bfloat16(hi).bits);
#endif
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
// prism_smem_addr returns the shared-memory address of p, a generic pointer into shared memory.
static __device__ __forceinline__ unsigned int prism_smem_addr(const void *p) {
  unsigned int r;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
  return r;
}

// prism_cp_async16 copies 16 bytes from global memory at src to shared memory at the shared
// address dst asynchronously; the bytes past the first src_bytes (0..16) are zero-filled
// (src_bytes 0 reads nothing: src need not be valid).
static __device__ __forceinline__ void prism_cp_async16(unsigned int dst, const void *src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

// prism_cp_async_commit closes the group of the cp.async copies issued since the last one.
static __device__ __forceinline__ void prism_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// prism_cp_async_wait waits until at most N groups of the thread's copies are in flight.
template <int N> static __device__ __forceinline__ void prism_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// prism_ldmatrix_x4 loads four 8x8 matrices of 16-bit elements: lanes 8i..8i+7 give the
// shared addresses of matrix i's rows; r[i] receives its fragment (row lane/4, columns
// 2*(lane%4) and 2*(lane%4)+1).
static __device__ __forceinline__ void prism_ldmatrix_x4(unsigned int *r, unsigned int addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// prism_ldmatrix_x4_trans is prism_ldmatrix_x4 with each matrix transposed: r[i] holds
// rows 2*(lane%4) and 2*(lane%4)+1 of column lane/4.
static __device__ __forceinline__ void prism_ldmatrix_x4_trans(unsigned int *r, unsigned int addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// prism_mma_f16 computes d += a*b with mma.sync m16n8k16, a and b binary16 fragments.
static __device__ __forceinline__ void prism_mma_f16(float *d, const unsigned int *a, const unsigned int *b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// prism_mma_bf16 computes d += a*b with mma.sync m16n8k16, a and b bfloat16 fragments.
static __device__ __forceinline__ void prism_mma_bf16(float *d, const unsigned int *a, const unsigned int *b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

// prism_exp2 returns 2^x by ex2.approx.ftz.f32 (at most 2 ulp off; -inf gives +0).
static __device__ __forceinline__ float prism_exp2(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// PRISM_GRID_CONSTANT marks a by-value kernel parameter whose address the kernel takes
// (a tensor map): __grid_constant__ under NVRTC, which keeps it in parameter space.
#ifdef __CUDACC_RTC__
#define PRISM_GRID_CONSTANT __grid_constant__
#else
#define PRISM_GRID_CONSTANT
#endif

// prism_tensor_map is the 128 opaque bytes of a CUtensorMap (cuTensorMapEncodeTiled).
typedef struct __attribute__((aligned(64))) {
  unsigned long long opaque[16];
} prism_tensor_map;

// prism_mbar_init initializes the mbarrier at shared address bar for count arrivals per phase.
static __device__ __forceinline__ void prism_mbar_init(unsigned int bar, unsigned int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// prism_mbar_expect_tx arrives on bar, first raising the bytes its phase waits for by bytes.
static __device__ __forceinline__ void prism_mbar_expect_tx(unsigned int bar, unsigned int bytes) {
  asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }\n" ::"r"(bar), "r"(bytes) : "memory");
}

// prism_mbar_arrive arrives on bar.
static __device__ __forceinline__ void prism_mbar_arrive(unsigned int bar) {
  asm volatile("{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [%0]; }\n" ::"r"(bar) : "memory");
}

// prism_mbar_wait waits until the phase of bar with parity parity (0 or 1) has completed.
static __device__ __forceinline__ void prism_mbar_wait(unsigned int bar, unsigned int parity) {
  unsigned int done;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }\n"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  } while (!done);
}

// prism_tma_load_3d copies the box of tensor map tm at element coordinates (c0, c1, c2),
// fastest first, to shared address dst with the tensor map's swizzle; elements outside the
// tensor read as zero. The copy completes the box's bytes on the mbarrier bar.
static __device__ __forceinline__ void prism_tma_load_3d(unsigned int dst, const prism_tensor_map *tm, int c0, int c1, int c2,
                                                        unsigned int bar) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
               "l"(tm), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
               : "memory");
}

// prism_wgmma_* wrappers: PRISM_WGMMA_SS(name, R, instr, tail) defines
//   static void name(float *d, unsigned long long da, unsigned long long db, int accumulate)
// issuing `instr` (a wgmma.mma_async m64nNk... string with its types, N = 2R) on R float
// accumulators d of this thread, both operands from shared-memory descriptors, d = A B (+ d
// when accumulate != 0); tail is the instruction's last immediates after "1, 1" (", 0, 1":
// B transposed; "": the 8-bit and tf32 forms, which have none). PRISM_WGMMA_RS(name, R,
// instr, tail) defines name(float *d, const unsigned int *a, unsigned long long db, int
// accumulate), A from the four registers a (the m16n8k16 A layout per warp). R is 32, 64, 88
// (n176, FlashAttention-3's key tile at head dim 128) or 128. The wrapper neither commits
// nor waits: wgmma.fence, commit_group and wait_group are the caller's.
#define PRISM_WG_ACC_32 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}"
#define PRISM_WG_OUT_32(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define PRISM_WG_SS_32 "%32, %33"
#define PRISM_WG_SSP_32 "%34"
#define PRISM_WG_RS_32 "{%32,%33,%34,%35}, %36"
#define PRISM_WG_RSP_32 "%37"
#define PRISM_WG_ACC_64 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}"
#define PRISM_WG_OUT_64(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define PRISM_WG_SS_64 "%64, %65"
#define PRISM_WG_SSP_64 "%66"
#define PRISM_WG_RS_64 "{%64,%65,%66,%67}, %68"
#define PRISM_WG_RSP_64 "%69"
#define PRISM_WG_ACC_88 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87}"
#define PRISM_WG_OUT_88(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
#define PRISM_WG_SS_88 "%88, %89"
#define PRISM_WG_SSP_88 "%90"
#define PRISM_WG_RS_88 "{%88,%89,%90,%91}, %92"
#define PRISM_WG_RSP_88 "%93"
#define PRISM_WG_ACC_128 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}"
#define PRISM_WG_OUT_128(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define PRISM_WG_SS_128 "%128, %129"
#define PRISM_WG_SSP_128 "%130"
#define PRISM_WG_RS_128 "{%128,%129,%130,%131}, %132"
#define PRISM_WG_RSP_128 "%133"
#define PRISM_WGMMA_SS(name, R, instr, tail)                                                                              \
  static __device__ __forceinline__ void name(float *d, unsigned long long da, unsigned long long db, int accumulate) {          \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PRISM_WG_SSP_##R ", 0;\n" instr " " PRISM_WG_ACC_##R ", " PRISM_WG_SS_##R \
                 ", p, 1, 1" tail ";\n}\n"                                                                                      \
                 : PRISM_WG_OUT_##R(d)                                                                                          \
                 : "l"(da), "l"(db), "r"(accumulate));                                                                         \
  }
#define PRISM_WGMMA_RS(name, R, instr, tail)                                                                              \
  static __device__ __forceinline__ void name(float *d, const unsigned int *a, unsigned long long db, int accumulate) {        \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PRISM_WG_RSP_##R ", 0;\n" instr " " PRISM_WG_ACC_##R ", " PRISM_WG_RS_##R \
                 ", p, 1, 1" tail ";\n}\n"                                                                                      \
                 : PRISM_WG_OUT_##R(d)                                                                                          \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));                                      \
  }

// prism_wgmma_desc_swizzle returns the wgmma matrix descriptor of an operand at shared
// address addr with leading and stride byte offsets lead and stride (14 bits each of their
// 16-byte units) in the swizzled layout mode (bits 62-63): 1 the 128-byte swizzle, 2 the
// 64-byte one, 3 the 32-byte one.
static __device__ __forceinline__ unsigned long long prism_wgmma_desc_swizzle(unsigned int addr, unsigned int lead, unsigned int stride,
                                                                              unsigned int mode) {
  return (unsigned long long)((addr & 0x3ffffu) >> 4) | (unsigned long long)((lead >> 4) & 0x3fffu) << 16 |
         (unsigned long long)((stride >> 4) & 0x3fffu) << 32 | (unsigned long long)(mode & 3u) << 62;
}

// prism_wgmma_desc is prism_wgmma_desc_swizzle in the 128-byte swizzled layout (mode 1).
static __device__ __forceinline__ unsigned long long prism_wgmma_desc(unsigned int addr, unsigned int lead, unsigned int stride) {
  return prism_wgmma_desc_swizzle(addr, lead, stride, 1);
}

// prism_tma_load_3d_multicast copies the box as prism_tma_load_3d does, into shared
// address dst of every block of the thread-block cluster whose rank is set in mask, and
// completes the box's bytes on the mbarrier at bar of each of them (the same offsets in
// every block).
static __device__ __forceinline__ void prism_tma_load_3d_multicast(unsigned int dst, const prism_tensor_map *tm, int c0, int c1,
                                                                  int c2, unsigned int bar, unsigned short mask) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
               "l"(tm), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
               : "memory");
}

// prism_cluster_rank returns the block's rank in its thread-block cluster.
static __device__ __forceinline__ unsigned int prism_cluster_rank() {
  unsigned int r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// prism_cluster_sync makes every thread of every block of the cluster arrive and wait
// (release, then acquire): what a block wrote to shared memory before it, mbarrier
// initializations included, is visible to the cluster's other blocks after it. Every thread
// of the cluster calls it, with its warp converged.
static __device__ __forceinline__ void prism_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// prism_mbar_arrive_cluster arrives on the mbarrier at shared address bar of the
// cluster's block of rank rank, this block's own included, with the arrival's default
// semantics (release at CTA scope, as CUTLASS's ClusterBarrier::arrive), not the
// cluster-scope release, which waits for this thread's earlier writes to reach the cluster.
static __device__ __forceinline__ void prism_mbar_arrive_cluster(unsigned int bar, unsigned int rank) {
  asm volatile("{ .reg .b32 ra; mapa.shared::cluster.u32 ra, %0, %1; mbarrier.arrive.shared::cluster.b64 _, [ra]; }\n" ::"r"(bar),
               "r"(rank)
               : "memory");
}

// prism_inf returns +infinity.
static __device__ __forceinline__ float prism_inf() {
  float r;
  asm("mov.b32 %0, 0x7f800000;" : "=f"(r));
  return r;
}

// prism_shfl_xor returns x as lane (this lane ^ mask) holds it; every lane of the warp must
// take part (shfl.sync.bfly with the full mask).
static __device__ __forceinline__ float prism_shfl_xor(float x, int mask) {
  float r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(x), "r"(mask));
  return r;
}

#endif // PRISM_CUDA_H
