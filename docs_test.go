package prism_test

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestDocs keeps the documentation true to the code: every identifier and file that
// docs/ARCHITECTURE.md, README.md and the packages' doc.go files name must exist.
//
// In the Markdown files it reads the code spans: `pkg.Name` must be a top-level name of the
// module package (or standard package) called pkg, `Type.Member` a method or field of a type
// of that name, a bare `Name` or `camelName` a name (top-level or member) of a package the
// paragraph or table row names, else of any package of the module, and a path
// (`kernels/splitrun.go`, `kernels/*/*.cl`, `api.go`) a file of the module. In doc.go
// comments it reads the prose: qualified names as above, file names, and the names a Go
// doc comment writes bare: a capitalised word followed by a verb such as "returns" must be
// a function, type or method of the package itself, a mixed-case word (ErrUnsupported) a
// name of the package, of a module package it imports or of one its doc names by path.
func TestDocs(t *testing.T) {
	idx := newDocIndex(t)
	var bad []string
	for _, md := range []string{"docs/ARCHITECTURE.md", "README.md"} {
		bad = append(bad, idx.checkMarkdown(t, md)...)
	}
	for _, p := range idx.pkgs {
		if _, err := os.Stat(filepath.Join(p.dir, "doc.go")); err == nil {
			bad = append(bad, idx.checkDocGo(t, p)...)
		}
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestDocsCatches checks that the checks themselves find what they are for: a renamed
// function named bare in a package's doc, a qualified name, a method, a file.
func TestDocsCatches(t *testing.T) {
	idx := newDocIndex(t)
	platform := idx.byDir["platform"]
	if platform == nil {
		t.Fatal("no package platform in the index")
	}
	for _, c := range []struct {
		text string
		bad  bool
	}{
		{"Devices returns one flat list of devices.", true},
		{"Discover returns one flat list of devices.", false},
		{"See platform.Devices for the list.", true},
		{"See platform.Discover and engine.Devices.", false},
		{"Kernel.Attributes reports what the backend knows.", false},
		{"Kernel.Atributes reports what the backend knows.", true},
		{"The pairs (thread.go, pci.go) and kernels/splitrun.go.", false},
		{"The pairs (nosuchfile.go) in kernels/split.go.", true},
		{"It returns the list. This says why; OpenCL and PoCL run it.", false},
	} {
		got := idx.checkText(platform, "doc.go", 1, c.text, []*docPkg{platform}, false)
		if (len(got) > 0) != c.bad {
			t.Errorf("%q: findings %q, want findings: %v", c.text, got, c.bad)
		}
	}
	for _, c := range []struct {
		span string
		bad  bool
	}{
		{"platform.Devices", true},
		{"platform.Discover", false},
		{"kernels/splitrun.go", false},
		{"kernels/runparts.go", true},
		{"kernels.SplitRun", false},
		{"kernels.RunParts", true},
		{"Queue.Timed", false},
		{"Queue.Timer", true},
		{"cuda/clc/translate", false},
		{"engine/groups", true},
		{"kernels/*/*.cl", false},
		{"PRISM_DEVICE=cuda:0", false},
	} {
		got := idx.checkSpan("x.md", 1, c.span, nil, false)
		if (len(got) > 0) != c.bad {
			t.Errorf("%q: findings %q, want findings: %v", c.span, got, c.bad)
		}
	}
}

// docProse lists capitalised words that doc comments use as words, not as names.
var docProse = map[string]bool{
	"OpenCL": true, "PoCL": true, "CLBlast": true, "FlashAttention": true, "MiB": true,
	"GiB": true, "KiB": true, "NumPy": true, "PyTorch": true, "NaN": true, "NaNs": true,
	"PCIe": true, "NVLink": true, "Rusticl": true, "StridedBatched": true, "Perfdoc": true,
	"cuBLAS": true, "cuFFT": true, "clFFT": true, "SQLite": true, "PostgreSQL": true,
}

// reProse matches words that are names, but not of Go: acronyms in the plural (GPUs),
// and C names of the APIs the backends call (CUresult, CLBlastSgemm, cuMemAlloc,
// clEnqueueNDRangeKernel).
var reProse = regexp.MustCompile(`^[A-Z]{2,}s$|^CU[a-z]|^CLBlast[A-Z]|^(cu|cl|nvrtc)[A-Z]`)

// docSpanProse lists code spans of the Markdown files that look like names and are not:
// placeholders of a pattern.
var docSpanProse = map[string]bool{
	"newXCmd": true, "xRun": true, "vloadN": true, "vstoreN": true,
}

type docPkg struct {
	dir   string              // relative to the module root, "." for the root
	name  string              // the package clause, without _test
	top   map[string]bool     // top-level names, exported or not
	types map[string]*docType // types by name
	all   map[string]bool     // top-level names and every member name
	deps  []string            // the module packages it imports, by directory
	meths map[string]bool     // method names, of types and interfaces
}

type docType struct {
	members  map[string]bool
	embedded []string
}

type docIndex struct {
	t      *testing.T
	pkgs   []*docPkg
	byDir  map[string]*docPkg
	byName map[string][]*docPkg
	files  map[string][]string // base name -> relative paths of every file of the module
	dirs   map[string][]string // base name -> relative paths of every directory
	std    map[string]*docPkg
}

func newDocIndex(t *testing.T) *docIndex {
	t.Helper()
	idx := &docIndex{t: t, byDir: map[string]*docPkg{}, byName: map[string][]*docPkg{},
		files: map[string][]string{}, dirs: map[string][]string{}, std: map[string]*docPkg{}}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "bin") {
				return filepath.SkipDir
			}
			idx.dirs[name] = append(idx.dirs[name], path)
			return nil
		}
		idx.files[name] = append(idx.files[name], path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, paths := range idx.files {
		for _, path := range paths {
			if !strings.HasSuffix(path, ".go") || strings.Contains(path, "testdata") {
				continue
			}
			dir := filepath.Dir(path)
			if idx.byDir[dir] == nil {
				p := parseDocPkg(t, dir)
				if p == nil {
					continue
				}
				idx.byDir[dir] = p
				idx.pkgs = append(idx.pkgs, p)
				idx.byName[p.name] = append(idx.byName[p.name], p)
			}
		}
	}
	sort.Slice(idx.pkgs, func(i, j int) bool { return idx.pkgs[i].dir < idx.pkgs[j].dir })
	return idx
}

// parseDocPkg reads the names a package declares, in every file whatever its build tags,
// its tests included.
func parseDocPkg(t *testing.T, dir string) *docPkg {
	t.Helper()
	fset := token.NewFileSet()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := &docPkg{dir: dir, top: map[string]bool{}, types: map[string]*docType{}, all: map[string]bool{}, meths: map[string]bool{}}
	typ := func(name string) *docType {
		if p.types[name] == nil {
			p.types[name] = &docType{members: map[string]bool{}}
		}
		return p.types[name]
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if name := strings.TrimSuffix(f.Name.Name, "_test"); p.name == "" || !strings.HasSuffix(f.Name.Name, "_test") {
			p.name = name
		}
		for _, im := range f.Imports {
			if dep, ok := strings.CutPrefix(strings.Trim(im.Path.Value, `"`), mod+"/"); ok {
				p.deps = append(p.deps, dep)
			}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					p.top[d.Name.Name] = true
					continue
				}
				rt := d.Recv.List[0].Type
				for {
					switch x := rt.(type) {
					case *ast.StarExpr:
						rt = x.X
						continue
					case *ast.IndexExpr:
						rt = x.X
						continue
					case *ast.IndexListExpr:
						rt = x.X
						continue
					}
					break
				}
				if id, ok := rt.(*ast.Ident); ok {
					typ(id.Name).members[d.Name.Name] = true
					p.meths[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							p.top[n.Name] = true
						}
					case *ast.TypeSpec:
						p.top[s.Name.Name] = true
						tt := typ(s.Name.Name)
						var fields *ast.FieldList
						switch x := s.Type.(type) {
						case *ast.StructType:
							fields = x.Fields
						case *ast.InterfaceType:
							fields = x.Methods
						}
						if fields == nil {
							continue
						}
						_, iface := s.Type.(*ast.InterfaceType)
						for _, fl := range fields.List {
							for _, n := range fl.Names {
								tt.members[n.Name] = true
								if iface {
									p.meths[n.Name] = true
								}
							}
							if len(fl.Names) == 0 {
								ft := fl.Type
								if st, ok := ft.(*ast.StarExpr); ok {
									ft = st.X
								}
								switch x := ft.(type) {
								case *ast.Ident:
									tt.embedded = append(tt.embedded, x.Name)
									tt.members[x.Name] = true
								case *ast.SelectorExpr:
									tt.embedded = append(tt.embedded, x.Sel.Name)
									tt.members[x.Sel.Name] = true
								}
							}
						}
					}
				}
			}
		}
	}
	if p.name == "" {
		return nil
	}
	for n := range p.top {
		p.all[n] = true
	}
	for _, tt := range p.types {
		for n := range tt.members {
			p.all[n] = true
		}
	}
	return p
}

