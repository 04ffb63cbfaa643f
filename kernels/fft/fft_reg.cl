// fft_reg.cl: complex FFT passes with radix-16 butterflies in registers (the regradix variant).
//
// Purpose: the Stockham passes of fft.cl's fft_block (same arguments, layout, twiddle tables
// and results), shaped for GPUs as VkFFT's and cuFFT's kernels are: every work-item holds
// 16 complex points in registers, and an L-point FFT of a pass is log16(L) register stages
// of radix 16 (each a 4 x 4 split: 4 radix-4 butterflies, 9 constant twiddles, 4 radix-4
// butterflies, fully unrolled), then one stage of radix 2, 4 or 8 when log2(L) is not a
// multiple of 4 (the item then holds 8, 4 or 2 such butterflies). Only the data between two
// stages goes through local memory: the first stage loads from global memory straight into
// registers (with the pass's twiddles), the last stores from registers, so a 256-point pass
// is 2 stages with one barrier, 4096 points 3 stages with 3 barriers (fft_block: one
// radix-4 stage and 2 barriers per factor of 4 of the length, 13 barriers at 4096). A work-group holds NPG = WG * 16 points
// (4096 by default): C = NPG / L columns of a pass; the host plans passes of at most NPG
// points, and of at most NPG / MINC points when the transform takes several, so that a
// work-group loads and stores runs of at least MINC consecutive columns (fft.go, fftPlan).
//
// Stages: stage s of a pass of L = 2^lgL points has radix R = 16 (s < lgL / 4) or 2^(lgL % 4)
// (the last; R = 1 for L = 1: a copy) and span ns = 16^s; butterfly jj < L/R of a column
// reads elements jj + t*L/R (t < R), multiplies them by w_{R ns}^{t (jj % ns)} (the stage
// table stw, below), runs an R-point DFT and writes element (jj / ns) * ns * R + jj % ns + k*ns of
// output k. Butterfly b of a stage (b < C*L/R) is held by item b % WG, its point t in
// register v[(b / WG) * R + t] (16/R butterflies an item). Butterflies map to (column c,
// jj) with runs of W consecutive columns first: W = min(2^lgPin, C) on the first stage (the
// global loads), min(2^lgPout, C) on the last (the stores), 1 between (local memory), so
// global accesses are coalesced as fft_block's.
//
// Local memory: element e of column c at c * Lp + e + e/16, Lp = L + L/16 + 1 (odd): the
// stride-16 writes of a first stage and the stride-Lp accesses of consecutive columns are
// free of bank conflicts; NPG * (1 + 1/16 + 1/32) complex elements (35 KiB of float2 at
// WG = 256).
//
// Inverse: conj(forward(conj x)) per pass (conjugation is exact), so the stages only
// compute forward DFTs.
//
// Arguments: fft_reg(dst, src, coarse, fine, stw, stwBase, cols, lgL, lgC, lgPin, lgPout,
// lgI, lgNs, inv): those of fft_block (fft.cl), with C * L <= NPG, and the stage twiddles:
// stw[stwBase + (s-1)*256 + t*ns + r] = w_{R ns}^{t r} for stage s >= 1 of a pass of L
// points (t < R, r < ns; stage 1 is of radix 16 wherever a stage 2 follows, hence 256),
// laid out in the order a warp reads them (consecutive r on consecutive items: one
// coalesced load, where indexing the 4096-entry coarse table by t*r << sh touched a cache
// line per item). The host builds them for every L up to 4096 (fft.go, stageTwiddles),
// each entry rounded from float64, as the coarse table's.
//
// Tunables (-D, part of the cache key):
//   ELEM     element type (float; double with PRISM_FP64)     default float
//   WG       work-group size, a power of two                   default 256 (NPG = 16 * WG)
//   PASS_LGL, PASS_LGC, PASS_LGPIN, PASS_LGPOUT, PASS_LGI, PASS_LGNS, PASS_INV
//            one pass shape and direction (all seven, or none): the build then ignores
//            those arguments and its index arithmetic folds to constants, with the stages
//            unrolled (GPUs build one kernel per pass shape; CPUs, one kernel for all)
//   PASS_R2C with those, for a pass that is a whole transform: a real-input transform of
//            2L points in this pass, post-processing included (below)
// The host's MINC (fft.go) sets the passes, not the kernel.
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
// Launch: 1D, local size WG, global WG * ceil(cols / C).
// Boundaries: columns at or past `cols` load zeros and store nothing; items past the C*L/R
// butterflies of a stage (C*L < NPG: short transforms) hold nothing; every item reaches
// every barrier.

#ifndef WG
#define WG 256
#endif
#define NPG (WG * 16)
#define LDS_N (NPG + NPG / 16 + NPG / 32)
#if NPG > 4096
#error "fft_reg.cl: WG * 16 must not exceed 4096 (in-block twiddles index the 4096-entry table)"
#endif

