// fft.cl: complex FFTs of power-of-two length (Stockham auto-sort, local-memory blocks).
//
// Purpose: batched 1D, 2D and real-input discrete Fourier transforms of interleaved complex
// data (re, im pairs of ELEM), forward X[k] = sum_j x[j] e^{-2 pi i jk/n} and inverse with
// e^{+2 pi i jk/n}, unnormalized (inverse(forward(x)) = n x; the host scales if it wants).
// A transform of length N = L1 * L2 * ... * Lp is p Stockham passes; pass q is a radix-Lq
// step done by fft_block, which loads C columns of Lq points into local memory, multiplies
// them by the pass's twiddles, runs an Lq-point FFT there (Stockham radix-4 stages, one
// radix-2 stage when log2(Lq) is odd) and writes them back to global memory in sorted
// order. A transform of up to LOCAL_N points is one pass (the whole FFT in local memory);
// longer ones take 2 or 3 passes (2^24 = 256 * 256 * 256), each reading and writing the data
// once, coalesced (C >= 16 columns of consecutive addresses per work-group).
//
// Layout: element e of transform b of a batch, with I transforms interleaved (I = 1 for
// contiguous 1D batches; I = cols for the column FFTs of a rows x cols matrix), is at
// complex index (b * N + e) * I + i. A pass reads element j + t*S (S = N/L) and writes
// element (j / Ns) * Ns * L + j % Ns + t * Ns for t < L, with Ns the product of the previous
// passes' lengths (Govindaraju et al., "High performance discrete Fourier transforms on
// graphics processors", SC 2008). Over all (b, j, i), "columns" col = (b*S + j)*I + i, the
// addresses are  (col >> lgP << (lgP + lgL)) + (col & (P-1)) + t*P  with P = S*I on load and
// P = Ns*I on store.
//
// Twiddles: w(m) = e^{-2 pi i m / 2^24}, m < 2^24, is coarse[m >> 12] * fine[m & 4095] from two
// 4096-entry tables that the host computes in float64 and rounds to ELEM (in-block twiddles,
// whose m is a multiple of 4096, read the coarse table alone, exactly). The inverse
// conjugates them.
//
// Arguments (complex pointers: ELEM2 is float2, or double2 under PRISM_FP64):
//   fft_block(dst, src, coarse, fine, cols, lgL, lgC, lgPin, lgPout, lgI, lgNs, inv)
//       one Stockham pass of radix L = 2^lgL over `cols` columns, C = 2^lgC columns per
//       work-group (C * L <= LOCAL_N); lgPin = log2(S*I), lgPout = log2(Ns*I), lgI = log2(I),
//       lgNs = log2(Ns) (0 on the first pass: no twiddles); inv = 1 for the inverse.
//       dst must not overlap src, except when the pass is the whole transform (S = Ns = 1:
//       every work-group reads and writes the same elements).
//   fft_r2c_post(dst, z, coarse, fine, lgH, total)
//       real-input post-processing: z holds Z = FFT_h(x[2k] + i x[2k+1]) for batches of
//       h = 2^lgH points; writes X[k] = (Z[k] + conj Z[h-k])/2 - i/2 e^{-2 pi i k/2h}
//       (Z[k] - conj Z[h-k]), k = 0..h, h+1 bins per batch; total = batch * (h+1).
//
// Tunables (-D, part of the cache key):
//   ELEM     element type (float; double with PRISM_FP64)           default float
//   WG       work-group size of fft_block, a power of two            default 256
//   EPT      complex elements per work-item in fft_block (4..64)     default 16 (8 for double)
//   LOCAL_N  complex elements of local memory = WG * EPT, <= 4096    (derived)
//   RADIX    4 (radix-4 stages, radix-2 for an odd remainder) or 2   default 4
// Variants: ELEM=float; ELEM=double with PRISM_FP64 defined (only where the device has fp64).
// The regradix variant runs fft_reg.cl's fft_reg (same arguments and layout: 16 points per
// work-item in registers, radix-16 stages) in place of fft_block, and this file's
// fft_r2c_post.
// Launch: fft_block 1D, local size WG, global WG * ceil(cols / C); fft_r2c_post 1D, any
// local size, one work-item per output bin (grid-stride loop beyond the global size).
// Boundaries: columns at or past `cols` (a batch that does not fill the last work-group)
// load zeros into local memory and store nothing; every work-item reaches every barrier.

