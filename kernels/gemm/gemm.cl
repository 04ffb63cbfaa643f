// gemm.cl: general matrix multiply D = alpha*op(A)*op(B) + beta*C, single and strided batched.
//
// Purpose: the compute-bound reference kernel of the suite: a local-memory tiled GEMM with
// register blocking, the standard portable design (as in CLBlast's xgemm_direct), in
// float32 and float64, every transpose combination, any shape and leading dimension.
//
// Arguments (row-major; op(X) = X or X^T; op(A) is m x k, op(B) is k x n, C and D m x n;
// element (i, j) of matrix z of X lives at x[z*strideX + i*ldx + j] of the STORED matrix,
// so A is stored m x k (lda >= k) or, transposed, k x m (lda >= m), B k x n (ldb >= n) or
// n x k (ldb >= k), C and D m x n (ldc >= n); C and D share ldc and strideC):
//   gemm(d, c, a, b, alpha, beta, m, n, k, lda, ldb, ldc, strideA, strideB, strideC, transA, transB, kbeg)
//     d[z*strideC + i*ldc + j] = alpha * sum_l op(A_z)[i][l] * op(B_z)[l][j]
//                                + beta * c[z*strideC + i*ldc + j]
//     for 0 <= i < m, 0 <= j < n, z = get_group_id(2) (one matrix per batch index), the sum
//     over kbeg <= l < k: the host splits a long k into launches of consecutive ranges
//     (the first with the caller's beta and C, the next ones adding to D with beta 1)
//     where the device ends a work-item's loops early (Mesa's llvmpipe); 0 otherwise.
//     transA, transB: 0 or 1, runtime flags (uniform branches at tile load only, so one
//     compile serves all four combinations). d may be the same buffer as c (in-place GEMM:
//     each element is read, then written, by the same work-item). When beta == 0, c is not
//     read (BLAS semantics: C may hold NaN). Every index the kernel forms must fit an int;
//     the host checks it.
//
// Tunables (-D, part of the cache key):
//   ELEM  element type of C, D, alpha, beta and the arithmetic default float
//   IN    element type of A and B as stored                    default ELEM
//   CONV  conversion of an IN to ELEM as it is loaded: prism_tf32 (float rounded to tf32,
//         ties away from zero, as NVIDIA's cvt.rna.tf32.f32), prism_half (IEEE binary16
//         bits in a ushort), prism_bfloat16 (bfloat16 bits in a ushort), prism_e4m3 and
//         prism_e5m2 (OCP float8 bits in a uchar); undefined: none. The functions are
//         those of kernels/convert.cl, which the host puts in front of this source when it
//         defines CONV. Every conversion is exact but tf32's, so that the low-precision
//         GEMM ops (gemm/nn/bfloat16, ...) run on every device, computing in float32 (no
//         fp16 arithmetic is needed).
//   TS    tile of C computed by one work-group: TS x TS        default 64
//   TSK   depth of the A and B tiles in local memory (k step)  default 16
//   WPT   work per item per dimension: each work-item computes a WPT x WPT block of C,
//         at rows tm + w*RTS and columns tn + w*RTS, RTS = TS/WPT  default 4
//   PAD   local-memory row padding (bank conflicts on stores)  default 1
//   Constraints (checked with #error): TS % WPT == 0, TS*TSK % (RTS*RTS) == 0.
//   WG is not a tunable of this family: the work-group is RTS x RTS (16 x 16 = 256 by
//   default), and the host (gemmTiles in gemm.go) chooses TS, TSK and WPT per kind of device
//   so that it and the local tiles fit (GPU 128/16/8, CPU 128/32/16, Oclgrind 32/16/8).
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64);
//   ELEM=float with IN and CONV for the tf32, float16, bfloat16 and float8 ops.
// Launch: 3D, local (RTS, RTS, 1), global (ceil(n/TS)*RTS, ceil(m/TS)*RTS, batch): dimension
//   0 runs along the columns of C (consecutive items store consecutive elements), dimension
//   1 along the rows, dimension 2 over the batch (group z computes matrix z).
// Boundaries: tiles at the right and bottom edges and the last k step are partial: loads
//   outside op(A) or op(B) put zeros in local memory (zero padding adds nothing to the dot
//   products) and stores outside C are skipped. No work-item returns early: all reach every
//   barrier.
// Accuracy: each element is one sequential dot product over l = 0..k-1 in ELEM (a*b+acc,
//   contracted to fma where the compiler chooses), then alpha*acc + beta*c: at most k+2
//   roundings per term, hence the gamma_{k+2} bound of GEMMTolerance (ref.go). Split into
//   launches of at least TSK of k, a term meets its range's sum, alpha*acc + the element
//   and one addition per later range: still at most k+2.
//
// Loads are coalesced in every transpose combination: a tile of A (TS rows of op(A), TSK
// columns) is read along k when A is stored m x k and along m when it is stored k x m, and
// likewise for B, but always written to local memory as As[kk][mm] and Bs[kk][nn], so the
// inner loop is the same for all four variants.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef IN
#define IN ELEM
#endif
#ifdef CONV
#define LOAD(x) CONV(x)
#else
#define LOAD(x) (x)
#endif

