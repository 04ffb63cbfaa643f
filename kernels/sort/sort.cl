// sort.cl: LSD radix sort of 32-bit keys (uint32 or float32), keys only or key-value pairs.
//
// Purpose: a stable least-significant-digit radix sort, RADIX_BITS bits per pass, 32/RADIX_BITS
// passes, each made of three kernels (reduce, then scan, then scatter; Merrill and Grimshaw's
// "reduce-then-scan" structure, with no inter-work-group communication inside a kernel, so
// nothing relies on the forward progress of other work-groups):
//   1. sort_count:   every work-group counts the digits of its contiguous range of tiles in
//                    local-memory counters (one column per work-item: no atomics), sums them
//                    and writes a digit-major table: table[d*groups + g] = keys of group g
//                    whose digit is d;
//   2. sort_scan:    one work-group scans the table in place (exclusive), which gives every
//                    group its first output position for every digit;
//   3. sort_scatter: every work-group walks its tiles in order; for each tile it ranks the keys
//                    by digit in local memory (per-item digit counters, a work-group scan of
//                    the digit-major counter matrix, so that equal digits keep their input
//                    order), reorders the tile in local memory and writes each key (and value)
//                    to its group's running offset for the digit + its rank among the tile's
//                    keys of that digit: runs of equal digits are written contiguously.
// Key transform: keys are sorted as uint after an order-preserving map applied on the fly when
// a pass reads the caller's keys (tin) and undone when the last pass writes (tout), so no extra
// pass over memory is made. mode bit 0: float32 keys (negative: flip all bits; non-negative:
// flip the sign bit; so -Inf < ... < -0.0 < +0.0 < ... < +Inf, NaNs with the sign bit clear
// after +Inf, NaNs with it set before -Inf); mode bit 1: descending (the mapped key is
// inverted, so the sort stays stable: equal keys keep their input order).
//
// Arguments (n keys; groups work-groups of WG items, each owning tiles [g*tpg, (g+1)*tpg) of
// TILE = WG*ITEMS keys; shift = pass*RADIX_BITS; tin/tout = mode or 0):
//   sort_count  (table, src, n, shift, tin, tpg)
//                 table[d*groups + g] = count of digit d in group g's keys (src untouched)
//   sort_scan   (table, m)
//                 exclusive prefix sum of table[0..m) in place; launched as ONE work-group
//   sort_scatter(dst, src, vdst, vsrc, table, n, shift, tin, tout, tpg, pairs, dst2, vdst2,
//                cut, off1, off2)
//                 key to position o = table[d*groups+g] + rank: dst[o + off1] where o < cut,
//                 else dst2[o - cut + off2]; with pairs != 0 also the value, vsrc[i], to vdst
//                 or vdst2 alike (vdst/vsrc/vdst2 are ignored when pairs == 0: pass any
//                 buffer). A pass writes one buffer with cut = n and off1 = 0; the first
//                 pass of a sort across two devices (SPLIT, below) splits the keys at cut
//                 between two buffers, either another device's (a peer's memory its
//                 kernels reach).
//   All buffers are __global uint (float32 keys are passed as their bits).
//
// Tunables (-D, part of the cache key):
//   WG          work-group size, a power of two                default 256
//   ITEMS       keys per work-item per tile (TILE = WG*ITEMS)   default 8
//   RADIX_BITS  bits per pass: 1, 2, 4 or 8 (an even number of passes, so that the result lands
//               in the destination buffer); 5 with SPLIT        default 4
//   Local memory: sort_scatter 4*(2*TILE*33/32 + RADIX/2*WG*33/32 + WG + 2*RADIX + 1) bytes
//   (26 KB at the defaults), sort_count 4*(RADIX*WG*33/32 + WG) bytes (17 KB); TILE < 2^16
//   (the scatter's digit counters are 16 bits, two to a word, as in CUB); RADIX_BITS=8 needs a
//   smaller WG.
// Variants: one program serves uint32 and float32 keys, ascending and descending, keys only and
// pairs (runtime arguments); ELEM is not used.
// Launch: 1D. sort_count and sort_scatter: global groups*WG, local WG, with groups =
// ceil(ceil(n/TILE)/tpg); sort_scan: global WG, local WG. The last tile is padded with the
// largest mapped key (it ranks after every real key of the tile) and the pads are not written.
// Boundary: keys at or past n are never read or written; n <= 2^30 (int indices never overflow).

