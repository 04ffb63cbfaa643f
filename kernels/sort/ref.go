package sort

import (
	"fmt"
	"math"

	"github.com/prism-compute/prism/kernels"
)

// SortMapKey returns the uint32 whose unsigned order is the sort order of key k (sort.cl,
// map_in): uint32 keys as they are; float32 keys by their bits, negative ones with every bit
// flipped, non-negative ones with the sign bit flipped; in Descending order the result is
// inverted. Equal mapped keys are equal keys, bit for bit.
func SortMapKey[K SortKey](k K, order SortOrder) uint32 {
	var u uint32
	switch v := any(k).(type) {
	case uint32:
		u = v
	case float32:
		u = math.Float32bits(v)
		if u>>31 != 0 {
			u = ^u
		} else {
			u |= 1 << 31
		}
	}
	if order == Descending {
		u = ^u
	}
	return u
}

// SortRef returns keys stably sorted in order, computed on the host (an LSD radix sort of the
// mapped keys, 8 bits per pass: exact, O(n)). The device result must equal it bit for bit.
func SortRef[K SortKey](keys []K, order SortOrder) []K {
	out, _ := SortPairsRef(keys, nil, order)
	return out
}

// SortPairsRef returns keys stably sorted in order and vals permuted alongside (nil vals: keys
// only, nil result). len(vals) must be len(keys) when vals is not nil.
func SortPairsRef[K SortKey](keys []K, vals []uint32, order SortOrder) ([]K, []uint32) {
	if vals != nil && len(vals) != len(keys) {
		panic(fmt.Sprintf("SortPairsRef: %d keys and %d values", len(keys), len(vals)))
	}
	n := len(keys)
	m := make([]uint32, n)
	idx := make([]uint32, n)
	for i, k := range keys {
		m[i], idx[i] = SortMapKey(k, order), uint32(i)
	}
	m2, idx2 := make([]uint32, n), make([]uint32, n)
	for shift := 0; shift < 32; shift += 8 {
		var cnt [257]int
		for _, k := range m {
			cnt[(k>>shift)&0xff+1]++
		}
		for d := 1; d <= 256; d++ {
			cnt[d] += cnt[d-1]
		}
		for i, k := range m {
			d := (k >> shift) & 0xff
			m2[cnt[d]], idx2[cnt[d]] = k, idx[i]
			cnt[d]++
		}
		m, m2, idx, idx2 = m2, m, idx2, idx
	}
	out := make([]K, n)
	for i, j := range idx {
		out[i] = keys[j]
	}
	if vals == nil {
		return out, nil
	}
	vout := make([]uint32, n)
	for i, j := range idx {
		vout[i] = vals[j]
	}
	return out, vout
}

// CheckSortedKeys compares a device sort result with the reference bit for bit (float32 keys
// by their bits, so that -0.0, +0.0 and NaN payloads count) and returns an error wrapping
// ErrVerify for the first difference.
func CheckSortedKeys[K SortKey](what string, got, want []K) error {
	if len(got) < len(want) {
		return fmt.Errorf("%w: %s: %d keys, want %d", kernels.ErrVerify, what, len(got), len(want))
	}
	for i := range want {
		if keyBits(got[i]) != keyBits(want[i]) {
			return fmt.Errorf("%w: %s: key %d = %v (bits %#08x), want %v (bits %#08x)", kernels.ErrVerify, what, i, got[i], keyBits(got[i]), want[i], keyBits(want[i]))
		}
	}
	return nil
}

func keyBits[K SortKey](k K) uint32 {
	switch v := any(k).(type) {
	case float32:
		return math.Float32bits(v)
	case uint32:
		return v
	}
	return 0
}
