package fuse

import (
	"errors"
	"sync"

	"github.com/prism-compute/prism/engine"
)

// deviceCache holds the compiled fused kernels of one device.
type deviceCache struct {
	mu     sync.Mutex
	byKey  map[string]*Kernel
	builds int
}

var (
	cachesMu sync.Mutex
	caches   = map[*engine.Device]*deviceCache{}
)

// cacheOf returns dev's cache, dropping those of closed devices.
func cacheOf(dev *engine.Device) *deviceCache {
	cachesMu.Lock()
	defer cachesMu.Unlock()
	c := caches[dev]
	if c != nil {
		return c
	}
	// A closed device answers a build with ErrClosed before it looks at the source, and an
	// open one refuses the empty source without calling its driver.
	for d := range caches {
		if _, err := d.Build(""); errors.Is(err, engine.ErrClosed) {
			delete(caches, d)
		}
	}
	c = &deviceCache{byKey: map[string]*Kernel{}}
	caches[dev] = c
	return c
}

// Builds returns how many programs Compile has compiled for dev.
func Builds(dev *engine.Device) int {
	c := cacheOf(dev)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.builds
}