#ifndef WG
#define WG 256
#endif
#ifndef EPT
#ifdef PRISM_FP64
#define EPT 8
#else
#define EPT 16
#endif
#endif
#ifndef RADIX
#define RADIX 4
#endif
#define LOCAL_N (WG * EPT)
#if LOCAL_N > 4096
#error "fft.cl: WG * EPT must not exceed 4096 (in-block twiddles index the 4096-entry table)"
#endif
#if EPT < 4 || (RADIX != 2 && RADIX != 4)
#error "fft.cl: EPT must be at least 4 and RADIX 2 or 4"
#endif

// conj(z) when the direction sign s is -1 (inverse), z when +1.
inline ELEM2 cdir(ELEM2 z, ELEM s) { return MAKE2(z.x, s * z.y); }

// -i*z forward (s = +1), +i*z inverse (s = -1).
inline ELEM2 rotq(ELEM2 z, ELEM s) { return MAKE2(s * z.y, -s * z.x); }

// w(m) = e^{-2 pi i m / 2^24} (forward), conjugated when s = -1.
inline ELEM2 twiddle(__global const ELEM2 *coarse, __global const ELEM2 *fine, int m, ELEM s) {
    ELEM2 w = coarse[m >> FFT_LG_FINE];
    if ((m & FFT_FINE_MASK) != 0) w = cmul(w, fine[m & FFT_FINE_MASK]);
    return cdir(w, s);
}

// Local layout: element t of column c at t*C + ((c + t) & (C-1)): the skew keeps both
// "consecutive c, one t" and "consecutive t, one c" free of bank conflicts.
#define SK(t, c) (((t) << lgC) + (((c) + (t)) & (C - 1)))