#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 8
#endif
#ifndef RADIX_BITS
#define RADIX_BITS 4
#endif

#define RADIX (1 << RADIX_BITS)
#define TILE (WG * ITEMS)
// Local arrays are padded by one word every 32 so that a work-item walking ITEMS (or RADIX)
// consecutive entries does not hit the same bank as its neighbours.
#define PAD(i) ((i) + ((i) >> 5))
#define TILE_WORDS (TILE + (TILE >> 5))
#define CNT_WORDS (RADIX * WG + ((RADIX * WG) >> 5))
#define HALF (RADIX / 2)
#define PCNT_WORDS (HALF * WG + ((HALF * WG) >> 5))
#if RADIX_BITS < 1 || RADIX_BITS > 8 || WG * ITEMS > 65535
#error "sort.cl: RADIX_BITS must be in 1..8 and TILE = WG*ITEMS below 65536 (16-bit counters)"
#endif
// DIGIT(k): the digit of mapped key k in this pass (shift is a kernel argument).
#define DIGIT(k) ((int)(((k) >> shift) & (RADIX - 1)))

// SPLIT builds the first pass of a sort whose keys cross between two devices (keys alone,
// RADIX_BITS = 5, or 1 for a pass that only partitions the keys by side, stably, the sort
// after it taking every bit): its buckets are (side, digit), side 0 for the keys that a splitter
// (skey, slim) keeps below it (mapped key below skey, or equal to it at a position of the
// input below slim) and side 1 for the rest, the digit the key's low RADIX_BITS - 1 bits.
// Bucket b = side*HALF + digit. The splitter is read from the device, (skey, slim) =
// (pick[pickAt], pick[pickAt + 1]): sort_pick's, or the host's. Its kernels' arguments past
// the usual ones:
//   sort_pick   (pick, sa, ma, na, seeda, sb, mb, nb, seedb, tin): one work-group of PICK_WG
//               items (default WG) picks the splitter of two parts of na and nb keys from ma and mb
//               samples of them (sort_sample's with seeds seeda and seedb, ma + mb <=
//               PICK_SAMPLES, unmapped) and writes it for each part: pick[0..1] part 0's
//               (skey, slim), pick[2..3] part 1's. The samples, merged in the order of
//               (mapped key, part, position), each stand for its part's keys over its
//               samples plus one; the splitter is the first at which they sum to na (in
//               exact integers: each weighed by its part's keys times the other part's
//               samples plus one), so that each device is predicted to end with as many
//               keys as its part held; none reaching it, every key is below. The samples
//               are sorted in local memory (bitonic), 8*(PICK_SAMPLES + PICK_WG) bytes.
//   sort_count  (..., pick, pickAt): the table of the buckets;
//   sort_scan   (table, m): also writes the buckets' starts, table[m + b] = table[b*groups]
//               for b < RADIX and table[m + RADIX] = the keys counted (m = RADIX*groups);
//   sort_scatter(..., pick, pickAt, other, ooff, which, room0, room1): the keys of part which
//               (0 or 1) of two, other + ooff the other part's starts (its table, the other
//               device's where it lies there): bucket b's keys of side 0 (b < HALF) go
//               first, bucket by bucket, part 0's before part 1's within a bucket; then side
//               1's likewise, from position cut, which the kernel sets to side 0's keys of
//               both parts (from the starts; the argument is not read). Only the first room0
//               keys of side 0 and room1 of side 1 are written: the host, which learns the
//               sides from the starts while the pass runs, reserves that room ahead.
// The scatter keeps each key's bucket beside it in local memory (lval, a byte each), where
// a pass of pairs keeps the values: SPLIT sorts keys alone. Local memory: sort_scatter
// TILE*33/32 bytes less than above, sort_count twice the counters.
#ifdef SPLIT
#define SIDE_OF(k, i) ((k) > skey || ((k) == skey && (uint)(i) >= slim))
#define SPLIT_BUCKET(k, i) ((SIDE_OF(k, i) ? HALF : 0) | (int)((k) & (HALF - 1)))
#define BUCKET(k, v) ((int)(v))
#define SPLIT_ARGS , __global const uint *pick, int pickAt
#define SPLIT_SCATTER_ARGS , __global const uint *pick, int pickAt, __global const uint *other, int ooff, int which, int room0, int room1
#define SPLITTER const uint skey = pick[pickAt], slim = pick[pickAt + 1];
#define ROOM(o, room) ((o) < (room))
#define KEEPS_VALS 1
#define LVAL uchar
#else
#define LVAL uint
#define BUCKET(k, v) DIGIT(k)
#define SPLIT_ARGS
#define SPLIT_SCATTER_ARGS
#define SPLITTER
#define ROOM(o, room) 1
#define KEEPS_VALS pairs
#endif

