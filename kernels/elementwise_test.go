package kernels_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestCheckElementwise checks the chunked verification of an element-wise op, out = x + y,
// at chunks of 64 elements over 3 whole chunks and a partial one: a correct output passes,
// and a mismatch in the first element, on either side of each chunk boundary, in the
// partial last chunk and in the last element, a NaN, and the first of two mismatches in
// different chunks are found with their index in the whole output; a short output fails;
// an input changed on the device is named before the mismatch it causes. It runs on
// input sets made whole (held on the host) and made a chunk at a time (read from the
// device).
func TestCheckElementwise(t *testing.T) {
	const chunk, n = 64, 3*64 + 17
	defer kernels.SetChunkLen(chunk)()
	value := func(a, i int) float32 { return float32(i%97)*0.5 - float32(a)*7 } // exact sums
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		makers := map[string]func() (*kernels.Inputs[float32], error){
			"whole": func() (*kernels.Inputs[float32], error) {
				return kernels.NewInputs(t.Context(), q, kernels.Params{}, 2*n*4, func(int) [][]float32 {
					x, y := make([]float32, n), make([]float32, n)
					for i := range n {
						x[i], y[i] = value(0, i), value(1, i)
					}
					return [][]float32{x, y}
				})
			},
			"chunked": func() (*kernels.Inputs[float32], error) {
				var calls [][3]int
				in, err := kernels.NewInputsChunked(t.Context(), q, kernels.Params{}, 2, n, func(set, a, lo int, dst []float32) {
					calls = append(calls, [3]int{set, a, lo})
					if want := min(chunk, n-lo); len(dst) != want {
						t.Errorf("fill(%d, %d, %d) with %d elements, want %d", set, a, lo, len(dst), want)
					}
					for j := range dst {
						dst[j] = value(a, lo+j)
					}
				})
				var want [][3]int
				for a := range 2 {
					for lo := 0; lo < n; lo += chunk {
						want = append(want, [3]int{0, a, lo})
					}
				}
				if !slices.Equal(calls, want) {
					t.Errorf("fill called for %v, want %v", calls, want)
				}
				return in, err
			},
		}
		for _, name := range []string{"whole", "chunked"} {
			t.Run(name, func(t *testing.T) {
				in, err := makers[name]()
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				sum := make([]float32, n)
				for i := range sum {
					sum[i] = value(0, i) + value(1, i)
				}
				out, err := engine.Upload(t.Context(), q, sum)
				if err != nil {
					t.Fatal(err)
				}
				defer out.Close()
				var spans [][2]int
				ref := func(lo int, x [][]float32, want, tol []float64) {
					spans = append(spans, [2]int{lo, len(want)})
					if len(x) != 2 || len(x[0]) != len(want) || len(x[1]) != len(want) || len(tol) != len(want) {
						t.Fatalf("ref(%d) with %d inputs of %d and %d elements, want %d, tol %d", lo, len(x), len(x[0]), len(x[1]), len(want), len(tol))
					}
					for j := range want {
						want[j], tol[j] = float64(x[0][j])+float64(x[1][j]), 0.25
					}
				}
				check := func() error { return kernels.CheckElementwise(t.Context(), q, "sum", out, in, ref) }
				if err := check(); err != nil {
					t.Fatalf("correct output: %v", err)
				}
				if want := [][2]int{{0, 64}, {64, 64}, {128, 64}, {192, 17}}; !slices.Equal(spans, want) {
					t.Errorf("chunks (lo, len) %v, want %v", spans, want)
				}
				set := func(i int, v float32) {
					t.Helper()
					if err := out.Write(t.Context(), q, i, []float32{v}); err != nil {
						t.Fatal(err)
					}
				}
				expect := func(what, msg string) {
					t.Helper()
					err := check()
					if !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), msg) {
						t.Errorf("%s: %v; want an error wrapping ErrVerify with %q", what, err, msg)
					}
				}
				for _, i := range []int{0, chunk - 1, chunk, 2*chunk - 1, 2 * chunk, 3*chunk - 1, 3 * chunk, 3*chunk + 5, n - 1} {
					set(i, sum[i]+1)
					expect(fmt.Sprintf("mismatch at %d", i), fmt.Sprintf("sum: element %d = %v, want %v", i, sum[i]+1, sum[i]))
					set(i, sum[i])
				}
				set(150, float32(math.NaN()))
				expect("NaN", fmt.Sprintf("sum: element 150 = NaN, want %v", sum[150]))
				set(150, sum[150])
				set(3*chunk+2, sum[3*chunk+2]+1)
				set(chunk+1, sum[chunk+1]-1)
				expect("two mismatches", fmt.Sprintf("sum: element %d = %v,", chunk+1, sum[chunk+1]-1))
				set(chunk+1, sum[chunk+1])
				set(3*chunk+2, sum[3*chunk+2])
				if err := check(); err != nil {
					t.Fatalf("output restored: %v", err)
				}
				short, err := engine.Upload(t.Context(), q, sum[:n-1])
				if err != nil {
					t.Fatal(err)
				}
				defer short.Close()
				if err := kernels.CheckElementwise(t.Context(), q, "sum", short, in, ref); !errors.Is(err, kernels.ErrVerify) ||
					!strings.Contains(err.Error(), fmt.Sprintf("sum: %d elements, want %d", n-1, n)) {
					t.Errorf("short output: %v", err)
				}
				if name == "chunked" {
					// The whole set downloaded (Last) hashes as its chunks did.
					last, err := in.Last(t.Context())
					if err != nil {
						t.Fatalf("Last of a chunked set: %v", err)
					}
					if len(last) != 2 || len(last[1]) != n || last[1][n-1] != value(1, n-1) {
						t.Fatalf("Last of a chunked set: %d arrays, want 2 of %d", len(last), n)
					}
				}
			})
		}
		// An input changed on the device, with the output that the changed input gives a
		// mismatch in its last chunk: the changed input is named, not the mismatch.
		in, err := kernels.NewInputsChunked(t.Context(), q, kernels.Params{}, 2, n, func(_, a, lo int, dst []float32) {
			for j := range dst {
				dst[j] = value(a, lo+j)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		zero := make([]float32, n)
		out, err := engine.Upload(t.Context(), q, zero)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		for _, bufs := range [][]*engine.Buffer[float32]{in.LastBuffers()} {
			if err := bufs[1].Fill(q, n-1, 1, 99); err != nil {
				t.Fatal(err)
			}
		}
		err = kernels.CheckElementwise(t.Context(), q, "sum", out, in, func(_ int, x [][]float32, want, tol []float64) {
			for j := range want {
				want[j], tol[j] = 0, 0 // every element right, but the last input changed
			}
		})
		if !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), "input array 1 of set 0 changed on the device") {
			t.Errorf("input changed, output right: %v", err)
		}
		err = kernels.CheckElementwise(t.Context(), q, "sum", out, in, func(_ int, x [][]float32, want, tol []float64) {
			for j := range want {
				want[j], tol[j] = float64(x[0][j])+float64(x[1][j]), 0.25 // the first chunk mismatches
			}
		})
		if !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), "input array 1 of set 0 changed on the device") {
			t.Errorf("input changed, output wrong: %v", err)
		}
	})
}

// TestNewInputsChunkedErrors checks the arguments NewInputsChunked refuses and that a done
// context stops it with an error wrapping the context's.
func TestNewInputsChunkedErrors(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		fill := func(_, _, _ int, dst []float32) { clear(dst) }
		for _, c := range [][2]int{{0, 10}, {1, 0}} {
			if _, err := kernels.NewInputsChunked(t.Context(), q, kernels.Params{}, c[0], c[1], fill); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%d arrays of %d: %v, want ErrInvalidArg", c[0], c[1], err)
			}
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := kernels.NewInputsChunked(ctx, q, kernels.Params{}, 2, 100, fill); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v, want context.Canceled", err)
		}
	})
}
