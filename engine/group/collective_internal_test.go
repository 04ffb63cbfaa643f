package group

import (
	"math/rand/v2"
	"testing"
	"unsafe"
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

// BenchmarkReduceInto times the host reduction of the staged collectives: two parts of 4M
// float32 summed into a third range, in memory from the Go heap and in a segment of
// /dev/shm as the processes of one host share it (makeSegment), so that the two can be
// compared on a machine (-cpu sets the cores). Bytes are those read and written.
func BenchmarkReduceInto(b *testing.B) {
	const n = 4 << 20
	run := func(b *testing.B, mem []float32) {
		parts := [][]float32{mem[:n], mem[n : 2*n]}
		for i := range mem {
			mem[i] = float32(i & 1023)
		}
		b.SetBytes(3 * 4 * n)
		b.ResetTimer()
		for range b.N {
			if err := reduceInto(mem[2*n:3*n], parts, ReduceSum); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("heap", func(b *testing.B) { run(b, make([]float32, 3*n)) })
	b.Run("segment", func(b *testing.B) {
		_, mem, remove, err := makeSegment("/dev/shm", 3*4*n)
		if err != nil {
			b.Skip(err)
		}
		remove()
		defer unmapSegment(mem)
		run(b, unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), 3*n))
	})
}
