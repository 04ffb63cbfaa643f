package gemm

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestGEMMVerifySample checks Verify above gemmFullCheck, where it reads only a sample of
// D: a correct result passes, and a wrong corner is found and named.
func TestGEMMVerifySample(t *testing.T) {
	if kerneltest.Small() {
		t.Skip("a sampled check needs M*N*K above gemmFullCheck")
	}
	const n = 640 // n^3 above gemmFullCheck
	if n*n*n <= gemmFullCheck {
		t.Fatalf("%d^3 is not above gemmFullCheck", n)
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		inst, err := opNamed(t, "gemm/nn/float32").Variants[len(opNamed(t, "gemm/nn/float32").Variants)-1].Setup(t.Context(), q, kernels.Params{Size: n * n, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		defer inst.Close()
		if err := inst.Run(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		if err := inst.Verify(t.Context(), q); err != nil {
			t.Fatalf("correct result: %v", err)
		}
		d := inst.(*gemmInstance[float32, float32]).d
		for _, c := range [][2]int{{0, n - 1}, {n - 1, n - 1}} {
			o := c[0]*n + c[1]
			var v [1]float32
			if err := d.Read(t.Context(), q, o, v[:]); err != nil {
				t.Fatal(err)
			}
			if err := d.Write(t.Context(), q, o, []float32{v[0] + 1}); err != nil {
				t.Fatal(err)
			}
			err := inst.Verify(t.Context(), q)
			if want := fmt.Sprintf("D[0][%d][%d] = %v,", c[0], c[1], v[0]+1); !errors.Is(err, kernels.ErrVerify) || !strings.Contains(err.Error(), want) {
				t.Errorf("D[0][%d][%d] wrong: %v; want an error wrapping ErrVerify with %q", c[0], c[1], err, want)
			}
			if err := d.Write(t.Context(), q, o, v[:]); err != nil {
				t.Fatal(err)
			}
		}
		if err := inst.Verify(t.Context(), q); err != nil {
			t.Fatalf("result restored: %v", err)
		}
	})
}

// opNamed returns the family's op of that name.
func opNamed(t *testing.T, name string) kernels.Op {
	t.Helper()
	for _, op := range Family().Ops {
		if op.Name == name {
			return op
		}
	}
	t.Fatalf("no op %s in the gemm family", name)
	return kernels.Op{}
}
