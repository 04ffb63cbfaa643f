package group

import (
	"math/rand/v2"
	"testing"
)

// TestReduceParts checks the host reduction of staged collectives across many chunks
// (and a short last one) against a plain loop, for every reduction.
func TestReduceParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3*reduceChunk + 17
	parts := make([][]float64, 3)
	for i := range parts {
		parts[i] = make([]float64, n)
		for j := range parts[i] {
			parts[i][j] = float64(rng.IntN(200) - 100)
		}
	}
	for _, op := range []ReduceOp{ReduceSum, ReduceProd, ReduceMax, ReduceMin} {
		got, err := reduceParts(parts, op)
		if err != nil {
			t.Fatal(err)
		}
		for j := range n {
			want := parts[0][j]
			for _, p := range parts[1:] {
				switch op {
				case ReduceSum:
					want += p[j]
				case ReduceProd:
					want *= p[j]
				case ReduceMax:
					want = max(want, p[j])
				case ReduceMin:
					want = min(want, p[j])
				}
			}
			if got[j] != want {
				t.Fatalf("%v: element %d = %v, want %v", op, j, got[j], want)
			}
		}
	}
}

// reduceParts reduces the parts element-wise, in rank order, into a new slice (see
// reduceInto).
func reduceParts[T CollectiveScalar](parts [][]T, op ReduceOp) ([]T, error) {
	r := make([]T, len(parts[0]))
	if err := reduceInto(r, parts, op); err != nil {
		return nil, err
	}
	return r, nil
}
