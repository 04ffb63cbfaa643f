package dl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoad loads libm, which every Linux host has: a required and a missing optional
// symbol, a versioned name tried before a plain one, the path the loader found, and what
// Load says of a missing file and of a library that lacks a required symbol.
func TestLoad(t *testing.T) {
	lib, tried := Load([]string{"libprism-no-such-library.so.1", "libm.so.6"}, []Symbol{
		{Names: []string{"prism_no_such_cos", "cos"}},
		{Names: []string{"prism_no_such_function"}, Optional: true},
	}, nil)
	if lib == nil {
		t.Fatalf("Load(libm.so.6): %v", tried)
	}
	if lib.Name != "libm.so.6" || !filepath.IsAbs(lib.Path) || !strings.Contains(lib.Path, "libm") {
		t.Errorf("loaded %q at %q, want libm.so.6 at an absolute path", lib.Name, lib.Path)
	}
	if lib.Fns[0] == nil || lib.Fns[1] != nil {
		t.Errorf("functions %v: want cos found and the optional one nil", lib.Fns)
	}
	if Sym(lib.Handle, "sin") == nil {
		t.Error("Sym(sin) = nil on libm")
	}
	if PathOf(lib.Fns[0]) != lib.Path {
		t.Errorf("PathOf(cos) = %q, want %q", PathOf(lib.Fns[0]), lib.Path)
	}

	lib, tried = Load([]string{"libprism-no-such-library.so.1", "libm.so.6"}, []Symbol{{Names: []string{"prism_no_such_function"}}}, nil)
	if lib != nil || len(tried) != 2 {
		t.Fatalf("Load with a missing required symbol = %v, %q; want nil and two reasons", lib, tried)
	}
	if !strings.HasPrefix(tried[0], "libprism-no-such-library.so.1") {
		t.Errorf("reason %q does not name the missing file", tried[0])
	}
	if tried[1] != "libm.so.6: too old, no prism_no_such_function" {
		t.Errorf("reason %q, want the missing symbol named", tried[1])
	}
}

// TestLoadDeps: a candidate in a directory has deps asked with its base name, and only
// the dependencies present there are opened.
func TestLoadDeps(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "libdep.so.1"), []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []string
	lib, tried := Load([]string{filepath.Join(dir, "libprism-missing.so.3")}, nil, func(base string) []string {
		asked = append(asked, base)
		return []string{"libdep.so.1", "libabsent.so.1"}
	})
	if lib != nil || len(tried) != 1 || !strings.Contains(tried[0], "libprism-missing.so.3") {
		t.Errorf("Load of a missing file = %v, %q", lib, tried)
	}
	if len(asked) != 1 || asked[0] != "libprism-missing.so.3" {
		t.Errorf("deps asked for %q, want the candidate's base name once", asked)
	}
}
