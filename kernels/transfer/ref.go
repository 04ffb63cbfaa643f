package transfer

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/prism-compute/prism/kernels"
)

// seedHalves returns the low and high 32 bits of seed: s0 and s1 of transfer.cl.
func seedHalves(seed uint64) (s0, s1 uint32) { return uint32(seed), uint32(seed >> 32) }

// fmix is MurmurHash3's 32-bit finalizer, as transfer.cl's transfer_fmix.
func fmix(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// patternWord returns word w of the pattern of seed halves s0, s1: bytes 4w to 4w+3,
// little-endian.
func patternWord(w, s0, s1 uint32) uint32 { return fmix(fmix(w^s0) + s1 + 0x9e3779b9) }

// Pattern returns byte i of the pattern of seed (transfer.cl's header defines it): random
// bytes, the same on the host and on every device.
func Pattern(i int, seed uint64) byte {
	s0, s1 := seedHalves(seed)
	return byte(patternWord(uint32(i>>2), s0, s1) >> (8 * (i & 3)))
}

// parallelChunk is the bytes one goroutine of PatternInto and CheckPattern handles at a
// time: a GiB of pattern takes seconds on one core.
const parallelChunk = 1 << 22

// each runs f over [0, n) in chunks of parallelChunk bytes (multiples of 4), on up to
// GOMAXPROCS goroutines at once, and returns the results in chunk order.
func each[R any](n int, f func(lo, hi int) R) []R {
	chunks := (n + parallelChunk - 1) / parallelChunk
	out := make([]R, chunks)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for c := range chunks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			lo := c * parallelChunk
			out[c] = f(lo, min(lo+parallelChunk, n))
		}()
	}
	wg.Wait()
	return out
}

// PatternInto sets dst[j] to byte lo+j of the pattern of seed XORed with mask (0 for the
// pattern, 0xff for its complement).
func PatternInto(dst []byte, lo int, seed uint64, mask byte) {
	s0, s1 := seedHalves(seed)
	each(len(dst), func(a, b int) struct{} {
		for j := a; j < b; j++ {
			i := lo + j
			dst[j] = byte(patternWord(uint32(i>>2), s0, s1)>>(8*(i&3))) ^ mask
		}
		return struct{}{}
	})
}

// CheckPattern compares got with bytes lo to lo+len(got)-1 of the pattern of seed and
// returns an error wrapping kernels.ErrVerify that names the first byte that differs, its
// value, the pattern's and how many differ; what names the data ("transfer d2h-pinned").
func CheckPattern(what string, got []byte, lo int, seed uint64) error {
	s0, s1 := seedHalves(seed)
	type found struct{ count, first int }
	var total found
	total.first = -1
	for _, f := range each(len(got), func(a, b int) found {
		r := found{first: -1}
		for j := a; j < b; j++ {
			i := lo + j
			if got[j] != byte(patternWord(uint32(i>>2), s0, s1)>>(8*(i&3))) {
				if r.count == 0 {
					r.first = j
				}
				r.count++
			}
		}
		return r
	}) {
		if f.count > 0 && total.first < 0 {
			total.first = f.first
		}
		total.count += f.count
	}
	if total.count == 0 {
		return nil
	}
	j := total.first
	return fmt.Errorf("%w: %s: %d of %d bytes differ from the pattern; the first is byte %d = %#02x, want %#02x",
		kernels.ErrVerify, what, total.count, len(got), lo+j, got[j], Pattern(lo+j, seed))
}

// CheckGuard returns an error wrapping kernels.ErrVerify when any byte of guard is not
// Sentinel: a copy of n bytes wrote past its end.
func CheckGuard(what string, guard []byte, n int) error {
	for j, b := range guard {
		if b != Sentinel {
			return guardError(what, j, n, b)
		}
	}
	return nil
}

// guardError is the error of guard byte j after the n bytes copied holding b.
func guardError(what string, j, n int, b byte) error {
	return fmt.Errorf("%w: %s: guard byte %d after the %d bytes copied was overwritten with %#02x (the sentinel is %#02x)",
		kernels.ErrVerify, what, j, n, b, Sentinel)
}
