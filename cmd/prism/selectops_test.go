package main

import (
	"errors"
	"strings"
	"testing"
)

// TestSelectOps checks the selection of run, bench and tune: patterns and precisions
// select, and each mistake is a usage error that names the flag it came from.
func TestSelectOps(t *testing.T) {
	ops, err := selectOps("", []string{"stream/triad"}, []string{"float64"}, []string{"portable"})
	if err != nil || len(ops) != 1 || ops[0].Name != "stream/triad/float64" {
		t.Fatalf("stream/triad in float64: %v, %v", ops, err)
	}
	for _, tc := range []struct {
		flag                      string
		patterns, precs, variants []string
		want                      string
	}{
		{"--ops", []string{"nosuchfamily"}, nil, nil, "--ops: "},
		{"", []string{"stream/triad"}, []string{"float99"}, nil, "--precision: "},
		{"", []string{"stream/triad/float32"}, nil, []string{"nosuchvariant"}, "--variant nosuchvariant: stream/triad/float32 has no such variant"},
	} {
		_, err := selectOps(tc.flag, tc.patterns, tc.precs, tc.variants)
		var ue usageError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s %v %v %v: error %v, want a usage error starting %q", tc.flag, tc.patterns, tc.precs, tc.variants, err, tc.want)
		}
	}
	if _, err := selectOps("", []string{"nosuchfamily"}, nil, nil); err == nil || strings.HasPrefix(err.Error(), "--") {
		t.Errorf("patterns given as arguments: error %v, want one without a flag", err)
	}
}