// stdPkg parses a standard package by its name (sort, maps, errors, ...), or returns nil.
func (idx *docIndex) stdPkg(name string) *docPkg {
	if p, ok := idx.std[name]; ok {
		return p
	}
	var p *docPkg
	if bp, err := build.Default.Import(name, "", build.FindOnly); err == nil && bp.Goroot {
		p = parseDocPkg(idx.t, bp.Dir)
	}
	idx.std[name] = p
	return p
}

// pkgsNamed returns the packages a qualifier may name: the module's packages of that name,
// else a standard package.
func (idx *docIndex) pkgsNamed(q string) []*docPkg {
	if ps := idx.byName[q]; len(ps) > 0 {
		return ps
	}
	if p := idx.stdPkg(q); p != nil {
		return []*docPkg{p}
	}
	return nil
}

// hasMember reports whether a type of that name, in one of the packages, has the member,
// itself or through a type it embeds.
func hasMember(ps []*docPkg, all []*docPkg, typ, member string, depth int) bool {
	for _, p := range ps {
		tt := p.types[typ]
		if tt == nil {
			continue
		}
		if tt.members[member] {
			return true
		}
		if depth < 3 {
			for _, e := range tt.embedded {
				if hasMember(all, all, e, member, depth+1) {
					return true
				}
			}
		}
	}
	return false
}

