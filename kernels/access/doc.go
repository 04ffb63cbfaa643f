// Package access holds the access family of Prism's kernel suite: copies of n elements
// along the memory access patterns a profiler's bandwidth analysis tells apart, the
// coalesced sequential copy, strided reads (strides 2 to 64 in the suite), and a gather and
// a scatter through a random permutation (access.cl).
//
// NewAccess compiles the family for a device; AccessRef is the reference (results are
// compared exactly: the kernels move values without arithmetic) and AccessModel the useful
// bytes each op moves; Family lists the ops ("access/stride8/float32", ...) that the suite
// runs and benchmarks.
package access
