// Package suite is Prism's kernel suite as one explicit, ordered list of families
// (Families) and the catalog of their operations: Ops, Lookup and Match select what `prism
// run`, `prism bench` and BenchmarkOps run, and Family gives a family's OpenCL C source
// and header (`prism kernels`).
//
// The list is the only place that knows every family: the order of Families is the order
// of every listing and report, and a new family is one line there. The catalog is built
// from it on first use; nothing registers itself at import.
//
// The package's tests run every operation of the catalog on every device found (TestOps)
// and benchmark them (BenchmarkOps), as `prism bench` does.
//
// A new family is one line in Families; docs/ARCHITECTURE.md lists the other steps, and
// those of a new variant.
package suite
