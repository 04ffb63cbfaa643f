// conv_regtile.cl: 2D convolution, NCHW, stride 1, as a register-tiled direct convolution
// for GPUs (the "regtile" variant of conv/3x3).
//
// Purpose: conv.cl's computation (cross-correlation with zero padding, optional bias)
//   out[n][k][p][q] = bias[k] + sum over c, r, s of
//     filt[k][c][r][s] * in[n][c][p - pad + r][q - pad + s]
// for stride 1 and a compile-time filter side CR, shaped as a SIMT SGEMM is (the
// implicit-GEMM view: output pixels x output channels, reduction C*CR*CR): each work-item
// holds TK output channels x TR output rows x TP output columns in registers (8 x 2 x 4 =
// 64 by default), and each tap of the fully unrolled CR x CR loop is an outer product of
// TK filter values by TR x TP input values. The inputs of neighbouring taps overlap: an
// item reads (TR+CR-1) rows of TP+CR-1 input values per channel once and reuses them for
// every tap (TR*TP*CR*CR*TK fma per 2*(TR+CR-1) + CR*CR*TK/4 16-byte local loads: 576 fma
// per 26 loads by default).
//
// Arguments (all counts >= 1; NCHW, KCRR and NKPQ layouts, row-major):
//   conv2d_regtile(out, in, filt, bias, N, C, H, W, K, pad, P, Q, has_bias)
//     in    N*C*H*W elements;  filt  K*C*CR*CR;  out  N*K*P*Q;  bias  K (read only when
//           has_bias != 0; any buffer otherwise)
//     stride 1: P = H + 2*pad - CR + 1, Q = W + 2*pad - CR + 1 (>= 1), pad >= 0
//     every element count <= 2^31-1 (int indices)
//
// Tunables (-D, part of the cache key; kernels/conv/regtile.go builds it with
// RegtileTunables, shrunk to the device's limits):
//   ELEM  element type                                                  default float
//   CR    filter side                                                   default 3
//   BK    output channels per work-group tile                           default 64
//   TK    output channels per work-item (a multiple of 4)               default 8
//   TH    output rows per work-group tile                               default 8
//   TW    output columns per work-group tile                            default 32
//   TR    output rows per work-item                                     default 2
//   TP    output columns per work-item (a multiple of 4)                default 4
//   CC    input channels per local-memory stage                        default 4
//   Constraints (checked with #error): TK and TP multiples of 4, BK % TK == TH % TR ==
//   TW % TP == 0.
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
// Launch: 2D, local size (LX, LY) = ((TW/TP)*(TH/TR), BK/TK) exactly (32 x 8 by default:
//   a "warp" of 32 consecutive local ids shares its output channels, so that its filter
//   reads are broadcasts); global (tiles*LX, LY) with tiles = N * ceil(P/TH) * ceil(Q/TW)
//   * ceil(K/BK), numbered along dimension 0 only (CUDA limits grid dimensions 1 and 2 to
//   65535 blocks): column tiles fastest, then row tiles, images, channel tiles. Static
//   local memory of 2*(CC*(TH+CR-1)*IW + CC*CR*CR*(BK+4)) elements, IW the staged row
//   width (TW+CR-1 rounded up to 4 for the default TP): 30.4 KiB for float by default.
// Boundaries: zero padding (input taps outside the image are staged as 0); channels past
//   C in the last stage are staged as zero inputs and zero filters; edge tiles (P, Q or K
//   not multiples of the tile) compute on zeros and store nothing outside the output.
//   Nothing outside the buffers is read or written. No work-item returns early: all reach
//   every barrier.
// Design: per stage of CC input channels the work-group stages the input tile with its
//   halo (CC x (TH+CR-1) x IW, rows coalesced) and the filter slice (CC*CR*CR rows of BK
//   output channels, transposed so that an item's TK channels are 16-byte vectors; rows
//   padded by 4 elements) in local memory. The stages are double-buffered: an iteration
//   stores the stage its registers hold into buffer b, passes one barrier, loads the next
//   stage's global values into registers (rt_load; their latency hides behind the
//   arithmetic) and computes from buffer b. Each item reads its input rows as 16-byte
//   vectors (a quarter-warp reads one contiguous row: conflict-free) and each tap's TK
//   filter values as broadcast 16-byte vectors. Every loop over an item's private arrays
//   is unrolled, so that they stay in registers (no local depot in the PTX).
// Accuracy: each output is the bias (or 0) then one fma per term, channel by channel, taps
//   in row-major order: the gamma_m bound of ConvTolerance (ref.go), as conv.cl.
// Note: a quotient and remainder of the same operands (x / n and x % n) become LLVM's
//   freeze instruction, which Oclgrind's uninitialized-value check rejects: remainders are
//   written as x - (x / n) * n.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef CR
#define CR 3
#endif
#ifndef BK
#define BK 64
#endif
#ifndef TK
#define TK 8
#endif
#ifndef TH
#define TH 8
#endif
#ifndef TW
#define TW 32
#endif
#ifndef TR
#define TR 2
#endif
#ifndef TP
#define TP 4
#endif
#ifndef CC
#define CC 4
#endif