// Address of element t of column col for stride P = 2^lgP.
#define ADDR(col, t, lgP) ((((col) >> (lgP)) << ((lgP) + lgL)) + ((col) & ((1 << (lgP)) - 1)) + ((t) << (lgP)))

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void fft_block(__global ELEM2 *dst, __global const ELEM2 *src, __global const ELEM2 *coarse,
               __global const ELEM2 *fine, int cols, int lgL, int lgC, int lgPin, int lgPout,
               int lgI, int lgNs, int inv) {
    __local ELEM2 lds[LOCAL_N];
    const int tid = (int)get_local_id(0);
    const int L = 1 << lgL;
    const int C = 1 << lgC;
    const int LC = L << lgC;
    const int col0 = (int)get_group_id(0) << lgC;
    const ELEM s = inv ? (ELEM)-1 : (ELEM)1;

    // Load: consecutive work-items take consecutive columns (runs of W = min(P, C) columns
    // are consecutive addresses), then consecutive t.
    {
        const int lgW = min(lgPin, lgC);
        const int Ns = 1 << lgNs;
        const int tsh = FFT_LG_MAX - lgNs - lgL; // pass twiddle w_{Ns*L}^m = w(m << tsh)
        for (int e = tid; e < LC; e += WG) {
            const int c = ((e >> (lgW + lgL)) << lgW) | (e & ((1 << lgW) - 1));
            const int t = (e >> lgW) & (L - 1);
            const int col = col0 + c;
            ELEM2 v = MAKE2((ELEM)0, (ELEM)0);
            if (col < cols) {
                v = src[ADDR(col, t, lgPin)];
                if (lgNs > 0) {
                    const int m = t * ((col >> lgI) & (Ns - 1));
                    if (m != 0) v = cmul(v, twiddle(coarse, fine, m << tsh, s));
                }
            }
            lds[SK(t, c)] = v;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    // L-point FFT of every column in local memory: Stockham stages, butterfly i of a stage
    // is column i & (C-1), index jj = i >> lgC.
    int lgns = 0;
#if RADIX == 4
    if (lgL & 1) {
#else
    while (lgns < lgL) {
#endif
        // Radix-2 stage (the first one, ns = 1 for RADIX 4: no twiddles then).
        const int nb = LC >> 1;
        const int hl = L >> 1;
        ELEM2 a[EPT / 2], b[EPT / 2];
        for (int k = 0; k < EPT / 2; k++) {
            const int i = tid + k * WG;
            if (i < nb) {
                const int c = i & (C - 1), jj = i >> lgC;
                a[k] = lds[SK(jj, c)];
                b[k] = lds[SK(jj + hl, c)];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < EPT / 2; k++) {
            const int i = tid + k * WG;
            if (i < nb) {
                const int c = i & (C - 1), jj = i >> lgC;
                const int r = jj & ((1 << lgns) - 1);
                ELEM2 y = b[k];
                if (r != 0) y = cmul(y, cdir(coarse[r << (FFT_LG_FINE - lgns - 1)], s));
                const int o = ((jj >> lgns) << (lgns + 1)) + r;
                lds[SK(o, c)] = a[k] + y;
                lds[SK(o + (1 << lgns), c)] = a[k] - y;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        lgns += 1;
    }
#if RADIX == 4
    while (lgns < lgL) {
        const int nb = LC >> 2;
        const int q = L >> 2;
        ELEM2 v0[EPT / 4], v1[EPT / 4], v2[EPT / 4], v3[EPT / 4];
        for (int k = 0; k < EPT / 4; k++) {
            const int i = tid + k * WG;
            if (i < nb) {
                const int c = i & (C - 1), jj = i >> lgC;
                v0[k] = lds[SK(jj, c)];
                v1[k] = lds[SK(jj + q, c)];
                v2[k] = lds[SK(jj + 2 * q, c)];
                v3[k] = lds[SK(jj + 3 * q, c)];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < EPT / 4; k++) {
            const int i = tid + k * WG;
            if (i < nb) {
                const int c = i & (C - 1), jj = i >> lgC;
                const int r = jj & ((1 << lgns) - 1);
                ELEM2 x0 = v0[k], x1 = v1[k], x2 = v2[k], x3 = v3[k];
                if (r != 0) {
                    const int sh = FFT_LG_FINE - lgns - 2; // w_{4 ns}^{r} = coarse[r << sh]
                    x1 = cmul(x1, cdir(coarse[r << sh], s));
                    x2 = cmul(x2, cdir(coarse[(2 * r) << sh], s));
                    x3 = cmul(x3, cdir(coarse[(3 * r) << sh], s));
                }
                const ELEM2 a0 = x0 + x2, a1 = x0 - x2, a2 = x1 + x3, a3 = rotq(x1 - x3, s);
                const int o = ((jj >> lgns) << (lgns + 2)) + r;
                const int ns = 1 << lgns;
                lds[SK(o, c)] = a0 + a2;
                lds[SK(o + ns, c)] = a1 + a3;
                lds[SK(o + 2 * ns, c)] = a0 - a2;
                lds[SK(o + 3 * ns, c)] = a1 - a3;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        lgns += 2;
    }
#endif

    // Store: as the load, with P = Ns*I.
    {
        const int lgW = min(lgPout, lgC);
        for (int e = tid; e < LC; e += WG) {
            const int c = ((e >> (lgW + lgL)) << lgW) | (e & ((1 << lgW) - 1));
            const int t = (e >> lgW) & (L - 1);
            const int col = col0 + c;
            if (col < cols) dst[ADDR(col, t, lgPout)] = lds[SK(t, c)];
        }
    }
}

__kernel void fft_r2c_post(__global ELEM2 *dst, __global const ELEM2 *z, __global const ELEM2 *coarse,
                           __global const ELEM2 *fine, int lgH, int total) {
    const int h = 1 << lgH;
    const int per = h + 1;
    const int tsh = FFT_LG_MAX - lgH - 1; // w_{2h}^k = w(k << tsh)
    for (int g = (int)get_global_id(0); g < total; g += (int)get_global_size(0)) {
        const int b = g / per;
        const int k = g - b * per;
        r2c_bin(dst, g, z[b * h + (k & (h - 1))], z[b * h + ((h - k) & (h - 1))], coarse, fine, k << tsh);
    }
}