func (idx *docIndex) withType(typ string) []*docPkg {
	var ps []*docPkg
	for _, p := range idx.pkgs {
		if p.types[typ] != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

var (
	reIdentPath = regexp.MustCompile(`^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$`)
	reFileName  = regexp.MustCompile(`^[\w.*<>/-]*\.(go|cl|clh|cu|cuh|md|json|sh|py)$`)
	reCodeSpan  = regexp.MustCompile("`([^`]+)`")
	reAllCaps   = regexp.MustCompile(`^[A-Z0-9_]+$`)
	reMixed     = regexp.MustCompile(`^[A-Z][a-z0-9]+[A-Z]\w*$|^[A-Z]{2,}[a-z]\w*$`)
	reCamel     = regexp.MustCompile(`^[a-z][a-z0-9]*[A-Z]\w*$`)
	reWord      = regexp.MustCompile(`[\w./*<>-]*\w`)
	reStrip     = regexp.MustCompile(`(\[[^\]]*\]|\([^)]*\)|\{[^}]*\})+$`)
)

// docVerbs are the verbs after which a capitalised word opening a Go doc sentence is a name
// ("Discover returns ...").
var docVerbs = map[string]bool{
	"returns": true, "reports": true, "says": true, "lists": true, "gives": true, "takes": true,
	"makes": true, "describes": true, "answers": true, "builds": true, "opens": true,
	"loads": true, "holds": true, "creates": true, "registers": true, "parses": true,
	"compiles": true, "writes": true, "reads": true, "selects": true, "chooses": true,
	"sets": true, "measures": true, "records": true, "renders": true, "wraps": true,
}

// docNotNames are capitalised words that open sentences before such verbs.
var docNotNames = map[string]bool{
	"It": true, "This": true, "That": true, "Each": true, "Every": true, "One": true,
	"Which": true, "What": true, "The": true, "A": true, "An": true, "Nothing": true,
	"Everything": true, "Its": true, "Prism": true, "Here": true, "Then": true, "Both": true,
	"Neither": true, "None": true, "CUDA": true, "OpenCL": true, "NVML": true, "NVRTC": true,
}

// checkMarkdown checks the code spans of a Markdown file, paragraph by paragraph and table
// row by table row; fenced code blocks are left out.
func (idx *docIndex) checkMarkdown(t *testing.T, md string) []string {
	t.Helper()
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	lines := strings.Split(string(b), "\n")
	fenced := false
	var block []string
	start := 0
	flush := func() {
		if len(block) > 0 {
			bad = append(bad, idx.checkMarkdownBlock(md, start, block)...)
		}
		block = nil
	}
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, "```"):
			flush()
			fenced = !fenced
		case fenced:
		case strings.TrimSpace(line) == "":
			flush()
		case strings.HasPrefix(line, "|"):
			flush()
			start = i + 1
			block = []string{line}
			flush()
		default:
			if len(block) == 0 {
				start = i + 1
			}
			block = append(block, line)
		}
	}
	flush()
	return bad
}

