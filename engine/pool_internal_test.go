package engine

import (
	"errors"
	"testing"
)

// TestPoolClass checks the size classes: at least the size, at most 25% above it (512
// bytes at least), monotonic, and fixed points at the steps.
func TestPoolClass(t *testing.T) {
	for _, c := range []struct{ size, want int64 }{
		{1, 512}, {512, 512}, {513, 640}, {1000, 1024}, {1025, 1280}, {1 << 20, 1 << 20},
		{1<<20 + 1, 1<<20 + 1<<18}, {3 << 20, 3 << 20}, {7<<30 + 1, 8 << 30},
	} {
		if got := poolClass(c.size); got != c.want {
			t.Errorf("poolClass(%d) = %d, want %d", c.size, got, c.want)
		}
	}
	prev := int64(0)
	for size := int64(1); size < 1<<24; size = size*9/8 + 1 {
		c := poolClass(size)
		if c < size || (size > 512 && c > size+size/4) || c < prev {
			t.Fatalf("poolClass(%d) = %d (previous class %d)", size, c, prev)
		}
		if poolClass(c) != c {
			t.Fatalf("poolClass(%d) = %d, not its own class", c, poolClass(c))
		}
		prev = c
	}
}

// TestParseBytes checks PRISM_POOL_LIMIT's spellings.
func TestParseBytes(t *testing.T) {
	for s, want := range map[string]int64{
		"0": 0, "4096": 4096, "64K": 64 << 10, "512MiB": 512 << 20, "8gib": 8 << 30, " 2 GB ": 2 << 30, "1T": 1 << 40, "12B": 12,
	} {
		if got, err := parseBytes(s); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "-1", "1.5G", "lots", "9999999999T", "4X"} {
		if _, err := parseBytes(s); !errors.Is(err, ErrInvalidArg) {
			t.Errorf("parseBytes(%q): %v, want ErrInvalidArg", s, err)
		}
	}
}

// TestPoolEnv checks PRISM_POOL and PRISM_POOL_LIMIT at Open.
func TestPoolEnv(t *testing.T) {
	t.Setenv("PRISM_POOL", "off")
	t.Setenv("PRISM_POOL_LIMIT", "1M")
	p, err := newPool(&stubDevice{})
	if err != nil || p.on || p.s.Limit != 1<<20 {
		t.Errorf("newPool with PRISM_POOL=off, PRISM_POOL_LIMIT=1M: on %v, limit %d, %v", p != nil && p.on, p.stats().Limit, err)
	}
	t.Setenv("PRISM_POOL", "maybe")
	if _, err := newPool(&stubDevice{}); !errors.Is(err, ErrInvalidArg) {
		t.Errorf("PRISM_POOL=maybe: %v, want ErrInvalidArg", err)
	}
}

// TestPoolOrderBounded checks that blocks handed out again leave the pool's order of cached
// blocks (lazily: a hit does not search it), so that it does not grow with the number of
// allocations, only with what is cached.
func TestPoolOrderBounded(t *testing.T) {
	dev, err := newDevice("stub:0", "stub", &stubDevice{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10000 {
		b, err := NewBuffer[byte](dev, 1000+i%3*4096)
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	p := dev.pool
	p.mu.Lock()
	n, taken := len(p.order), p.taken
	p.mu.Unlock()
	if st := dev.PoolStats(); st.Misses != 3 || n > 2*3+1 {
		t.Errorf("after 10^4 cycles of 3 sizes: %d misses, order of %d blocks (%d taken); want 3 misses and order bounded by what is cached", st.Misses, n, taken)
	}
}
