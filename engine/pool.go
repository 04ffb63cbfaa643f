package engine

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/prism-compute/prism/engine/driver"
)

// The memory pool. Each open Device keeps the memory of closed buffers in free lists, one
// per size class, and hands it out again to NewBuffer: allocating and freeing through the
// driver costs tens of microseconds on CUDA and a context-wide synchronization on free,
// taking a block from a list well under one. New memory comes from the driver's own pool
// where it has one (CUDA's stream-ordered allocator, driver.PoolAllocator), else from
// plain allocations.
//
// A block freed while queues of the device still have commands in flight may be in use by
// them: it stays in its list, marked with each such queue and the count of commands the
// queue had enqueued, and is handed out only once every marked queue has completed that
// many (a Finish, a blocking Read or Write, a waited Event). Closed buffers are thus never
// handed out under a running kernel, whichever queue it runs on.
//
// PRISM_POOL=off turns the pool off (every NewBuffer and Close goes to the driver);
// PRISM_POOL_LIMIT caps the bytes a device's pool holds, in use and cached together
// ("8GiB", "512M", "1073741824"); Device.SetPoolLimit changes it at run time.

// PoolStats are the figures of a device's memory pool.
type PoolStats struct {
	// Enabled is false where PRISM_POOL=off turned the pool off.
	Enabled bool `json:"enabled"`
	// Backing names where new memory comes from: the driver's pool
	// ("cuMemAllocFromPoolAsync") or "driver" for plain allocations.
	Backing string `json:"backing"`
	// Limit caps InUse+Cached's held bytes; zero for none.
	Limit int64 `json:"limit_bytes"`
	// InUseBytes are the bytes live buffers asked for; HeldBytes what they hold,
	// rounded up to their size classes.
	InUseBytes int64 `json:"in_use_bytes"`
	HeldBytes  int64 `json:"held_bytes"`
	// CachedBytes are kept for reuse after their buffers closed; PendingBytes is the part
	// of them still waiting for queues to complete commands enqueued before the close.
	CachedBytes  int64 `json:"cached_bytes"`
	PendingBytes int64 `json:"pending_bytes"`
	// PeakBytes is the most the pool has held at once (HeldBytes+CachedBytes) since the
	// device was opened or the pool last trimmed.
	PeakBytes int64 `json:"peak_bytes"`
	// Hits and Misses count allocations served from the lists and from the driver; Frees
	// counts buffers returned; Released the bytes given back to the driver (Trim, the
	// limit, memory pressure).
	Hits     int64 `json:"hits"`
	Misses   int64 `json:"misses"`
	Frees    int64 `json:"frees"`
	Released int64 `json:"released_bytes"`
	// Fragmentation is the share of the held and cached bytes that no live buffer asked
	// for: 1 - InUse/(Held+Cached); zero when the pool holds nothing.
	Fragmentation float64 `json:"fragmentation"`
}

// poolClass returns the size class of an allocation of size bytes: 512 bytes at least,
// above that the next of four steps per power of two (1, 1.25, 1.5, 1.75 times it), so
// that a block is at most 25% larger than asked.
func poolClass(size int64) int64 {
	if size <= 512 {
		return 512
	}
	p := int64(1) << (63 - bits.LeadingZeros64(uint64(size-1))) // largest power of two < size
	step := p / 4
	return (size + step - 1) / step * step
}

// queueMark is a queue and the count of commands enqueued on it: a block freed with the
// mark may be reused once the queue has completed that many.
type queueMark struct {
	q   *Queue
	seq uint64
}

// reached reports whether the queue has completed the mark's commands (or closed, which
// waited for them).
func (m queueMark) reached() bool { return m.q.done.Load() >= m.seq }

// block is cached device memory of one size class.
type block struct {
	drv   driver.Buffer
	class int64
	marks []queueMark // queues with commands in flight when it was freed
	taken bool        // handed out again: left in pool.order until it is compacted
}