// -i*z, exact.
#define RMJ(z) MAKE2((z).y, -(z).x)

// Forward DFT4 in place: (a, b, c, d) <- DFT of (a, b, c, d).
#define RDFT4(a, b, c, d)                                                        \
    {                                                                            \
        const ELEM2 a0_ = (a) + (c), a1_ = (a) - (c), a2_ = (b) + (d), a3_ = RMJ((b) - (d)); \
        (a) = a0_ + a2_;                                                         \
        (b) = a1_ + a3_;                                                         \
        (c) = a0_ - a2_;                                                         \
        (d) = a1_ - a3_;                                                         \
    }
#define RDFT2(a, b)                                                              \
    {                                                                            \
        const ELEM2 d_ = (a) - (b);                                              \
        (a) = (a) + (b);                                                         \
        (b) = d_;                                                                \
    }

// cos(pi/8), sin(pi/8), sqrt(1/2) (correctly rounded literals: within u, as table entries).
#define RC8 ((ELEM)0.92387953251128675613)
#define RS8 ((ELEM)0.38268343236508977173)
#define RH2 ((ELEM)0.70710678118654752440)

// Forward DFT16 of v[0..15] as 4 x 4 (t = t1 + 4 t2, k = k2 + 4 k1): output k lands in
// v[4 (k & 3) + (k >> 2)].
#define RDFT16(v)                                                                \
    {                                                                            \
        RDFT4(v[0], v[4], v[8], v[12]);                                          \
        RDFT4(v[1], v[5], v[9], v[13]);                                          \
        RDFT4(v[2], v[6], v[10], v[14]);                                         \
        RDFT4(v[3], v[7], v[11], v[15]);                                         \
        v[5] = cmul(v[5], MAKE2(RC8, -RS8));   /* w16^1 */                      \
        v[9] = cmul(v[9], MAKE2(RH2, -RH2));   /* w16^2 */                      \
        v[13] = cmul(v[13], MAKE2(RS8, -RC8)); /* w16^3 */                      \
        v[6] = cmul(v[6], MAKE2(RH2, -RH2));   /* w16^2 */                      \
        v[10] = RMJ(v[10]);                     /* w16^4 */                      \
        v[14] = cmul(v[14], MAKE2(-RH2, -RH2)); /* w16^6 */                     \
        v[7] = cmul(v[7], MAKE2(RS8, -RC8));   /* w16^3 */                      \
        v[11] = cmul(v[11], MAKE2(-RH2, -RH2)); /* w16^6 */                     \
        v[15] = cmul(v[15], MAKE2(-RC8, RS8)); /* w16^9 */                      \
        RDFT4(v[0], v[1], v[2], v[3]);                                           \
        RDFT4(v[4], v[5], v[6], v[7]);                                           \
        RDFT4(v[8], v[9], v[10], v[11]);                                         \
        RDFT4(v[12], v[13], v[14], v[15]);                                       \
    }

// Forward DFT8 of v[o..o+7] as 2 x 4 (t = t1 + 2 t2, k = k2 + 4 k1): output k lands in
// v[o + 2 (k & 3) + (k >> 2)].
#define RDFT8(v, o)                                                              \
    {                                                                            \
        RDFT4(v[o], v[o + 2], v[o + 4], v[o + 6]);                               \
        RDFT4(v[o + 1], v[o + 3], v[o + 5], v[o + 7]);                           \
        v[o + 3] = cmul(v[o + 3], MAKE2(RH2, -RH2));  /* w8^1 */                \
        v[o + 5] = RMJ(v[o + 5]);                      /* w8^2 */                \
        v[o + 7] = cmul(v[o + 7], MAKE2(-RH2, -RH2)); /* w8^3 */                \
        RDFT2(v[o], v[o + 1]);                                                   \
        RDFT2(v[o + 2], v[o + 3]);                                               \
        RDFT2(v[o + 4], v[o + 5]);                                               \
        RDFT2(v[o + 6], v[o + 7]);                                               \
    }

// Address of element t of column col for stride P = 2^lgP (fft.cl's ADDR).
#define RADDR(col, t, lgP) ((((col) >> (lgP)) << ((lgP) + lgL)) + ((col) & ((1 << (lgP)) - 1)) + ((t) << (lgP)))

// Local index of element e of column c.
#define RLDS(e, c) ((c) * Lp + (e) + ((e) >> 4))

