// Package suitekernels holds the OpenCL C kernels of the conformance suite (package
// engine/enginetest), in one place for the two packages that need them: the suite, which
// builds and launches them on every backend, and the fake backend (engine/internal/fake),
// which implements each of them in Go under the same name.
//
// The kernels follow the suite's rules for portable sources: OpenCL C 1.2, work-item
// indices cast to int, no __local pointer arguments, every access bounds-checked so that a
// global size rounded up to the work-group size writes nothing past n.
package suitekernels

// Kernel names in Source, with their arguments in order.
const (
	// Axpy computes y[off+i] = a*x[i] + y[off+i] for i in [0, n).
	// Arguments: int n, int off, float a, global const float *x, global float *y.
	Axpy = "prism_axpy"
	// Iota writes out[off+i] = i for i in [0, n).
	// Arguments: int n, int off, global uint *out.
	Iota = "prism_iota"
	// Index2D writes out[off + y*w + x] = (y << 16) | x for x < w, y < h, with x and y the
	// global IDs in dimensions 0 and 1.
	// Arguments: int w, int h, int off, global uint *out.
	Index2D = "prism_index2d"
	// Index3D writes out[off + (z*h + y)*w + x] = (z << 20) | (y << 10) | x for x < w,
	// y < h, z < d.
	// Arguments: int w, int h, int d, int off, global uint *out.
	Index3D = "prism_index3d"
	// Define writes out[0] = DefineMacro, which defaults to DefineDefault when the build
	// options do not set it with -D.
	// Arguments: global int *out.
	Define = "prism_define"
)

// NumArgs is the number of arguments each kernel of Source declares.
var NumArgs = map[string]int{Axpy: 5, Iota: 3, Index2D: 4, Index3D: 5, Define: 1}

// DefineMacro is the macro that kernel Define writes; DefineDefault is its value when no
// -D option sets it.
const (
	DefineMacro   = "PRISM_DEFINE_VALUE"
	DefineDefault = 1
)

// Source holds every kernel of the suite.
const Source = `// Conformance-suite kernels (package engine/enginetest).
// Every kernel checks its bounds: the global size is n rounded up to the work-group size.
// Tunables: PRISM_DEFINE_VALUE (default 1), read by prism_define only.

#ifndef PRISM_DEFINE_VALUE
#define PRISM_DEFINE_VALUE 1
#endif

__kernel void prism_axpy(const int n, const int off, const float a,
                         __global const float *x, __global float *y) {
  const int i = (int)get_global_id(0);
  if (i < n) {
    y[off + i] = a * x[i] + y[off + i];
  }
}

__kernel void prism_iota(const int n, const int off, __global uint *out) {
  const int i = (int)get_global_id(0);
  if (i < n) {
    out[off + i] = (uint)i;
  }
}

__kernel void prism_index2d(const int w, const int h, const int off, __global uint *out) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  if (x < w && y < h) {
    out[off + y * w + x] = ((uint)y << 16) | (uint)x;
  }
}

__kernel void prism_index3d(const int w, const int h, const int d, const int off,
                            __global uint *out) {
  const int x = (int)get_global_id(0);
  const int y = (int)get_global_id(1);
  const int z = (int)get_global_id(2);
  if (x < w && y < h && z < d) {
    out[off + (z * h + y) * w + x] = ((uint)z << 20) | ((uint)y << 10) | (uint)x;
  }
}

__kernel void prism_define(__global int *out) {
  if (get_global_id(0) == 0) {
    out[0] = PRISM_DEFINE_VALUE;
  }
}
`

// BadIdent is the undeclared identifier in BadSource; a backend's build log must name it.
const BadIdent = "undefined_symbol_q"

// BadSource is a kernel that does not compile: it reads an undeclared identifier.
const BadSource = `__kernel void prism_bad(__global float *x) {
  x[0] = undefined_symbol_q;
}
`
