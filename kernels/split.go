package kernels

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prism-compute/prism/engine"
)

// Splitting one operation across several devices: each device computes a part of the
// work in proportion to its throughput for that operation, measured at run time, the
// parts run concurrently, and the results are combined (GEMM by row blocks of A with B on
// every device, batched ops by batch, reductions by partial results summed in float64 on
// the host, sort by per-device sorts merged, Monte Carlo by ranges of Philox counters,
// element-wise maps by ranges of elements).

// Splitter sets an operation up across devs at p.Size (p.Seed, p.Variant and p.Portable
// as for Setup, applied on every device; Rotate is ignored). The shares come from
// o.Fractions when given, else from PlanShares.
type Splitter func(ctx context.Context, devs []*engine.Device, p Params, o SplitOptions) (SplitInstance, error)

// SplitOptions are the choices of a Splitter beyond Params.
type SplitOptions struct {
	// Fractions fixes each device's share of the work (one per device, summing to 1; a
	// zero leaves the device out) instead of measuring it.
	Fractions []float64
	// Placement says where the op's data lives: on the host (the zero value: inputs
	// uploaded at setup, each run's result read back and combined on the host) or sharded
	// on the devices (each part's data left where it lies between runs, the result too;
	// Verify gathers it). The planner's probes follow it. A family that cannot run an op
	// on sharded data refuses it with an error wrapping engine.ErrUnsupported.
	Placement Placement
}

// Placement is where a split op's data lives.
type Placement int

// Placements of a split op's data.
const (
	// PlaceHost: the inputs come from the host, the result goes back to it every run.
	PlaceHost Placement = iota
	// PlaceSharded: the inputs lie on the devices, each part on its device, and the
	// result is left there (engine/shard).
	PlaceSharded
)

func (p Placement) String() string {
	switch p {
	case PlaceHost:
		return "host"
	case PlaceSharded:
		return "sharded"
	}
	return fmt.Sprintf("placement(%d)", int(p))
}

// Placed is a SplitInstance that says where its data lives. One that is not Placed
// has its data on the host.
type Placed interface {
	Placement() Placement
}

// PlacementOf says where si's data lives: its Placement where it is Placed, else
// PlaceHost.
func PlacementOf(si SplitInstance) Placement {
	if p, ok := si.(Placed); ok {
		return p.Placement()
	}
	return PlaceHost
}

// CheckSharded refuses PlaceSharded for an op whose split does not run on sharded data
// (ok false), in the user's terms; nil otherwise.
func CheckSharded(name string, o SplitOptions, ok bool) error {
	if o.Placement == PlaceSharded && !ok {
		return fmt.Errorf("kernels: %s: no split on sharded data: %w", name, engine.ErrUnsupported)
	}
	if o.Placement != PlaceHost && o.Placement != PlaceSharded {
		return fmt.Errorf("kernels: %s: unknown placement %v: %w", name, o.Placement, engine.ErrInvalidArg)
	}
	return nil
}

// SplitInstance is an operation set up across several devices. Not safe for concurrent
// use.
type SplitInstance interface {
	// Run runs the operation once: every device with a share runs its part on its own
	// queue, concurrently, then the parts are combined. It returns once the result is
	// complete.
	Run(ctx context.Context) error
	// Verify compares the combined result of the last Run with the float64 reference, as
	// Instance.Verify does.
	Verify(ctx context.Context) error
	// Model is the work of one Run, the whole operation's (as Setup's instance on one
	// device at the same size reports).
	Model() Model
	// Shape describes the problem set up, as Instance.Shape does.
	Shape() string
	// Shares says how the work was divided.
	Shares() []Share
	Close() error
}

// Share is one device's part of a split operation.
type Share struct {
	Device string `json:"device"`
	// Units is the work given to the device in the op's unit (rows of a GEMM, batch
	// entries, elements, samples); Fraction is Units over the whole.
	Units    int     `json:"units"`
	Fraction float64 `json:"fraction"`
	// Rate (units per second) and Latency (the fixed cost of a part) are what PlanShares
	// measured on the device alone; zero when the shares were given.
	Rate    float64       `json:"rate,omitempty"`
	Latency time.Duration `json:"latency_ns,omitempty"`
	// Concurrent is the rate measured while every device ran its probe at once, which
	// the shares are balanced at: below Rate where devices share hardware.
	Concurrent float64 `json:"concurrent_rate,omitempty"`
	// Alone is the time PlanShares predicts for the whole op on this device alone;
	// Predicted the split's (the same on every share: the common finish time of the
	// devices given work plus Fixed, the fixed cost of running parts measured end to end),
	// whether or not the plan split. Zero when the shares were given.
	Alone     time.Duration `json:"alone_ns,omitempty"`
	Predicted time.Duration `json:"predicted_ns,omitempty"`
	Fixed     time.Duration `json:"fixed_ns,omitempty"`
	// Unable says why the device cannot run the op (a device without fp64 given a float64
	// op); such a device is left out of a measured plan, with no share.
	Unable string `json:"unable,omitempty"`
	// Ran and RanOne are the plan's check (SplitRun.CheckedRun), the same on every share:
	// the measured time of the split the plan chose, and of the fastest device alone doing
	// all the work among those the check tried.
	// The shares are the split's where it ran at least 1.03 times that device's speed,
	// else that device's.
	// Zero where no check ran (given shares, one device planned, a single run).
	Ran    time.Duration `json:"ran_ns,omitempty"`
	RanOne time.Duration `json:"ran_one_ns,omitempty"`
	// RanOneErr says why the device alone could not run the whole op in the check (its
	// memory, a limit); the split then stands.
	RanOneErr string `json:"ran_one_error,omitempty"`
	// Planned, where set, says the plan gave the whole op to this device and its check
	// timed the devices predicted within oneCheckMargin of it alone too (the same on every
	// share): Ran is then that device's time, RanOne the fastest other's, and the op went
	// to the faster of the two.
	Planned string `json:"planned,omitempty"`
}

// CheckPortableSplit checks what the split of an op that runs its portable kernel alone
// refuses before anything is set up: a size below 1, no device or a nil one, a variant
// other than the portable kernel, tunables (such families have none), fractions
// PlanShares refuses.
func CheckPortableSplit(ctx context.Context, name string, devs []*engine.Device, p Params, o SplitOptions) error {
	if err := CheckSize(name, p); err != nil {
		return err
	}
	if len(devs) == 0 {
		return fmt.Errorf("kernels: %s: split across no device: %w", name, engine.ErrInvalidArg)
	}
	for i, d := range devs {
		if d == nil {
			return fmt.Errorf("kernels: %s: split device %d is nil: %w", name, i, engine.ErrInvalidArg)
		}
	}
	if v := p.Variant; v != "" && !strings.EqualFold(v, PortableName) {
		if p.Portable {
			return fmt.Errorf("kernels: %s: variant %q and portable exclude each other: %w", name, v, engine.ErrInvalidArg)
		}
		return fmt.Errorf("kernels: %s: a split runs the portable kernel, not variant %q: %w", name, v, engine.ErrUnsupported)
	}
	if p.Tunables != "" {
		return fmt.Errorf("kernels: %s: the portable kernel takes no tunables (asked for %q): %w", name, p.Tunables, engine.ErrInvalidArg)
	}
	if o.Fractions != nil { // given shares need no probe
		if _, err := PlanShares(ctx, devs, 1, 1, o, nil); err != nil {
			return err
		}
	}
	return nil
}
