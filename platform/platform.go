package platform

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/prism-compute/prism/engine"
)

// EnvDevice is the environment variable holding the default device spec.
const EnvDevice = "PRISM_DEVICE"

// Device is one entry of the flat device list.
type Device struct {
	engine.DeviceInfo        // Info.ID is the full ID, e.g. "opencl:0:0"
	Backend           string `json:"backend"`
	// SameCard lists the IDs of the other views of this physical card through other
	// backends, matched by PCI bus ID.
	SameCard []string `json:"same_card,omitempty"`
}

// Peak estimates the device's relative compute peak (compute units times clock in MHz), used
// only to order devices of the same kind.
func (d Device) Peak() float64 { return float64(d.ComputeUnits) * float64(max(d.ClockMHz, 1)) }

// Backend reports the state of one registered backend.
type Backend struct {
	Name    string `json:"name"`
	Devices int    `json:"devices"`
	Err     error  `json:"-"`
	Reason  string `json:"error,omitempty"` // Err's message, for JSON
}

// Discovery is the result of Discover.
type Discovery struct {
	Devices  []Device  `json:"devices"`
	Backends []Backend `json:"backends"`
}

// ErrNoDevice is wrapped by Select and Open when nothing matches; it wraps engine.ErrNotFound.
var ErrNoDevice = fmt.Errorf("no matching device: %w", engine.ErrNotFound)

// noMatchError is an error whose message says, in the user's terms, what matched nothing (the
// sentinels' own text would only repeat it) and which wraps ErrNoDevice.
type noMatchError string

func (e noMatchError) Error() string { return string(e) }
func (e noMatchError) Unwrap() error { return ErrNoDevice }

// backendRank orders backends when one card is seen through several: CUDA first.
func backendRank(name string) int {
	switch name {
	case "cuda":
		return 0
	case "opencl":
		return 1
	}
	return 2
}

// Discover probes every registered backend. A backend that is unavailable is reported in
// Backends with its error; Discover itself fails only when ctx is done.
func Discover(ctx context.Context) (*Discovery, error) {
	dis := &Discovery{}
	for _, name := range engine.Backends() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		infos, err := engine.Devices(ctx, name)
		b := Backend{Name: name, Devices: len(infos), Err: err}
		if err != nil {
			b.Reason = err.Error()
		}
		dis.Backends = append(dis.Backends, b)
		for _, in := range infos {
			in.ID = name + ":" + in.ID
			dis.Devices = append(dis.Devices, Device{DeviceInfo: in, Backend: name})
		}
	}
	matchCards(dis.Devices)
	sort.SliceStable(dis.Devices, func(i, j int) bool {
		a, b := dis.Devices[i], dis.Devices[j]
		if backendRank(a.Backend) != backendRank(b.Backend) {
			return backendRank(a.Backend) < backendRank(b.Backend)
		}
		return lessID(a.ID, b.ID)
	})
	return dis, nil
}

// lessID orders IDs with numeric parts compared as numbers ("opencl:2:0" < "opencl:10:0").
func lessID(a, b string) bool {
	pa, pb := strings.Split(a, ":"), strings.Split(b, ":")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] == pb[i] {
			continue
		}
		var na, nb int
		_, ea := fmt.Sscan(pa[i], &na)
		_, eb := fmt.Sscan(pb[i], &nb)
		if ea == nil && eb == nil {
			return na < nb
		}
		return pa[i] < pb[i]
	}
	return len(pa) < len(pb)
}

func matchCards(devs []Device) {
	byBus := map[string][]int{}
	for i, d := range devs {
		if d.PCIBusID != "" {
			key := strings.ToLower(d.PCIBusID)
			byBus[key] = append(byBus[key], i)
		}
	}
	for _, idx := range byBus {
		for _, i := range idx {
			for _, j := range idx {
				if i != j && devs[i].Backend != devs[j].Backend {
					devs[i].SameCard = append(devs[i].SameCard, devs[j].ID)
				}
			}
		}
	}
}