func (idx *docIndex) checkMarkdownBlock(md string, start int, block []string) []string {
	text := strings.Join(block, "\n")
	// The packages the block names: package paths in its code spans and text, the
	// qualifiers it uses, and the directories of the files it names. A table row's first
	// cell, when a package, is its only context.
	var ctx []*docPkg
	seen := map[*docPkg]bool{}
	add := func(p *docPkg) {
		if p != nil && !seen[p] {
			seen[p] = true
			ctx = append(ctx, p)
		}
	}
	strict := false
	if strings.HasPrefix(text, "|") {
		cells := strings.Split(text, "|")
		if len(cells) > 2 {
			for _, m := range reCodeSpan.FindAllStringSubmatch(cells[1], -1) {
				if p := idx.byDir[m[1]]; p != nil {
					add(p)
					strict = true
				}
			}
		}
	}
	if !strict {
		for _, w := range reWord.FindAllString(text, -1) {
			w = strings.Trim(w, "./")
			if p := idx.byDir[w]; p != nil && strings.Contains(w, "/") {
				add(p)
			} else if reFileName.MatchString(w) && strings.Contains(w, "/") {
				add(idx.byDir[filepath.Dir(w)])
			} else if i := strings.Index(w, "."); i > 0 {
				for _, p := range idx.byName[w[:i]] {
					add(p)
				}
			}
		}
		for _, m := range regexp.MustCompile(`package (\w[\w/]*)`).FindAllStringSubmatch(text, -1) {
			add(idx.byDir[m[1]])
		}
	}
	var bad []string
	for _, loc := range reCodeSpan.FindAllStringSubmatchIndex(text, -1) {
		span := strings.Join(strings.Fields(text[loc[2]:loc[3]]), " ")
		line := start + strings.Count(text[:loc[0]], "\n")
		bad = append(bad, idx.checkSpan(md, line, span, ctx, strict)...)
	}
	// File paths written outside code spans: (engine/pool.go), splitplan.go.
	for _, loc := range reWord.FindAllStringIndex(reCodeSpan.ReplaceAllStringFunc(text, func(s string) string {
		return strings.Repeat(" ", len(s))
	}), -1) {
		w := text[loc[0]:loc[1]]
		if reFileName.MatchString(w) && !strings.Contains(w, "](") {
			line := start + strings.Count(text[:loc[0]], "\n")
			if msg := idx.checkFile(w, ctx, strict); msg != "" {
				bad = append(bad, md+":"+strconv.Itoa(line)+": "+msg)
			}
		}
	}
	return bad
}