// map_in applies the order-preserving map of mode (see the header); map_out undoes it.
inline uint map_in(uint k, int mode) {
    if (mode & 1) k ^= (0u - (k >> 31)) | 0x80000000u;
    if (mode & 2) k = ~k;
    return k;
}

inline uint map_out(uint k, int mode) {
    if (mode & 2) k = ~k;
    if (mode & 1) k ^= ((k >> 31) - 1u) | 0x80000000u;
    return k;
}

// In-place inclusive scan of part[0..size), of type T (Hillis-Steele). Every work-item of
// a work-group of size items must reach it; each has written its own part[lid] and the
// caller has passed a barrier.
#define GROUP_INCLUSIVE_SCAN_OF(T, part, lid, size)                     \
    do {                                                                \
        for (int off_ = 1; off_ < (size); off_ <<= 1) {                 \
            T v_ = (lid) >= off_ ? part[(lid) - off_] : (T)0;           \
            barrier(CLK_LOCAL_MEM_FENCE);                               \
            part[lid] += v_;                                            \
            barrier(CLK_LOCAL_MEM_FENCE);                               \
        }                                                               \
    } while (0)
// The scan of uint part[0..WG).
#define GROUP_INCLUSIVE_SCAN(part, lid) GROUP_INCLUSIVE_SCAN_OF(uint, part, lid, WG)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sort_count(__global uint *table, __global const uint *src, int n, int shift, int tin, int tpg SPLIT_ARGS) {
    SPLITTER
    __local uint cnt[CNT_WORDS];  // cnt[PAD(d*WG + lid)]: item lid's keys of digit d
    __local uint part[WG];
    int lid = (int)get_local_id(0);
    int g = (int)get_group_id(0);
    int groups = (int)get_num_groups(0);
    for (int d = 0; d < RADIX; d++) cnt[PAD(d * WG + lid)] = 0u;
    // This group's keys: [g*tpg*TILE, min(n, (g+1)*tpg*TILE)), read coalesced; each item counts
    // its own keys in its own column, so no atomics are needed. No int overflow: the host keeps
    // n <= 2^30 and groups*tpg*TILE < n + tpg*TILE <= 2n.
    int begin = g * tpg * TILE;
    int end = min(n, begin + tpg * TILE);
    for (int i = begin + lid; i < end; i += WG) {
#ifdef SPLIT
        uint k = map_in(src[i], tin);
        int d = SPLIT_BUCKET(k, i);
#else
        int d = (int)((map_in(src[i], tin) >> shift) & (RADIX - 1));
#endif
        cnt[PAD(d * WG + lid)] += 1u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#if RADIX <= WG
    // Item lid sums the RADIX counters [lid*RADIX, lid*RADIX + RADIX), all of digit
    // lid*RADIX/WG; then item d < RADIX sums the WG/RADIX partial sums of digit d.
    uint sum = 0u;
    for (int e = 0; e < RADIX; e++) sum += cnt[PAD(lid * RADIX + e)];
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < RADIX) {
        uint total = 0u;
        for (int e = 0; e < WG / RADIX; e++) total += part[lid * (WG / RADIX) + e];
        table[lid * groups + g] = total;
    }
#else
    for (int d = lid; d < RADIX; d += WG) {
        uint total = 0u;
        for (int e = 0; e < WG; e++) total += cnt[PAD(d * WG + e)];
        table[d * groups + g] = total;
    }
