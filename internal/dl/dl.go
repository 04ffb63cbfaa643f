// Package dl loads shared libraries at run time with dlopen and finds their functions with
// dlsym: the one loader of both backends (cuda: libcuda, NVRTC, cuBLAS, cuFFT, NCCL; cl:
// CLBlast, clFFT), so that a binary without those libraries still starts and builds need no
// -dev package. It only finds functions; calling them is the backends' C code.
package dl

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static void *prism_dl_open(const char *name, char *err, size_t errlen) {
	dlerror();
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		strncpy(err, e != NULL ? e : "dlopen failed", errlen - 1);
		err[errlen - 1] = 0;
	}
	return h;
}

static void *prism_dl_sym(void *h, const char *name) { return dlsym(h, name); }
static void prism_dl_close(void *h) { dlclose(h); }

// prism_dl_path returns the file that holds the function f, as the loader found it.
static const char *prism_dl_path(void *f) {
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
	"strings"
	"unsafe"
)

// Open opens the library name (a file name the dynamic loader searches for, or a path)
// with RTLD_NOW | RTLD_LOCAL. It returns the handle, or nil and the loader's message.
func Open(name string) (unsafe.Pointer, string) {
	errbuf := (*C.char)(C.calloc(512, 1))
	defer C.free(unsafe.Pointer(errbuf))
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	h := C.prism_dl_open(cname, errbuf, 512)
	return h, C.GoString(errbuf)
}

// Sym returns the address of the function name in the library h, or nil if it exports none.
func Sym(h unsafe.Pointer, name string) unsafe.Pointer {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.prism_dl_sym(h, cname)
}

// Close closes a handle Open returned.
func Close(h unsafe.Pointer) { C.prism_dl_close(h) }

// PathOf returns the file that holds the function at f, as the loader found it, or "".
func PathOf(f unsafe.Pointer) string {
	if p := C.prism_dl_path(f); p != nil {
		return C.GoString(p)
	}
	return ""
}

// Symbol is one function a library must (or, Optional, may) export: the first of Names
// that it exports (a versioned name such as cuMemAlloc_v2 before a legacy one).
type Symbol struct {
	Names    []string
	Optional bool
}

// Library is a loaded library. It stays open for the life of the process.
type Library struct {
	Name   string           // the candidate that loaded
	Path   string           // the file it was found at (Name where the loader cannot say)
	Handle unsafe.Pointer   // for functions looked up later with Sym
	Fns    []unsafe.Pointer // the symbols asked for, in order; nil for a missing optional one
}

// Load opens the first of candidates that loads and exports every required symbol. Before
// a candidate in a directory, it opens the libraries deps names (given the candidate's
// base name, e.g. "libcublas.so.13", it may answer "libcublasLt.so.13") from the same
// directory where they are there, so that a library outside the loader's path finds its
// own dependencies; deps may be nil. On failure it returns nil and, for each candidate,
// what went wrong ("libnccl.so.2: cannot open shared object file ...", "libcuda.so.1: too
// old, no cuMemAllocAsync").
func Load(candidates []string, syms []Symbol, deps func(base string) []string) (*Library, []string) {
	var tried []string
	for _, name := range candidates {
		if dir := filepath.Dir(name); strings.Contains(name, "/") && deps != nil {
			for _, dep := range deps(filepath.Base(name)) {
				if p := filepath.Join(dir, dep); fileExists(p) {
					Open(p) // its failure shows in the library's own
				}
			}
		}
		h, msg := Open(name)
		if h == nil {
			if !strings.Contains(msg, name) {
				msg = name + ": " + msg
			}
			tried = append(tried, msg)
			continue
		}
		lib := &Library{Name: name, Path: name, Handle: h, Fns: make([]unsafe.Pointer, len(syms))}
		var missing []string
		for i, s := range syms {
			for _, n := range s.Names {
				if lib.Fns[i] = Sym(h, n); lib.Fns[i] != nil {
					break
				}
			}
			if lib.Fns[i] == nil && !s.Optional && len(s.Names) > 0 {
				missing = append(missing, s.Names[0])
			}
		}
		if len(missing) > 0 {
			Close(h)
			tried = append(tried, fmt.Sprintf("%s: too old, no %s", name, strings.Join(missing, ", ")))
			continue
		}
		for _, f := range lib.Fns {
			if f != nil {
				if p := PathOf(f); p != "" {
					lib.Path = p
				}
				break
			}
		}
		return lib, nil
	}
	return nil, tried
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
