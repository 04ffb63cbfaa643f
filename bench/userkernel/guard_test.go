package userkernel

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/prism-compute/prism/bench"
)

// TestRunGuard runs add over 1000 items with buffers of 990 (its writes reach 10 elements
// past y; its reads 10 past x, which no band sees): with Guard, an *OverrunError naming y,
// elements 990 to 999, and nothing kept; without, the run passes as it always did. At
// 990 items both pass.
func TestRunGuard(t *testing.T) {
	dev := openCL(t)
	args, err := ParseArgs([]string{"scalar:float32:2", "buf:float32:990:range", "y=out:float32:990"}, "add", 1)
	if err != nil {
		t.Fatal(err)
	}
	args[2].Param = "y"
	l := &Launch{File: "add.cl", Source: addSrc, Kernel: "add", Args: args, Global: []int{1000}, Guard: true}
	res, err := Run(context.Background(), dev, l)
	var oe *OverrunError
	if !errors.As(err, &oe) || !errors.Is(err, bench.ErrVerify) {
		t.Fatalf("err %v, want an *OverrunError wrapping bench.ErrVerify", err)
	}
	if oe.Arg != 2 || oe.Param != "y" || oe.First != 990 || oe.Last != 999 || oe.Changed != 10 || oe.Band != 1024 {
		t.Errorf("overrun %+v, want argument 2 y, elements 990 to 999, 10 changed of a band of 1024", oe)
	}
	if !strings.Contains(err.Error(), "argument 2 y (y=out:float32:990)") || !strings.Contains(err.Error(), "elements 990 to 999") {
		t.Errorf("message %q", err)
	}
	if len(res.Data) != 0 {
		t.Errorf("%d outputs kept from a run that wrote past its buffer", len(res.Data))
	}
	l.Guard = false
	if _, err := Run(context.Background(), dev, l); err != nil {
		t.Errorf("without guard bands: %v", err)
	}
	l.Guard, l.Global = true, []int{990}
	res, err = Run(context.Background(), dev, l)
	if err != nil || len(res.Data) != 1 || len(res.Data[0]) != 990*4 {
		t.Fatalf("990 items: %v, %d outputs", err, len(res.Data))
	}
	if got := ElemFloat(args[2].Type, res.Data[0], 989); got != 2*989 {
		t.Errorf("y[989] = %v, want %v", got, 2*989)
	}
}

// TestCanary checks the bands' patterns: different per argument, and not a constant.
func TestCanary(t *testing.T) {
	a, b := canary(0, 64), canary(1, 64)
	if string(a) == string(b) {
		t.Error("two arguments share a canary")
	}
	if string(a[:8]) == string(a[8:16]) {
		t.Error("the canary repeats every 8 bytes")
	}
	if len(canary(3, 13)) != 13 {
		t.Error("canary of 13 bytes")
	}
}

// TestCompareWithin checks the absolute and relative tolerance: an element passes when
// |got-want| <= abs + rel*|want|, the worst is the one furthest beyond its allowance, a NaN
// against a number fails, and integers stay exact.
func TestCompareWithin(t *testing.T) {
	f32, _ := LookupType("float32")
	enc := func(v ...float32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			putBits(f32, b, i, uint64(math.Float32bits(x)))
		}
		return b
	}
	a := &Arg{Name: "z", Type: f32, Len: 3}
	want := enc(1, 100, 0)
	cases := []struct {
		got    []byte
		tol    Tolerance
		within bool
		worst  int
	}{
		{enc(1.05, 100, 0), Tolerance{AbsRel: true, Abs: 0.1}, true, 0},
		{enc(1.05, 100, 0), Tolerance{AbsRel: true, Abs: 0.01}, false, 0},
		{enc(1.05, 101, 0), Tolerance{AbsRel: true, Abs: 0, Rel: 0.02}, false, 0}, // 0.05 > 0.02, 1 <= 2
		{enc(1.01, 100.5, 0), Tolerance{AbsRel: true, Abs: 0, Rel: 0.02}, true, 0},
		{enc(1, 100, 1e-7), Tolerance{AbsRel: true, Abs: 0, Rel: 1}, false, 2}, // want 0: nothing allowed
		{enc(1, float32(math.NaN()), 0), Tolerance{AbsRel: true, Abs: 1e9}, false, 1},
		{enc(1, 100, 0), Tolerance{}, true, -1},
	}
	for i, c := range cases {
		cmp := CompareWithin(a, want, c.got, c.tol)
		if cmp.Within != c.within || cmp.Worst != c.worst {
			t.Errorf("case %d (%s): within %v worst %d, want %v %d", i, c.tol, cmp.Within, cmp.Worst, c.within, c.worst)
		}
	}
	i32, _ := LookupType("int32")
	ai := &Arg{Name: "n", Type: i32, Len: 1}
	if c := CompareWithin(ai, []byte{1, 0, 0, 0}, []byte{2, 0, 0, 0}, Tolerance{AbsRel: true, Abs: 10}); c.Within {
		t.Error("integers compared with a tolerance")
	}
	if s := (Tolerance{AbsRel: true, Abs: 1e-6, Rel: 1e-5}).String(); s != "abs 1e-06, rel 1e-05" {
		t.Errorf("Tolerance.String = %q", s)
	}
}
