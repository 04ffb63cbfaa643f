// prelude.cuh (the files of prelude/, in the order of prelude.go): the OpenCL C 1.2
// dialect of Prism's kernel suite, in CUDA C++.
//
// The CUDA backend compiles kernels/*.cl with NVRTC after this text, so that one kernel
// source serves both APIs (DESIGN.md, "One kernel source, two compilers"). It is written for
// two compilers:
//
//   - NVRTC (__CUDACC_RTC__ defined), which provides CUDA's built-in environment: thread
//     indices, vector types, the math API, atomics. The backend always compiles with
//     -default-device, so that plain helper functions of a .cl file are device functions.
//   - clang -x cuda --cuda-device-only -nocudainc -nocudalib (tests, CI), which provides
//     none of it: part 1 below declares the small subset of it that part 2 uses. Math and
//     fast-math functions are only declared (they are external calls in the PTX): the check
//     is that every kernel type-checks and compiles through the translation, not that the
//     PTX links.
//
// What maps (part 2, with the source translation of translate.go): __kernel, __global,
// __local (kernel-scope arrays, and pointer parameters: the translation makes each an
// offset in the block's dynamic shared memory, which the launch sizes), __constant
// (file-scope tables: it becomes __constant__; pointer parameters become const ones),
// __private, and the same without underscores (the translation spells them with); the
// work-item functions (returning size_t, as in OpenCL on a
// 64-bit device; kernels cast them to int); barrier and mem_fence with the CLK_* flags;
// atomic_* / atom_* on 32-bit int and uint (and atomic_xchg on float); the built-in
// functions below on scalars and, component-wise, on vectors of 2, 3, 4, 8 and 16
// components, with OpenCL's vector-and-scalar forms (clamp(float4, float, float),
// min(int4, int), mix(float4, float4, float), step(float, float4), ...; section "Built-in
// functions"): the math functions sqrt, rsqrt, cbrt, exp, exp2, exp10, expm1, log, log2,
// log10, log1p, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, pow, powr, fabs,
// floor, ceil, round, trunc, rint, fmin, fmax, fmod, hypot, copysign, fdim, maxmag, minmag,
// erf, erfc, tgamma, lgamma, fma and mad, their native_* forms and half_* forms (the latter
// at full precision); the common functions min, max, clamp, mix, step, smoothstep, sign,
// degrees and radians; the integer functions abs, abs_diff, add_sat, sub_sat, hadd, rhadd,
// rotate, mul_hi, mad_hi, mul24, mad24, popcount and clz on every integer type; the
// relational functions isequal, isnotequal, isgreater, isgreaterequal, isless,
// islessequal, islessgreater, isordered, isunordered, isnan, isinf, isfinite, isnormal and
// signbit (scalars give 1 and 0, vectors -1 and 0 of the component's size), any, all,
// select and bitselect; the geometric functions dot, length, distance, normalize, their
// fast_* forms, and cross of 3 and 4 components; half as a 16-bit storage type, with
// vload_half[N], vloada_halfN, vstore_half[N] and vstorea_halfN in every rounding mode
// (_rte, _rtz, _rtp, _rtn) on __global, __local and private arrays, and, as in
// cl_khr_fp16, half values that convert to and from float and compute in float; the
// vector types of 2, 3, 4, 8 and 16 components of char, uchar, short, ushort, int, uint,
// long, ulong, float and double, with vector literals ((float4)(a, b, c, d), (float4)(k),
// (float4)(v2, a, b)), swizzles (.xyzw, .s0-.sF, .lo .hi .even .odd) read and written,
// component-wise arithmetic, bitwise, shift, comparison and logical operators (comparisons
// give -1 and 0), as_<type>, convert_<type>[_sat][_rte|_rtz|_rtp|_rtn], vloadN and vstoreN
// (section "Vectors"), make_<type>(...) for CUDA's vector types;
// __attribute__((reqd_work_group_size(X, Y, Z))), which becomes launch_bounds(X*Y*Z) (the
// block size must not exceed it; CUDA cannot require it exactly, so launchers must pass it);
// #pragma OPENCL EXTENSION, which is ignored without a warning.
//
// The built-in functions of OpenCL C 1.2 and their state here are the table builtins.tsv
// (docs/BUILTINS.md): besides the above, the math functions with pointer outputs (sincos,
// fract, modf, frexp, remquo, lgamma_r) and the rest of section 6.12.2, mad_sat, upsample,
// shuffle, shuffle2, vec_step, the asynchronous copies, and the 64-bit atom_* functions.
//
// What does not map: get_work_dim, images and samplers (the translation refuses them by
// name and line, from builtins.tsv), printf's vector conversions (%v4f), and __global or
// __constant pointers to 3-component vectors (OpenCL's float3 is 16 bytes, CUDA's 12: the
// translation refuses them with ErrUnsupported, naming the construct); get_global_offset
// other than 0; the ?: operator with a vector condition (C++ takes it as one bool: use
// select), the vector types of half (half2, ...) and convert_half, OpenCL's size of
// 3-component vectors elsewhere (arrays of float3 in __local or private memory are 12
// bytes an element), and float atomics other than atomic_xchg (write a compare-and-swap
// loop with atomic_cmpxchg and as_uint/as_float).
//
// Kernels can tell the compilers apart: PRISM_CUDA is defined here and nowhere else.

#ifndef PRISM_PRELUDE_CUH
#define PRISM_PRELUDE_CUH
#define PRISM_CUDA 1

