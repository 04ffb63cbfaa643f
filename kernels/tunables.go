package kernels

import "github.com/prism-compute/prism/engine"

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