// checkSpan checks one code span of a Markdown file.
func (idx *docIndex) checkSpan(md string, line int, span string, ctx []*docPkg, strict bool) []string {
	where := md + ":" + strconv.Itoa(line) + ": `" + span + "`: "
	s := strings.TrimLeft(span, "*&")
	if docSpanProse[s] || docProse[s] || reProse.MatchString(s) || strings.HasPrefix(s, ".") && !strings.Contains(s, "/") {
		return nil
	}
	if reFileName.MatchString(s) || strings.ContainsAny(s, "/") {
		if strings.ContainsAny(s, " =:$~") {
			return nil
		}
		if reFileName.MatchString(s) {
			if msg := idx.checkFile(s, ctx, strict); msg != "" {
				return []string{where + msg}
			}
			return nil
		}
		// A package path of the module.
		first := strings.SplitN(s, "/", 2)[0]
		if _, err := os.Stat(first); err != nil || strings.Contains(s, "<") {
			return nil
		}
		if _, err := os.Stat(s); err != nil {
			return []string{where + "no such package or file"}
		}
		return nil
	}
	s = reStrip.ReplaceAllString(s, "")
	if !reIdentPath.MatchString(s) {
		return nil
	}
	if msg := idx.checkName(s, ctx, strict); msg != "" {
		return []string{where + msg}
	}
	return nil
}

// checkName checks Name, pkg.Name, Type.Member or pkg.Type.Member; it returns what is
// wrong, or "".
func (idx *docIndex) checkName(s string, ctx []*docPkg, strict bool) string {
	parts := strings.Split(s, ".")
	switch len(parts) {
	case 1:
		n := parts[0]
		if reAllCaps.MatchString(n) || !(reCamel.MatchString(n) || (n[0] >= 'A' && n[0] <= 'Z')) {
			return ""
		}
		for _, p := range ctx {
			if p.all[n] {
				return ""
			}
		}
		if strict {
			return "not a name of " + pkgDirs(ctx)
		}
		for _, p := range idx.pkgs {
			if p.all[n] {
				return ""
			}
		}
		return "no such name in the module"
	case 2:
		q, n := parts[0], parts[1]
		if ps := idx.pkgsNamed(q); len(ps) > 0 {
			for _, p := range ps {
				if p.top[n] {
					return ""
				}
			}
			if ts := idx.withType(q); len(ts) == 0 || !hasMember(ts, idx.pkgs, q, n, 0) {
				return "package " + pkgDirs(ps) + " has no " + n
			}
			return ""
		}
		if q[0] < 'A' || q[0] > 'Z' {
			if ps := idx.withType(q); len(ps) > 0 && !hasMember(ps, idx.pkgs, q, n, 0) {
				return "type " + q + " has no " + n
			}
			return ""
		}
		ps := idx.withType(q)
		if len(ps) == 0 {
			return "no type " + q + " in the module"
		}
		if !hasMember(ps, idx.pkgs, q, n, 0) {
			return "type " + q + " has no method or field " + n
		}
		return ""
	default:
		ps := idx.byName[parts[0]]
		if len(ps) == 0 {
			return ""
		}
		if !hasMember(ps, idx.pkgs, parts[1], parts[2], 0) {
			return pkgDirs(ps) + "." + parts[1] + " has no " + parts[2]
		}
		return ""
	}
}