func (b *block) ready() bool {
	for i, m := range b.marks {
		if !m.reached() {
			b.marks = b.marks[i:] // drop those already reached
			return false
		}
	}
	b.marks = nil
	return true
}

// pool is a device's memory pool. Its fields are guarded by mu.
type pool struct {
	mu      sync.Mutex
	on      bool
	drv     driver.Device
	backing driver.PoolAllocator // nil for plain allocations
	lists   map[int64][]*block   // cached blocks by class, oldest first
	order   []*block             // every cached block, oldest first, and taken ones
	taken   int                  // blocks of order handed out again
	s       PoolStats
}

func newPool(d driver.Device) (*pool, error) {
	on, limit, err := poolEnv()
	if err != nil {
		return nil, err
	}
	p := &pool{on: on, drv: d, lists: map[int64][]*block{}}
	p.s.Limit = limit
	if pa, ok := d.(driver.PoolAllocator); ok && p.on {
		p.backing = pa
	}
	return p, nil
}

// poolEnv reads PRISM_POOL (on or off, 1 or 0; unset or empty is on) and PRISM_POOL_LIMIT
// (a byte count; unset or empty is no limit). A value that is neither is an error naming
// the variable and the value, wrapping ErrInvalidArg.
func poolEnv() (on bool, limit int64, err error) {
	switch v := os.Getenv("PRISM_POOL"); strings.ToLower(strings.TrimSpace(v)) {
	case "", "on", "1":
		on = true
	case "off", "0":
	default:
		return false, 0, fmt.Errorf("engine: PRISM_POOL=%q: want on or off (1 or 0): %w", v, ErrInvalidArg)
	}
	if v := os.Getenv("PRISM_POOL_LIMIT"); v != "" {
		if limit, err = parseBytes(v); err != nil {
			return false, 0, fmt.Errorf("engine: PRISM_POOL_LIMIT: %w", err)
		}
	}
	return on, limit, nil
}

// CheckEnv returns an error wrapping ErrInvalidArg, naming the variable and its value,
// when an environment variable the engine reads holds a value Open would refuse:
// PRISM_POOL (on or off) or PRISM_POOL_LIMIT (a byte count such as 8GiB). A command line
// calls it before any device work, to report the mistake as one of usage.
func CheckEnv() error {
	_, _, err := poolEnv()
	return err
}

// parseBytes reads a byte count: digits with an optional suffix K, M, G or T (powers of
// 1024; KiB, KB, k, ... alike), e.g. "8GiB", "512M", "1073741824". Zero means no limit.
func parseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGT", t[n-1]); i >= 0 {
			mult, t = int64(1)<<(10*(i+1)), t[:n-1]
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a byte count (digits with an optional K, M, G or T suffix, powers of 1024): %w", s, ErrInvalidArg)
	}
	return n * mult, nil
}

// get returns device memory for a buffer of size bytes, from the lists or the driver.
func (p *pool) get(dev *Device, size int64) (driver.Buffer, error) {
	if !p.on {
		if err := p.reserve(dev, size, size); err != nil {
			return nil, err
		}
		db, err := p.drv.Alloc(size)
		if err != nil {
			p.unreserve(size, size)
			return nil, fmt.Errorf("engine: alloc %d bytes on %s: %w", size, dev.id, err)
		}
		return db, nil
	}
	c := poolClass(size)
	p.mu.Lock()
	list := p.lists[c]
	for i := len(list) - 1; i >= 0; i-- { // newest first: most likely in a cache still
		if b := list[i]; b.ready() {
			p.lists[c] = append(list[:i], list[i+1:]...)
			p.forget(b)
			p.s.CachedBytes -= c
			p.s.HeldBytes += c
			p.s.InUseBytes += size
			p.s.Hits++
			p.mu.Unlock()
			return b.drv, nil
		}
	}
	p.s.Misses++
	p.mu.Unlock()
	if err := p.reserve(dev, c, size); err != nil {
		return nil, err
	}
	db, err := p.alloc(c)
	if err != nil && errors.Is(err, ErrOutOfMemory) {
		// The driver is out of memory: give back what the lists cache and try again.
		if _, terr := p.trim(); terr == nil {
			db, err = p.alloc(c)
		}
	}
	if err != nil {
		p.unreserve(c, size)
		return nil, fmt.Errorf("engine: alloc %d bytes on %s: %w", c, dev.id, err)
	}
	return db, nil
}

