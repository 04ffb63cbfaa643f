package driver

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLibraryCandidates(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"libx.so.2", "libx.so.1"}
	t.Setenv(VendorPathEnv, "/opt/x::"+a)
	got := LibraryCandidates(names, b, filepath.Join(dir, "missing"), "", b)
	want := []string{
		"/opt/x/libx.so.2", "/opt/x/libx.so.1", // PRISM_VENDOR_PATH first, even a directory that does not exist
		a + "/libx.so.2", a + "/libx.so.1",
		"libx.so.2", "libx.so.1", // the dynamic loader's path
		b + "/libx.so.2", b + "/libx.so.1", // usual locations that exist, once
	}
	if !slices.Equal(got, want) {
		t.Errorf("LibraryCandidates =\n%q\nwant\n%q", got, want)
	}
	t.Setenv(VendorPathEnv, "")
	if got := LibraryCandidates(names); !slices.Equal(got, names) {
		t.Errorf("LibraryCandidates without PRISM_VENDOR_PATH or directories = %q, want %q", got, names)
	}
}

func TestLibraryVersion(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "libclblast.so.1.5.3")
	if err := os.WriteFile(real, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "libclblast.so.1")
	if err := os.Symlink("libclblast.so.1.5.3", link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{link, "1.5.3"},
		{real, "1.5.3"},
		{"/nonexistent/libcublas.so.13", "13"},
		{"/nonexistent/libcublas.so", ""},
		{"/nonexistent/libfoo.so.1.x", ""},
		{"libfoo.so.1.", "1"},
	} {
		if got := LibraryVersion(c.path); got != c.want {
			t.Errorf("LibraryVersion(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}

func TestLibraryString(t *testing.T) {
	for _, c := range []struct {
		lib  Library
		want string
	}{
		{Library{Name: "cuBLAS", Version: "13.0.2", Path: "/usr/lib/libcublas.so.13"}, "cuBLAS 13.0.2 (/usr/lib/libcublas.so.13)"},
		{Library{Name: "clFFT"}, "clFFT"},
	} {
		if got := c.lib.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.lib, got, c.want)
		}
	}
	if Float32.Size() != 4 || Float64.Size() != 8 || ElemType(0).Size() != 0 || Float64.String() != "float64" || R2C.String() != "r2c" {
		t.Error("ElemType or FFTKind methods")
	}
}
