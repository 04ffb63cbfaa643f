package suite_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/suite"
)

// TestCatalog checks every op's metadata, that its family's source opens with the header
// the suite's files open with, and how Match, Lookup and Family select.
func TestCatalog(t *testing.T) {
	ops := suite.Ops()
	if len(ops) == 0 {
		t.Fatal("no ops registered")
	}
	for _, op := range ops {
		parts := strings.Split(op.Name, "/")
		if len(parts) != 3 || parts[0] != op.Family || parts[2] != op.Type || op.Doc == "" || op.SizeDoc == "" {
			t.Errorf("%s: name must be family/op/type with Family %q, Type %q, and Doc and SizeDoc set", op.Name, op.Family, op.Type)
		}
		if op.QuickSize > op.DefaultSize {
			t.Errorf("%s: quick size %d above default size %d", op.Name, op.QuickSize, op.DefaultSize)
		}
		f, err := suite.Family(op.Family)
		if err != nil {
			t.Errorf("%s: %v", op.Name, err)
			continue
		}
		src := f.Source
		for _, section := range []string{"Purpose", "Arguments", "Tunables", "Variants"} {
			if !strings.Contains(src[:min(len(src), 6000)], "// "+section) {
				t.Errorf("%s.cl: header lacks a %q section", op.Family, section)
			}
		}
	}
	for _, f := range suite.Families() {
		if got, err := suite.Match(f.Name); err != nil || len(got) != len(f.Ops) {
			t.Errorf("family %s: Match selects %d ops, the family has %d: %v", f.Name, len(got), len(f.Ops), err)
		}
	}
	if _, err := suite.Match("no-such-family"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Match(no-such-family): %v, want ErrNotFound", err)
	}
	if _, err := suite.Lookup("stream/nope/float32"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Lookup: %v, want ErrNotFound", err)
	}
	if got, err := suite.Match("stream/triad"); err != nil || len(got) != 2 {
		t.Errorf("Match(stream/triad) = %d ops, %v; want float32 and float64", len(got), err)
	}
	if got, err := suite.Match("*/*/float64"); err != nil || len(got) == 0 {
		t.Errorf("Match(*/*/float64) = %d ops, %v", len(got), err)
	}
	if op, err := suite.Lookup("gemm/nn/float32"); err != nil || op.Family != "gemm" {
		t.Errorf("Lookup(gemm/nn/float32) = %s, %v", op.Name, err)
	}
	if _, err := suite.Family("no-such-family"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("Family(no-such-family): %v, want ErrNotFound", err)
	}
}

// TestSuiteOrder checks that Ops lists the families in the order of Families, each one's
// operations together and in the family's own order, and that every family's header has
// the sections `prism kernels` prints.
func TestSuiteOrder(t *testing.T) {
	var want []string
	for _, f := range suite.Families() {
		for _, op := range f.Ops {
			want = append(want, op.Name)
		}
		if h := kernels.Header(f.Source); !strings.HasPrefix(h, f.Name+".cl: ") {
			t.Errorf("%s: header starts %q, want %q", f.Name, strings.SplitN(h, "\n", 2)[0], f.Name+".cl: ...")
		}
		if kernels.HeaderSection(f.Source, "Tunables") == "" {
			t.Errorf("%s: header has no Tunables section", f.Name)
		}
	}
	var got []string
	for _, op := range suite.Ops() {
		got = append(got, op.Name)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Ops order:\n%v\nwant the families' order:\n%v", got, want)
	}
}

// TestMatchShortNames: a name without its family selects that family's ops when only one
// family has it; one found in several families, or none, is an error that helps.
func TestMatchShortNames(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    []string // op names, or a substring of the error
		err     error
	}{
		{"triad", []string{"stream/triad/float32", "stream/triad/float64"}, nil},
		{"sum/int32", []string{"reduce/sum/int32"}, nil},
		{"triad/float64", []string{"stream/triad/float64"}, nil},
		{"2d", []string{"transpose/2d", "fft/2d"}, engine.ErrInvalidArg},
		{"trid", []string{"closest: triad"}, engine.ErrNotFound},
		{"gem", []string{"gemm"}, engine.ErrNotFound},
		// A common spelling of a precision suggests its name first, not the nearest one.
		{"gemm/nn/fp32", []string{"closest: gemm/nn/float32, "}, engine.ErrNotFound},
		{"gemm/nn/f64", []string{"closest: gemm/nn/float64, "}, engine.ErrNotFound},
		{"gemm/nn/half", []string{"closest: gemm/nn/float16, "}, engine.ErrNotFound},
		{"gemm/nn/bf16", []string{"closest: gemm/nn/bfloat16, "}, engine.ErrNotFound},
		{"gemm/nn/fp8", []string{"closest: gemm/nn/float8e4m3, gemm/nn/float8e5m2, "}, engine.ErrNotFound},
		// A glob matches the name, or its part before a slash.
		{"stencil/*", []string{"stencil/5pt/float32", "stencil/7pt/float32", "stencil/27pt/float32"}, nil},
		{"histogram/bins2*", []string{"histogram/bins256/uint32", "histogram/bins256/float32"}, nil},
	} {
		ops, err := suite.Match(c.pattern)
		if c.err != nil {
			for _, w := range c.want {
				if !errors.Is(err, c.err) || !strings.Contains(err.Error(), w) {
					t.Errorf("Match(%q) = %v; want an error wrapping %v that mentions %q", c.pattern, err, c.err, w)
				}
			}
			continue
		}
		var got []string
		for _, op := range ops {
			got = append(got, op.Name)
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Match(%q) = %v, %v; want %v", c.pattern, got, err, c.want)
		}
	}
}

// TestWithPrecision checks the --precision filter: it keeps the ops of the named
// precisions in order, refuses a precision no op has (listing those there are), and says
// when the selection has none of them.
func TestWithPrecision(t *testing.T) {
	gemm, err := suite.Match("gemm/nn")
	if err != nil {
		t.Fatal(err)
	}
	got, err := suite.WithPrecision(gemm, "bfloat16", "TF32")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, op := range got {
		names = append(names, op.Name)
	}
	if want := "gemm/nn/tf32 gemm/nn/bfloat16"; strings.Join(names, " ") != want {
		t.Errorf("suite.WithPrecision(gemm/nn, bfloat16, TF32) = %v, want %s", names, want)
	}
	if all, err := suite.WithPrecision(gemm); err != nil || len(all) != len(gemm) {
		t.Errorf("no precision: %d ops, %v; want all %d", len(all), err, len(gemm))
	}
	if _, err := suite.WithPrecision(gemm, "float12"); !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), "bfloat16") {
		t.Errorf("unknown precision: %v; want ErrInvalidArg listing the precisions", err)
	}
	stream, err := suite.Match("stream")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := suite.WithPrecision(stream, "bfloat16"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("no stream op in bfloat16: %v; want ErrNotFound", err)
	}
}
