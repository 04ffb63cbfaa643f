// Package sort holds the sort family of Prism's kernel suite: a stable LSD radix sort of
// uint32 or float32 keys, keys only or with uint32 values, ascending or descending
// (sort.cl).
//
// NewSorter compiles the family for a device; NewOnesweep compiles its CUDA C++ variant
// (onesweep.cu: 8-bit digits, one histogram pass and one pass per digit with decoupled
// look-back), which CUDA devices run first (keys without values: up to 2^25 of them,
// above which the portable sort is faster, onesweepKeysMax); SortRef and SortPairsRef are the host
// references (results are compared bit for bit); Family lists the ops the suite runs.
package sort
