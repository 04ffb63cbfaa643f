package prism_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/prism-compute/prism"

// TestImportDirection keeps the layers of docs/ARCHITECTURE.md: cmd -> bench/render -> bench ->
// kernels, platform -> engine -> engine/driver, with engine/group (groups, collectives, rendezvous) on engine;
// backends (cl, cuda) import only engine, engine/driver and the helpers they share
// (internal/osthread, internal/dl, the one module package with cgo outside them) (and cuda
// its pure-Go OpenCL C front end, cuda/clc, and translation to CUDA C++, cuda/clc/translate,
// which imports only cuda/clc and engine); the kernels base imports only engine, each
// kernel family (a package under kernels/) only the base, engine, the expression compiler
// kernels/fuse and the row scheme kernels/internal/rowwise (each held to the base and
// engine), never another family, and only
// kernels/suite knows every family; and
// nothing below cmd pulls in cgo except the backends (and bench/store, through its SQLite driver).
func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct {
		ImportPath string
		Imports    []string
		CgoFiles   []string
		Standard   bool
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	// allowed lists, per package of this module, the module packages it may import directly.
	allowed := map[string][]string{
		"engine/driver":     {},
		"engine":            {"engine/driver"},
		"engine/group":      {"engine", "engine/driver"}, // groups, collectives, rendezvous
		"cl":                {"engine", "engine/driver", "internal/osthread", "internal/dl"},
		"cuda":              {"engine", "engine/driver", "cuda/clc", "cuda/clc/translate", "internal/osthread", "internal/dl"},
		"internal/osthread": {}, // the OS-thread helper both backends share
		"internal/dl":       {}, // the dlopen loader both backends share
		"cuda/clc":          {}, // the OpenCL C front end: pure Go, no runtime
		"platform":          {"engine"},
		"kernels":           {"engine"},
		"bench":             {"engine", "kernels", "kernels/suite", "kernels/ceiling", "platform", "bench/internal/term", "engine/group"},
		"bench/render":      {"bench", "bench/internal/term", "engine"}, // rendering apart from measurement
		"bench/store":       {"bench", "engine"},                        // the results store
		"bench/regress":     {"bench", "engine"},                        // regression gates and steps: pure Go
	}
	allowed["cuda/clc/translate"] = []string{"cuda/clc", "engine"} // OpenCL C to CUDA C++: pure Go, no runtime
	// bounded reads of regular files only, for every reader of files it did not just write
	allowed["internal/boundedio"] = []string{}
	for _, p := range []string{"kernels", "cuda", "bench"} {
		allowed[p] = append(allowed[p], "internal/boundedio")
	}
	// MPI loaded at run time (cgo, dlopen through internal/dl), registered as engine/group's
	// transport, which itself stays free of cgo
	allowed["internal/mpi"] = []string{"engine", "engine/driver", "engine/group", "internal/dl", "internal/osthread"}
	// a user's own kernels, run, compared and tuned on bench's timing
	allowed["bench/userkernel"] = []string{"engine", "kernels", "bench", "internal/boundedio"}
	// the results store published as a static site
	allowed["bench/site"] = []string{"bench", "bench/store", "bench/internal/term", "engine", "bench/regress"}
	// Every package under kernels/ but suite, fuse and internal/ is a family (or ceiling,
	// held to the same rule): the base, engine, the expression compiler and the row scheme
	// only, so that no family reaches into another. The compiler (kernels/fuse) is no
	// family: the base and engine only. Nor is the row scheme that the softmax and
	// layernorm families share (kernels/internal/rowwise): the base and engine only, so
	// that it imports no family.
	allowed["engine/shard"] = []string{"engine", "engine/group"} // data sharded over a group's devices, which the families' split ops take
	allowed["kernels/fuse"] = []string{"kernels", "engine"}
	allowed["kernels/internal/rowwise"] = []string{"kernels", "engine"}
	var families []string
	for path := range pkgs {
		if rel, ok := strings.CutPrefix(path, mod+"/kernels/"); ok && !strings.HasPrefix(rel, "internal/") && rel != "suite" && rel != "fuse" {
			families = append(families, "kernels/"+rel)
			allowed["kernels/"+rel] = []string{"kernels", "engine", "kernels/fuse", "kernels/internal/rowwise", "engine/shard"}
		}
	}
	if len(families) == 0 {
		t.Error("found no kernel family package under kernels/")
	}
	allowed["kernels/suite"] = append([]string{"kernels", "engine"}, families...) // the list of every family
	for path, p := range pkgs {
		rel, ok := strings.CutPrefix(path, mod+"/")
		if !ok {
			continue
		}
		allow, known := allowed[rel]
		if !known {
			continue // cmd, enginetest and internal packages may import what they need
		}
		for _, imp := range p.Imports {
			r, inMod := strings.CutPrefix(imp, mod+"/")
			if inMod && !contains(allow, r) {
				t.Errorf("%s imports %s; the layering allows only %v", rel, r, allow)
			}
		}
	}
	// bench measures and draws nothing: charts and HTML are bench/render's.
	for _, imp := range pkgs[mod+"/bench"].Imports {
		if strings.HasPrefix(imp, "gonum.org/v1/plot") || imp == "html/template" {
			t.Errorf("bench imports %s; rendering belongs in bench/render", imp)
		}
	}
	// kernels, platform, bench, cuda/clc and cuda/clc/translate must build without cgo: no package they depend on uses it.
	for _, root := range append([]string{"kernels", "kernels/fuse", "kernels/suite", "platform", "bench", "bench/userkernel", "bench/regress", "engine", "engine/group", "cuda/clc", "cuda/clc/translate"}, families...) {
		seen := map[string]bool{}
		var walk func(string)
		walk = func(path string) {
			if seen[path] {
				return
			}
			seen[path] = true
			p := pkgs[path]
			if len(p.CgoFiles) > 0 && !p.Standard {
				t.Errorf("%s depends on %s, which uses cgo", root, path)
			}
			for _, imp := range p.Imports {
				walk(imp)
			}
		}
		walk(mod + "/" + root)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
