package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"1", 1},
		{"4096", 4096},
		{"33000", 33000},
		{"64K", 64 << 10},
		{"16m", 16 << 20},
		{"1G", 1 << 30},
		{"2Ki", 2048},
		{"3gi", 3 << 30},
		{" 16M ", 16 << 20},
		{"007", 7},
		{"1024G", MaxSize},
	} {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestParseSizeErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // in the error
	}{
		{"", "want a whole number"},
		{"K", "want a whole number"},
		{"0", "at least 1"},
		{"0K", "at least 1"},
		{"-1", "at least 1"},
		{"-4K", "at least 1"},
		{"0.5", "at least 1"},
		{"1.5M", "write 1536K"},
		{"0.5K", "write 512"},
		{"1e3", "write 1000"},
		{"+8", "write 8"},
		{"1.3", "want a whole number"},
		{"12Q", "want a whole number"},
		{"1KB", "want a whole number"},
		{"1I", "want a whole number"},
		{"1 M", "want a whole number"},
		{"NaN", "want a whole number"},
		{"1025G", "at most 1024G"},
		{"9999999999G", "at most 1024G"},
		{"99999999999999999999", "at most 1024G"},
		{"1.5e30", "want a whole number"},
	} {
		_, err := ParseSize(c.in)
		if !errors.Is(err, engine.ErrInvalidArg) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSize(%q): %v; want an invalid-argument error saying %q", c.in, err, c.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{
		{0, "0"},
		{-1024, "-1024"},
		{1, "1"},
		{1000, "1000"},
		{1024, "1K"},
		{1536, "1536"},
		{33 << 10, "33K"},
		{1 << 20, "1M"},
		{3 << 29, "1536M"},
		{1 << 30, "1G"},
		{MaxSize, "1024G"},
	} {
		got := FormatSize(c.n)
		if got != c.want {
			t.Errorf("FormatSize(%d) = %q, want %q", c.n, got, c.want)
		}
		if c.n >= 1 {
			if back, err := ParseSize(got); err != nil || back != c.n {
				t.Errorf("ParseSize(FormatSize(%d) = %q) = %d, %v", c.n, got, back, err)
			}
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		b    int64
		want string
	}{
		{0, "0 B"},
		{-5, "-5 B"},
		{1023, "1023 B"},
		{1024, "1 KiB"},
		{48 << 10, "48 KiB"},
		{1 << 20, "1 MiB"},
		{64 << 20, "64 MiB"},
		{3 << 29, "1.5 GiB"},
		{80 << 30, "80.0 GiB"},
	} {
		if got := FormatBytes(c.b); got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.b, got, c.want)
		}
	}
}

// FuzzParseSize feeds any string to ParseSize: it must never panic; a size it accepts is
// 1 to MaxSize, and FormatSize of it reads back to the same size.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1", "16M", "1Gi", "0", "-1", "1.5M", "4611686018427387904", "1024G", "1025G", " 64k ", "K", "", "\x00", "9999999999999999999999M", "+8", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 1 || n > MaxSize {
			t.Fatalf("ParseSize(%q) = %d, outside 1..MaxSize", s, n)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Fatalf("ParseSize(FormatSize(%d) = %q) = %d, %v", n, FormatSize(n), back, err)
		}
	})
}
