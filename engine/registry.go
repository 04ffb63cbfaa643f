package engine

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/prism-compute/prism/engine/driver"
)

// Type aliases so that users need not import package driver.
type (
	// DeviceInfo describes a device; see driver.DeviceInfo.
	DeviceInfo = driver.DeviceInfo
	// Kind is the class of a device (GPU, accelerator, CPU).
	Kind = driver.Kind
)

// Device kinds.
const (
	KindGPU         = driver.KindGPU
	KindAccelerator = driver.KindAccelerator
	KindCPU         = driver.KindCPU
	KindOther       = driver.KindOther
)

// ParseKind returns the kind named s ("gpu", "accelerator", "cpu") and whether s names one.
func ParseKind(s string) (Kind, bool) { return driver.ParseKind(s) }

var (
	registryMu sync.RWMutex
	registry   = map[string]driver.Driver{}
)

// Register makes a backend available under name ("opencl", "cuda"). It is meant to be
// called from the backend package's init function. It panics if name is empty or already
// registered, or if d is nil: those are programming errors.
func Register(name string, d driver.Driver) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if d == nil {
		panic("engine: Register driver is nil")
	}
	if name == "" || strings.ContainsRune(name, ':') {
		panic(fmt.Sprintf("engine: Register called with invalid name %q", name))
	}
	if _, dup := registry[name]; dup {
		panic("engine: Register called twice for backend " + name)
	}
	registry[name] = d
}

// Backends returns the names of the registered backends, sorted.
func Backends() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookup(name string) (driver.Driver, error) {
	registryMu.RLock()
	d, ok := registry[name]
	registryMu.RUnlock()
	if !ok {
		known := Backends()
		return nil, fmt.Errorf("engine: unknown backend %q (registered: %s; forgotten import?): %w",
			name, strings.Join(known, ", "), ErrNotFound)
	}
	return d, nil
}

// Devices probes one backend and lists its devices, with IDs local to the backend. A backend
// whose library is missing returns an error wrapping ErrUnavailable. The error is the
// backend's own, which starts with its name ("cuda: cannot load ..."): engine has nothing
// to add to it.
func Devices(ctx context.Context, backend string) ([]DeviceInfo, error) {
	d, err := lookup(backend)
	if err != nil {
		return nil, err
	}
	return d.Devices(ctx)
}

// SplitID splits a device ID ("opencl:1:0", "cuda:0") into backend and backend-local ID.
func SplitID(id string) (backend, local string, err error) {
	backend, local, ok := strings.Cut(id, ":")
	if !ok || backend == "" || local == "" {
		return "", "", fmt.Errorf("engine: device ID %q is not of the form backend:id (e.g. opencl:0:0, cuda:0): %w", id, ErrInvalidArg)
	}
	return backend, local, nil
}

// Open opens the device with the given ID ("opencl:0:0", "cuda:0"). The caller must Close
// it. Use package platform to open a device by class or by the PRISM_DEVICE policy.
func Open(ctx context.Context, id string) (*Device, error) {
	backend, local, err := SplitID(id)
	if err != nil {
		return nil, err
	}
	d, err := lookup(backend)
	if err != nil {
		return nil, err
	}
	infos, err := d.Devices(ctx)
	if err != nil {
		return nil, fmt.Errorf("engine: open %s: %w", id, err)
	}
	found := false
	var ids []string
	for _, in := range infos {
		ids = append(ids, backend+":"+in.ID)
		found = found || in.ID == local
	}
	if !found {
		return nil, fmt.Errorf("engine: open %s: no such device (have %s): %w", id, strings.Join(ids, ", "), ErrNotFound)
	}
	dd, err := d.Open(ctx, local)
	if err != nil {
		return nil, fmt.Errorf("engine: open %s: %w", id, err)
	}
	dev, err := newDevice(id, backend, dd)
	if err != nil {
		dd.Close()
		return nil, fmt.Errorf("engine: open %s: %w", id, err)
	}
	Tracef("opened %s (%s, %s)", id, dev.info.Name, backend)
	return dev, nil
}

// Tracing reports whether PRISM_TRACE asks for trace output on stderr.
func Tracing() bool {
	v := os.Getenv("PRISM_TRACE")
	return v != "" && v != "0"
}

// Tracef writes a line of the trace on stderr ("prism: " and the line) when Tracing, for
// the packages above engine (platform, bench, the CLI); the backends prefix their own.
func Tracef(format string, args ...any) {
	if Tracing() {
		fmt.Fprintf(os.Stderr, "prism: "+format+"\n", args...)
	}
}
