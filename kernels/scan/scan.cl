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
//       TILE elements at a time: loads the tile into local memory, each item scans its IPT
//       consecutive elements sequentially, a Hillis-Steele scan of the WG item totals gives
//       the items' offsets, the tile is written back with the running carry added, and the
//       carry grows by the tile's total. part is not read when G = 1 (pass any buffer).
// Three passes over memory, no recursion, and no communication between work-groups within
// a kernel: no decoupled look-back, which would rely on forward progress between groups
// that OpenCL does not promise. y may be x (in place): pass 1 finishes before pass 2, and
// each tile is read into local memory before it is written.
//
// Arithmetic: in ACC. int32 sums accumulate in uint (ACC=uint), so they wrap modulo 2^32
// with defined behaviour; uint32 wraps as well; float32 adds in float along chains of at
// most ceil(chunk/WG) + ceil(G/WG) + 3 log2(WG) + ceil(chunk/TILE) + 2 IPT + 4 additions
// (the host's Scan.Chain), never subtracting (the exclusive scan is not inclusive - x).
//
// Tunables (-D, part of the cache key):
//   ELEM  element type: int, uint or float        default float
//   ACC   accumulator: ELEM, or uint for ELEM=int  default ELEM
//   WG    work-group size, a power of two         default 256
//   IPT   elements per work-item per tile         default 8      (TILE = WG*IPT)
// Variants: ELEM=float; ELEM=uint; ELEM=int with ACC=uint (the kernels also compile with
//   ELEM=double and PRISM_FP64, unused by the host).
// Launch: 1D, local size exactly WG, global G*WG for both kernels; scan_reduce is skipped
//   when G = 1.
// Boundaries: the last chunk and the last tile are partial: loads past n read the identity
//   0 into local memory, stores past n are skipped.

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
#define IPT 8
#endif
#define TILE (WG * IPT)
// Local-memory index with one pad word per 32, so that item i reading its IPT consecutive
// elements (stride IPT across items) does not hit one bank 32/IPT-fold.
#define SCAN_PAD(i) ((i) + ((i) >> 5))

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

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan_reduce(__global ELEM *part, __global const ELEM *x, int n, int chunk) {
    __local ACC sums[WG];
    const int lid = (int)get_local_id(0);
    const int g = (int)get_group_id(0);
    const int base = g * chunk;
    const int len = (n - base < chunk) ? n - base : chunk;
    ACC acc = (ACC)0;
    for (int j = lid; j < len; j = SCAN_STEP(j, WG, len)) {
        acc += (ACC)x[base + j];
    }
    SCAN_GROUP_SUM(sums, lid, acc)
    if (lid == 0) part[g] = (ELEM)sums[0];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan_down(__global ELEM *y, __global const ELEM *x, __global const ELEM *part, int n, int chunk,
               int exclusive) {
    __local ACC tile[SCAN_PAD(TILE)];
    __local ACC sums[WG];
    const int lid = (int)get_local_id(0);
    const int g = (int)get_group_id(0);

    // The chunk's offset: the sum of the chunks before it.
    ACC carry = (ACC)0;
    for (int j = lid; j < g; j += WG) {
        carry += (ACC)part[j];
    }
    SCAN_GROUP_SUM(sums, lid, carry)
    carry = sums[0];
    barrier(CLK_LOCAL_MEM_FENCE);

    const int base = g * chunk;
    const int len = (n - base < chunk) ? n - base : chunk;
    for (int t = 0; t < len; t = SCAN_STEP(t, TILE, len)) {
        const int cnt = (len - t < TILE) ? len - t : TILE;
        // Coalesced load of the tile; the identity past its end.
        for (int k = 0; k < IPT; k++) {
            const int e = lid + k * WG;
            tile[SCAN_PAD(e)] = (e < cnt) ? (ACC)x[base + t + e] : (ACC)0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // Each item's total over its IPT consecutive elements.
        ACC run = (ACC)0;
        for (int k = 0; k < IPT; k++) {
            run += tile[SCAN_PAD(lid * IPT + k)];
        }
        sums[lid] = run;
        barrier(CLK_LOCAL_MEM_FENCE);
        // Inclusive Hillis-Steele scan of the item totals.
        for (int off = 1; off < WG; off <<= 1) {
            const ACC v = (lid >= off) ? sums[lid - off] : (ACC)0;
            barrier(CLK_LOCAL_MEM_FENCE);
            sums[lid] += v;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        // Write the item's elements back, scanned, with the offsets added.
        ACC pre = (lid > 0) ? carry + sums[lid - 1] : carry;
        for (int k = 0; k < IPT; k++) {
            const int e = SCAN_PAD(lid * IPT + k);
            const ACC v = tile[e];
            if (exclusive) {
                tile[e] = pre;
                pre += v;
            } else {
                pre += v;
                tile[e] = pre;
            }
        }
        carry += sums[WG - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < IPT; k++) {
            const int e = lid + k * WG;
            if (e < cnt) y[base + t + e] = (ELEM)tile[SCAN_PAD(e)];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
