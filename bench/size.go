package bench

import (
	"fmt"
	"strings"

	"github.com/prism-compute/prism/engine"
)

// Sizes in the CLI and the reports: counts of elements with K, M or G suffixes (powers of
// 1024), and byte counts for people. This file is their one home: the CLI reads sizes with
// ParseSize and every report writes them with FormatSize and FormatBytes.

// FormatSize writes n with a K, M or G suffix (powers of 1024) when it is an exact
// multiple, as ParseSize reads it.
func FormatSize(n int) string {
	for _, u := range []struct {
		s string
		v int
	}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.v && n%u.v == 0 {
			return fmt.Sprintf("%d%s", n/u.v, u.s)
		}
	}
	return fmt.Sprint(n)
}

// ParseSize reads a size: a positive integer with an optional suffix K, M or G (powers of
// 1024; case-insensitive, "Ki" style accepted), e.g. "4096", "64K", "16M", "1G".
func ParseSize(s string) (int, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if len(t) >= 2 && strings.HasSuffix(t, "I") && strings.ContainsRune("KMG", rune(t[len(t)-2])) {
		t = t[:len(t)-1]
	}
	mult := 1
	if t != "" {
		switch t[len(t)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			t = t[:len(t)-1]
		}
	}
	var n int
	if _, err := fmt.Sscan(t, &n); err != nil || fmt.Sprint(n) != t || n < 1 || n > (1<<40)/mult {
		return 0, fmt.Errorf("bench: bad size %q: want a positive integer with an optional K, M or G suffix: %w", s, engine.ErrInvalidArg)
	}
	return n * mult, nil
}

// FormatBytes writes a byte count for people: GiB with one decimal from 1 GiB, whole MiB
// from 1 MiB, else bytes.
func FormatBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d B", b)
}
