// scan.cl: inclusive and exclusive prefix sums (reduce-then-scan, two kernels).
//
// Purpose: the prefix sum, the building block of stream compaction, radix sort and
// histogram offsets; memory-bound: a good scan moves about 3n elements (read x twice,
// write y once) at full bandwidth.
//
// Arguments (n elements of type ELEM; indices are int; the host splits x into G chunks of
// `chunk` elements, a multiple of TILE except for G = 1, with G = ceil(n / chunk)):
//   scan_reduce(part, x, n, chunk)
//       part[g] = sum of chunk g of x: x[g*chunk .. min((g+1)*chunk, n))
//   scan_down(y, x, part, n, chunk, exclusive)
//       y = the inclusive (exclusive == 0) or exclusive (exclusive != 0) prefix sum of x.
//       Group g first sums part[0..g) (its chunk's offset), then walks its chunk one tile of
//       TILE elements at a time, carrying the running sum from tile to tile. part is not
//       read when G = 1 (pass any buffer).
// Three passes over memory, no recursion, and no communication between work-groups within
// a kernel: no decoupled look-back, which would rely on forward progress between groups
// that OpenCL does not promise.
//
// Memory access: x and y are read and written as 4-element vectors (through a pointer to
// ELEM's 4-component vector type: one 16-byte access of float, int or uint; vload4 needs
// only the element's alignment, so compilers may split it into scalar accesses). Every
// chunk and tile starts at a multiple of 4 elements (with G > 1 chunk is a multiple of
// TILE, and TILE of 4; with G = 1 the one chunk starts at 0).
//   scan_reduce: item lid of the group reads the chunk's vectors lid, lid+WG, lid+2WG and
//     lid+3WG in one iteration (four independent loads in flight; consecutive items read
//     consecutive vectors) while all four exist, then one at a time, then items
//     0..len%4-1 read the chunk's tail element by element (only the last chunk has one).
//     Component c of every vector goes to lane accumulator a_c in the order read (the tail
//     element to a0); the item's partial (a0 + a1) + (a2 + a3) enters the group's tree.
//   scan_down: a tile is V = IPT/4 rows of WG vectors; item lid holds vector k*WG + lid of
//     the tile for k = 0..V-1 (V loads in flight, coalesced; a partial tile reads whole
//     vectors where they exist, elements up to n one by one, the identity past n), in
//     registers. Each item scans its vectors' components in place (inclusive, within the
//     vector) and writes each vector's total to local memory in tile order; item lid then
//     rakes the V consecutive totals lid*V .. lid*V+V-1 into one sum, a Hillis-Steele scan
//     of those WG sums (in registers, double-buffered in local memory: one barrier a step)
//     gives each item the exclusive prefix of its run, from which it writes the exclusive
//     prefixes of its V totals back in place; item lid reads those of its own vectors,
//     adds the carry, and writes its vectors of y (whole vectors where they end before n,
//     then element by element up to n). The carry grows by the tile's total (the last
//     item's inclusive sum). L + 4 barriers a tile (L = log2(WG)); local memory traffic is
//     per vector total, not per element.
// y may be x (in place): pass 1 finishes before pass 2, and in pass 2 each element is read
// and written by the same work-item, the read first.
//
// Arithmetic: in ACC. int32 sums accumulate in uint (ACC=uint), so they wrap modulo 2^32
// with defined behaviour; uint32 wraps as well; float32 adds in float, never subtracting
// (the exclusive scan is not inclusive - x). The chains of additions by which an element
// of x reaches an element of y (L = log2(WG), V = IPT/4, T = ceil(chunk/TILE) tiles a
// chunk at most):
//   the same vector: 3 in the in-vector sums, 1 adding them to the vector's offset: 4;
//   an earlier vector of the tile: 3 in its vector's total, V - 1 raking it into its run's
//     sum, L in the Hillis-Steele scan, V - 1 in the prefixes of a run's totals, 1 adding
//     the carry, 1 adding the in-vector sum: 2V + L + 3;
//   an earlier tile of the chunk: 3 + (V - 1) + L into that tile's total, T - 1 along the
//     carry, 2 at the output: V + L + T + 3;
//   an earlier chunk (G > 1; such chunks are whole, no tail): ceil(chunk/(4 WG)) lane
//     additions, 2 combining the lanes and L in the tree of scan_reduce, ceil(G/WG) per
//     item and L in the tree of the chunk's offset, T - 1 along the carry, 2 at the
//     output: ceil(chunk/(4 WG)) + ceil(G/WG) + 2L + T + 3.
// The host's Scan.Chain is the longest of them.
//
// Tunables (-D, part of the cache key):
//   ELEM  element type: int, uint or float        default float
//   ACC   accumulator: ELEM, or uint for ELEM=int  default ELEM
//   WG    work-group size, a power of two         default 256
//   IPT   elements per work-item per tile, a multiple of 4   default 16   (TILE = WG*IPT)
// Variants: ELEM=float; ELEM=uint; ELEM=int with ACC=uint (the kernels also compile with
//   ELEM=double and PRISM_FP64, unused by the host).
// Launch: 1D, local size exactly WG, global G*WG for both kernels; scan_reduce is skipped
//   when G = 1.
// Boundaries: the last chunk and the last tile are partial: nothing past x[n-1] is read
//   (vectors only where they end before n, the rest element by element), the identity 0
//   stands for the elements past n, and nothing past y[n-1] is written.
// Alignment: x and y are accessed as vectors, so they must be aligned to 4 elements; a
//   buffer's start is (OpenCL aligns buffers to CL_DEVICE_MEM_BASE_ADDR_ALIGN, at least 128
//   bytes; cuMemAlloc to 256), and scan.go passes only buffers' starts.

