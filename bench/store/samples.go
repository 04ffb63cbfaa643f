package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// A result's samples are kept with it, in the column results.samples (schema version 2
// on), as one binary value:
//
//   - empty where the result has no samples (reports from before samples were kept);
//   - else a byte giving the encoding, sampleDeltas (1), then each sample in the order
//     taken as its difference in nanoseconds from the sample before it (the first: from
//     0), a signed varint (encoding/binary's AppendVarint: zigzag, 7 bits a byte).
//
// The samples of one result lie close together, so a difference takes one to three bytes
// where a fixed int64 takes eight (ten samples of about 25 µs: 16 bytes, not 80), and any
// int64 still round-trips (the differences wrap around as int64 arithmetic does). The
// leading byte lets a later encoding sit beside this one, and tells a value of this
// encoding from garbage. One value per result is read with the result's row: History
// reads a whole case's points and samples in one query, with no join, GROUP BY or row per
// sample, and a Record writes one row per result instead of one per sample.

// sampleDeltas is the first byte of a results.samples value of varint differences.
const sampleDeltas = 1

// errSamples is wrapped by decodeSamples's errors.
var errSamples = errors.New("not a list of samples")

// encodeSamples returns samples as results.samples keeps them.
func encodeSamples(samples []time.Duration) []byte {
	if len(samples) == 0 {
		return []byte{}
	}
	b := make([]byte, 1, 1+3*len(samples))
	b[0] = sampleDeltas
	var prev int64
	for _, s := range samples {
		b = binary.AppendVarint(b, int64(s)-prev)
		prev = int64(s)
	}
	return b
}

// decodeSamples returns the samples of a results.samples value, or an error wrapping
// errSamples that says what is wrong with it.
func decodeSamples(b []byte) ([]time.Duration, error) {
	if len(b) == 0 {
		return nil, nil
	}
	return appendSamples(make([]time.Duration, 0, sampleCount(b)), b)
}

// sampleCount returns how many samples the results.samples value b holds where it
// decodes: every varint ends at a byte below 0x80.
func sampleCount(b []byte) int {
	n := 0
	for _, c := range b[min(len(b), 1):] {
		if c < 0x80 {
			n++
		}
	}
	return n
}

// appendSamples appends the samples of a results.samples value to dst, or returns an
// error wrapping errSamples that says what is wrong with it.
func appendSamples(dst []time.Duration, b []byte) ([]time.Duration, error) {
	if len(b) == 0 {
		return dst, nil
	}
	if b[0] != sampleDeltas {
		return nil, fmt.Errorf("%w: encoding %d, not %d (written by a newer prism, or damaged)", errSamples, b[0], sampleDeltas)
	}
	if len(b) == 1 {
		return nil, fmt.Errorf("%w: an encoding byte and no sample", errSamples)
	}
	var prev int64
	for i, at := 1, 1; at < len(b); i++ {
		d, k := binary.Varint(b[at:])
		if k <= 0 {
			return nil, fmt.Errorf("%w: sample %d, at byte %d of %d, is cut short or overflows", errSamples, i, at, len(b))
		}
		prev += d
		dst = append(dst, time.Duration(prev))
		at += k
	}
	return dst, nil
}
