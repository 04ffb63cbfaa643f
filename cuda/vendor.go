package cuda

// This file is what the vendor libraries (blas.go: cuBLAS, fft.go: cuFFT) share: the
// loader, which opens a library with dlopen and resolves its functions with dlsym (as
// api.go does for the driver and NVRTC), searching the toolkit's directories too, and the
// version numbers the libraries report. Mirrors cl/vendor.go.

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static void *prism_vendor_dlopen(const char *name, char *err, size_t errlen) {
	dlerror();
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		strncpy(err, e != NULL ? e : "dlopen failed", errlen - 1);
		err[errlen - 1] = 0;
	}
	return h;
}

static void *prism_vendor_dlsym(void *h, const char *name) { return dlsym(h, name); }
static void prism_vendor_dlclose(void *h) { dlclose(h); }

// prism_vendor_path returns the file that holds the function f, as the loader found it.
static const char *prism_vendor_path(void *f) {
	Dl_info info;
	if (f == NULL || dladdr(f, &info) == 0) {
		return NULL;
	}
	return info.dli_fname;
}
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
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

// loadVendor opens the first candidate (driver.LibraryCandidates of names and
// cudaLibDirs) that loads and exports every required symbol. Before a candidate in a
// directory, it opens the libraries named by deps (the file's base name, e.g.
// "libcublas.so.13", gives "libcublasLt.so.13") from the same directory if they are there,
// so that a library outside the loader's path finds its own dependencies. The library stays
// open for the life of the process. A failure wraps driver.ErrUnavailable and names every
// file tried with the loader's message.
func loadVendor(what string, names []string, syms []vendorSymbol, deps func(base string) []string) (*vendorLib, error) {
	var tried []string
	for _, name := range driver.LibraryCandidates(names, cudaLibDirs()...) {
		if dir := filepath.Dir(name); strings.Contains(name, "/") && deps != nil {
			for _, dep := range deps(filepath.Base(name)) {
				if p := filepath.Join(dir, dep); fileExists(p) {
					dlopen(p) // its failure shows in the library's own
				}
			}
		}
		h, msg := dlopen(name)
		if h == nil {
			if !strings.Contains(msg, name) {
				msg = name + ": " + msg
			}
			tried = append(tried, msg)
			continue
		}
		lib := &vendorLib{fns: make([]unsafe.Pointer, len(syms))}
		var missing []string
		for i, s := range syms {
			cs := C.CString(s.name)
			lib.fns[i] = C.prism_vendor_dlsym(h, cs)
			C.free(unsafe.Pointer(cs))
			if lib.fns[i] == nil && !s.optional {
				missing = append(missing, s.name)
			}
		}
		if len(missing) > 0 {
			C.prism_vendor_dlclose(h)
			tried = append(tried, fmt.Sprintf("%s: too old, no %s", name, strings.Join(missing, ", ")))
			continue
		}
		lib.path = name
		if p := C.prism_vendor_path(lib.fns[0]); p != nil {
			lib.path = C.GoString(p)
		}
		return lib, nil
	}
	return nil, fmt.Errorf("cuda: cannot load %s (tried %s; set %s to a directory holding it): %w",
		what, strings.Join(tried, "; "), driver.VendorPathEnv, driver.ErrUnavailable)
}

// dlopen opens a library, returning its handle or nil and the loader's message.
func dlopen(name string) (unsafe.Pointer, string) {
	errbuf := (*C.char)(C.calloc(512, 1))
	defer C.free(unsafe.Pointer(errbuf))
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	h := C.prism_vendor_dlopen(cname, errbuf, 512)
	return h, C.GoString(errbuf)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
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