#ifndef TS
#define TS 64
#endif
#ifndef TSK
#define TSK 16
#endif
#ifndef WPT
#define WPT 4
#endif
#ifndef PAD
#define PAD 1
#endif

#define RTS (TS / WPT)
#define NITEMS (RTS * RTS)
#define LPT ((TS * TSK) / NITEMS)

#if TS % WPT != 0
#error "gemm.cl: TS must be a multiple of WPT"
#endif
#if (TS * TSK) % (RTS * RTS) != 0
#error "gemm.cl: TS*TSK must be a multiple of the work-group size (TS/WPT)^2"
#endif

__kernel __attribute__((reqd_work_group_size(RTS, RTS, 1)))
void gemm(__global ELEM *d, __global const ELEM *c, __global const IN *a, __global const IN *b,
          ELEM alpha, ELEM beta, int m, int n, int k, int lda, int ldb, int ldc,
          int strideA, int strideB, int strideC, int transA, int transB, int kbeg) {
    __local ELEM As[TSK][TS + PAD];
    __local ELEM Bs[TSK][TS + PAD];

    const int tn = (int)get_local_id(0);
    const int tm = (int)get_local_id(1);
    const int tid = tm * RTS + tn;
    const int n0 = (int)get_group_id(0) * TS;
    const int m0 = (int)get_group_id(1) * TS;
    const int z = (int)get_group_id(2);
    a += z * strideA;
    b += z * strideB;
    c += z * strideC;
    d += z * strideC;

    ELEM acc[WPT][WPT];
    for (int wm = 0; wm < WPT; ++wm) {
        for (int wn = 0; wn < WPT; ++wn) {
            acc[wm][wn] = (ELEM)0;
        }
    }

    for (int k0 = kbeg; k0 < k; k0 += TSK) {
        // Tile of op(A): rows m0..m0+TS, columns k0..k0+TSK, into As[kk][mm].
        for (int p = 0; p < LPT; ++p) {
            const int l = tid + p * NITEMS;
            int mm, kk;
            if (transA) { // stored k x m: consecutive items read consecutive m
                kk = l / TS;
                mm = l - kk * TS; // not l % TS: a div-rem pair becomes LLVM's freeze, which Oclgrind rejects
            } else { // stored m x k: consecutive items read consecutive k
                mm = l / TSK;
                kk = l - mm * TSK;
            }
            const int gi = m0 + mm, gk = k0 + kk;
            ELEM v = (ELEM)0;
            if (gi < m && gk < k) {
                v = LOAD(transA ? a[gk * lda + gi] : a[gi * lda + gk]);
            }
            As[kk][mm] = v;
        }
        // Tile of op(B): rows k0..k0+TSK, columns n0..n0+TS, into Bs[kk][nn].
        for (int p = 0; p < LPT; ++p) {
            const int l = tid + p * NITEMS;
            int nn, kk;
            if (transB) { // stored n x k: consecutive items read consecutive k
                nn = l / TSK;
                kk = l - nn * TSK;
            } else { // stored k x n: consecutive items read consecutive n
                kk = l / TS;
                nn = l - kk * TS;
            }
            const int gj = n0 + nn, gk = k0 + kk;
            ELEM v = (ELEM)0;
            if (gj < n && gk < k) {
                v = LOAD(transB ? b[gj * ldb + gk] : b[gk * ldb + gj]);
            }
            Bs[kk][nn] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        for (int kk = 0; kk < TSK; ++kk) {
            ELEM ar[WPT], br[WPT];
            for (int w = 0; w < WPT; ++w) {
                ar[w] = As[kk][tm + w * RTS];
                br[w] = Bs[kk][tn + w * RTS];
            }
            for (int wm = 0; wm < WPT; ++wm) {
                for (int wn = 0; wn < WPT; ++wn) {
                    acc[wm][wn] += ar[wm] * br[wn];
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    for (int wm = 0; wm < WPT; ++wm) {
        const int i = m0 + tm + wm * RTS;
        if (i < m) {
            for (int wn = 0; wn < WPT; ++wn) {
                const int j = n0 + tn + wn * RTS;
                if (j < n) {
                    ELEM r = alpha * acc[wm][wn];
                    if (beta != (ELEM)0) {
                        r += beta * c[i * ldc + j];
                    }
                    d[i * ldc + j] = r;
                }
            }
        }
    }
}
