package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

func TestResolve(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testResolve(t, b.open(t)) })
}

func testResolve(t *testing.T, s *Store) {
	ctx := context.Background()
	if _, err := s.Resolve(ctx, "@last"); !errors.Is(err, ErrNotFound) {
		t.Errorf("@last of an empty store = %v, want ErrNotFound", err)
	}
	ids := fill(t, s) // commits 1111aaaa, 2222bbbb, 2222cccc, 3333dddd-dirty, 3333dddd
	if err := s.SetBaseline(ctx, "main", ids[1]); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBaseline(ctx, "release/1.0", ids[0]); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ref  string
		want RunID
	}{
		{"@last", ids[4]},
		{"@previous", ids[3]},
		{"@last~0", ids[4]},
		{"@last~1", ids[3]},
		{"@last~4", ids[0]},
		{" @last ", ids[4]},
		{"3", ids[2]}, // a run ID
		{"1111", ids[0]},
		{"1111aaaa", ids[0]},
		{"3333", ids[4]}, // the newest run of the commit, its -dirty build counted
		{"main", ids[1]},
		{"baseline:main", ids[1]},
		{"@main", ids[1]},
		{"release/1.0", ids[0]},
	} {
		got, err := s.Resolve(ctx, tc.ref)
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %d, %v; want %d", tc.ref, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		ref     string
		want    error
		message string
	}{
		{"", engine.ErrInvalidArg, "no run given"},
		{"@last~x", engine.ErrInvalidArg, "@last~N"},
		{"@last~-1", engine.ErrInvalidArg, "@last~N"},
		{"@last~5", ErrNotFound, "holds 5 runs"},
		{"99", ErrNotFound, "no run 99"},
		{"2222", engine.ErrInvalidArg, "2222bbbb, 2222cccc"}, // ambiguous
		{"abcd", ErrNotFound, "no run of a commit"},
		{"nightly", ErrNotFound, "those set: main, release/1.0"},
		{"baseline:nightly", ErrNotFound, "no baseline"},
	} {
		_, err := s.Resolve(ctx, tc.ref)
		if !errors.Is(err, tc.want) || err == nil || !strings.Contains(err.Error(), tc.message) || !strings.HasPrefix(err.Error(), "store: ") {
			t.Errorf("Resolve(%q) = %v; want an error wrapping %v that says %q", tc.ref, err, tc.want, tc.message)
		}
	}
}

func TestBaselines(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) { testBaselines(t, b.open(t)) })
}

func testBaselines(t *testing.T, s *Store) {
	ctx := context.Background()
	ids := fill(t, s)
	if err := s.SetBaseline(ctx, "main", ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBaseline(ctx, "main", ids[2]); err != nil { // moved
		t.Fatal(err)
	}
	if err := s.SetBaseline(ctx, "gpu", ids[1]); err != nil {
		t.Fatal(err)
	}
	bs, err := s.Baselines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].Name != "gpu" || bs[0].Run != ids[1] || bs[1].Name != "main" || bs[1].Run != ids[2] || bs[1].Set.IsZero() {
		t.Errorf("Baselines() = %+v", bs)
	}
	for _, name := range []string{"", "42", "@x", "baseline:x", "has space", "semi;colon"} {
		if err := s.SetBaseline(ctx, name, ids[0]); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("SetBaseline(%q) = %v, want ErrInvalidArg", name, err)
		}
	}
	if err := s.SetBaseline(ctx, "next", 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetBaseline of a run not recorded = %v, want ErrNotFound", err)
	}
}
