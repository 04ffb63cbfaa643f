package translatetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ClangPath returns Debian's clang-15, which compiles CUDA device code to PTX without a
// CUDA toolkit, or skips the test saying how to install it.
func ClangPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"clang-15", "/usr/lib/llvm-15/bin/clang"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("clang-15 is not installed (apt-get install -y clang-15): the CUDA translation of the kernels is not checked")
	return ""
}

// ClangCUDA compiles text as CUDA device code for sm_80 to PTX with clang (ClangPath) and
// extra arguments (defines, -I), and returns the PTX, or an error holding clang's
// messages. It checks what NVRTC would accept, not the code's speed: -O0.
func ClangCUDA(t testing.TB, clang, name, text string, args ...string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, name+".cu")
	ptx := filepath.Join(dir, name+".ptx")
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	all := append([]string{"-x", "cuda", "-std=c++17", "--cuda-gpu-arch=sm_80", "--cuda-device-only",
		"-nocudainc", "-nocudalib", "-O0", "-S", "-o", ptx, src}, args...)
	out, err := exec.Command(clang, all...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("clang %s: %v\n%s", strings.Join(all, " "), err, out)
	}
	if len(out) > 0 {
		t.Logf("clang warnings for %s %v:\n%s", name, args, out)
	}
	b, err := os.ReadFile(ptx)
	return string(b), err
}