func pkgDirs(ps []*docPkg) string {
	var d []string
	for _, p := range ps {
		d = append(d, p.dir)
	}
	return strings.Join(d, ", ")
}

// checkFile checks a file path or name: a path from the module root, else under a context
// package's directory, else (a bare name, not strict) anywhere in the module. It returns
// what is wrong, or "".
func (idx *docIndex) checkFile(s string, ctx []*docPkg, strict bool) string {
	base := filepath.Base(s)
	if strings.Contains(s, "<") || strings.HasPrefix(base, "_") || strings.HasPrefix(base, "*") || strings.HasPrefix(base, ".") ||
		reAllCaps.MatchString(strings.Split(base, ".")[0]) {
		return "" // a pattern or a placeholder (_test.go, *.json, FILE.cl)
	}
	exists := func(path string) bool {
		if strings.Contains(path, "*") {
			m, _ := filepath.Glob(path)
			return len(m) > 0
		}
		_, err := os.Stat(path)
		return err == nil
	}
	if exists(s) {
		return ""
	}
	for _, p := range ctx {
		if exists(filepath.Join(p.dir, s)) {
			return ""
		}
		// A name in a subdirectory of the package (prelude/types.cuh, include/prism_cuda.h).
		if !strings.Contains(s, "/") {
			for _, f := range idx.files[s] {
				if strings.HasPrefix(f, p.dir+"/") {
					return ""
				}
			}
		}
	}
	first := strings.SplitN(s, "/", 2)[0]
	if strings.Contains(s, "/") {
		if _, err := os.Stat(first); err == nil {
			return "no such file"
		}
		// Relative to a directory elsewhere in the module (prelude/types.cuh).
		dirs := idx.dirs[first]
		if len(dirs) == 0 {
			return ""
		}
		for _, d := range dirs {
			if exists(filepath.Join(filepath.Dir(d), s)) {
				return ""
			}
		}
		return "no such file"
	}
	if !strict && len(idx.files[s]) > 0 {
		return ""
	}
	if strict {
		return "no such file in " + pkgDirs(ctx)
	}
	return "no such file in the module"
}

// checkDocGo checks a package's doc.go: its comments, line by line. A name written bare
// must be one of the package's own, of a module package it imports, or of one whose path
// the doc names; a word opening a sentence such as "Discover returns" must be a top-level
// name of the package itself. Code blocks are checked for qualified names only.
func (idx *docIndex) checkDocGo(t *testing.T, p *docPkg) []string {
	t.Helper()
	path := filepath.Join(p.dir, "doc.go")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	ctx := []*docPkg{p}
	seen := map[*docPkg]bool{p: true}
	add := func(q *docPkg) {
		if q != nil && !seen[q] {
			seen[q] = true
			ctx = append(ctx, q)
		}
	}
	for _, d := range p.deps {
		add(idx.byDir[d])
	}
	var text strings.Builder
	for _, cg := range f.Comments {
		text.WriteString(cg.Text())
	}
	for _, w := range reWord.FindAllString(text.String(), -1) {
		if strings.Contains(w, "/") {
			add(idx.byDir[strings.Trim(w, "./")])
		}
	}
	var bad []string
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			line := fset.Position(c.Pos()).Line
			for i, l := range strings.Split(c.Text, "\n") {
				l = strings.TrimPrefix(strings.TrimPrefix(l, "//"), "/*")
				code := strings.HasPrefix(l, "\t") || strings.HasPrefix(l, " \t")
				bad = append(bad, idx.checkText(p, path, line+i, l, ctx, code)...)
			}
		}
	}
	return bad
}

