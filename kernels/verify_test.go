package kernels

import (
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCheckCloseFrom checks the comparison of a part of an output: indices in errors and in
// tol are the elements' indices in the whole output, a NaN never passes, and the first
// mismatch is the one named.
func TestCheckCloseFrom(t *testing.T) {
	const lo = 1000
	want := []float64{1, 2, 3, 4, 5, 6}
	var asked []int
	tol := func(i int) float64 {
		asked = append(asked, i)
		return 0.5
	}
	if err := checkCloseFrom("out", lo, []float32{1, 2.25, 3, 4, 4.75, 6}, want, tol); err != nil {
		t.Fatalf("within tolerance: %v", err)
	}
	for j, i := range asked {
		if i != lo+j {
			t.Fatalf("tol asked for %v, want %d to %d", asked, lo, lo+len(want)-1)
		}
	}
	for _, c := range []struct {
		got  []float32
		want string
	}{
		{[]float32{1, 2, 3, 4, 5, 7}, "out: element 1005 = 7, want 6"},
		{[]float32{1, 2, 3.6, 4, 5, 7}, "out: element 1002 = 3.6, want 3"},
		{[]float32{1, 2, 3, float32(math.NaN()), 5, 6}, "out: element 1003 = NaN, want 4"},
		{[]float32{float32(math.Inf(1)), 2, 3, 4, 5, 6}, "out: element 1000 = +Inf, want 1"},
	} {
		err := checkCloseFrom("out", lo, c.got, want, func(int) float64 { return 0.5 })
		if !errors.Is(err, ErrVerify) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want an error wrapping ErrVerify with %q", c.got, err, c.want)
		}
	}
	// A NaN in the reference never passes either.
	if err := checkCloseFrom("out", lo, []float32{1}, []float64{math.NaN()}, func(int) float64 { return math.Inf(1) }); !errors.Is(err, ErrVerify) {
		t.Errorf("NaN reference: %v, want ErrVerify", err)
	}
	// CheckClose is the same comparison from 0.
	if err := CheckClose("out", []float32{1, 2, 9}, []float64{1, 2, 3}, func(int) float64 { return 0 }); err == nil ||
		!strings.Contains(err.Error(), "out: element 2 = 9, want 3 (|diff| 6 > tolerance 0)") {
		t.Errorf("CheckClose: %v", err)
	}
}

// TestRandRounded checks that RandRounded draws the values RandFloats draws, in order,
// across its chunks and parallel pieces, that each piece is rounded once and in place,
// and that the generator is left where RandFloats leaves it.
func TestRandRounded(t *testing.T) {
	for _, n := range []int{0, 1, 1000, randChunk, 2*randChunk + 70001} {
		want := RandFloats[float32](NewRand(7, 2), n, -3, 5)
		rng := NewRand(7, 2)
		var calls atomic.Int64
		got := RandRounded(rng, n, -3, 5, func(dst []float32, x []float64) {
			calls.Add(1)
			for i, v := range x {
				dst[i] = float32(v)
			}
		})
		if len(got) != n {
			t.Fatalf("n %d: %d values", n, len(got))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("n %d: element %d = %v, want %v", n, i, got[i], want[i])
			}
		}
		if n > 0 && calls.Load() == 0 || n == 0 && calls.Load() != 0 {
			t.Errorf("n %d: round called %d times", n, calls.Load())
		}
		next := NewRand(7, 2)
		RandFloats[float32](next, n, 0, 1)
		if a, b := rng.Uint64(), next.Uint64(); a != b {
			t.Errorf("n %d: the generator was left elsewhere than RandFloats leaves it", n)
		}
	}
}

// TestFillRand checks that filling an array a chunk at a time draws the values RandFloats
// draws for the whole array.
func TestFillRand(t *testing.T) {
	want := RandFloats[float32](NewRand(7, 1), 1000, -1, 1)
	rng := NewRand(7, 1)
	got := make([]float32, 1000)
	for lo := 0; lo < len(got); lo += 64 {
		FillRand(rng, got[lo:min(lo+64, len(got))], -1, 1)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d = %v, want %v", i, got[i], want[i])
		}
	}
}