// better reports whether a is preferred over b by the automatic policy.
func better(a, b Device) bool {
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if sameCard(a, b) {
		return backendRank(a.Backend) < backendRank(b.Backend)
	}
	if a.Peak() != b.Peak() {
		return a.Peak() > b.Peak()
	}
	if backendRank(a.Backend) != backendRank(b.Backend) {
		return backendRank(a.Backend) < backendRank(b.Backend)
	}
	return lessID(a.ID, b.ID)
}

func sameCard(a, b Device) bool {
	for _, id := range a.SameCard {
		if id == b.ID {
			return true
		}
	}
	return false
}

// Ranked returns the devices in the order of the automatic policy, best first.
func Ranked(devs []Device) []Device {
	out := append([]Device(nil), devs...)
	sort.SliceStable(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out
}

// Select returns the device that spec names among devs (see the package doc for specs),
// and a sentence saying why it was chosen.
func Select(devs []Device, spec string) (Device, string, error) {
	spec = strings.TrimSpace(spec)
	if len(devs) == 0 {
		return Device{}, "", noMatchError("platform: no device found by any backend")
	}
	if spec == "" {
		d := Ranked(devs)[0]
		return d, fmt.Sprintf("automatic: best %s by policy (GPU > accelerator > CPU; CUDA first for one card; larger peak)", d.Kind), nil
	}
	for _, d := range devs {
		if d.ID == spec {
			return d, "named by ID", nil
		}
	}
	var pool []Device
	why := ""
	if k, ok := engine.ParseKind(spec); ok {
		for _, d := range devs {
			if d.Kind == k {
				pool = append(pool, d)
			}
		}
		why = "best of class " + spec
	} else {
		for _, d := range devs {
			if d.Backend == spec {
				pool = append(pool, d)
			}
		}
		why = "best of backend " + spec
	}
	if len(pool) == 0 {
		return Device{}, "", noMatch(devs, spec)
	}
	return Ranked(pool)[0], why, nil
}

// noMatch is the error of a device spec that matches none of devs: it says what the spec
// was taken for, lists the devices by ID with their kind and name, and the backends and
// classes that a spec may also name.
func noMatch(devs []Device, spec string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "platform: no device matches %q", spec)
	backends := engine.Backends()
	if k, ok := engine.ParseKind(spec); ok {
		fmt.Fprintf(&b, ": no device is of class %s", k)
	} else if slices.Contains(backends, strings.ToLower(spec)) {
		fmt.Fprintf(&b, ": the %s backend found no device (prism devices says why)", strings.ToLower(spec))
	} else if strings.Contains(spec, ":") {
		fmt.Fprintf(&b, ": no device has that ID")
	}
	b.WriteString("; the devices are ")
	for i, d := range devs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s, %s)", d.ID, d.Kind, d.Name)
	}
	names := ""
	if len(backends) > 0 {
		names = " (" + strings.Join(backends, ", ") + ")"
	}
	fmt.Fprintf(&b, "; --device and %s also take a backend%s or a class (gpu, accelerator, cpu)", EnvDevice, names)
	return noMatchError(b.String())
}

// Open discovers devices, selects one by spec (or PRISM_DEVICE, or the policy) and opens
// it. The caller must Close the device.
func Open(ctx context.Context, spec string) (*engine.Device, error) {
	src := "argument"
	if spec == "" {
		spec, src = os.Getenv(EnvDevice), EnvDevice
	}
	dis, err := Discover(ctx)
	if err != nil {
		return nil, err
	}
	d, why, err := Select(dis.Devices, spec)
	if err != nil {
		return nil, errors.Join(err, dis.unavailable())
	}
	if engine.Tracing() {
		if spec != "" {
			why += fmt.Sprintf(" (%s=%q)", src, spec)
		}
		engine.Tracef("chose %s (%s): %s", d.ID, d.Name, why)
	}
	return engine.Open(ctx, d.ID)
}

// unavailable joins the errors of backends that found nothing, to explain an empty list.
func (dis *Discovery) unavailable() error {
	var errs []error
	for _, b := range dis.Backends {
		if b.Err != nil {
			errs = append(errs, b.Err)
		}
	}
	return errors.Join(errs...)
}

// Unavailable returns the errors of the backends that reported no device, joined, or nil.
func (dis *Discovery) Unavailable() error { return dis.unavailable() }
