// attention.cl: scaled dot-product attention, FlashAttention-style (no seq x seq matrix).
//
// Purpose: O = softmax(Q K^T * scale [+ causal mask]) V for tensors of shape
// [batch, heads, seq, dim] (row-major, Q, K, V and O alike), computed tile by tile: a
// work-group takes BR queries of one (batch, head), loops over blocks of BC keys and values
// loaded into local memory, and keeps per query a running max m, a running sum l and the
// output accumulator, rescaled by exp(m_old - m_new) when the max grows (online softmax).
// The scores of one block live only in registers and a BR x BC tile of local memory.
//
// Arguments:
//   attention_fwd(o, q, k, v, seq, dim, scale, causal)
//       o, q, k, v: bh*seq*dim elements of type IN (bh = batch*heads = the number of work-
//       groups / ceil(seq/BR)); 1 <= dim <= DMAX; scale (an ELEM) multiplies every score
//       (the launcher passes 1/sqrt(dim) unless told otherwise); causal != 0 masks key
//       j > query i. bh*seq*dim < 2^31 (the launcher checks).
//
// Tunables (-D, part of the cache key):
//   ELEM   element type of the arithmetic, local tiles and scale      default float
//   IN     element type of Q, K, V and O as stored                    default ELEM
//   CONV   conversion of an IN to ELEM as Q, K and V are loaded: prism_half (IEEE binary16
//          bits in a ushort) or prism_bfloat16 (bfloat16 bits in a ushort), exact;
//          undefined: none
//   STORE  conversion of an ELEM to IN as O is stored: prism_to_half or prism_to_bfloat16
//          (to nearest even); undefined: none. CONV's and STORE's functions are those of
//          kernels/convert.cl, which the host puts in front of this source when it defines
//          them.
//   WG     work-group size = (BR/RQ)*TPR                              default 256
//   DMAX   largest head dimension; sizes the local tiles              default 64
//   BR     queries per work-group                                     default 32
//   BC     keys per block                                             default 32
//   RQ     queries per work-item (register tile rows)                 default 2
//   TPR    work-items sharing a query row (BC and DMAX multiples)     default WG*RQ/BR
// Local memory: (BR + 2*BC)*(DMAX+1) + BR*(BC+1) + BR*TPR elements of ELEM (rows padded by
//   one element against bank conflicts); the launcher keeps it within 48 KiB, CUDA's static
//   limit.
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64);
//   ELEM=float with IN=ushort, CONV and STORE for the float16 (prism_half, prism_to_half)
//   and bfloat16 (prism_bfloat16, prism_to_bfloat16) ops, which compute in float32 (no fp16
//   arithmetic is needed); causal or not at run time (causal work-groups stop at their
//   last query's key block).
// Launch: 1D, local size WG, global bh*ceil(seq/BR)*WG. Work-group g serves head
//   g / ceil(seq/BR) and, counting from the last, query block g % ceil(seq/BR) (the heaviest
//   causal blocks start first). Item lid = rg*TPR + c owns queries rg*RQ + a (a < RQ) of the
//   block, scores keys c + t*TPR (t < BC/TPR) of each key block, and accumulates output
//   dimensions c + e*TPR (e < DMAX/TPR). Boundaries: query rows and key rows past seq are
//   loaded as 0; keys past seq (and past the query when causal) get score -INFINITY, so
//   weight 0; query rows past seq and dimensions past dim are never stored.

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
#define LOADC(x) CONV(x)
#else
#define LOADC(x) (x)
#endif
#ifdef STORE
#define STOREC(x) STORE(x)
#else
#define STOREC(x) (x)
#endif
#ifndef WG
#define WG 256
#endif
#ifndef DMAX
#define DMAX 64
#endif
#ifndef BR
#define BR 32
#endif
#ifndef BC
#define BC 32
#endif
#ifndef RQ
#define RQ 2
#endif
#ifndef TPR
#define TPR (WG * RQ / BR)
#endif

#define AT_NJ (BC / TPR)   // keys scored per item and block
#define AT_ND (DMAX / TPR) // output dimensions per item
#define AT_DS (DMAX + 1)   // padded row stride of the q, k, v tiles
#define AT_PS (BC + 1)     // padded row stride of the probability tile
#define AT_NEG_INF ((ELEM)(-INFINITY))

