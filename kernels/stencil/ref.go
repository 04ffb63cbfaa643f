package stencil

import (
	"math"

	"github.com/prism-compute/prism/kernels"
)

// StencilRefAt returns, in float64, stencil kind's output at point i (= (z*ny + y)*nx + x)
// of the nx x ny x nz grid in (nz = 1 in 2D) with weights w, and mag, the sum of
// |w_k|*|in_k| over its terms, for the tolerance. A boundary point (one with a neighbour
// outside the grid) is the input copied, with mag 0: the copy is exact.
func StencilRefAt[T kernels.Float](kind StencilKind, in, w []T, nx, ny, nz, i int) (val, mag float64) {
	x, y, z := i%nx, (i/nx)%ny, i/(nx*ny)
	inside := x > 0 && x < nx-1 && y > 0 && y < ny-1
	if kind.Dims() == 3 {
		inside = inside && z > 0 && z < nz-1
	}
	if !inside {
		return float64(in[i]), 0
	}
	term := func(k, dx, dy, dz int) {
		p := float64(w[k]) * float64(in[i+(dz*ny+dy)*nx+dx])
		val += p
		mag += math.Abs(p)
	}
	switch kind {
	case Stencil5pt, Stencil7pt:
		term(0, 0, 0, 0)
		term(1, -1, 0, 0)
		term(2, 1, 0, 0)
		term(3, 0, -1, 0)
		term(4, 0, 1, 0)
		if kind == Stencil7pt {
			term(5, 0, 0, -1)
			term(6, 0, 0, 1)
		}
	case Stencil27pt:
		for dz := -1; dz <= 1; dz++ {
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					term((dz+1)*9+(dy+1)*3+dx+1, dx, dy, dz)
				}
			}
		}
	}
	return val, mag
}

// StencilRef returns the float64 reference of one sweep of stencil kind over the whole
// grid, and each point's mag (see StencilRefAt).
func StencilRef[T kernels.Float](kind StencilKind, in, w []T, nx, ny, nz int) (want, mag []float64) {
	n := nx * ny * nz
	want, mag = make([]float64, n), make([]float64, n)
	for i := range n {
		want[i], mag[i] = StencilRefAt(kind, in, w, nx, ny, nz, i)
	}
	return want, mag
}

// StencilTolerance returns the largest error allowed at an output point of stencil kind
// whose terms have sum of |w_k|*|in_k| mag.
//
// An interior output is a sum of k = kind.Points() products w_k*in_k computed in T. Each
// term passes through one rounding for its product (none when fused into an fma) and at
// most k-1 roundings of the additions, in whatever order and grouping the kernel adds
// (the 3D kernels add three partial sums, one per z layer): so the computed sum differs
// from the exact one by at most gamma_k * sum |w_k||in_k|, gamma_k = k*u/(1-k*u), u the
// unit roundoff of T (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
// 3.1 and 4.2). The weights and inputs are T values, exact in float64. Boundary points are
// copies (mag 0): tolerance 0.
func StencilTolerance[T kernels.Float](kind StencilKind, mag float64) float64 {
	return kernels.Gamma[T](kind.Points()) * mag
}
