// launch.cl: an empty kernel, to time what launching one costs.
//
// Purpose: the launch family times the fixed cost of a kernel launch, not a kernel: an
// empty kernel enqueued back to back (the time per launch while the device keeps up), one
// launch and the wait for it (the round trip), and a captured graph of launches replayed
// as one (engine.Graph: a CUDA graph on CUDA). launch_empty does as good as nothing, so
// that its time is the launch's; the one word it writes is what Verify checks: that every
// launch ran, once.
//
// Arguments (count a uint buffer of at least one element; marks of at least i+1):
//   launch_empty(count)   work-item 0 adds 1 to count[0]; the other items do nothing
//       Launches on one in-order queue (or one graph's chain) run one after another, so
//       the plain read-modify-write of one work-item counts every launch; after k launches
//       count[0] is its starting value plus k (mod 2^32).
//   launch_mark(marks, i) work-item 0 stores 1 into marks[i]; the other items do nothing
//       A graph's i-th launch marks its own word: a store, with no read, so that no
//       launch waits for the memory of the one before (a read-modify-write chain costs
//       about 0.25 us a kernel in a CUDA graph on an H200: 0.76 against 0.51 for an
//       empty kernel, CuPy, 2026-11-29).
//
// Tunables (-D, part of the cache key):
//   none   the work-group size is the launcher's alone: the kernel requires none, uses no
//          local memory and has no barrier.
// Variants: one: uint.
// Launch: 1D, one work-group of the launcher's size WG (32, fewer where the device allows
//   fewer): a warp on NVIDIA, the smallest launch that occupies a unit.
// Boundaries: only count[0] is read and written; only marks[i] is written.

__kernel void launch_empty(__global uint *count) {
    if (get_global_id(0) == 0) count[0] += 1u;
}

__kernel void launch_mark(__global uint *marks, uint i) {
    if (get_global_id(0) == 0) marks[i] = 1u;
}
