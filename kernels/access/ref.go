package access

import "github.com/prism-compute/prism/kernels"

// AccessRef returns y after op on the n = len(x) elements of x: the reference of the access
// family. stride is the strided op's (ignored otherwise); idx the n indices of gather and
// scatter (ignored otherwise). The kernels move values without arithmetic, so device
// results must equal it exactly (CheckEqual). Elements of y that no index names in a
// scatter (where some indices are n or more) are zero, as in an output zeroed before the
// run; gather gives zero for such indices.
//
// strided reads x as StridedShape views it, rows rows of stride elements with last in the
// last row, column by column: y[c*(rows-1) + min(c, last) + r] = x[r*stride + c] for the r
// below the height of column c (rows for c < last, rows-1 after). Where stride divides n,
// that is y[i] = x[(i*stride) mod n + i*stride/n].
func AccessRef[T kernels.Number](op AccessOp, x []T, idx []uint32, stride int) []T {
	n := len(x)
	y := make([]T, n)
	switch op {
	case OpSequential:
		copy(y, x)
	case OpStrided:
		rows, last := StridedShape(n, stride)
		i := 0
		for c := range stride {
			h := rows
			if c >= last {
				h--
			}
			for r := range h {
				y[i] = x[r*stride+c]
				i++
			}
		}
	case OpGather:
		for i, j := range idx[:n] {
			if int(j) < n {
				y[i] = x[j]
			}
		}
	case OpScatter:
		for i, j := range idx[:n] {
			if int(j) < n {
				y[j] = x[i]
			}
		}
	}
	return y
}
