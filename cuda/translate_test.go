package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/cuda/clc"
	"github.com/prism-compute/prism/cuda/clc/translate"
	"github.com/prism-compute/prism/cuda/clc/translate/translatetest"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
)

// The translation of OpenCL C (package cuda/clc/translate) is tested there, with clang-15
// in NVRTC's place; these tests check the backend's use of it: the options NVRTC gets, the
// errors Build gives, and the corpus and the built-ins built with NVRTC on CUDA devices.

// corpusGlob finds the translation's corpus: one kernel per construct it carries.
const corpusGlob = "clc/translate/testdata/corpus/*.cl"

// TestBuildOpenCLUnsupported checks that a source with no CUDA counterpart is refused before
// any device is needed: the error names the construct, its line and column, and wraps
// ErrUnsupported and the translation's *translate.Error.
func TestBuildOpenCLUnsupported(t *testing.T) {
	d := &device{}
	_, err := d.BuildSource(engine.Source{Dialect: engine.DialectOpenCL, Text: "__kernel void k(__global float *x,\n    __read_only image2d_t im) {}"}, nil)
	want := "cuda: kernel.cl:2:17: images have no CUDA counterpart (image2d_t): unsupported"
	var e *translate.Error
	if err == nil || err.Error() != want || !errors.Is(err, engine.ErrUnsupported) || !errors.As(err, &e) {
		t.Errorf("BuildSource of an image kernel gives %v, want %q", err, want)
	}
}

// TestOpenCLFixedOptions checks what NVRTC gets with every OpenCL C source: -default-device,
// which makes a .cl file's helper functions device functions, as the prelude assumes.
func TestOpenCLFixedOptions(t *testing.T) {
	if !slices.Contains(fixedOptions, "-default-device") {
		t.Error("NVRTC is not given -default-device: a .cl file's helper functions would be host functions")
	}
}

// TestCorpusOnDevice builds every corpus kernel with NVRTC on every CUDA device, through
// the backend as a user's OpenCL C source is built, and finds each of its kernels.
func TestCorpusOnDevice(t *testing.T) {
	files, err := filepath.Glob(corpusGlob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in %s: %v", corpusGlob, err)
	}
	kernelName := regexp.MustCompile(`(?m)(?:__kernel|^kernel)\s+(?:__attribute__\(\([^)]*\)\)\s*)?void\s+(\w+)`)
	for _, id := range enginetest.DeviceIDs(t, "cuda") {
		dev, err := engine.Open(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectOpenCL, Text: string(src), Name: filepath.Base(f)})
			if err != nil {
				t.Errorf("%s on %s: %v", f, id, err)
				continue
			}
			names := kernelName.FindAllStringSubmatch(string(src), -1)
			if len(names) == 0 {
				t.Errorf("%s: no kernel found in the text", f)
			}
			for _, m := range names {
				if _, err := prog.Kernel(m[1]); err != nil {
					t.Errorf("%s on %s: kernel %s: %v", f, id, m[1], err)
				}
			}
			prog.Close()
		}
	}
}

// TestBuiltinsOnDevice builds translatetest.Builtins with NVRTC on every CUDA device, through the
// backend as a user's OpenCL C source is built, and finds each of its kernels.
func TestBuiltinsOnDevice(t *testing.T) {
	src := translatetest.Builtins()
	for _, id := range enginetest.DeviceIDs(t, "cuda") {
		dev, err := engine.Open(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		prog, err := dev.BuildSource(engine.Source{Dialect: engine.DialectOpenCL, Text: src, Name: "builtins.cl"})
		if err != nil {
			t.Fatalf("builtins.cl on %s: %v", id, err)
		}
		kernels := clc.Defined(src)
		if len(kernels) == 0 {
			t.Fatal("builtins.cl defines no kernel")
		}
		for _, k := range kernels {
			if _, err := prog.Kernel(k.Name); err != nil {
				t.Errorf("builtins.cl on %s: kernel %s: %v", id, k.Name, err)
			}
		}
		prog.Close()
	}
}

// TestUserLog checks that an OpenCL C build's log keeps the user's messages and the
// prelude's errors, and leaves out the prelude's warnings and remarks with their context
// lines, saying how many.
func TestUserLog(t *testing.T) {
	log := strings.Join([]string{
		`prelude.cuh(41): warning #1444-D: type "long4" is deprecated`,
		`  typedef long4 prism_long4;`,
		`          ^`,
		``,
		`prelude.cuh(977): remark: function "prism_unused" was declared but never referenced`,
		``,
		`saxpy.cl(3): error: identifier "undefined_name" is undefined`,
		`    y[i] = undefined_name;`,
		`           ^`,
		``,
		`prelude.cuh(120): error: no instance of overloaded function "sincos" matches the argument list`,
		`saxpy.cl(7): warning #550-D: variable "t" was set but never used`,
		``,
		`2 errors detected in the compilation of "prelude.cuh".`,
	}, "\n")
	got := userLog(log)
	for _, want := range []string{`saxpy.cl(3): error: identifier "undefined_name"`, `y[i] = undefined_name;`,
		`prelude.cuh(120): error: no instance`, `saxpy.cl(7): warning #550-D`, `2 errors detected`,
		`(2 warnings about Prism's prelude left out)`} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"long4", "prism_unused", "typedef"} {
		if strings.Contains(got, gone) {
			t.Errorf("the log still holds %q:\n%s", gone, got)
		}
	}
	if clean := "kernel.cl(2): error: expected a \";\""; userLog(clean) != clean {
		t.Errorf("a log without prelude messages changed: %q", userLog(clean))
	}
}
