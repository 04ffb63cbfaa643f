// Package fuse compiles element-wise expressions over buffers and scalars into one OpenCL
// C kernel: `y = a*x + exp(-z)` reads x and z once and writes y once, where separate
// kernels write and read every intermediate array. It is the compiler behind `prism exec
// --expr` and the fused family of the kernel suite (kernels/fused).
//
// Parse checks an expression against the types of its inputs and outputs (Types) and
// returns an Expr: the kernel's OpenCL C source, its arguments (Params), its work (Model)
// and a float64 reference with a bound of the device's error (Ref, Eval). It needs no
// device. Compile does the same and builds the kernel for a device, cached per device, and
// the Kernel it returns launches it (Run, Launch). An expression that reads a name it does
// not know fails with a *NameError, which lists the names known there.
//
// The compiler is one file per phase: lex.go (tokens), parse.go (the expression tree, by
// recursive descent), check.go (types, promotion, the kernel's arguments), generate.go
// (the OpenCL C source, each value computed once), evaluate.go (the float64 reference
// and its error bound), run.go and cache.go (the device's kernels). expr.go holds Expr,
// which carries the result of each phase.
//
// # The language
//
//   - A program is one or more assignments `name = expr`, separated by `;` (a trailing `;`
//     is allowed). A name given a buffer type in Types is an output buffer; any other
//     assigned name is a local value, usable by the assignments after it. A name read
//     before it is assigned is an input (a buffer or a scalar, as Types says); once
//     assigned, it stands for the value assigned. Every work-item loads its inputs before
//     it stores its outputs, so an output may be an input (`x = 2*x`).
//   - Expressions: identifiers, numeric literals (`2`, `0.5`, `1e-3`), `+ - * / %`, unary
//     `-` and `+`, comparisons `< <= > >= == !=` (only as the condition of `?:`),
//     `c ? a : b`, parentheses, and the calls exp, exp2, log, log2, log10, sqrt, rsqrt, sin,
//     cos, tan, tanh, pow, fabs, abs, floor, ceil, min, max, clamp, fma, and the
//     conversions float32, float64, int32, uint32.
//   - Types: float32, float64, int32, uint32. `%` on floats is fmod; on integers C's
//     remainder. Integer arithmetic wraps; integer division truncates toward zero (the
//     device's result of a division by zero is undefined). The math functions but abs,
//     min, max and clamp take floats.
//   - Promotion: an integer operand meeting a float converts to the float's type; float32
//     meeting float64 converts to float64; int32 meeting uint32 is an error (convert one).
//     A literal takes the type of the operand it meets (a float literal meeting an integer
//     makes both float32), and a subexpression of literals alone the type of its context:
//     `1/2*x` is `0.5*x` for a float x. An assignment converts an integer value to a
//     float output; a float value assigned to an integer output, or an int32 to a uint32
//     and the reverse, is an error. A local takes its value's type (float32 or int32 for literals alone). Math functions of
//     integers compute in float32, of literals alone in the type of their context.
//
// Errors wrap engine.ErrInvalidArg and name the 1-based column of the problem. Both sides
// of ?: are computed (an integer division by zero in either is undefined on the device),
// and a NaN result never passes verification against Ref.
//
// Expr is immutable, and it and Kernel are safe for concurrent use (each goroutine with
// its own Queue). The package imports engine and the kernels base (Model, the device's
// limits) and has no cgo.
package fuse