// Inputs of a stage of radix 2^LGR (a literal 4 for the radix-16 stages, so that the index
// arithmetic of the item's one butterfly is shared by its 16 points), into v. COL_OK(col)
// is the bounds test of a column: (col < cols), or 1 in a work-group whose columns all
// exist (the kernel takes that path when the group is full, so that most groups load and
// store without a test per point; only the builds for one pass shape have that path, the
// shape-generic build, for CPUs, compiles the tested one alone). Butterfly b exists when b < nb; the test folds away
// where the stage fills the work-group (NPG <= C*L, (q >> LGR) * WG + tid < nb for every
// tid < WG). Twiddles are multiplied without a test for the exponent 0: the tables hold
// w(0) = 1 exactly, and a product with (1, 0) is exact, so no branch diverges on it.
#define RINPUTS(LGR, COL_OK)                                                     \
    _Pragma("unroll") for (int q = 0; q < 16; q++) {                             \
        const int b = tid + (q >> (LGR)) * WG;                                   \
        const int t = q & ((1 << (LGR)) - 1);                                    \
        ELEM2 x = MAKE2((ELEM)0, (ELEM)0);                                       \
        if (((q >> (LGR)) + 1) * WG <= nb || b < nb) {                           \
            const int c = ((b >> (lgW + lgJ)) << lgW) | (b & wm);                \
            const int jj = (b >> lgW) & jm;                                      \
            const int e = jj + (t << lgJ);                                       \
            if (s == 0) {                                                        \
                const int col = col0 + c;                                        \
                if (COL_OK(col)) {                                               \
                    x = src[RADDR(col, e, lgPin)];                               \
                    x.y *= sg;                                                   \
                    if (Ns > 1) {                                                \
                        const int m = (e * ((col >> lgI) & (Ns - 1))) << tsh;    \
                        x = cmul(x, cmul(coarse[m >> FFT_LG_FINE], fine[m & FFT_FINE_MASK])); \
                    }                                                            \
                }                                                                \
            } else {                                                             \
                x = lds[RLDS(e, c)];                                             \
                if (t != 0) x = cmul(x, stw[sbase + (t << lgns) + (jj & rm)]);   \
            }                                                                    \
        }                                                                        \
        v[q] = x;                                                                \
    }

// Outputs of a stage of radix 2^LGR from v: register q of its butterfly holds output k
// (the DFTs' orders above), element o of column c; the last stage stores them to global
// memory, the others to local memory (two loops, so that each store has one address space).
#define ROUTPUT_AT(LGR)                                                          \
    const int b = tid + (q >> (LGR)) * WG;                                       \
    const int p = q & ((1 << (LGR)) - 1);                                        \
    const int k = (LGR) == 4 ? 4 * (p & 3) + (p >> 2) : ((LGR) == 3 ? (p >> 1) + 4 * (p & 1) : p); \
    const int c = ((b >> (lgW + lgJ)) << lgW) | (b & wm);                        \
    const int jj = (b >> lgW) & jm;                                              \
    const int o = ((jj >> lgns) << (lgns + (LGR))) + (jj & rm) + (k << lgns);   \
    const int has = ((q >> (LGR)) + 1) * WG <= nb || b < nb;
#define ROUTPUTS(LGR, COL_OK)                                                    \
    if (s == nst - 1 && !R2C) {                                                  \
        _Pragma("unroll") for (int q = 0; q < 16; q++) {                         \
            ROUTPUT_AT(LGR)                                                      \
            const int col = col0 + c;                                            \
            if (has && COL_OK(col)) dst[RADDR(col, o, lgPout)] = MAKE2(v[q].x, sg * v[q].y); \
        }                                                                        \
    } else {                                                                     \
        _Pragma("unroll") for (int q = 0; q < 16; q++) {                         \
            ROUTPUT_AT(LGR)                                                      \
            if (has) lds[RLDS(o, c)] = v[q];                                     \
        }                                                                        \
    }
