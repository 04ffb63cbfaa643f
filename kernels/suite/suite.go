package suite

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/access"
	"github.com/prism-compute/prism/kernels/alloc"
	"github.com/prism-compute/prism/kernels/attention"
	"github.com/prism-compute/prism/kernels/conv"
	"github.com/prism-compute/prism/kernels/elementwise"
	"github.com/prism-compute/prism/kernels/fft"
	"github.com/prism-compute/prism/kernels/fused"
	"github.com/prism-compute/prism/kernels/gemm"
	"github.com/prism-compute/prism/kernels/histogram"
	"github.com/prism-compute/prism/kernels/launch"
	"github.com/prism-compute/prism/kernels/layernorm"
	"github.com/prism-compute/prism/kernels/montecarlo"
	"github.com/prism-compute/prism/kernels/overlap"
	"github.com/prism-compute/prism/kernels/reduce"
	"github.com/prism-compute/prism/kernels/scan"
	"github.com/prism-compute/prism/kernels/softmax"
	"github.com/prism-compute/prism/kernels/sort"
	"github.com/prism-compute/prism/kernels/stencil"
	"github.com/prism-compute/prism/kernels/stream"
	"github.com/prism-compute/prism/kernels/transfer"
	"github.com/prism-compute/prism/kernels/transpose"
)

// Families returns the suite: every kernel family, in the order in which listings and
// reports show them (memory-bound first, then compute-bound, then what moves data between
// host and device and allocates it: transfers, the copy-compute pipeline, allocation; last
// the cost of a launch). A new family is one line here.
func Families() []kernels.Family {
	return []kernels.Family{
		stream.Family(),
		access.Family(),
		elementwise.Family(),
		fused.Family(),
		transpose.Family(),
		reduce.Family(),
		scan.Family(),
		sort.Family(),
		histogram.Family(),
		stencil.Family(),
		conv.Family(),
		gemm.Family(),
		fft.Family(),
		softmax.Family(),
		layernorm.Family(),
		attention.Family(),
		montecarlo.Family(),
		transfer.Family(),
		overlap.Family(),
		alloc.Family(),
		launch.Family(),
	}
}

// catalog is the suite indexed: its families and their operations in order, and the
// operations by name.
type catalog struct {
	families []kernels.Family
	ops      []kernels.Op
	byName   map[string]kernels.Op
}

// load builds the catalog on first use. It panics on a programming error in a family: an
// empty or repeated name, an op outside its family or without Setup or sizes.
var load = sync.OnceValue(func() *catalog {
	c := &catalog{families: Families(), byName: map[string]kernels.Op{}}
	seen := map[string]bool{}
	for _, f := range c.families {
		switch {
		case f.Name == "" || f.Source == "" || len(f.Ops) == 0:
			panic(fmt.Sprintf("kernels: incomplete family %q (a name, a source and operations)", f.Name))
		case seen[f.Name]:
			panic("kernels: family listed twice: " + f.Name)
		}
		seen[f.Name] = true
		for _, op := range f.Ops {
			switch {
			case op.Name == "" || !validVariants(op) || op.QuickSize < 1 || op.DefaultSize < 1:
				panic(fmt.Sprintf("kernels: incomplete op %+v", op))
			case op.Family != f.Name || !strings.HasPrefix(op.Name, f.Name+"/"):
				panic(fmt.Sprintf("kernels: op %s in family %s", op.Name, f.Name))
			case c.byName[op.Name].Name != "":
				panic("kernels: op registered twice: " + op.Name)
			}
			c.byName[op.Name] = op
			c.ops = append(c.ops, op)
		}
	}
	return c
})

// Ops returns every operation of the suite: the families in the order of Families, each
// family's operations in the order it lists them.
func Ops() []kernels.Op { return append([]kernels.Op(nil), load().ops...) }

// Family returns the family named name ("gemm"), or an error wrapping engine.ErrNotFound.
func Family(name string) (kernels.Family, error) {
	for _, f := range load().families {
		if f.Name == name {
			return f, nil
		}
	}
	return kernels.Family{}, fmt.Errorf("kernels: no family %q (have %s): %w", name, strings.Join(names(), ", "), engine.ErrNotFound)
}

// names returns the names of the families, in order.
func names() []string {
	var out []string
	for _, f := range load().families {
		out = append(out, f.Name)
	}
	return out
}

// Lookup returns the op named name ("stream/triad/float32"), or an error wrapping
// engine.ErrNotFound.
func Lookup(name string) (kernels.Op, error) {
	op, ok := load().byName[name]
	if !ok {
		return kernels.Op{}, fmt.Errorf("kernels: no operation %q (see `prism kernels` for the list): %w", name, engine.ErrNotFound)
	}
	return op, nil
}

