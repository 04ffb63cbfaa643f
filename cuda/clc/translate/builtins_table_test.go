package translate

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestBuiltinsTable checks builtins.tsv's form: ten fields a row, known groups, states and
// widths, error bounds that are numbers or inf, impl or -, one row per group and name, and a
// message on every refused row.
func TestBuiltinsTable(t *testing.T) {
	groups := []string{"work-item", "math", "half_math", "native_math", "integer", "common", "geometric", "relational",
		"vload", "sync", "async", "atomic", "atomic64", "misc_vector", "printf", "image",
		"subgroup", "workgroup", "pipe", "enqueue", "atomic_c11", "address_space"} // the last six: OpenCL C 2.0 and later
	ulp := regexp.MustCompile(`^([0-9]+|inf|impl|-)$`)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(builtinsTSV, "\n"), "\n")[1:] {
		if n := len(strings.Split(line, "\t")); n != 10 {
			t.Errorf("builtins.tsv: %q has %d fields, want 10", line, n)
		}
	}
	rows := builtins()
	if len(rows) < 200 {
		t.Fatalf("builtins.tsv has %d rows; OpenCL C 1.2 has more built-in functions", len(rows))
	}
	for _, b := range rows {
		key := b.group + " " + b.name
		if seen[key] {
			t.Errorf("builtins.tsv: %s appears twice", key)
		}
		seen[key] = true
		if !slices.Contains(groups, b.group) {
			t.Errorf("builtins.tsv: %s: unknown group %q", b.name, b.group)
		}
		if b.state != "supported" && b.state != "refused" && b.state != "missing" {
			t.Errorf("builtins.tsv: %s: unknown state %q", b.name, b.state)
		}
		if b.state == "refused" && b.note == "-" {
			t.Errorf("builtins.tsv: %s is refused with no message", b.name)
		}
		for _, w := range b.widths {
			if !slices.Contains([]string{"1", "2", "3", "4", "8", "16"}, w) {
				t.Errorf("builtins.tsv: %s: width %q", b.name, w)
			}
		}
		if !ulp.MatchString(b.ulpFloat) || !ulp.MatchString(b.ulpDouble) {
			t.Errorf("builtins.tsv: %s: error bounds %q and %q", b.name, b.ulpFloat, b.ulpDouble)
		}
	}
}

// TestBuiltinsTableComplete checks builtins.tsv against clang's own declarations of OpenCL
// C 1.2 (opencl-c.h, preprocessed for -cl-std=CL1.2): every function it declares, other
// than the vendors' extensions (amd_*, arm_*, intel_*, subgroups) and the images of half,
// has a row.
func TestBuiltinsTableComplete(t *testing.T) {
	clang := clangPath(t)
	out, err := exec.Command(clang, "-print-resource-dir").Output()
	if err != nil {
		t.Fatalf("clang -print-resource-dir: %v", err)
	}
	include := filepath.Join(strings.TrimSpace(string(out)), "include")
	if _, err := os.Stat(filepath.Join(include, "opencl-c.h")); err != nil {
		t.Skipf("clang has no opencl-c.h (%v)", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "decls.cl")
	if err := os.WriteFile(src, []byte("#include \"opencl-c-base.h\"\n#include \"opencl-c.h\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text, err := exec.Command(clang, "-x", "cl", "-cl-std=CL1.2", "-E", "-I", include, src).Output()
	if err != nil {
		t.Fatalf("clang -E opencl-c.h: %v", err)
	}
	attr := regexp.MustCompile(`__attribute__\(\([^()]*(\([^()]*\))?[^()]*\)\)`)
	name := regexp.MustCompile(`\b([a-z_][a-z0-9_]*)\s*\(`)
	have := map[string]bool{}
	for _, b := range builtins() {
		for _, n := range b.names() {
			have[n] = true
		}
	}
	vendor := regexp.MustCompile(`^(amd_|arm_|intel_|sub_group_|get_.*sub_group|convert_|as_)|^(read_imageh|write_imageh|get_image_num_samples)$`)
	found := 0
	for _, d := range strings.Split(string(text), ";") {
		if !strings.Contains(d, "overloadable") {
			continue
		}
		m := name.FindStringSubmatch(attr.ReplaceAllString(d, " "))
		if m == nil || vendor.MatchString(m[1]) {
			continue
		}
		name := m[1]
		found++
		if !have[name] {
			t.Errorf("clang declares %s, an OpenCL C 1.2 built-in function, and builtins.tsv has no row for it", name)
			have[name] = true
		}
	}
	if found < 1000 {
		t.Fatalf("found %d declarations in clang's opencl-c.h: the test no longer reads it", found)
	}
}
