package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
)

func TestExecBuildOptions(t *testing.T) {
	for _, c := range []struct {
		defines     []string
		macros, std string
		err         string
	}{
		{[]string{"N=4", "-cl-std=CL3.0"}, "-DN=4", "-cl-std=CL3.0", ""},
		{[]string{"cl-std=2.0", "FAST"}, "-DFAST", "-cl-std=CL2.0", ""},
		{[]string{"N=4"}, "-DN=4", "", ""},
		{[]string{"-cl-std=CL3.0", "cl-std=CL1.2"}, "", "", `-D "cl-std=CL1.2": the OpenCL C version is already CL3.0`},
		{[]string{"-cl-std=CL2.1"}, "", "", `-D "-cl-std=CL2.1": engine: OpenCL C version "CL2.1": want CL1.1, CL1.2, CL2.0 or CL3.0`},
		{[]string{"-cl-fast-relaxed-math"}, "", "", `want NAME or NAME=VALUE`},
	} {
		macros, std, err := execBuildOptions(c.defines)
		var ue usageError
		switch {
		case c.err != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want a usage error containing %q", c.defines, err, c.err)
		case c.err == "" && (err != nil || strings.Join(macros, " ") != c.macros || strings.Join(std, " ") != c.std):
			t.Errorf("%q: %q, %q, %v; want %q, %q", c.defines, macros, std, err, c.macros, c.std)
		}
	}
}

// TestExecStd: prism exec -D -cl-std=CL3.0 builds OpenCL C 3.0 where the device compiles
// it (PoCL 3.1 and Rusticl here: __OPENCL_C_VERSION__ is 300), and a version the device
// lacks ends with exit code 5 naming the device and its versions (CL2.0 here).
func TestExecStd(t *testing.T) {
	dir := t.TempDir()
	cl := filepath.Join(dir, "v.cl")
	if err := os.WriteFile(cl, []byte("__kernel void v(__global float* out) { out[get_global_id(0)] = __OPENCL_C_VERSION__; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range enginetest.DeviceIDs(t, "opencl") {
		dev, err := engine.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		in := dev.Info()
		dev.Close()
		for _, v := range []string{"CL2.0", "CL3.0"} {
			args := []string{"exec", cl, "-k", "v", "--device", id, "--global", "4", "--arg", "out=out:float32:4", "--save-dir", dir, "-D", "-cl-std=" + v}
			if !in.CompilesOpenCLC(v[2:]) {
				_, err := execute(t, args...)
				want := "-cl-std=" + v + " on " + id + " (" + in.Name + "): the device compiles OpenCL C "
				if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %v, want ErrUnsupported containing %q", v, err, want)
				}
				if code := run(context.Background(), args); code != exitUnsupported {
					t.Errorf("%s on %s: exit %d, want %d", v, id, code, exitUnsupported)
				}
				continue
			}
			if _, err := execute(t, args...); err != nil {
				t.Fatalf("%s on %s: %v", v, id, err)
			}
			want := float32(v[2]-'0')*100 + float32(v[4]-'0')*10
			for i, g := range readFloat32s(t, npyName(dir, "out", id)) {
				if g != want {
					t.Errorf("%s on %s: out[%d] = %v, want %v", v, id, i, g, want)
				}
			}
		}
	}
}

// TestExecSPIRV runs prism exec on a SPIR-V module made from OpenCL C by clang-15 and
// llvm-spirv-15 (the file is known by its magic number, here under a name without .spv):
// a device that takes SPIR-V runs it; one that takes no IL (PoCL 3.1 and Rusticl here)
// ends with exit code 5 and says so. A .spv file that is not SPIR-V is a usage error.
func TestExecSPIRV(t *testing.T) {
	for _, tool := range []string{"clang-15", "llvm-spirv-15"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make deps installs it): %v", tool, err)
		}
	}
	dir := t.TempDir()
	cl, bc, spv := filepath.Join(dir, "fill.cl"), filepath.Join(dir, "fill.bc"), filepath.Join(dir, "fill.module")
	if err := os.WriteFile(cl, []byte("__kernel void fill(__global float* out) { out[get_global_id(0)] = 3.0f * get_global_id(0) + 1.0f; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"clang-15", "-cl-std=CL1.2", "-target", "spir64", "-emit-llvm", "-c", "-o", bc, cl},
		{"llvm-spirv-15", bc, "-o", spv},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	for _, id := range enginetest.DeviceIDs(t, "opencl") {
		dev, err := engine.Open(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		in := dev.Info()
		dev.Close()
		args := []string{"exec", spv, "-k", "fill", "--device", id, "--global", "16", "--arg", "out=out:float32:16", "--save-dir", dir}
		if !in.TakesSPIRV() {
			_, err := execute(t, args...)
			want := "engine: build SPIR-V on " + id + " (" + in.Name + "): the device takes "
			if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), want) {
				t.Errorf("%v, want ErrUnsupported containing %q", err, want)
			}
			if code := run(context.Background(), args); code != exitUnsupported {
				t.Errorf("SPIR-V on %s: exit %d, want %d", id, code, exitUnsupported)
			}
			continue
		}
		if _, err := execute(t, args...); err != nil {
			t.Fatalf("SPIR-V on %s (IL %s): %v", id, in.ILVersions, err)
		}
		for i, g := range readFloat32s(t, npyName(dir, "out", id)) {
			if g != float32(3*i+1) {
				t.Errorf("SPIR-V on %s: out[%d] = %v, want %v", id, i, g, 3*i+1)
			}
		}
	}
	junk := filepath.Join(dir, "junk.spv")
	if err := os.WriteFile(junk, []byte("__kernel void fill(__global float* out) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"exec", junk, "-k", "fill", "--global", "16", "--arg", "out=out:float32:16", "--save-dir", dir}
	_, err := execute(t, args...)
	var ue usageError
	if want := "junk.spv is not a SPIR-V module: it starts with 5f 5f 6b 65, not the magic number 03 02 23 07"; !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
		t.Errorf("junk.spv: %v, want a usage error containing %q", err, want)
	}
	if code := run(context.Background(), args); code != exitUsage {
		t.Errorf("junk.spv: exit %d, want %d", code, exitUsage)
	}
}
