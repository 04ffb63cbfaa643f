// Package stencil holds the stencil family of Prism's kernel suite: the 2D 5-point and the
// 3D 7-point and 27-point stencils with caller-supplied weights (stencil.cl).
//
// NewStencil compiles the family for a device; StencilRef is the float64 reference and
// StencilTolerance the error bound; Family lists the ops the suite runs.
package stencil