// checkText checks one line of a doc comment of package p; in a code block (code), only
// qualified names and files.
func (idx *docIndex) checkText(p *docPkg, path string, line int, text string, ctx []*docPkg, code bool) []string {
	var bad []string
	where := path + ":" + strconv.Itoa(line) + ": "
	words := reWord.FindAllStringIndex(text, -1)
	for i, loc := range words {
		w := text[loc[0]:loc[1]]
		if reFileName.MatchString(w) {
			if loc[0] > 0 && text[loc[0]-1] == '"' {
				continue // a name in a string of an example
			}
			if msg := idx.checkFile(w, ctx, false); msg != "" {
				bad = append(bad, where+w+": "+msg)
			}
			continue
		}
		if strings.ContainsAny(w, "/*<>-") {
			continue
		}
		w = strings.TrimSuffix(w, ".")
		if strings.Contains(w, ".") {
			parts := strings.Split(w, ".")
			last := parts[len(parts)-1]
			if !reIdentPath.MatchString(w) || last == "" || last[0] < 'A' || last[0] > 'Z' {
				continue
			}
			if msg := idx.checkDocQualified(p, w); msg != "" {
				bad = append(bad, where+w+": "+msg)
			}
			continue
		}
		if code || reAllCaps.MatchString(w) || docProse[w] || reProse.MatchString(w) || docNotNames[w] || w[0] < 'A' || w[0] > 'Z' {
			continue
		}
		if i+1 < len(words) && docVerbs[text[words[i+1][0]:words[i+1][1]]] && strings.TrimSpace(text[loc[1]:words[i+1][0]]) == "" {
			if !p.top[w] && !p.meths[w] {
				bad = append(bad, where+w+": not a function, type or method of package "+p.dir)
			}
			continue
		}
		if !reMixed.MatchString(w) {
			continue
		}
		found := false
		for _, q := range ctx {
			found = found || q.all[w] || (strings.HasSuffix(w, "s") && q.all[strings.TrimSuffix(w, "s")])
		}
		if !found {
			bad = append(bad, where+w+": not a name of "+pkgDirs(ctx))
		}
	}
	return bad
}

// checkDocQualified checks pkg.Name or Type.Member in package p's doc: a Type of p
// first, else as in the Markdown files.
func (idx *docIndex) checkDocQualified(p *docPkg, w string) string {
	parts := strings.Split(w, ".")
	if len(parts) == 2 && p.types[parts[0]] != nil {
		if hasMember([]*docPkg{p}, idx.pkgs, parts[0], parts[1], 0) || hasMember(idx.withType(parts[0]), idx.pkgs, parts[0], parts[1], 0) {
			return ""
		}
		return "type " + parts[0] + " has no method or field " + parts[1]
	}
	if parts[0][0] < 'A' || parts[0][0] > 'Z' {
		if len(idx.pkgsNamed(parts[0])) == 0 {
			return "" // a variable or another module's package (dev.Close, nvml.Init)
		}
	}
	return idx.checkName(w, nil, false)
}

// TestDocsDriverInterfaces checks that engine/driver's package doc names every interface
// the package defines: it is the backend author's map of the SPI.
func TestDocsDriverInterfaces(t *testing.T) {
	fset := token.NewFileSet()
	ents, err := os.ReadDir("engine/driver")
	if err != nil {
		t.Fatal(err)
	}
	var doc string
	var ifaces []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join("engine/driver", e.Name()), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "doc.go" {
			doc = f.Doc.Text()
		}
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok {
				for _, s := range gd.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.IsExported() {
						if _, ok := ts.Type.(*ast.InterfaceType); ok {
							ifaces = append(ifaces, ts.Name.Name)
						}
					}
				}
			}
		}
	}
	if len(ifaces) < 10 {
		t.Fatalf("found %d interfaces in engine/driver: %v", len(ifaces), ifaces)
	}
	words := map[string]bool{}
	for _, w := range regexp.MustCompile(`\w+`).FindAllString(doc, -1) {
		words[w] = true
		words[strings.TrimSuffix(w, "s")] = true
	}
	for _, name := range ifaces {
		if !words[name] {
			t.Errorf("engine/driver/doc.go does not name the interface %s", name)
		}
	}
}