func (p *pool) alloc(size int64) (driver.Buffer, error) {
	if p.backing != nil {
		return p.backing.AllocPooled(size)
	}
	return p.drv.Alloc(size)
}

// reserve counts held bytes (for a request of asked bytes) against the limit and the
// device's memory, first releasing cached blocks that are ready if they would not fit.
func (p *pool) reserve(dev *Device, held, asked int64) error {
	p.mu.Lock()
	over := func() (int64, string) {
		total := p.s.HeldBytes + p.s.CachedBytes + held
		if l := p.s.Limit; l > 0 && total > l {
			return l, "the pool's limit (PRISM_POOL_LIMIT, Device.SetPoolLimit)"
		}
		if g := dev.info.GlobalMemBytes; g > 0 && total > g {
			return g, "the device's memory"
		}
		return 0, ""
	}
	var free []*block
	if cap, _ := over(); cap > 0 {
		free = p.evict(cap - held)
	}
	capBytes, what := over()
	if capBytes == 0 {
		p.s.HeldBytes += held
		p.s.InUseBytes += asked
		p.s.PeakBytes = max(p.s.PeakBytes, p.s.HeldBytes+p.s.CachedBytes)
	}
	st := p.s
	p.mu.Unlock()
	p.close(free)
	if capBytes > 0 {
		msg := fmt.Sprintf("engine: NewBuffer of %d bytes on %s: %d bytes are in use in live buffers", asked, dev.id, st.HeldBytes)
		if st.CachedBytes > 0 {
			msg += fmt.Sprintf(" and %d cached for buffers closed while queues still had commands in flight (Finish the queues to release them)", st.CachedBytes)
		}
		return fmt.Errorf("%s, and %s is %d bytes: %w", msg, what, capBytes, ErrOutOfMemory)
	}
	return nil
}

func (p *pool) unreserve(held, asked int64) {
	p.mu.Lock()
	p.s.HeldBytes -= held
	p.s.InUseBytes -= asked
	p.mu.Unlock()
}

// put takes back the memory of a closed buffer of size bytes: into its list, or to the
// driver when the pool is off. marks are the device's queues with commands in flight.
func (p *pool) put(db driver.Buffer, size int64, marks []queueMark) error {
	if !p.on {
		p.unreserve(size, size)
		return db.Close()
	}
	c := poolClass(size)
	b := &block{drv: db, class: c, marks: marks}
	p.mu.Lock()
	p.lists[c] = append(p.lists[c], b)
	p.order = append(p.order, b)
	if p.taken > len(p.order)/2 {
		p.compact()
	}
	p.s.HeldBytes -= c
	p.s.InUseBytes -= size
	p.s.CachedBytes += c
	p.s.Frees++
	var free []*block
	if l := p.s.Limit; l > 0 && p.s.HeldBytes+p.s.CachedBytes > l {
		free = p.evict(l)
	}
	p.mu.Unlock()
	return p.close(free)
}

// evict removes ready cached blocks, oldest first, until the pool holds at most target
// bytes, and returns them for close. It runs with mu held.
func (p *pool) evict(target int64) []*block {
	var out []*block
	p.compact()
	keep := p.order[:0]
	for _, b := range p.order {
		if p.s.HeldBytes+p.s.CachedBytes > target && b.ready() {
			out = append(out, b)
			p.s.CachedBytes -= b.class
			p.s.Released += b.class
			list := p.lists[b.class]
			for i, x := range list {
				if x == b {
					p.lists[b.class] = append(list[:i], list[i+1:]...)
					break
				}
			}
			continue
		}
		keep = append(keep, b)
	}
	clear(p.order[len(keep):])
	p.order = keep
	return out
}

