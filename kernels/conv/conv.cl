// conv.cl: 2D convolution, NCHW, as an implicit GEMM through local-memory tiles.
//
// Purpose: the convolution layer of CNNs (cross-correlation, as deep-learning frameworks
// define it): out[n][k][p][q] = bias[k] + sum over c, r, s of
//   filt[k][c][r][s] * in[n][c][p*stride - pad + r][q*stride - pad + s],
// input elements outside the H x W image being zero (zero padding). It is computed as the
// matrix product out[k][col] = sum_j A[k][j] * B[j][col] with A = filt viewed as a
// K x (C*R*R) row-major matrix, col = (n, p, q) running over the N*P*Q output pixels and
// B the im2col matrix of the input, which is never stored: each work-group gathers the
// CBK x CBN slice of B it needs straight from the input into local memory.
//
// Arguments (all counts >= 1; NCHW, KCRR and NKPQ layouts, row-major):
//   conv2d(out, in, filt, bias, N, C, H, W, K, R, stride, pad, P, Q, has_bias, jbeg, jend, accum)
//     in    N*C*H*W elements;  filt  K*C*R*R;  out  N*K*P*Q;  bias  K (read only when
//           has_bias != 0 and accum == 0; any buffer otherwise)
//     the sum runs over the reduction indices j = (c, r, s) in [jbeg, jend) (0 and C*R*R
//     for all), starting from bias (accum == 0) or from out as it is (accum != 0): the
//     host splits a long reduction into launches of consecutive ranges where the device
//     ends a work-item's loops early (Mesa's llvmpipe); the sums are the same, each
//     partial stored and read back in ELEM
//     P = (H + 2*pad - R)/stride + 1, Q = (W + 2*pad - R)/stride + 1 (>= 1), pad >= 0
//     every element count <= 2^31-1 (int indices)
//
// Tunables (-D, part of the cache key):
//   ELEM  element type                                               default float
//   CBM   output channels (k) per work-group tile                    default 64
//   CBN   output pixels (n, p, q) per work-group tile                default 64
//   CBK   reduction indices (c, r, s) per local-memory step          default 16
//   CTM   k outputs per work-item (rows ly, ly+CBM/CTM, ...)          default 4
//   CTN   pixel outputs per work-item (columns lx, lx+CBN/CTN, ...)  default 4
//   Constraints: the work-group of (CBN/CTN) x (CBM/CTM) items loads CBM*CBK and CBK*CBN
//   elements per step: CBK divides it, it divides CBM*CBK, and CBN/CTN divides it.
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
// Launch: 2D, local size (CBN/CTN, CBM/CTM) exactly (16 x 16 by default); global
//   (tiles*CBN/CTN, CBM/CTM) with tiles = ceil(N*P*Q/CBN)*ceil(K/CBM), numbered along
//   dimension 0 only (CUDA limits grid dimensions 1 and 2 to 65535 blocks), pixel tiles
//   fastest.
// Boundaries: zero padding (input taps outside the image count as 0); edge tiles (K or
//   N*P*Q not multiples of the tile) are guarded: nothing outside the buffers is read or
//   written.
// Design: each step the work-group stages a CBM x CBK slice of the filters (rows of A,
//   coalesced) and a gathered CBK x CBN slice of B in local memory; each work-item
//   accumulates a CTM x CTN register tile over the slice. The columns a work-item gathers
//   are the columns it writes, so each item decodes its pixels (n, p, q) once, and its
//   reduction row (c, r, s) once per step.
// Note: a quotient and remainder of the same operands (x / n and x % n) become LLVM's
//   freeze instruction, which Oclgrind's uninitialized-value check rejects: remainders are
//   written as x - (x / n) * n.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef CBM
#define CBM 64
#endif
#ifndef CBN
#define CBN 64
#endif
#ifndef CBK
#define CBK 16
#endif
#ifndef CTM
#define CTM 4
#endif
#ifndef CTN
#define CTN 4
#endif

#define CLX (CBN / CTN)   // work-group width
#define CLY (CBM / CTM)   // work-group height
#define CNT (CLX * CLY)   // work-items per group
#define A_ROWS (CNT / CBK) // filter rows loaded per pass
#define B_ROWS (CNT / CLX) // reduction rows of B loaded per pass

