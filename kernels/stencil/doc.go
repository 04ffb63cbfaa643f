// Package stencil holds the stencil family of Prism's kernel suite: the 2D 5-point and the
// 3D 7-point and 27-point stencils with caller-supplied weights (stencil.cl).
//
// NewStencil compiles the family for a device; StencilRef is the float64 reference and
// StencilTolerance the error bound; Family lists the ops the suite runs.
//
// The 3D ops have two variants. "zmarch" (stencil_zmarch.cl, built by NewZMarch), first:
// a work-group owns an x-y tile of columns (32 wide, one work-item per column of x and RY
// consecutive rows each) and a chunk of ZC planes, and each work-item marches along z with
// its columns' values in registers, reading planes ahead of their use; the 7-point stencil
// reads the x and y neighbours of a plane through L1 with no local memory and no barrier,
// the 27-point stencil computes each plane's three 9-point sums once per row and (by
// default) stages the plane's tile in local memory. Its shape is a tunable set
// (ZMarchTunables, ZMarchDefault, `prism tune`). "portable" (stencil.cl), last: 2.5D
// blocking with every plane staged in local memory. Both give the same results within
// StencilTolerance, boundary points copied exactly.
package stencil