// forget marks b as handed out again, so that order no longer counts it, without a search
// of order on the allocation's path; put compacts order once taken blocks are half of it.
// It runs with mu held.
func (p *pool) forget(b *block) {
	b.taken = true
	p.taken++
}

// compact drops the taken blocks from order. It runs with mu held.
func (p *pool) compact() {
	keep := p.order[:0]
	for _, b := range p.order {
		if !b.taken {
			keep = append(keep, b)
		}
	}
	clear(p.order[len(keep):])
	p.order, p.taken = keep, 0
}

func (p *pool) close(blocks []*block) error {
	var errs []error
	for _, b := range blocks {
		errs = append(errs, b.drv.Close())
	}
	return errors.Join(errs...)
}

// trim gives every ready cached block back to the driver, and the driver's pool its
// unused memory; it returns the bytes released.
func (p *pool) trim() (int64, error) {
	p.mu.Lock()
	before := p.s.Released
	free := p.evict(0)
	released := p.s.Released - before
	p.s.PeakBytes = p.s.HeldBytes + p.s.CachedBytes
	p.mu.Unlock()
	err := p.close(free)
	if p.backing != nil {
		if terr := p.backing.TrimPool(); terr != nil {
			err = errors.Join(err, terr)
		}
	}
	return released, err
}

// drain releases every cached block, ready or not: the device is closing and its queues
// have finished.
func (p *pool) drain() error {
	p.mu.Lock()
	p.compact()
	free := p.order
	p.order, p.lists = nil, map[int64][]*block{}
	p.s.CachedBytes = 0
	p.mu.Unlock()
	return p.close(free)
}

func (p *pool) stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.s
	s.Enabled = p.on
	s.Backing = "driver"
	if p.backing != nil {
		s.Backing = p.backing.PoolName()
	}
	for _, b := range p.order {
		if !b.taken && !b.ready() {
			s.PendingBytes += b.class
		}
	}
	if total := s.HeldBytes + s.CachedBytes; total > 0 {
		s.Fragmentation = 1 - float64(s.InUseBytes)/float64(total)
	}
	return s
}

// PoolStats returns the figures of the device's memory pool.
func (d *Device) PoolStats() PoolStats {
	if d == nil || d.pool == nil {
		return PoolStats{}
	}
	return d.pool.stats()
}

// TrimPool gives the memory the pool caches back to the driver, except blocks that queues
// may still be using (PoolStats.PendingBytes), and returns the bytes released. The peak
// starts again from what the pool then holds.
func (d *Device) TrimPool() (int64, error) {
	if err := d.check(); err != nil {
		return 0, err
	}
	n, err := d.pool.trim()
	if err != nil {
		return n, fmt.Errorf("engine: trim the pool of %s: %w", d.id, err)
	}
	return n, nil
}

// SetPoolLimit caps the bytes the device's pool holds, in live buffers and cache together
// (0 for no limit): cached blocks beyond it are released at once where they are ready,
// and a NewBuffer that would pass it fails with ErrOutOfMemory once the cache is spent.
func (d *Device) SetPoolLimit(bytes int64) error {
	if err := d.check(); err != nil {
		return err
	}
	if bytes < 0 {
		return fmt.Errorf("engine: pool limit of %d bytes: must be 0 (none) or positive: %w", bytes, ErrInvalidArg)
	}
	p := d.pool
	p.mu.Lock()
	p.s.Limit = bytes
	var free []*block
	if bytes > 0 {
		free = p.evict(bytes)
	}
	p.mu.Unlock()
	return p.close(free)
}

// inFlight returns a mark for each of the device's queues with commands that have not
// been seen complete.
func (d *Device) inFlight() []queueMark {
	d.mu.Lock()
	defer d.mu.Unlock()
	var marks []queueMark
	for q := range d.queues {
		if s := q.sub.Load(); q.done.Load() < s {
			marks = append(marks, queueMark{q: q, seq: s})
		}
	}
	return marks
}
