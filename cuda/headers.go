package cuda

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"sync"
)

// header is a header file NVRTC gets in memory (nvrtcCreateProgram's headers and
// includeNames): CUDA C++ sources include it by name.
type header struct {
	name, text string
}

// includeFS holds the headers embedded for CUDA C++ sources (include/*.h): at least
// prism_cuda.h, with fixed-width integer types and half and bfloat16 storage types.
//
//go:embed include/*.h
var includeFS embed.FS

// embeddedHeaders returns the embedded headers, sorted by name. They are read once.
var embeddedHeaders = sync.OnceValue(func() []header {
	var hs []header
	names, _ := fs.Glob(includeFS, "include/*.h")
	for _, n := range names {
		b, err := includeFS.ReadFile(n)
		if err != nil {
			panic("cuda: embedded header " + n + ": " + err.Error()) // cannot happen: embedded at build time
		}
		hs = append(hs, header{name: path.Base(n), text: string(b)})
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].name < hs[j].name })
	return hs
})
