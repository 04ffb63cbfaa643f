package suite_test

import (
	"strings"
	"testing"

	"github.com/prism-compute/prism/kernels/suite"
)

// FuzzMatch feeds op patterns (prism run OP, --ops) to Match and Lookup: they must never
// panic; every op Match returns is in the catalog, once; an op Lookup finds has the name
// asked for (up to case and the short names), and an error names what was asked.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"", "stream", "stream/triad", "gemm/nn/float32", "*/*/float64", "reduce/sum/*", "[", "**", "a,b", "sort/keys/uint32", "/", "//", "\x00", "scan/*/float32/portable", "STREAM", "triad", "nn"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		ops, err := suite.Match(pattern)
		if err == nil {
			seen := map[string]bool{}
			for _, op := range ops {
				if seen[op.Name] || !inCatalog(op.Name) {
					t.Errorf("Match(%q) gave %s twice or outside the catalog", pattern, op.Name)
				}
				seen[op.Name] = true
			}
			if len(ops) == 0 {
				t.Errorf("Match(%q) gave no op and no error", pattern)
			}
		} else if !strings.Contains(err.Error(), "kernels") {
			t.Errorf("Match(%q): error %q does not say where it comes from", pattern, err)
		}
		if op, err := suite.Lookup(pattern); err == nil && !inCatalog(op.Name) {
			t.Errorf("Lookup(%q) = %s, not in the catalog", pattern, op.Name)
		}
	})
}

func inCatalog(name string) bool {
	for _, op := range suite.Ops() {
		if op.Name == name {
			return true
		}
	}
	return false
}
