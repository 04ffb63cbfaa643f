package userkernel

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// TestInitValues checks the initial values of buffers of several element types.
func TestInitValues(t *testing.T) {
	typ := func(name string) kernels.Type {
		e, ok := LookupType(name)
		if !ok {
			t.Fatalf("no type %s", name)
		}
		return e
	}
	for _, tc := range []struct {
		typ, init string
		n         int
		want      []string
	}{
		{"float16", "ones", 2, []string{"1", "1"}},
		{"half", "0.5", 1, []string{"0.5"}},
		{"int8", "range", 300, nil}, // checked below: wraps at 128
		{"uint16", "0xffff", 2, []string{"65535", "65535"}},
		{"int64", "-2", 1, []string{"-2"}},
		{"double", "range", 3, []string{"0", "1", "2"}},
		{"float32", "zeros", 2, []string{"0", "0"}},
	} {
		e := typ(tc.typ)
		data, err := initValues(e, tc.n, tc.init, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.typ, tc.init, err)
		}
		if len(data) != tc.n*e.Size {
			t.Fatalf("%s %s: %d bytes", tc.typ, tc.init, len(data))
		}
		for i, w := range tc.want {
			if got := ElemString(e, data, i); got != w {
				t.Errorf("%s %s [%d] = %s, want %s", tc.typ, tc.init, i, got, w)
			}
		}
		if tc.typ == "int8" && (ElemString(e, data, 127) != "127" || ElemString(e, data, 128) != "-128") {
			t.Errorf("int8 range wraps as %s, %s", ElemString(e, data, 127), ElemString(e, data, 128))
		}
	}
	if data, _ := initValues(typ("float16"), 1, "1", nil); binary.LittleEndian.Uint16(data) != 0x3c00 {
		t.Errorf("float16 1 is %#x", binary.LittleEndian.Uint16(data))
	}
	// Random values: in range, the same for the same seed and argument, others for another.
	args, err := ParseArgs([]string{"buf:float64:1K:random", "buf:int16:1K:random", "buf:uint8:1K:random"}, "k", 3)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := ParseArgs([]string{"buf:float64:1K:random"}, "k", 3)
	other, _ := ParseArgs([]string{"buf:float64:1K:random"}, "k", 4)
	if string(args[0].Init) != string(again[0].Init) || string(args[0].Init) == string(other[0].Init) {
		t.Error("random values do not follow --seed")
	}
	for i := range 1024 {
		f, s, u := ElemFloat(args[0].Type, args[0].Init, i), ElemFloat(args[1].Type, args[1].Init, i), ElemFloat(args[2].Type, args[2].Init, i)
		if f < -1 || f >= 1 || s < -64 || s >= 64 || u < 0 || u >= 128 {
			t.Fatalf("random [%d]: %v, %v, %v", i, f, s, u)
		}
	}
	if v, err := parseScalar(typ("float16"), "2"); err != nil || v != engine.HalfFromFloat32(2) {
		t.Errorf("float16 scalar %v, %v", v, err)
	}
}

// TestParseArgs checks the kinds of specs, their names and what they hold, and that an
// error says which argument it is about.
func TestParseArgs(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.npy")
	if err := os.WriteFile(x, EncodeNPY(float32Type, make([]byte, 4*8)), 0o644); err != nil {
		t.Fatal(err)
	}
	args, err := ParseArgs([]string{"scalar:float:2", "in:float32:8:" + x, "z=out:float32:8", "inout:uint8:3:7", "local:float64:4", "local:1K"}, "saxpy", 1)
	if err != nil {
		t.Fatal(err)
	}
	if a := args[0]; a.Kind != Scalar || a.Value != float32(2) || a.Saved() {
		t.Errorf("scalar: %+v", a)
	}
	if a := args[1]; a.Kind != Buf || a.Len != 8 || len(a.Init) != 32 || a.Type.Name != "float32" {
		t.Errorf("buffer from .npy: %+v", a)
	}
	if a := args[2]; a.Kind != Out || a.Name != "z" || !a.Saved() {
		t.Errorf("named output: %+v", a)
	}
	if a := args[3]; a.Kind != InOut || a.Name != "saxpy.arg3" || string(a.Init) != "\x07\x07\x07" {
		t.Errorf("inout: %+v", a)
	}
	if args[4].Bytes != 32 || args[5].Bytes != 1024 {
		t.Errorf("local bytes %d, %d", args[4].Bytes, args[5].Bytes)
	}
	if out := Outputs(args); len(out) != 2 || out[0] != args[2] || out[1] != args[3] {
		t.Errorf("outputs %v", out)
	}
	for _, tc := range []struct {
		specs []string
		index int
		want  string
	}{
		{[]string{"buf:float32:8", "buf:complex:8"}, 1, `unknown element type "complex" (want int8, uint8,`},
		{[]string{"out:float32:8:ones"}, 0, "an out buffer starts at zeros"},
		{[]string{"z=buf:float32:8"}, 0, "only out and inout buffers take a name"},
		{[]string{"z=out:int32:4", "z=inout:int32:4"}, 1, "the name z is taken by --arg 0"},
		{[]string{"scalar:int8:300"}, 0, `"300" is not a int8`},
		{[]string{"scalar:half:1e6"}, 0, "beyond the range of float16"},
		{[]string{"buf:float64:4:" + x}, 0, "holds float32 (<f4), not float64"},
		{[]string{"pointer:float32:4"}, 0, `unknown kind "pointer"`},
	} {
		_, err := ParseArgs(tc.specs, "k", 1)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Index != tc.index || ae.Spec != tc.specs[tc.index] || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one about argument %d containing %q", tc.specs, err, tc.index, tc.want)
		}
	}
}