// Match returns the ops selected by patterns, in Ops order. A pattern selects an op when it
// equals its name or family, when it is a prefix of the name ending at a slash boundary
// ("stream/triad" selects stream/triad/float32 and /float64), or when it matches the name
// as a path.Match glob ("*/*/float64"), or matches the part of it before a slash
// ("stencil/*" selects stencil/7pt/float32). Failing those, a short name without the family
// selects the ops whose name without the family starts with it ("triad" selects
// stream/triad/*, "sum/int32" reduce/sum/int32) when they belong to one family; a short
// name found in several families is an error wrapping engine.ErrInvalidArg that lists
// them. An empty list selects every op. A pattern that selects nothing is an error
// wrapping engine.ErrNotFound that suggests the closest names.
func Match(patterns ...string) ([]kernels.Op, error) {
	all := Ops()
	if len(patterns) == 0 {
		return all, nil
	}
	chosen := map[string]bool{}
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		found := false
		for _, op := range all {
			ok, err := globPrefix(p, op.Name)
			if err != nil {
				return nil, fmt.Errorf("kernels: bad pattern %q: %v: %w", p, err, engine.ErrInvalidArg)
			}
			if ok || p == op.Family || p == op.Name || strings.HasPrefix(op.Name, strings.TrimSuffix(p, "/")+"/") {
				chosen[op.Name], found = true, true
			}
		}
		if !found {
			short, err := matchShort(all, p)
			if err != nil {
				return nil, err
			}
			for _, name := range short {
				chosen[name] = true
			}
		}
	}
	var out []kernels.Op
	for _, op := range all {
		if chosen[op.Name] {
			out = append(out, op)
		}
	}
	return out, nil
}

// globPrefix reports whether glob p matches name, or the part of name before one of its
// slashes: "stencil/*" selects stencil/7pt/float32 as "stencil/7pt" does.
func globPrefix(p, name string) (bool, error) {
	for i := len(name); i > 0; i = strings.LastIndexByte(name[:i], '/') {
		if ok, err := path.Match(p, name[:i]); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// validVariants reports whether op's variants are complete: each named once and with a
// Setup, the last one the portable OpenCL C kernel.
func validVariants(op kernels.Op) bool {
	n := len(op.Variants)
	if n == 0 || op.Variants[n-1].Name != kernels.PortableName || op.Variants[n-1].Dialect != engine.DialectOpenCL {
		return false
	}
	seen := map[string]bool{}
	for _, v := range op.Variants {
		if v.Name == "" || v.Setup == nil || seen[strings.ToLower(v.Name)] {
			return false
		}
		seen[strings.ToLower(v.Name)] = true
	}
	return true
}

// matchShort returns the ops a short name selects (the op name without its family, or a
// prefix of it at a slash boundary), or an error: ambiguous across families, or no match,
// with the closest names.
func matchShort(all []kernels.Op, p string) ([]string, error) {
	var out []string
	families := map[string]bool{}
	for _, op := range all {
		short := strings.TrimPrefix(op.Name, op.Family+"/")
		if short == p || strings.HasPrefix(short, strings.TrimSuffix(p, "/")+"/") {
			out = append(out, op.Name)
			families[op.Family] = true
		}
	}
	switch {
	case len(families) > 1:
		var fams []string
		for _, f := range names() {
			if families[f] {
				fams = append(fams, f+"/"+p)
			}
		}
		return nil, fmt.Errorf("kernels: %q is in several families: say which (%s): %w", p, strings.Join(fams, ", "), engine.ErrInvalidArg)
	case len(out) == 0:
		return nil, fmt.Errorf("kernels: %q selects no operation; closest: %s (see prism kernels): %w", p, strings.Join(closest(all, p, 3), ", "), engine.ErrNotFound)
	}
	return out, nil
}

// closest returns up to n candidate patterns (op names, families, short names) nearest to
// p in edit distance, nearest first.
func closest(all []kernels.Op, p string, n int) []string {
	seen := map[string]bool{}
	var cands []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			cands = append(cands, s)
		}
	}
	for _, op := range all {
		add(op.Family)
		parts := strings.Split(op.Name, "/")
		add(strings.Join(parts[:len(parts)-1], "/"))
		add(op.Name)
		if len(parts) > 1 {
			add(parts[1])
		}
	}
	dist := make(map[string]int, len(cands))
	for _, c := range cands {
		dist[c] = editDistance(strings.ToLower(p), strings.ToLower(c))
	}
	for _, alias := range kernels.AliasedNames(p) { // fp32 means float32, however near tf32 is
		if seen[alias] {
			dist[alias] = -1
		}
	}
	slices.SortStableFunc(cands, func(a, b string) int { return dist[a] - dist[b] })
	return cands[:min(n, len(cands))]
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// WithPrecision returns the ops of ops whose precision (the last part of the name:
// float32, tf32, bfloat16, ...) is one of precisions, in their order; no precisions
// returns ops. A precision that no op of the whole suite has is an error wrapping
// engine.ErrInvalidArg that lists the suite's precisions; one that none of ops has is an
// error wrapping engine.ErrNotFound.
func WithPrecision(ops []kernels.Op, precisions ...string) ([]kernels.Op, error) {
	if len(precisions) == 0 {
		return ops, nil
	}
	known := map[string]bool{}
	var names []string
	for _, op := range Ops() {
		if !known[op.Type] {
			known[op.Type] = true
			names = append(names, op.Type)
		}
	}
	want := map[string]bool{}
	for _, p := range precisions {
		p = strings.ToLower(strings.TrimSpace(p))
		if !known[p] {
			return nil, fmt.Errorf("kernels: no op computes in precision %q (the suite has %s): %w", p, strings.Join(names, ", "), engine.ErrInvalidArg)
		}
		want[p] = true
	}
	var out []kernels.Op
	for _, op := range ops {
		if want[op.Type] {
			out = append(out, op)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("kernels: none of the %d ops selected computes in %s: %w", len(ops), strings.Join(precisions, ", "), engine.ErrNotFound)
	}
	return out, nil
}