#if CR < 1 || BK < 1 || TK < 1 || TH < 1 || TW < 1 || TR < 1 || TP < 1 || CC < 1
#error "conv_regtile.cl: CR, BK, TK, TH, TW, TR, TP and CC must be positive"
#endif
#if TK % 4 != 0 || TP % 4 != 0
#error "conv_regtile.cl: TK and TP must be multiples of 4"
#endif
#if BK % TK != 0 || TH % TR != 0 || TW % TP != 0
#error "conv_regtile.cl: BK, TH and TW must be multiples of TK, TR and TP"
#endif

#define RT_CAT_(a, b) a##b
#define RT_CAT(a, b) RT_CAT_(a, b)
#define ELEM4 RT_CAT(ELEM, 4)

#define RT_RR (CR * CR)
#define RT_LXT (TW / TP)              // items along a tile row
#define RT_LX (RT_LXT * (TH / TR))    // work-group dimension 0
#define RT_LY (BK / TK)               // work-group dimension 1
#define RT_NT (RT_LX * RT_LY)         // items per group
#define RT_IH (TH + CR - 1)           // staged input rows per channel
#define RT_NV ((TP + CR - 1 + 3) / 4) // 16-byte vectors of an item's input row
#define RT_IW4 (TW / 4 - TP / 4 + RT_NV)
#define RT_IW (RT_IW4 * 4)            // staged input row width (from column ow0 - pad)
#define RT_IROWS (CC * RT_IH)         // staged input rows per stage
#define RT_FR (CC * RT_RR)            // filter rows per stage (c, r, s)
#define RT_FW4 (BK / 4 + 1)           // 16-byte vectors per filter row, one of padding
#define RT_FW (RT_FW4 * 4)
// Staging: the items as a grid of (columns, rows) lanes for the input tile and of
// (filter row, output channel) lanes for the filters.
#define RT_ICT (RT_IW < RT_NT ? RT_IW : RT_NT)
#define RT_IRT (RT_NT / RT_ICT)
#define RT_ICS ((RT_IW + RT_ICT - 1) / RT_ICT)
#define RT_IRS ((RT_IROWS + RT_IRT - 1) / RT_IRT)
#define RT_FRT (RT_FR < RT_NT ? RT_FR : RT_NT)
#define RT_FKT (RT_NT / RT_FRT)
#define RT_FRS ((RT_FR + RT_FRT - 1) / RT_FRT)
#define RT_FKS ((BK + RT_FKT - 1) / RT_FKT)

#ifdef PRISM_CUDA
#define RT_LOCAL_ELEM ELEM
#else
#define RT_LOCAL_ELEM __local ELEM
#endif