__kernel __attribute__((reqd_work_group_size(CLX, CLY, 1)))
void conv2d(__global ELEM *out, __global const ELEM *in, __global const ELEM *filt, __global const ELEM *bias,
            int N, int C, int H, int W, int K, int R, int stride, int pad, int P, int Q, int has_bias,
            int jbeg, int jend, int accum) {
    __local ELEM As[CBK][CBM + 1]; // As[j][k] = filt[k0 + k][j0 + j]
    __local ELEM Bs[CBK][CBN];     // Bs[j][col] = im2col(in)[j0 + j][n0 + col]

    int lx = (int)get_local_id(0);
    int ly = (int)get_local_id(1);
    int lid = ly * CLX + lx;
    int PQ = P * Q;
    int NPQ = N * PQ;
    int RR = R * R;
    int CRR = C * RR;
    int HW = H * W;
    int tilesN = (NPQ + CBN - 1) / CBN;
    int g = (int)get_group_id(0);
    int gk = g / tilesN;
    int n0 = (g - gk * tilesN) * CBN;
    int k0 = gk * CBM;

    // The item's columns lx + i*CLX: where they gather from and where they write.
    int inBase[CTN], h0[CTN], w0[CTN], outBase[CTN];
    for (int i = 0; i < CTN; i++) {
        int col = n0 + lx + i * CLX;
        int n = col / PQ;
        int pq = col - n * PQ;
        int p = pq / Q;
        int q = pq - p * Q;
        int ok = col < NPQ;
        inBase[i] = ok ? n * C * HW : 0;
        h0[i] = ok ? p * stride - pad : -0x40000000; // fails every bounds check below
        w0[i] = q * stride - pad;
        outBase[i] = ok ? n * K * PQ + pq : -1;
    }

    ELEM acc[CTM][CTN];
    for (int m = 0; m < CTM; m++) {
        int k = k0 + ly + m * CLY;
        ELEM b0 = 0;
        if (!accum && has_bias && k < K) b0 = bias[k];
        for (int i = 0; i < CTN; i++) acc[m][i] = accum && k < K && outBase[i] >= 0 ? out[outBase[i] + k * PQ] : b0;
    }

    int ak = lid / CBK;       // first filter row this item loads
    int aj = lid - ak * CBK;  // filter column this item loads
    int bj = lid / CLX;  // first reduction row of B this item loads (its columns are lx + i*CLX)
    for (int j0 = jbeg; j0 < jend; j0 += CBK) {
        // Stage A: CBM x CBK filter values, coalesced along j.
        for (int kk = ak; kk < CBM; kk += A_ROWS) {
            int k = k0 + kk, j = j0 + aj;
            ELEM v = 0;
            if (k < K && j < jend) v = filt[k * CRR + j];
            As[aj][kk] = v;
        }
        // Stage B: CBK x CBN gathered input values, zero outside the image.
        for (int jj = bj; jj < CBK; jj += B_ROWS) {
            int j = j0 + jj;
            int c = j / RR;
            int rs = j - c * RR;
            int r = rs / R;
            int s = rs - r * R;
            int cOff = c * HW;
            for (int i = 0; i < CTN; i++) {
                int h = h0[i] + r, w = w0[i] + s;
                ELEM v = 0;
                if (j < jend && h >= 0 && h < H && w >= 0 && w < W) v = in[inBase[i] + cOff + h * W + w];
                Bs[jj][lx + i * CLX] = v;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int jj = 0; jj < CBK; jj++) {
            ELEM a[CTM], b[CTN];
            for (int m = 0; m < CTM; m++) a[m] = As[jj][ly + m * CLY];
            for (int i = 0; i < CTN; i++) b[i] = Bs[jj][lx + i * CLX];
            for (int m = 0; m < CTM; m++)
                for (int i = 0; i < CTN; i++) acc[m][i] = fma(a[m], b[i], acc[m][i]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    for (int m = 0; m < CTM; m++) {
        int k = k0 + ly + m * CLY;
        if (k >= K) continue;
        for (int i = 0; i < CTN; i++) {
            if (outBase[i] >= 0) out[outBase[i] + k * PQ] = acc[m][i];
        }
    }
}
