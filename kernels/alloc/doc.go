// Package alloc holds the alloc family of Prism's kernel suite: the latency of allocating
// and freeing a device buffer of n bytes, through engine's memory pool (engine.NewBuffer
// and Buffer.Close with the pool on: alloc/pool/uint8) and straight through the backend's
// driver (Device.Driver().Alloc and Close, as engine allocates with PRISM_POOL=off:
// alloc/raw/uint8). A run enqueues nothing, so Queue.Timed measures it with the host clock;
// its model is zero, and reports give its time alone, no rate.
//
// Verify checks that the runs took the path measured (the pool's figures: every pooled
// allocation a hit, no raw one through the pool) and that the memory is usable: alloc_fill
// (alloc.cl) writes a pooled buffer whole, the driver's queue the ends of a raw one, and
// the ends are read back. Family lists the ops that the suite runs and benchmarks.
package alloc
