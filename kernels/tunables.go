package kernels

import (
	"fmt"

	"github.com/prism-compute/prism/engine"
)

// TunablesFor returns the tunables of variant of op on dev and where they came from:
// "forced" (parsed from forced, errors returned), "tuned" (prism tune's file, when it
// parses), or fallback with fallbackFrom ("table", "default": the variant's own word).
func TunablesFor[T any](dev *engine.Device, op, variant, forced string, parse func(string) (T, error), fallback T, fallbackFrom string) (T, string, error) {
	if forced != "" {
		t, err := parse(forced)
		return t, "forced", err
	}
	if e, ok := LookupTuned(dev, op, variant); ok {
		if t, err := parse(e.Tunables); err == nil {
			return t, "tuned", nil
		}
	}
	return fallback, fallbackFrom, nil
}

// CandidatesOf returns a Variant.Candidates that lists cs, in order, as their String
// methods spell them.
func CandidatesOf[T fmt.Stringer](cs []T) func(*engine.Device) []string {
	return func(*engine.Device) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.String()
		}
		return out
	}
}