// rt_load loads one stage into registers: ireg[s*ICS + u] the input at offset ioff[s][u]
// of src (the stage's first channel; 0 outside the image, ioff -1, or past the last
// channel, offset >= lim), freg[s*FKS + u] the filter value of row frl + s*FRT (0 at or
// past frows, the rows of existing channels) and channel k0 + fkl + u*FKT (0 at or past K,
// kleft = K - k0), read at filt[fbase + s*FRT + u*FKT*CRR].
inline void rt_load(ELEM *ireg, ELEM *freg, const int *ioff, __global const ELEM *src, __global const ELEM *filt,
                    int lim, int frows, int fbase, int frl, int fkl, int kleft, int CRR) {
#pragma unroll
    for (int s = 0; s < RT_IRS * RT_ICS; s++) {
        int o = ioff[s];
        ireg[s] = (o >= 0 && o < lim) ? src[o] : (ELEM)0;
    }
#pragma unroll
    for (int s = 0; s < RT_FRS; s++) {
        int fr = frl + s * RT_FRT;
#pragma unroll
        for (int u = 0; u < RT_FKS; u++) {
            int kk = fkl + u * RT_FKT;
            int ok = fkl < RT_FKT && fr < RT_FR && fr < frows && kk < BK && kk < kleft;
            freg[s * RT_FKS + u] = ok ? filt[fbase + s * RT_FRT + u * RT_FKT * CRR] : (ELEM)0;
        }
    }
}