#endif
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sort_scan(__global uint *table, int m) {
    __local uint buf[TILE_WORDS];
    __local uint part[WG];
    int lid = (int)get_local_id(0);
    uint carry = 0u;
    for (int base = 0; base < m; base += TILE) {
        for (int k = 0; k < ITEMS; k++) {
            int i = lid + k * WG;
            buf[PAD(i)] = base + i < m ? table[base + i] : 0u;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        uint sum = 0u;
        for (int k = 0; k < ITEMS; k++) sum += buf[PAD(lid * ITEMS + k)];
        part[lid] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        GROUP_INCLUSIVE_SCAN(part, lid);
        uint run = carry + part[lid] - sum;
        for (int k = 0; k < ITEMS; k++) {
            uint c = buf[PAD(lid * ITEMS + k)];
            buf[PAD(lid * ITEMS + k)] = run;
            run += c;
        }
        carry += part[WG - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < ITEMS; k++) {
            int i = lid + k * WG;
            if (base + i < m) table[base + i] = buf[PAD(i)];
        }
        barrier(CLK_LOCAL_MEM_FENCE); // buf and part are rewritten by the next chunk
    }
#ifdef SPLIT
    barrier(CLK_GLOBAL_MEM_FENCE); // every item's writes of the table are seen
    int groups = m / RADIX;
    for (int b = lid; b < RADIX; b += WG) table[m + b] = table[b * groups];
    if (lid == 0) table[m + RADIX] = carry;
#endif
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sort_scatter(__global uint *dst, __global const uint *src, __global uint *vdst, __global const uint *vsrc,
                  __global const uint *table, int n, int shift, int tin, int tout, int tpg, int pairs,
                  __global uint *dst2, __global uint *vdst2, int cut, int off1, int off2 SPLIT_SCATTER_ARGS) {
    SPLITTER
    __local uint lkey[TILE_WORDS];  // the tile's keys (mapped), then the tile reordered by digit
    __local LVAL lval[TILE_WORDS];  // the tile's values, reordered alongside (pairs only)
    __local uint cnt[PCNT_WORDS];   // packed digit counters of each item, then their scan (below)
    __local uint part[WG];
    __local uint gofs[RADIX];       // this group's next output position per digit
    __local uint lstart[RADIX + 1]; // the tile's first position per digit in the reordered tile
    int lid = (int)get_local_id(0);
    int g = (int)get_group_id(0);
    int groups = (int)get_num_groups(0);
#ifdef SPLIT
    {
        __global const uint *own = table + RADIX * groups; // the starts sort_scan wrote
        __global const uint *s0 = which == 0 ? own : other + ooff;
        __global const uint *s1 = which == 0 ? other + ooff : own;
        const uint side0 = s0[HALF] + s1[HALF];
        cut = (int)side0;
        for (int d = lid; d < RADIX; d += WG) {
            const int f = d & ~(HALF - 1); // the side's first bucket
            uint at = (d >= HALF ? side0 : 0u) + (s0[d] - s0[f]) + (s1[d] - s1[f]);
            if (which == 1) at += s0[d + 1] - s0[d];
            gofs[d] = table[d * groups + g] + at - own[d];
        }
    }
#else
    for (int d = lid; d < RADIX; d += WG) gofs[d] = table[d * groups + g];
#endif
    if (lid == 0) lstart[RADIX] = (uint)TILE;
    int tiles = (n + TILE - 1) / TILE;
    int t1 = min(tiles, (g + 1) * tpg);
    for (int t = g * tpg; t < t1; t++) {
        int base = t * TILE;
        int count = min(TILE, n - base);
        // 1. Load the tile, coalesced, and clear this item's digit counters.
        for (int k = 0; k < ITEMS; k++) {
            int i = lid + k * WG;
            lkey[PAD(i)] = i < count ? map_in(src[base + i], tin) : 0xffffffffu;
#ifdef SPLIT
            lval[PAD(i)] = i < count ? (uint)SPLIT_BUCKET(lkey[PAD(i)], base + i) : (uint)(RADIX - 1);
#else
            if (pairs) lval[PAD(i)] = i < count ? vsrc[base + i] : 0u;
#endif
        }
        for (int e = 0; e < HALF; e++) cnt[PAD(e * WG + lid)] = 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        // 2. Item lid owns tile positions [lid*ITEMS, lid*ITEMS + ITEMS): count their digits,
        // remembering how many keys of the same digit this item saw before each. Counters are
        // 16 bits, two per word (CUB's packing): word (d % HALF)*WG + lid holds digit d < HALF
        // in its low half and digit d + HALF in its high half.
        uint key[ITEMS], val[ITEMS], sub[ITEMS];
        for (int j = 0; j < ITEMS; j++) {
            key[j] = lkey[PAD(lid * ITEMS + j)];
            val[j] = KEEPS_VALS ? lval[PAD(lid * ITEMS + j)] : 0u;
            int d = BUCKET(key[j], val[j]);
            int w = PAD((d & (HALF - 1)) * WG + lid);
            int sh = d < HALF ? 0 : 16;
            uint c = cnt[w];
            sub[j] = (c >> sh) & 0xffffu;
            cnt[w] = c + (1u << sh);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // 3. Exclusive scan of the word-major counter matrix, both halves at once (neither
        // exceeds TILE < 2^16, so no carry crosses): the low half of word (d, lid) becomes the
        // number of the tile's keys with a digit below d, or digit d and a smaller position;
        // the high half the same among digits >= HALF, to which the low total is added.
        uint sum = 0u;
        for (int e = 0; e < HALF; e++) sum += cnt[PAD(lid * HALF + e)];
        part[lid] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        GROUP_INCLUSIVE_SCAN(part, lid);
        uint run = part[lid] - sum;
        uint low = part[WG - 1] & 0xffffu;  // the tile's keys with a digit below HALF
        for (int e = 0; e < HALF; e++) {
            uint c = cnt[PAD(lid * HALF + e)];
            cnt[PAD(lid * HALF + e)] = run;
            run += c;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // 4. Reorder the tile by digit in local memory (every item has finished reading lkey).
        for (int d = lid; d < RADIX; d += WG) {
            uint c = cnt[PAD((d & (HALF - 1)) * WG)];
            lstart[d] = d < HALF ? (c & 0xffffu) : (c >> 16) + low;
        }
        for (int j = 0; j < ITEMS; j++) {
            int d = BUCKET(key[j], val[j]);
            uint c = cnt[PAD((d & (HALF - 1)) * WG + lid)];
            uint r = (d < HALF ? (c & 0xffffu) : (c >> 16) + low) + sub[j];
            lkey[PAD((int)r)] = key[j];
            if (KEEPS_VALS) lval[PAD((int)r)] = val[j];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // 5. Write out, coalesced within each digit's run: position i of the reordered tile
        // holds the (i - lstart[d])-th key of digit d.
        for (int k = 0; k < ITEMS; k++) {
            int i = lid + k * WG;
            if (i < count) {
                uint kk = lkey[PAD(i)];
                int d = BUCKET(kk, lval[PAD(i)]);
                int o = (int)(gofs[d] + (uint)i - lstart[d]);
                if (o < cut) {
                    if (ROOM(o, room0)) {
                        dst[o + off1] = map_out(kk, tout);
                        if (pairs) vdst[o + off1] = lval[PAD(i)];
                    }
                } else if (ROOM(o - cut, room1)) {
                    dst2[o - cut + off2] = map_out(kk, tout);
                    if (pairs) vdst2[o - cut + off2] = lval[PAD(i)];
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // 6. Advance the running offsets by this tile's digit counts. The next reads of gofs and
        // writes of lstart are barriers away (next tile, steps 4 and 5).
        for (int d = lid; d < RADIX; d += WG) gofs[d] += lstart[d + 1] - lstart[d];
    }
}

// sort_merge merges two sorted runs, a = ka[alo, alo + na) and b = kb[blo, blo + nb), into
// dst[dlo, dlo + na + nb), stably: a key of a goes before an equal key of b. The runs may lie
// in one buffer or two (with peer access, on another device's memory); dst is distinct from
// both. Keys compare as map_in's (mode as above: bit 0 float32 keys, bit 1 descending, the
// order the radix sort gives) and move bit for bit; with pairs != 0 the values of va and vb
// move alongside into vdst (vdst, va and vb are not touched otherwise: pass any buffers).
// nb == 0 copies a. Indices are uint (na + nb and every end below 2^32).
// Merge path (Green, McColl and Bader) by tiles, as in ModernGPU's and CUB's merges: with
// local size L the output is cut into tiles of T = L*MERGE_ITEMS outputs (the last may be
// shorter), and work-group g writes the `per` tiles from g*per on (1 <= per <= MERGE_GROUP):
//   1. the group searches the merge path in global memory at the first diagonal of each of
//      its tiles and at the end of the last, one work-item a diagonal, binary: the searches
//      run side by side, so the group waits for about log2(na + nb) dependent reads (of
//      another device's memory, across a link, where a run lies there) once for per tiles
//      rather than once a tile. Diagonal d's outcome is how many keys of a come first.
//   Then for each of its tiles, whose inputs are a[ia0, ia1) and b[ib0, ib1) (ia1 - ia0 +
//   ib1 - ib0 = d1 - d0):
//   2. the group loads them into lkey (a's keys, then b's), coalesced: consecutive
//      work-items read consecutive keys of each run;
//   3. each work-item binary-searches the tile's merge path in local memory at its own
//      diagonal lid*MERGE_ITEMS and merges its MERGE_ITEMS outputs, writing for each the
//      position of its key in lkey into lpos (no keys are kept in private arrays);
//   4. the group writes the tile coalesced: output t is lkey[lpos[t]], and with pairs the
//      value read from va or vb where that key came from (consecutive outputs read two
//      increasing runs of consecutive values).
// Launch: 1D, local size L <= MERGE_WG (any L, not only a power of two), global
// ceil(ceil((na + nb)/T)/per)*L work-items.
// Tunables (-D): MERGE_WG (128), MERGE_ITEMS (15) and MERGE_GROUP (32). Local memory:
// 4*(MERGE_WG*2*MERGE_ITEMS + MERGE_GROUP + 1) bytes (15.1 KB at the defaults), which would
// let 14 groups share a multiprocessor of 228 KB (an H200's); its 56 registers a work-item
// (ncu) hold it to 9.
// MERGE_ITEMS is odd so that the writes of step 3, MERGE_ITEMS words apart from one
// work-item to the next, fall in distinct banks.
#ifndef MERGE_WG
#define MERGE_WG 128
#endif
#ifndef MERGE_ITEMS
#define MERGE_ITEMS 15
#endif
#ifndef MERGE_GROUP
#define MERGE_GROUP 32
#endif
#define MERGE_TILE (MERGE_WG * MERGE_ITEMS)
// MERGE_IN(t): the tile's input lkey[t] (sort_merge's variables): a's first, then b's.
#define MERGE_IN(x, y, t) ((t) < ta ? (x)[alo + ia0 + (t)] : (y)[blo + ib0 + ((t) - ta)])
__kernel void sort_merge(__global uint *dst, uint dlo, __global const uint *ka, uint alo, uint na,
                         __global const uint *kb, uint blo, uint nb,
                         __global uint *vdst, __global const uint *va, __global const uint *vb, int mode, int pairs,
                         uint per) {
    __local uint lkey[MERGE_TILE];      // a tile's inputs: a[ia0, ia1), then b[ib0, ib1)
    __local uint lpos[MERGE_TILE];      // lpos[t]: the position in lkey of the tile's output t
    __local uint lcut[MERGE_GROUP + 1]; // lcut[k]: the keys of a before the group's tile k
    const uint n = na + nb;
    const uint lid = (uint)get_local_id(0), lsz = (uint)get_local_size(0);
    const uint tile = lsz * MERGE_ITEMS;
    const uint first = (uint)get_group_id(0) * per; // the group's first tile: first*tile < n
    const uint tiles = (uint)(((ulong)n + tile - 1u) / tile);
    const uint nt = min(per, tiles - first); // the group's tiles, 1 to per
    __global const uint *a = ka + alo;
    __global const uint *b = kb + blo;
    // 1. At diagonal d, i keys of a and d - i of b come first: the least i in [d - nb, min(d,
    // na)] whose a[i] does not go before b[d - i - 1]. (max, not a conditional subtraction:
    // LLVM makes that a saturating-subtract intrinsic, which Oclgrind does not know)
    for (uint k = lid; k <= nt; k += lsz) {
        const uint d = (uint)min((ulong)(first + k) * tile, (ulong)n);
        uint ilo = max(d, nb) - nb, ihi = min(d, na);
        while (ilo < ihi) {
            const uint m = ilo + (ihi - ilo) / 2u;
            if (map_in(a[m], mode) <= map_in(b[d - m - 1u], mode)) {
                ilo = m + 1u;
            } else {
                ihi = m;
            }
        }
        lcut[k] = ilo;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < nt; k++) {
        const uint d0 = (first + k) * tile;
        const uint cnt = min(tile, n - d0);
        const uint ia0 = lcut[k], ib0 = d0 - ia0;
        const uint ta = lcut[k + 1u] - ia0; // the tile's keys of a: lkey[0, ta); of b: lkey[ta, cnt)
        const uint tb = cnt - ta;
        // 2. Load. In the last tile, positions from cnt on load input cnt - 1 again (never
        // read back): without a condition around them the loads can all be issued at once.
        for (uint r = 0; r < MERGE_ITEMS; r++) {
            const uint t = min(lid + r * lsz, cnt - 1u);
            lkey[lid + r * lsz] = MERGE_IN(ka, kb, t);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // 3. This item's outputs [e, e + MERGE_ITEMS) of the tile (none past cnt): the
        // search as in step 1, on lkey.
        const uint e = min(lid * MERGE_ITEMS, cnt);
        uint ilo = max(e, tb) - tb, ihi = min(e, ta);
        while (ilo < ihi) {
            const uint m = ilo + (ihi - ilo) / 2u;
            if (map_in(lkey[m], mode) <= map_in(lkey[ta + e - m - 1u], mode)) {
                ilo = m + 1u;
            } else {
                ihi = m;
            }
        }
        uint i = ilo, j = ta + e - ilo; // the next key of a and of b in lkey
        uint ki = i < ta ? map_in(lkey[i], mode) : 0u, kj = j < cnt ? map_in(lkey[j], mode) : 0u;
        const uint e1 = min(e + MERGE_ITEMS, cnt);
        for (uint t = e; t < e1; t++) {
            if (j >= cnt || (i < ta && ki <= kj)) {
                lpos[t] = i++;
                if (i < ta) ki = map_in(lkey[i], mode);
            } else {
                lpos[t] = j++;
                if (j < cnt) kj = map_in(lkey[j], mode);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // 4. Store (the last tile's outputs past cnt are not written). The values are all
        // read before any is written, since vdst might alias va or vb as far as the
        // compiler knows.
        for (uint r = 0; r < MERGE_ITEMS; r++) {
            const uint t = lid + r * lsz;
            if (t < cnt) dst[dlo + d0 + t] = lkey[lpos[t]];
        }
        if (pairs) {
            uint val[MERGE_ITEMS];
            for (uint r = 0; r < MERGE_ITEMS; r++) {
                const uint p = lpos[min(lid + r * lsz, cnt - 1u)];
                val[r] = MERGE_IN(va, vb, p);
            }
            for (uint r = 0; r < MERGE_ITEMS; r++) {
                const uint t = lid + r * lsz;
                if (t < cnt) vdst[dlo + d0 + t] = val[r];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE); // the next tile's loads overwrite lkey and lpos
    }
}

// sort_cut runs m binary searches over one sorted run (sorted as the radix sort sorts:
// mapped by map_in with mode, ascending): search g, from query[4g .. 4g+3] = (key, strict,
// lo, hi), writes into pos[g] the first position p in [lo, hi) whose mapped key is past
// key (above it where strict != 0, at or above it where strict == 0), hi where none is:
// where a sharded sort's splitter cuts a device's run. One work-item a search, each about
// log2(hi - lo) dependent reads, all searches of a run in one launch.
// Launch: 1D, at least m work-items (any local size).
__kernel void sort_cut(__global uint *pos, __global const uint *run, __global const uint *query, uint m, int mode) {
    const uint g = (uint)get_global_id(0);
    if (g >= m) return;
    const uint key = query[4u * g], strict = query[4u * g + 1u];
    uint lo = query[4u * g + 2u], hi = query[4u * g + 3u];
    while (lo < hi) {
        const uint mid = lo + (hi - lo) / 2u;
        const uint k = map_in(run[mid], mode);
        if (strict != 0u ? k > key : k >= key) {
            hi = mid;
        } else {
            lo = mid + 1u;
        }
    }
    pos[g] = lo;
}

// sample_at returns the position of sample g of m drawn from n keys with seed: slot g is
// [g*n/m, (g+1)*n/m), and the sample is at a position of it chosen by a hash of g and seed
// (Wellons's lowbias32), its start where the slot is empty (n < m). ShardedSort computes
// the same positions on the host (sampleAt).
inline uint sample_at(uint g, uint n, uint m, uint seed) {
    const uint lo = (uint)(((ulong)g * n) / m), hi = (uint)(((ulong)(g + 1u) * n) / m);
    uint x = g ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return hi > lo ? lo + x % (hi - lo) : lo;
}

// sort_sample copies k - 1 keys of a run of n keys, the samples a sharded sort picks its
// splitters from, in one launch: with seed == 0 evenly spaced ones, out[g] = run[(g+1)*n/k]
// for g < k - 1 (the products in 64 bits), which is how a sorted run is sampled; with seed
// != 0 one key drawn from each of k - 1 even slots, out[g] = run[sample_at(g, n, k - 1,
// seed)], for keys in no order (a sample at fixed strides would see every period of the
// input that divides them). Launch: 1D, at least k - 1 work-items (any local size).
__kernel void sort_sample(__global uint *out, __global const uint *run, uint n, uint k, uint seed) {
    const uint g = (uint)get_global_id(0);
    if (g + 1u >= k) return;
    out[g] = run[seed == 0u ? (uint)(((ulong)(g + 1u) * n) / k) : sample_at(g, n, k - 1u, seed)];
}

// sort_pick is in every build (the crossing pass's, SPLIT, is sized by the host with
// PICK_SAMPLES and PICK_WG; elsewhere it is small and unused).
#ifndef PICK_WG
#define PICK_WG WG
#endif
#ifndef PICK_SAMPLES
#define PICK_SAMPLES (2 * PICK_WG)
#endif
#if (PICK_SAMPLES & (PICK_SAMPLES - 1)) != 0 || (PICK_WG & (PICK_WG - 1)) != 0 || PICK_SAMPLES < 2 * PICK_WG
#error "sort.cl: PICK_SAMPLES and PICK_WG must be powers of two, PICK_SAMPLES at least 2*PICK_WG"
#endif
// sort_pick: see SPLIT above. A sample is one word, mapped key << 32 | part << 31 | its
// index among its part's (whose positions grow with it); the pads past ma + mb are all ones.
__kernel __attribute__((reqd_work_group_size(PICK_WG, 1, 1)))
void sort_pick(__global uint *pick, __global const uint *sa, int ma, int na, uint seeda,
               __global const uint *sb, int mb, int nb, uint seedb, int tin) {
    __local ulong e[PICK_SAMPLES];
    __local ulong part[PICK_WG];
    __local int at;
    const int lid = (int)get_local_id(0);
    const ulong pad = ~(ulong)0;
    for (int i = lid; i < PICK_SAMPLES; i += PICK_WG) {
        ulong v = pad;
        if (i < ma) v = (ulong)map_in(sa[i], tin) << 32 | (ulong)i;
        else if (i - ma < mb) v = (ulong)map_in(sb[i - ma], tin) << 32 | (ulong)1 << 31 | (ulong)(i - ma);
        e[i] = v;
    }
    if (lid == 0) at = -1;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int size = 2; size <= PICK_SAMPLES; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int t = lid; t < PICK_SAMPLES / 2; t += PICK_WG) {
                const int lo = 2 * t - (t & (stride - 1)), hi = lo + stride;
                const ulong a = e[lo], b = e[hi];
                if ((a > b) == ((lo & size) == 0)) {
                    e[lo] = b;
                    e[hi] = a;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    // Item lid weighs the samples [lid*PER, lid*PER + PER); the first sample at which the
    // weights summed in order reach need is the splitter.
    const int PER = PICK_SAMPLES / PICK_WG;
    const ulong wa = (ulong)na * (ulong)(mb + 1), wb = (ulong)nb * (ulong)(ma + 1);
    const ulong need = (ulong)na * (ulong)(ma + 1) * (ulong)(mb + 1);
    ulong sum = 0;
    for (int k = 0; k < PER; k++) {
        const ulong v = e[lid * PER + k];
        sum += v == pad ? 0 : ((v >> 31) & 1) ? wb : wa;
    }
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    GROUP_INCLUSIVE_SCAN_OF(ulong, part, lid, PICK_WG);
    ulong reached = part[lid] - sum;
    for (int k = 0; k < PER && need > 0; k++) {
        const ulong v = e[lid * PER + k];
        if (v == pad) break;
        const ulong w = ((v >> 31) & 1) ? wb : wa;
        if (reached < need && reached + w >= need) at = lid * PER + k; // one item finds it
        reached += w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        uint key = 0u, lim0 = 0u, lim1 = 0u; // no keys held by part 0: every key above
        if (need > 0 && at < 0) { // no sample reaches it: every key below
            key = 0xffffffffu;
            lim0 = lim1 = 0xffffffffu;
        } else if (need > 0) {
            const ulong v = e[at];
            const uint g = (uint)(v & 0x7fffffffu);
            key = (uint)(v >> 32);
            if (((v >> 31) & 1) == 0) {
                lim0 = sample_at(g, (uint)na, (uint)ma, seeda) + 1u; // part 1's equal keys above
            } else {
                lim0 = 0xffffffffu;
                lim1 = sample_at(g, (uint)nb, (uint)mb, seedb) + 1u;
            }
        }
        pick[0] = key;
        pick[1] = lim0;
        pick[2] = key;
        pick[3] = lim1;
    }
}
