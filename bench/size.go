package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/engine"
)

// Sizes in the CLI and the reports: counts of elements with K, M or G suffixes (powers of
// 1024), and byte counts for people. This file is their one home: the CLI reads sizes with
// ParseSize and every report writes them with FormatSize and FormatBytes. (platform and the
// packages below bench cannot import it; telemetry's "used/total GiB" pair of one sample is
// their only byte formatting.)

// MaxSize is the largest size ParseSize accepts: 2^40 elements (1024G), beyond any device's
// memory and far from overflowing an int.
const MaxSize = 1 << 40

// sizeUnits are the suffixes, largest first.
var sizeUnits = []struct {
	suffix string
	mult   int
}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}}

// FormatSize writes n with a K, M or G suffix (powers of 1024) when it is an exact multiple
// of one, as ParseSize reads it back: 1024 is "1K", 1536 "1536", 16777216 "16M". Numbers
// below 1024, not multiples, zero and negative ones are written as plain digits.
func FormatSize(n int) string {
	for _, u := range sizeUnits {
		if n >= u.mult && n%u.mult == 0 {
			return strconv.Itoa(n/u.mult) + u.suffix
		}
	}
	return strconv.Itoa(n)
}

// ParseSize reads a size: a whole number from 1 to MaxSize, in decimal digits, with an
// optional suffix K, M or G (powers of 1024; upper or lower case, "Ki", "Mi", "Gi" too),
// e.g. "4096", "64K", "16m", "1Gi". Surrounding spaces are ignored. Fractions are refused
// rather than rounded, since a size counts elements exactly: "1.5M" is an error that
// suggests "1536K". Zero, negative numbers, signs, other suffixes and sizes above MaxSize
// are errors wrapping engine.ErrInvalidArg.
func ParseSize(s string) (int, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if len(t) >= 2 && t[len(t)-1] == 'I' && strings.IndexByte("KMG", t[len(t)-2]) >= 0 {
		t = t[:len(t)-1]
	}
	mult := 1
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = rest, u.mult
			break
		}
	}
	bad := func(why string) (int, error) {
		return 0, fmt.Errorf("bench: bad size %q: %s: %w", s, why, engine.ErrInvalidArg)
	}
	if t == "" || strings.Trim(t, "0123456789") != "" {
		// Not plain digits. Say what a number in another form (-1, 0.5, 1.5M, +8, 1e3)
		// should have been.
		f, err := strconv.ParseFloat(t, 64)
		n := f * float64(mult)
		switch {
		case err == nil && n < 1:
			return bad("must be at least 1")
		case err == nil && n <= MaxSize && n == math.Trunc(n):
			return bad("a size is a whole number of elements in digits: write " + FormatSize(int(n)))
		}
		return bad("want a whole number with an optional K, M or G suffix (powers of 1024)")
	}
	n, err := strconv.Atoi(t)
	if err != nil || n > MaxSize/mult { // Atoi fails only on overflow here
		return bad(fmt.Sprintf("at most %s", FormatSize(MaxSize)))
	}
	if n < 1 {
		return bad("must be at least 1")
	}
	return n * mult, nil
}

// FormatBytes writes a byte count for people, in powers of 1024: GiB with one decimal from
// 1 GiB, whole MiB from 1 MiB, whole KiB from 1 KiB, else bytes ("512 B", "48 KiB",
// "64 MiB", "79.6 GiB").
func FormatBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