// PASS_R2C (with the PASS_* shape of a pass that is the whole transform, as the host
// builds it): the real-input transform in this one pass. The last stage leaves Z in local
// memory instead of storing it, and the work-group writes the h+1 bins of each of its
// columns (r2c_bin, fft_common.clh) to dst, batch * (h+1) complex values.
#ifdef PASS_R2C
#define R2C 1
#else
#define R2C 0
#endif
#define RCOL_ALL(col) 1
#define RCOL_TEST(col) ((col) < cols)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void fft_reg(__global ELEM2 *dst, __global const ELEM2 *src, __global const ELEM2 *coarse,
             __global const ELEM2 *fine, __global const ELEM2 *stw, int stwBase, int cols, int lgL_, int lgC_, int lgPin_, int lgPout_,
             int lgI_, int lgNs_, int inv_) {
#ifdef PASS_LGL
    // A build for one pass shape: the shape arguments are ignored, every index below folds
    // to constants and the stage loop unrolls.
    const int lgL = PASS_LGL, lgC = PASS_LGC, lgPin = PASS_LGPIN, lgPout = PASS_LGPOUT;
    const int lgI = PASS_LGI, lgNs = PASS_LGNS, inv = PASS_INV;
#else
    const int lgL = lgL_, lgC = lgC_, lgPin = lgPin_, lgPout = lgPout_, lgI = lgI_, lgNs = lgNs_;
    const int inv = inv_;
#endif
    __local ELEM2 lds[LDS_N];
    const int tid = (int)get_local_id(0);
    const int col0 = (int)get_group_id(0) << lgC;
    const int L = 1 << lgL;
    const int Lp = L + (L >> 4) + 1;
    const int n16 = lgL >> 2;                          // radix-16 stages
    const int nst = n16 + (((lgL & 3) != 0 || lgL == 0) ? 1 : 0);
    const int Ns = 1 << lgNs;
    const int tsh = FFT_LG_MAX - lgNs - lgL;           // pass twiddle w_{Ns*L}^m = w(m << tsh)
    const ELEM sg = inv ? (ELEM)-1 : (ELEM)1;          // conjugate in and out for the inverse
#ifdef PASS_LGL
    const int full = col0 + (1 << lgC) <= cols;        // every column of the group exists
#endif
    ELEM2 v[16];

#ifdef PASS_LGL
    _Pragma("unroll")
#endif
    for (int s = 0; s < nst; s++) {
        const int lgR = s < n16 ? 4 : (lgL & 3);
        const int lgJ = lgL - lgR;                     // log2 of butterflies per column
        const int lgns = 4 * s;
        const int nb = 1 << (lgC + lgJ);               // butterflies of the group
        const int lgW = s == 0 ? min(lgPin, lgC) : (s == nst - 1 ? min(lgPout, lgC) : 0);
        const int wm = (1 << lgW) - 1, jm = (1 << lgJ) - 1, rm = (1 << lgns) - 1;
        const int sbase = stwBase + ((s - 1) << 8);    // this stage's [t][r] twiddles

#ifdef PASS_LGL
        if (full) {
            if (lgR == 4) {
                RINPUTS(4, RCOL_ALL)
            } else {
                RINPUTS(lgR, RCOL_ALL)
            }
        } else
#endif
        {
            if (lgR == 4) {
                RINPUTS(4, RCOL_TEST)
            } else {
                RINPUTS(lgR, RCOL_TEST)
            }
        }
        if (s > 0 && (s < nst - 1 || R2C)) barrier(CLK_LOCAL_MEM_FENCE); // reads done before writes

        // Butterflies, on constant register indices.
        if (lgR == 4) {
            RDFT16(v);
        } else if (lgR == 3) {
            RDFT8(v, 0);
            RDFT8(v, 8);
        } else if (lgR == 2) {
            RDFT4(v[0], v[1], v[2], v[3]);
            RDFT4(v[4], v[5], v[6], v[7]);
            RDFT4(v[8], v[9], v[10], v[11]);
            RDFT4(v[12], v[13], v[14], v[15]);
        } else if (lgR == 1) {
            RDFT2(v[0], v[1]);
            RDFT2(v[2], v[3]);
            RDFT2(v[4], v[5]);
            RDFT2(v[6], v[7]);
            RDFT2(v[8], v[9]);
            RDFT2(v[10], v[11]);
            RDFT2(v[12], v[13]);
            RDFT2(v[14], v[15]);
        }

#ifdef PASS_LGL
        if (full) {
            if (lgR == 4) {
                ROUTPUTS(4, RCOL_ALL)
            } else {
                ROUTPUTS(lgR, RCOL_ALL)
            }
        } else
#endif
        {
            if (lgR == 4) {
                ROUTPUTS(4, RCOL_TEST)
            } else {
                ROUTPUTS(lgR, RCOL_TEST)
            }
        }
        // After the first stage the barrier fences global memory too: it orders that
        // stage's loads from src before the last stage's stores to dst, which a one-pass
        // transform in place (dst = src) makes to elements other items of the work-group
        // loaded (without it the two are a data race under OpenCL's memory model; no cost:
        // the loaded values are used before the barrier).
        if (s < nst - 1 || R2C) {
            if (s == 0) {
                barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
            } else {
                barrier(CLK_LOCAL_MEM_FENCE);
            }
        }
    }
#if R2C
    {
        const int per = L + 1;                         // bins of a transform of 2L reals
        for (int g = tid; g < (per << lgC); g += WG) {
            const int c = g / per, k = g - c * per;
            const int col = col0 + c;
            if (col < cols) {
                r2c_bin(dst, col * per + k, lds[RLDS(k & (L - 1), c)], lds[RLDS((L - k) & (L - 1), c)],
                        coarse, fine, k << (FFT_LG_MAX - lgL - 1));
            }
        }
    }
#endif
}
