// Package term writes the text of a report for people: strings made safe to print on a
// terminal (Safe), and rates written short (Float). The harness and its renderers share it.
package term

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Safe returns s with every character that could act on a terminal, or reorder the
// text around it, written as a visible Go escape: the C0 and C1 control characters (ESC
// and CSI included, so no escape sequence survives; tab and newline too, which would break
// a table's columns and rows), DEL, the Unicode bidirectional controls (U+200E, U+200F,
// U+061C, U+202A-U+202E, U+2066-U+2069), U+2028 and U+2029, and bytes that are not UTF-8.
// "\x1b[2J" becomes `\x1b[2J`, U+202E becomes `\u202e`. Other text is returned unchanged.
// Every text renderer passes the strings of a report (names, IDs, errors, versions)
// through it; reports come from other machines.
func Safe(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r, size) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r, size):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports whether Safe escapes r (decoded from size bytes).
func unsafeRune(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true // not UTF-8
	case r < 0x20, r >= 0x7f && r < 0xa0: // C0, DEL, C1
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidirectional controls
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

// SafeAll applies Safe to each string of ss, in place, and returns ss.
func SafeAll(ss []string) []string {
	for i, s := range ss {
		ss[i] = Safe(s)
	}
	return ss
}

// Float formats a rate with three significant digits (at least the units).
func Float(v float64) string {
	switch {
	case v >= 100 || v <= -100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10 || v <= -10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
