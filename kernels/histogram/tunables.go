package histogram

import (
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// PrivTunables are the privatized kernels' tunables: the work-group size asked for (lowered
// to what the device and the compiled kernels allow, by kernels.Fit), the 16-byte loads in
// flight per item and step (-DUNROLL), and the work-groups per compute unit of the grid.
type PrivTunables struct {
	WG, Unroll, Groups int
}

// DefaultPrivTunables is the shape the privatized variant runs with unless `prism tune`
// chose another for the device or one is forced (histogram.go's privUnroll and
// privGroupsPerCU say why).
var DefaultPrivTunables = PrivTunables{WG: 256, Unroll: privUnroll, Groups: privGroupsPerCU}

// privCandidates are the sets `prism tune` measures: loads in flight per item against
// groups (and so items) per compute unit, in groups of 256 and 512.
var privCandidates = func() []PrivTunables {
	var out []PrivTunables
	for _, wg := range []int{256, 512} {
		for _, u := range []int{2, 4, 8} {
			for _, g := range []int{2, 4, 8} {
				out = append(out, PrivTunables{WG: wg, Unroll: u, Groups: g})
			}
		}
	}
	return out
}()

// String spells t as Candidates and tuning files do: "WG=256 UNROLL=4 GROUPS=4".
func (t PrivTunables) String() string {
	return fmt.Sprintf("WG=%d UNROLL=%d GROUPS=%d", t.WG, t.Unroll, t.Groups)
}

// ParsePrivTunables parses String's form: every key once, WG a power of two in 1..1024,
// UNROLL in 1..16, GROUPS in 1..64.
func ParsePrivTunables(s string) (PrivTunables, error) {
	var t PrivTunables
	if err := kernels.ParseTunableInts("histogram tunables", s, true, kernels.TunableInt{Key: "WG", Dst: &t.WG, Min: 1, Max: 1024},
		kernels.TunableInt{Key: "UNROLL", Dst: &t.Unroll, Min: 1, Max: 16}, kernels.TunableInt{Key: "GROUPS", Dst: &t.Groups, Min: 1, Max: 64}); err != nil {
		return PrivTunables{}, err
	}
	if t.WG&(t.WG-1) != 0 {
		return PrivTunables{}, fmt.Errorf("kernels: histogram tunables %q: WG must be a power of two: %w", s, engine.ErrInvalidArg)
	}
	return t, nil
}

// privTunablesFor returns the privatized variant's tunables for op on dev: forced (Params.
// Tunables), else `prism tune`'s for the device, else the defaults, and which it was.
func privTunablesFor(dev *engine.Device, op, forced string) (PrivTunables, string, error) {
	return kernels.TunablesFor(dev, op, PrivatizedName, forced, ParsePrivTunables, DefaultPrivTunables, "default")
}
