// Package elementwise holds the map family of Prism's kernel suite: element-wise maps
// (axpy, axpby, exp, relu, sigmoid, fma) over one to three inputs (map.cl). The package is
// named for what its kernels do, element by element; its operations keep the family name
// "map" ("map/axpy/float32").
//
// NewMap compiles the family for a device; MapRef is the float64 reference and
// MapTolerance the per-element error bound; Family lists the ops the suite runs.
package elementwise