__kernel __attribute__((reqd_work_group_size(RT_LX, RT_LY, 1)))
void conv2d_regtile(__global ELEM *out, __global const ELEM *in, __global const ELEM *filt, __global const ELEM *bias,
                    int N, int C, int H, int W, int K, int pad, int P, int Q, int has_bias) {
    __local ELEM4 Is[2][RT_IROWS * RT_IW4]; // Is[b][(cl*IH + row)*IW4 + v]: input row of channel c0+cl
    __local ELEM4 Fs[2][RT_FR * RT_FW4];    // Fs[b][(cl*RR + r*CR + s)*FW4 + k/4]: filt[k0+k][c0+cl][r][s]

    const int lx = (int)get_local_id(0);
    const int ly = (int)get_local_id(1);
    const int tid = ly * RT_LX + lx;
    const int tilesW = (Q + TW - 1) / TW;
    const int tilesH = (P + TH - 1) / TH;
    int g = (int)get_group_id(0);
    int t1 = g / tilesW;
    const int ow0 = (g - t1 * tilesW) * TW;
    int t2 = t1 / tilesH;
    const int oh0 = (t1 - t2 * tilesH) * TH;
    const int gk = t2 / N;
    const int n = t2 - gk * N;
    const int k0 = gk * BK;
    const int HW = H * W;
    const int CRR = C * RT_RR;
    __global const ELEM *inN = in + n * C * HW;

    // Input staging: this item's column lane and first row lane; each slot's offset in the
    // image of channel c0 (cl*HW + h*W + w), or -1 outside the image or the tile. Within
    // the image, off < (C - c0)*HW exactly when channel c0 + cl exists.
    const int icl = tid - (tid / RT_ICT) * RT_ICT;
    const int irl = tid / RT_ICT;
    int ioff[RT_IRS * RT_ICS];
#pragma unroll
    for (int s = 0; s < RT_IRS; s++) {
        int rr = irl + s * RT_IRT;
        int cl = rr / RT_IH;
        int h = oh0 - pad + (rr - cl * RT_IH);
#pragma unroll
        for (int u = 0; u < RT_ICS; u++) {
            int col = icl + u * RT_ICT;
            int w = ow0 - pad + col;
            int ok = irl < RT_IRT && rr < RT_IROWS && col < RT_IW && h >= 0 && h < H && w >= 0 && w < W;
            ioff[s * RT_ICS + u] = ok ? cl * HW + h * W + w : -1;
        }
    }
    // Filter staging: this item's filter-row lane and output-channel lane.
    const int frl = tid - (tid / RT_FRT) * RT_FRT;
    const int fkl = tid / RT_FRT;

    // The item's outputs: channels k0 + ky*TK + m, rows oh0 + ty*TR + i, columns
    // ow0 + tx*TP + j.
    const int ty = lx / RT_LXT;
    const int tx = lx - ty * RT_LXT;
    const int ky = ly;
    ELEM acc[TK][TR][TP];
#pragma unroll
    for (int m = 0; m < TK; m++) {
        int k = k0 + ky * TK + m;
        ELEM b0 = 0;
        if (has_bias && k < K) b0 = bias[k];
#pragma unroll
        for (int i = 0; i < TR; i++)
#pragma unroll
            for (int j = 0; j < TP; j++) acc[m][i][j] = b0;
    }

    // Staging, double-buffered: the global values of a stage are loaded into registers
    // before the previous stage is computed, and stored into buffer b at the start of
    // their iteration, then one barrier. Buffer b is written again two iterations later,
    // after every item has passed the barrier that follows its last reads of it.
    ELEM ireg[RT_IRS * RT_ICS];
    ELEM freg[RT_FRS * RT_FKS];
    rt_load(ireg, freg, ioff, inN, filt, C * HW, C * RT_RR, (k0 + fkl) * CRR + frl, frl, fkl, K - k0, CRR);
    int b = 0;
    for (int c0 = 0; c0 < C; c0 += CC) {
        RT_LOCAL_ELEM *is = (RT_LOCAL_ELEM *)Is[b];
        RT_LOCAL_ELEM *fs = (RT_LOCAL_ELEM *)Fs[b];
#pragma unroll
        for (int s = 0; s < RT_IRS; s++)
#pragma unroll
            for (int u = 0; u < RT_ICS; u++) {
                int rr = irl + s * RT_IRT, col = icl + u * RT_ICT;
                if (irl < RT_IRT && rr < RT_IROWS && col < RT_IW) is[rr * RT_IW + col] = ireg[s * RT_ICS + u];
            }
#pragma unroll
        for (int s = 0; s < RT_FRS; s++)
#pragma unroll
            for (int u = 0; u < RT_FKS; u++) {
                int fr = frl + s * RT_FRT, kk = fkl + u * RT_FKT;
                if (fkl < RT_FKT && fr < RT_FR && kk < BK) fs[fr * RT_FW + kk] = freg[s * RT_FKS + u];
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        const int cn = c0 + CC;
        if (cn < C)
            rt_load(ireg, freg, ioff, inN + cn * HW, filt, (C - cn) * HW, (C - cn) * RT_RR, (k0 + fkl) * CRR + cn * RT_RR + frl,
                    frl, fkl, K - k0, CRR);
        for (int cl = 0; cl < CC; cl++) {
            ELEM x[TR + CR - 1][RT_NV * 4];
#pragma unroll
            for (int i = 0; i < TR + CR - 1; i++) {
#pragma unroll
                for (int v = 0; v < RT_NV; v++) {
                    ELEM4 t = Is[b][(cl * RT_IH + ty * TR + i) * RT_IW4 + tx * (TP / 4) + v];
                    x[i][4 * v] = t.x;
                    x[i][4 * v + 1] = t.y;
                    x[i][4 * v + 2] = t.z;
                    x[i][4 * v + 3] = t.w;
                }
            }
#pragma unroll
            for (int r = 0; r < CR; r++) {
#pragma unroll
                for (int s = 0; s < CR; s++) {
                    ELEM f[TK];
#pragma unroll
                    for (int v = 0; v < TK / 4; v++) {
                        ELEM4 t = Fs[b][(cl * RT_RR + r * CR + s) * RT_FW4 + ky * (TK / 4) + v];
                        f[4 * v] = t.x;
                        f[4 * v + 1] = t.y;
                        f[4 * v + 2] = t.z;
                        f[4 * v + 3] = t.w;
                    }
#pragma unroll
                    for (int m = 0; m < TK; m++)
#pragma unroll
                        for (int i = 0; i < TR; i++)
#pragma unroll
                            for (int j = 0; j < TP; j++) acc[m][i][j] = fma(f[m], x[i + r][j + s], acc[m][i][j]);
                }
            }
        }
        b ^= 1;
    }

#pragma unroll
    for (int m = 0; m < TK; m++) {
        int k = k0 + ky * TK + m;
#pragma unroll
        for (int i = 0; i < TR; i++) {
            int p = oh0 + ty * TR + i;
#pragma unroll
            for (int j = 0; j < TP; j++) {
                int q = ow0 + tx * TP + j;
                if (k < K && p < P && q < Q) out[((n * K + k) * P + p) * Q + q] = acc[m][i][j];
            }
        }
    }
}
