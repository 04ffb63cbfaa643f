package term

import (
	"slices"
	"testing"
)

func TestSafe(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"cuda:0", "cuda:0"},
		{"NVIDIA H100 80GB", "NVIDIA H100 80GB"},
		{"µs café", "µs café"},
		{"\x1b[2J", `\x1b[2J`},
		{"a\tb\nc", `a\x09b\x0ac`},
		{"evil\u202etxt", `evil\u202etxt`},
		{"\x7f", `\x7f`},
		{"\xff", `\xff`},
	} {
		if got := Safe(tc.in); got != tc.want {
			t.Errorf("Safe(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	ss := []string{"ok", "\x1b"}
	if got := SafeAll(ss); !slices.Equal(got, []string{"ok", `\x1b`}) || ss[1] != `\x1b` {
		t.Errorf("SafeAll = %q, want in place [ok \\x1b]", got)
	}
}

func TestFloat(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{{1234.5, "1234"}, {-250, "-250"}, {12.34, "12.3"}, {1.234, "1.23"}, {0, "0.00"}, {-0.5, "-0.50"}} {
		if got := Float(tc.in); got != tc.want {
			t.Errorf("Float(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