#ifdef PRISM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef ELEM
#define ELEM float
#endif
#ifndef ACC
#define ACC ELEM
#endif
#ifndef WG
#define WG 256
#endif
#ifndef IPT
#define IPT 16
#endif
#if IPT % 4 != 0 || IPT < 4
#error "IPT must be a positive multiple of 4"
#endif
#define TILE (WG * IPT)
// Vectors per item per tile: the rows of a tile.
#define SCAN_V (IPT / 4)
// Local-memory index with one pad word per 32, so that item i reading the V consecutive
// totals i*V .. i*V+V-1 (stride V across items) does not hit one bank V-fold: for V a
// power of two up to 32, 32 consecutive items read 32 different banks.
#define SCAN_PAD(i) ((i) + ((i) >> 5))

// OpenCL's 4-component vector of ELEM (float4, int4, uint4, double4).
#define SCAN_CAT_(a, b) a##b
#define SCAN_VEC4_(t) SCAN_CAT_(t, 4)
#define SCAN_ELEM4 SCAN_VEC4_(ELEM)

// The next index of a strided loop, without int overflow near 2^31: n when it would pass n.
#define SCAN_STEP(i, step, n) (((i) < (n) - (step)) ? (i) + (step) : (n))

// Work-group sum of one value per item into sums[0] (read it after the macro; the caller
// puts a barrier before sums is written again).
#define SCAN_GROUP_SUM(sums, lid, value)                                    \
    sums[lid] = (value);                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                           \
    for (int s_ = WG / 2; s_ > 0; s_ >>= 1) {                               \
        if ((lid) < s_) sums[lid] += sums[(lid) + s_];                      \
        barrier(CLK_LOCAL_MEM_FENCE);                                       \
    }