#if (BR / RQ) * TPR != WG || BR % RQ != 0 || BC % TPR != 0 || DMAX % TPR != 0
#error "attention.cl: tunables must satisfy WG = (BR/RQ)*TPR, RQ | BR, TPR | BC, TPR | DMAX"
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void attention_fwd(__global IN *o, __global const IN *q, __global const IN *k,
                   __global const IN *v, int seq, int dim, ELEM scale, int causal) {
    __local ELEM qs[BR * AT_DS];
    __local ELEM ks[BC * AT_DS];
    __local ELEM vs[BC * AT_DS];
    __local ELEM ps[BR * AT_PS];
    __local ELEM mx[BR * TPR];

    const int lid = (int)get_local_id(0);
    const int rg = lid / TPR;
    const int c = lid - rg * TPR;
    const int nqb = (seq + BR - 1) / BR;
    const int g = (int)get_group_id(0);
    const int head = g / nqb;
    const int q0 = (nqb - 1 - (g - head * nqb)) * BR;
    const int base = head * seq * dim;
    const int nd = (dim - c + TPR - 1) / TPR; // dimensions c + e*TPR < dim of this item

    // The query block, scaled once here rather than every score.
    for (int t = lid; t < BR * dim; t += WG) {
        int rr = t / dim, d = t - rr * dim;
        qs[rr * AT_DS + d] = q0 + rr < seq ? scale * LOADC(q[base + (q0 + rr) * dim + d]) : (ELEM)0;
    }

    ELEM m[RQ], l[RQ], acc[RQ][AT_ND];
#pragma unroll
    for (int a = 0; a < RQ; a++) {
        m[a] = AT_NEG_INF;
        l[a] = 0;
#pragma unroll
        for (int e = 0; e < AT_ND; e++) acc[a][e] = 0;
    }

    const int kend = causal ? min(seq, q0 + BR) : seq;
    for (int j0 = 0; j0 < kend; j0 += BC) {
        // Nobody still reads the previous block's tiles (first block: qs is complete).
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int t = lid; t < BC * dim; t += WG) {
            int jj = t / dim, d = t - jj * dim;
            int src = base + (j0 + jj) * dim + d;
            ks[jj * AT_DS + d] = j0 + jj < seq ? LOADC(k[src]) : (ELEM)0;
            vs[jj * AT_DS + d] = j0 + jj < seq ? LOADC(v[src]) : (ELEM)0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // Scores of RQ queries x NJ keys: dot products over dim from local memory.
        ELEM sc[RQ][AT_NJ];
#pragma unroll
        for (int a = 0; a < RQ; a++) {
#pragma unroll
            for (int t = 0; t < AT_NJ; t++) sc[a][t] = 0;
        }
        for (int d = 0; d < dim; d++) {
            ELEM kv[AT_NJ];
#pragma unroll
            for (int t = 0; t < AT_NJ; t++) kv[t] = ks[(c + t * TPR) * AT_DS + d];
#pragma unroll
            for (int a = 0; a < RQ; a++) {
                ELEM qv = qs[(rg * RQ + a) * AT_DS + d];
#pragma unroll
                for (int t = 0; t < AT_NJ; t++) sc[a][t] += qv * kv[t];
            }
        }
        // Mask, and each item's maximum per query row.
#pragma unroll
        for (int a = 0; a < RQ; a++) {
            int i = q0 + rg * RQ + a;
            ELEM mloc = AT_NEG_INF;
#pragma unroll
            for (int t = 0; t < AT_NJ; t++) {
                int j = j0 + c + t * TPR;
                if (j >= seq || (causal && j > i)) sc[a][t] = AT_NEG_INF;
                mloc = max(mloc, sc[a][t]);
            }
            mx[(rg * RQ + a) * TPR + c] = mloc;
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // New running max per row, probabilities of this block relative to it.
        ELEM alpha[RQ];
#pragma unroll
        for (int a = 0; a < RQ; a++) {
            int r = rg * RQ + a;
            ELEM mn = m[a];
            for (int u = 0; u < TPR; u++) mn = max(mn, mx[r * TPR + u]);
            ELEM mref = mn == AT_NEG_INF ? (ELEM)0 : mn; // a row with no key yet: weights 0
#pragma unroll
            for (int t = 0; t < AT_NJ; t++) ps[r * AT_PS + c + t * TPR] = exp(sc[a][t] - mref);
            alpha[a] = exp(m[a] - mref);
            m[a] = mn;
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // Rescale, then accumulate P V over the block's keys (keys past kend have p = 0).
#pragma unroll
        for (int a = 0; a < RQ; a++) {
            l[a] *= alpha[a];
#pragma unroll
            for (int e = 0; e < AT_ND; e++) acc[a][e] *= alpha[a];
        }
        const int jn = min(BC, kend - j0);
        for (int jj = 0; jj < jn; jj++) {
            ELEM vv[AT_ND];
#pragma unroll
            for (int e = 0; e < AT_ND; e++) vv[e] = e < nd ? vs[jj * AT_DS + c + e * TPR] : (ELEM)0;
#pragma unroll
            for (int a = 0; a < RQ; a++) {
                ELEM p = ps[(rg * RQ + a) * AT_PS + jj];
                l[a] += p;
#pragma unroll
                for (int e = 0; e < AT_ND; e++) acc[a][e] += p * vv[e];
            }
        }
    }

#pragma unroll
    for (int a = 0; a < RQ; a++) {
        int i = q0 + rg * RQ + a;
        if (i < seq) {
#pragma unroll
            for (int e = 0; e < AT_ND; e++) {
                if (e < nd) o[base + i * dim + c + e * TPR] = STOREC(acc[a][e] / l[a]);
            }
        }
    }
}
