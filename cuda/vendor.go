package cuda

// This file is what the vendor libraries (blas.go: cuBLAS, fft.go: cuFFT) share: the
// loader, which opens a library with dlopen and resolves its functions with dlsym
// (internal/dl, the loader both backends use, as api.go does for the driver and NVRTC), searching the toolkit's directories too, and the
// version numbers the libraries report. Mirrors cl/vendor.go.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/internal/dl"
)

// cudaLibDirs returns the directories of a CUDA toolkit where its libraries live, which
// the dynamic loader may not search: $CUDA_HOME/lib64, $CUDA_PATH/lib64,
// /usr/local/cuda/lib64 and /usr/local/cuda/targets/<arch>/lib.
func cudaLibDirs() []string {
	target := "x86_64-linux"
	if runtime.GOARCH == "arm64" {
		target = "sbsa-linux"
	}
	var dirs []string
	for _, root := range []string{os.Getenv("CUDA_HOME"), os.Getenv("CUDA_PATH")} {
		if root != "" {
			dirs = append(dirs, filepath.Join(root, "lib64"))
		}
	}
	return append(dirs, "/usr/local/cuda/lib64", "/usr/local/cuda/targets/"+target+"/lib")
}

// vendorSymbol is one function a library must (or may) export.
type vendorSymbol struct {
	name     string
	optional bool
}

// vendorLib is a loaded vendor library: the path it was found at and its functions, in
// the order they were asked for (nil for a missing optional one).
type vendorLib struct {
	path string
	fns  []unsafe.Pointer
}

// dlSymbols returns syms as the loader takes them.
func dlSymbols(syms []vendorSymbol) []dl.Symbol {
	out := make([]dl.Symbol, len(syms))
	for i, s := range syms {
		out[i] = dl.Symbol{Names: []string{s.name}, Optional: s.optional}
	}
	return out
}

// loadVendor opens the first candidate (driver.LibraryCandidates of names and
// cudaLibDirs) that loads and exports every required symbol. Before a candidate in a
// directory, it opens the libraries named by deps (the file's base name, e.g.
// "libcublas.so.13", gives "libcublasLt.so.13") from the same directory if they are there,
// so that a library outside the loader's path finds its own dependencies. The library stays
// open for the life of the process. A failure wraps driver.ErrUnavailable and names every
// file tried with the loader's message.
func loadVendor(what string, names []string, syms []vendorSymbol, deps func(base string) []string) (*vendorLib, error) {
	lib, tried := dl.Load(driver.LibraryCandidates(names, cudaLibDirs()...), dlSymbols(syms), deps)
	if lib != nil {
		return &vendorLib{path: lib.Path, fns: lib.Fns}, nil
	}
	return nil, fmt.Errorf("cuda: cannot load %s (tried %s; set %s to a directory holding it): %w",
		what, strings.Join(tried, "; "), driver.VendorPathEnv, driver.ErrUnavailable)
}

// Library properties (libraryPropertyType in library_types.h), for cublasGetProperty and
// cufftGetProperty.
const (
	propMajor = 0
	propMinor = 1
	propPatch = 2
)

// propertyVersion formats the three properties a library reports ("13.0.2"), or returns
// "" if get fails for any of them.
func propertyVersion(get func(prop int) (int, bool)) string {
	var v [3]int
	for i, p := range []int{propMajor, propMinor, propPatch} {
		x, ok := get(p)
		if !ok {
			return ""
		}
		v[i] = x
	}
	return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2])
}
