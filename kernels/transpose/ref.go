package transpose

import "github.com/prism-compute/prism/kernels"

// TransposeRef returns the rows x cols row-major matrix in transposed (cols x rows,
// row-major): the reference of the transpose family. Transposition moves values without
// arithmetic, so device results must equal it exactly (CheckEqual).
func TransposeRef[T kernels.Number](in []T, rows, cols int) []T {
	out := make([]T, rows*cols)
	for r := range rows {
		row := in[r*cols : (r+1)*cols]
		for c, v := range row {
			out[c*rows+r] = v
		}
	}
	return out
}
