package enginetest

import (
	"regexp"
	"slices"
	"testing"
)

// prefixRE finds the prefixes of an error message: a lowercase word followed by ": " at
// the start of the message or right after an earlier ": " ("engine: ", "cuda: ").
var prefixRE = regexp.MustCompile(`(?:^|: )([a-z][a-z0-9]*): `)

// RepeatedPrefix returns a package prefix that err's message repeats, as in
// "engine: cuda: cuda: cannot load ...", or "" when each prefix appears once (or err is
// nil). Each layer of Prism adds its context once: engine says "engine: ", a backend its
// package's name, and no one repeats what an error already says.
func RepeatedPrefix(err error) string {
	if err == nil {
		return ""
	}
	var seen []string
	msg := err.Error()
	for i := 0; i < len(msg); {
		loc := prefixRE.FindStringSubmatchIndex(msg[i:])
		if loc == nil {
			break
		}
		word := msg[i+loc[2] : i+loc[3]]
		if slices.Contains(seen, word) {
			return word
		}
		seen = append(seen, word)
		i += loc[3] // the ": " after the word may start the next match
	}
	return ""
}

// checkPrefix fails t when err repeats a package prefix.
func checkPrefix(t testing.TB, what string, err error) {
	t.Helper()
	if p := RepeatedPrefix(err); p != "" {
		t.Errorf("%s: the error repeats the prefix %q: %v", what, p+": ", err)
	}
}
