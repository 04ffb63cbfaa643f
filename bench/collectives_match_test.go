package bench

import (
	"slices"
	"testing"
)

// TestMatchCollectives checks the --ops patterns that select collectives, among them the
// "collective/*" that prism bench --help shows.
func TestMatchCollectives(t *testing.T) {
	all := Collectives()
	for _, c := range []struct {
		patterns []string
		names    []string
		rest     []string
	}{
		{[]string{"collective/*"}, all, nil},
		{[]string{"collective"}, all, nil},
		{[]string{"collective/"}, all, nil},
		{[]string{"collective/all-reduce/*"}, []string{"collective/all-reduce/float32", "collective/all-reduce/float64"}, nil},
		{[]string{"collective/all-reduce"}, []string{"collective/all-reduce/float32", "collective/all-reduce/float64"}, nil},
		{[]string{"collective/*/float64"}, []string{"collective/all-reduce/float64", "collective/all-gather/float64", "collective/reduce-scatter/float64", "collective/broadcast/float64"}, nil},
		{[]string{"collective/broadcast/float32", "gemm/nn/float32"}, []string{"collective/broadcast/float32"}, []string{"gemm/nn/float32"}},
		{[]string{"collect"}, nil, []string{"collect"}},
		{[]string{"gemm/*"}, nil, []string{"gemm/*"}},
	} {
		names, rest := MatchCollectives(c.patterns)
		if !slices.Equal(names, c.names) || !slices.Equal(rest, c.rest) {
			t.Errorf("MatchCollectives(%q) = %q, %q; want %q, %q", c.patterns, names, rest, c.names, c.rest)
		}
	}
}
