package userkernel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNPYHeader checks the exact bytes of a version 1.0 header and that every header
// ends the way NumPy's do: a newline at a multiple of 64 bytes.
func TestNPYHeader(t *testing.T) {
	want := "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }" + strings.Repeat(" ", 60) + "\n"
	if got := string(npyHeader("<f4", []int{3})); got != want {
		t.Errorf("header\n%q\nwant\n%q", got, want)
	}
	for _, shape := range [][]int{{0}, {1}, {1 << 30}, {64, 32}, {2, 3, 4}, {}} {
		for _, typ := range Types() {
			h := npyHeader(descrOf(typ), shape)
			if len(h)%64 != 0 || h[len(h)-1] != '\n' || int(binary.LittleEndian.Uint16(h[8:]))+10 != len(h) {
				t.Errorf("header of %s %v: %d bytes, ends %q", typ.Name, shape, len(h), h[len(h)-1])
			}
		}
	}
	if h := string(npyHeader("<i8", []int{64, 32})); !strings.Contains(h, "'shape': (64, 32), }") {
		t.Errorf("2-D header %q", h)
	}
}

// float32Type is the descriptor of float32.
var float32Type, _ = LookupType("float32")

// TestNPYTypes checks the NumPy type strings of the element types, in the order help
// lists them, and that bfloat16, which NumPy lacks, is not among them.
func TestNPYTypes(t *testing.T) {
	var got []string
	for _, typ := range Types() {
		got = append(got, typ.Name+" "+descrOf(typ))
	}
	want := []string{"int8 |i1", "uint8 |u1", "int16 <i2", "uint16 <u2", "int32 <i4", "uint32 <u4", "int64 <i8", "uint64 <u8",
		"float16 <f2", "float32 <f4", "float64 <f8"}
	if !slices.Equal(got, want) {
		t.Errorf("types %q\nwant %q", got, want)
	}
	if _, ok := LookupType("bfloat16"); ok {
		t.Error("bfloat16 is an element type, but NumPy has none")
	}
	for name, want := range map[string]string{"half": "float16", "uchar": "uint8", "ushort": "uint16", "long": "int64", "DOUBLE": "float64", "int16": "int16"} {
		if typ, ok := LookupType(name); !ok || typ.Name != want {
			t.Errorf("LookupType(%s) = %s, %v; want %s", name, typ.Name, ok, want)
		}
	}
}

// TestNPYRoundTrip writes an array of every element type and reads it back.
func TestNPYRoundTrip(t *testing.T) {
	for _, typ := range Types() {
		for _, n := range []int{1, 7, 1000} {
			data := make([]byte, n*typ.Size)
			for i := range data {
				data[i] = byte(i*31 + 7)
			}
			a, err := DecodeNPY(bytes.NewReader(EncodeNPY(typ, data)))
			if err != nil {
				t.Fatalf("%s[%d]: %v", typ.Name, n, err)
			}
			if a.Type.Name != typ.Name || !slices.Equal(a.Shape, []int{n}) || !bytes.Equal(a.Data, data) || a.Len() != n {
				t.Errorf("%s[%d]: read %s %v, %d bytes", typ.Name, n, a.Type.Name, a.Shape, len(a.Data))
			}
		}
	}
}

// TestNPYRead reads headers as other writers make them, and refuses what it cannot read.
func TestNPYRead(t *testing.T) {
	file := func(version byte, dict string, data []byte) []byte {
		b := []byte(npyMagic)
		b = append(b, version, 0)
		if version == 1 {
			b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
		} else {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(dict)))
		}
		return append(append(b, dict...), data...)
	}
	six := make([]byte, 24)
	for _, tc := range []struct {
		name  string
		file  []byte
		typ   string
		shape []int
	}{
		{"2-D", file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", six), "float32", []int{2, 3}},
		{"version 2", file(2, `{"shape": (6,), "fortran_order": False, "descr": "<i4"}`+"\n", six), "int32", []int{6}},
		{"bytes", file(3, "{'descr': '|u1', 'fortran_order': False, 'shape': (24,)}", six), "uint8", []int{24}},
		{"scalar", file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", six[:8]), "float64", []int{}},
		{"fortran 1-D", file(1, "{'descr': '<i2', 'fortran_order': True, 'shape': (12,), }", six), "int16", []int{12}},
	} {
		a, err := DecodeNPY(bytes.NewReader(tc.file))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if a.Type.Name != tc.typ || !slices.Equal(a.Shape, tc.shape) {
			t.Errorf("%s: %s %v, want %s %v", tc.name, a.Type.Name, a.Shape, tc.typ, tc.shape)
		}
	}
	for _, tc := range []struct {
		name, want string
		file       []byte
	}{
		{"magic", "not a .npy file", []byte("PK\x03\x04 a zip file")},
		{"big-endian", `element type ">f4"`, file(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", six)},
		{"complex", `element type "<c8"`, file(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", six)},
		{"fortran", "Fortran order", file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", six)},
		{"short", "want 24 bytes", file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", six[:20])},
		{"long", "more than the 24 bytes", file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", append(six, 0))},
		{"no shape", "no 'shape'", file(1, "{'descr': '<f4', 'fortran_order': False}", six)},
		{"bad dict", "bad .npy header", file(1, "{'descr': '<f4', 'shape': [6]}", six)},
		{"version", "version 9.0", file(9, "{}", nil)},
	} {
		_, err := DecodeNPY(bytes.NewReader(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestNPYNumPy checks that NumPy reads what EncodeNPY writes, and that ReadNPYFile reads
// what NumPy writes, where python3 with NumPy is installed.
func TestNPYNumPy(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 5*4)
	for i := range 5 {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i)+0.5))
	}
	ours := filepath.Join(dir, "ours.npy")
	if err := os.WriteFile(ours, EncodeNPY(float32Type, data), 0o644); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(dir, "theirs.npy")
	script := `import numpy as np, sys
a = np.load(sys.argv[1])
assert a.dtype == np.float32 and a.shape == (5,) and list(a) == [0.5, 1.5, 2.5, 3.5, 4.5], (a.dtype, a)
np.save(sys.argv[2], np.arange(12, dtype=np.int64).reshape(3, 4))`
	ran := false
	for _, py := range []string{"python3", "/usr/bin/python3"} { // the system's may have numpy where the first on PATH has not
		out, err := exec.Command(py, "-c", script, ours, theirs).CombinedOutput()
		if errors.Is(err, exec.ErrNotFound) || strings.Contains(string(out), "No module named 'numpy'") {
			continue
		}
		if err != nil {
			t.Fatalf("%s with numpy: %v\n%s", py, err, out)
		}
		ran = true
		break
	}
	if !ran {
		t.Skip("python3 with numpy is not installed")
	}
	a, err := ReadNPYFile(theirs)
	if err != nil {
		t.Fatal(err)
	}
	if a.Type.Name != "int64" || !slices.Equal(a.Shape, []int{3, 4}) || binary.LittleEndian.Uint64(a.Data[11*8:]) != 11 {
		t.Errorf("read %s %v", a.Type.Name, a.Shape)
	}
}
