package engine

import (
	"container/list"
	"errors"
	"strings"
	"sync"

	"github.com/prism-compute/prism/engine/driver"
)

// progCache shares the compiled programs of an OpenCL device between the Programs that
// BuildSource makes from the same source, dialect and options, and keeps the last
// idleMax of them after their last Program closes: the suite's families build one source
// with one set of options again and again (a sorter per key type, an instance per run),
// and an OpenCL driver without a cache of its own (Mesa's Rusticl) compiles each time
// anew. A test process of kernels/sort built 7 distinct programs 208 times on PoCL and
// Rusticl (2026-11-30). A shared program's kernels are made anew for each Kernel call
// (clCreateKernel), so that nothing set on one reaches another. A build that fails is
// never kept. Guarded by mu; the driver programs are closed outside it.
type progCache struct {
	mu      sync.Mutex
	entries map[progKey]*progEntry
	idle    *list.List // entries no Program holds, the most recently released first
	// drained is set when the device closes: a compile released after that (a build the
	// device's Close did not wait for) is closed at once, and nothing more is kept.
	drained bool
}

// idleMax is how many compiled programs a device keeps with no Program holding them.
const idleMax = 64

// progKey identifies a build: the source, in its dialect, with its options in order.
type progKey struct {
	dialect    Dialect
	name, text string
	binary     string
	options    string // joined with NUL, which no option holds
}

// progEntry is a compiled program and the Programs holding it.
type progEntry struct {
	key  progKey
	drv  driver.Program
	refs int
	elem *list.Element // in idle while refs == 0
}

// cachedBackends are the backends whose builds go through the program cache: OpenCL's
// (CUDA's NVRTC builds are not shared, since a CUDA function's attributes belong to the
// module's one function handle; the tests add the fake backend).
var cachedBackends = map[string]bool{"opencl": true}

// cacheable reports whether d's builds go through its program cache.
func (d *Device) cacheable() bool { return d != nil && cachedBackends[d.backend] }

// keyOf returns the cache key of a build of src with options.
func keyOf(src Source, options []string) progKey {
	return progKey{dialect: src.Dialect, name: src.Name, text: src.Text, binary: string(src.Binary), options: strings.Join(options, "\x00")}
}

// take returns the compiled program cached under k, counted as held by one more Program,
// or nil where there is none.
func (c *progCache) take(k progKey) *progEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[k]
	if e == nil {
		return nil
	}
	if e.refs == 0 && e.elem != nil {
		c.idle.Remove(e.elem)
		e.elem = nil
	}
	e.refs++
	return e
}

// put caches dp, just built under k, as held by one Program, and returns its entry; nil
// where another build of k got there first (dp then stays the caller's alone).
func (c *progCache) put(k progKey, dp driver.Program) *progEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries, c.idle = map[progKey]*progEntry{}, list.New()
	}
	if c.drained || c.entries[k] != nil {
		return nil
	}
	e := &progEntry{key: k, drv: dp, refs: 1}
	c.entries[k] = e
	return e
}

// release counts one Program less holding e: with none left, e is kept idle, and the
// least recently released idle program past idleMax is closed.
func (c *progCache) release(e *progEntry) error {
	c.mu.Lock()
	e.refs--
	if e.refs > 0 {
		c.mu.Unlock()
		return nil
	}
	if c.drained {
		delete(c.entries, e.key)
		c.mu.Unlock()
		return e.drv.Close()
	}
	e.elem = c.idle.PushFront(e)
	old := c.evict(idleMax)
	c.mu.Unlock()
	return closeAll(old)
}

// drain closes the idle programs (the device closes; its Programs are closed first).
func (c *progCache) drain() error {
	c.mu.Lock()
	c.drained = true
	old := c.evict(0)
	c.mu.Unlock()
	return closeAll(old)
}

// evict takes the least recently released idle programs out of the cache until keep are
// left, and returns them to be closed outside mu (held).
func (c *progCache) evict(keep int) []*progEntry {
	var old []*progEntry
	for c.idle != nil && c.idle.Len() > keep {
		e := c.idle.Remove(c.idle.Back()).(*progEntry)
		e.elem = nil
		delete(c.entries, e.key)
		old = append(old, e)
	}
	return old
}

// closeAll closes the programs of entries.
func closeAll(entries []*progEntry) error {
	var errs []error
	for _, e := range entries {
		errs = append(errs, e.drv.Close())
	}
	return errors.Join(errs...)
}
