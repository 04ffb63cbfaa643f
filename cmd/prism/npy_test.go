package main

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
		for _, typ := range elemTypes {
			h := npyHeader(typ.descr, shape)
			if len(h)%64 != 0 || h[len(h)-1] != '\n' || int(binary.LittleEndian.Uint16(h[8:]))+10 != len(h) {
				t.Errorf("header of %s %v: %d bytes, ends %q", typ.name, shape, len(h), h[len(h)-1])
			}
		}
	}
	if h := string(npyHeader("<i8", []int{64, 32})); !strings.Contains(h, "'shape': (64, 32), }") {
		t.Errorf("2-D header %q", h)
	}
}

// TestNPYRoundTrip writes an array of every element type and reads it back.
func TestNPYRoundTrip(t *testing.T) {
	for _, typ := range elemTypes {
		for _, n := range []int{1, 7, 1000} {
			data := make([]byte, n*typ.size)
			for i := range data {
				data[i] = byte(i*31 + 7)
			}
			a, err := decodeNPY(bytes.NewReader(encodeNPY(typ, data)))
			if err != nil {
				t.Fatalf("%s[%d]: %v", typ.name, n, err)
			}
			if a.typ != typ || !slices.Equal(a.shape, []int{n}) || !bytes.Equal(a.data, data) || a.len() != n {
				t.Errorf("%s[%d]: read %s %v, %d bytes", typ.name, n, a.typ.name, a.shape, len(a.data))
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
		a, err := decodeNPY(bytes.NewReader(tc.file))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if a.typ.name != tc.typ || !slices.Equal(a.shape, tc.shape) {
			t.Errorf("%s: %s %v, want %s %v", tc.name, a.typ.name, a.shape, tc.typ, tc.shape)
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
		_, err := decodeNPY(bytes.NewReader(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestNPYNumPy checks that NumPy reads what encodeNPY writes, and that readNPYFile reads
// what NumPy writes, where python3 with NumPy is installed.
func TestNPYNumPy(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 5*4)
	for i := range 5 {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i)+0.5))
	}
	ours := filepath.Join(dir, "ours.npy")
	if err := os.WriteFile(ours, encodeNPY(elemTypes[9], data), 0o644); err != nil {
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
	a, err := readNPYFile(theirs)
	if err != nil {
		t.Fatal(err)
	}
	if a.typ.name != "int64" || !slices.Equal(a.shape, []int{3, 4}) || binary.LittleEndian.Uint64(a.data[11*8:]) != 11 {
		t.Errorf("read %s %v", a.typ.name, a.shape)
	}
}
