package translate

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prism-compute/prism/cuda/clc/translate/translatetest"
)

// TestPreludeWarnings compiles the prelude with clang-15 -Wall -Wextra, as CUDA to PTX, in
// front of a kernel that uses nothing of it, of testdata/dialect.cl and of
// translatetest.Builtins (which instantiates the built-in functions at every type), and
// checks that no warning points into the prelude: a user's compiler log holds the user's
// messages only. (Warnings about the sources themselves, under their own file names, are
// theirs.)
func TestPreludeWarnings(t *testing.T) {
	t.Parallel()
	clang := clangPath(t)
	dialect, err := os.ReadFile("testdata/dialect.cl")
	if err != nil {
		t.Fatal(err)
	}
	// clang names the compiled file, prelude.cu, in the prelude's messages; after the
	// #line directive, the source's name.
	warning := regexp.MustCompile(`(?m)^(.*):[0-9]+:[0-9]+: warning: .*$`)
	for _, c := range []struct{ name, src string }{
		{"empty.cl", "__kernel void k(__global float *x) { x[get_global_id(0)] = 1.0f; }\n"},
		{"dialect.cl", string(dialect)},
		{"builtins.cl", translatetest.Builtins()},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "prelude.cu")
			if err := os.WriteFile(src, []byte(nvrtcText(c.src, c.name)), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"-x", "cuda", "-std=c++17", "--cuda-gpu-arch=sm_80", "--cuda-device-only", "-nocudainc",
				"-nocudalib", "-O0", "-S", "-Wall", "-Wextra", "-o", filepath.Join(dir, "prelude.ptx"), src}
			out, err := exec.Command(clang, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, firstLines(string(out), 30))
			}
			n := 0
			for _, m := range warning.FindAllStringSubmatch(string(out), -1) {
				if m[1] != c.name {
					if n++; n <= 10 {
						t.Errorf("the prelude warns: %s", m[0])
					}
				}
			}
			if n > 10 {
				t.Errorf("%d warnings from the prelude in all", n)
			}
		})
	}
}