// Folds the components of vector v into the lane accumulators a0..a3.
#define SCAN_LANES(v)                                                       \
    a0 += (ACC)(v).x;                                                       \
    a1 += (ACC)(v).y;                                                       \
    a2 += (ACC)(v).z;                                                       \
    a3 += (ACC)(v).w;

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan_reduce(__global ELEM *part, __global const ELEM *x, int n, int chunk) {
    __local ACC sums[WG];
    const int lid = (int)get_local_id(0);
    const int g = (int)get_group_id(0);
    const int base = g * chunk;
    const int len = (n - base < chunk) ? n - base : chunk;
    // The chunk as nv vectors and a tail of len%4 elements; nu bounds the starts of whole
    // iterations (j + 3WG < nv). nv < 2^29, so no index nears 2^31.
    const int nv = len >> 2;
    const int nu = nv - 3 * WG;
    __global const SCAN_ELEM4 *xv = (__global const SCAN_ELEM4 *)(x + base);
    ACC a0 = (ACC)0, a1 = (ACC)0, a2 = (ACC)0, a3 = (ACC)0;
    int j = lid;
    for (; j < nu; j += 4 * WG) {
        const SCAN_ELEM4 v0 = xv[j];
        const SCAN_ELEM4 v1 = xv[j + WG];
        const SCAN_ELEM4 v2 = xv[j + 2 * WG];
        const SCAN_ELEM4 v3 = xv[j + 3 * WG];
        SCAN_LANES(v0)
        SCAN_LANES(v1)
        SCAN_LANES(v2)
        SCAN_LANES(v3)
    }
    for (; j < nv; j += WG) {
        const SCAN_ELEM4 v = xv[j];
        SCAN_LANES(v)
    }
    if (lid < (len & 3)) a0 += (ACC)x[base + 4 * nv + lid];
    SCAN_GROUP_SUM(sums, lid, (a0 + a1) + (a2 + a3))
    if (lid == 0) part[g] = (ELEM)sums[0];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan_down(__global ELEM *y, __global const ELEM *x, __global const ELEM *part, int n, int chunk,
               int exclusive) {
    // The tile's vector totals in tile order, then (in place) their exclusive prefixes.
    __local ACC tot[SCAN_PAD(WG * SCAN_V - 1) + 1];
    // The Hillis-Steele scan's two buffers of WG; first the sums of the chunk's offset.
    __local ACC hs[2 * WG];
    const int lid = (int)get_local_id(0);
    const int g = (int)get_group_id(0);

    // The chunk's offset: the sum of the chunks before it. (The barrier after each tile's
    // loads separates the reads of hs[0] from the next writes of hs.)
    ACC carry = (ACC)0;
    for (int j = lid; j < g; j += WG) {
        carry += (ACC)part[j];
    }
    SCAN_GROUP_SUM(hs, lid, carry)
    carry = hs[0];

    const int base = g * chunk;
    const int len = (n - base < chunk) ? n - base : chunk;
    for (int t = 0; t < len; t = SCAN_STEP(t, TILE, len)) {
        const int cnt = (len - t < TILE) ? len - t : TILE;
        const int o = base + t; // a multiple of 4
        __global const SCAN_ELEM4 *xv = (__global const SCAN_ELEM4 *)(x + o);
        __global SCAN_ELEM4 *yv = (__global SCAN_ELEM4 *)(y + o);
        // v[k]: the item's vector k (tile vector k*WG + lid). In a partial tile, a vector
        // that does not end before n is read element by element up to n (its last
        // component never exists), the identity past n.
        SCAN_ELEM4 v[SCAN_V];
        if (cnt == TILE) {
#pragma unroll
            for (int k = 0; k < SCAN_V; k++) {
                v[k] = xv[k * WG + lid];
            }
        } else {
#pragma unroll
            for (int k = 0; k < SCAN_V; k++) {
                const int e = 4 * (k * WG + lid);
                if (e + 4 <= cnt) {
                    v[k] = xv[k * WG + lid];
                } else {
                    v[k].x = (e < cnt) ? x[o + e] : (ELEM)0;
                    v[k].y = (e + 1 < cnt) ? x[o + e + 1] : (ELEM)0;
                    v[k].z = (e + 2 < cnt) ? x[o + e + 2] : (ELEM)0;
                    v[k].w = (ELEM)0;
                }
            }
        }
        // The previous tile's (or the offset's) readers of tot and hs are past this point.
        barrier(CLK_LOCAL_MEM_FENCE);
        // s[k][c]: the inclusive sum of components 0..c of vector k.
        ACC s[SCAN_V][4];
#pragma unroll
        for (int k = 0; k < SCAN_V; k++) {
            s[k][0] = (ACC)v[k].x;
            s[k][1] = (ACC)v[k].y;
            s[k][2] = (ACC)v[k].z;
            s[k][3] = (ACC)v[k].w;
            s[k][1] += s[k][0];
            s[k][2] += s[k][1];
            s[k][3] += s[k][2];
            tot[SCAN_PAD(k * WG + lid)] = s[k][3];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // Rake: the item's run of V consecutive totals and their sum.
        ACC r[SCAN_V];
        r[0] = tot[SCAN_PAD(lid * SCAN_V)];
        ACC run = r[0];
#pragma unroll
        for (int j = 1; j < SCAN_V; j++) {
            r[j] = tot[SCAN_PAD(lid * SCAN_V + j)];
            run += r[j];
        }
        // Inclusive Hillis-Steele scan of the runs' sums. Step i writes buffer i%2 and reads
        // it after the barrier; the next write of that buffer, two steps later, comes after
        // another barrier, so all its reads are done.
        int b = 0;
        for (int off = 1; off < WG; off <<= 1) {
            hs[b + lid] = run;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid >= off) run += hs[b + lid - off];
            b ^= WG;
        }
        hs[b + lid] = run;
        barrier(CLK_LOCAL_MEM_FENCE);
        // The exclusive prefix of the item's run, and the tile's total.
        ACC pre = (lid > 0) ? hs[b + lid - 1] : (ACC)0;
        const ACC total = hs[b + WG - 1];
        // The exclusive prefixes of the run's totals, in place (only this item read them).
        tot[SCAN_PAD(lid * SCAN_V)] = pre;
#pragma unroll
        for (int j = 1; j < SCAN_V; j++) {
            pre += r[j - 1];
            tot[SCAN_PAD(lid * SCAN_V + j)] = pre;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // Write the item's vectors, scanned, with the offsets added.
#pragma unroll
        for (int k = 0; k < SCAN_V; k++) {
            const ACC p = carry + tot[SCAN_PAD(k * WG + lid)];
            // The sums each output adds to p: components 0..c for the inclusive scan,
            // 0..c-1 for the exclusive one (as values, not array elements picked by
            // `exclusive`, so that s stays in registers).
            const ACC s0 = s[k][0], s1 = s[k][1], s2 = s[k][2], s3 = s[k][3];
            const ACC y0 = exclusive ? p : p + s0;
            const ACC y1 = p + (exclusive ? s0 : s1);
            const ACC y2 = p + (exclusive ? s1 : s2);
            const ACC y3 = p + (exclusive ? s2 : s3);
            const int e = 4 * (k * WG + lid);
            if (e + 4 <= cnt) {
                SCAN_ELEM4 w;
                w.x = (ELEM)y0;
                w.y = (ELEM)y1;
                w.z = (ELEM)y2;
                w.w = (ELEM)y3;
#ifdef PRISM_OCLGRIND
                // Oclgrind 21.10 turns a store of a vector built from scalars into a store
                // of the undefined vector and one per component, and reports the first:
                // there (PRISM_OCLGRIND, defined by the OpenCL backend) vstore4, a call,
                // stores the same 16 bytes.
                vstore4(w, k * WG + lid, y + o);
#else
                yv[k * WG + lid] = w;
#endif
            } else {
                if (e < cnt) y[o + e] = (ELEM)y0;
                if (e + 1 < cnt) y[o + e + 1] = (ELEM)y1;
                if (e + 2 < cnt) y[o + e + 2] = (ELEM)y2;
            }
        }
        carry += total;
    }
}
