package store

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prism-compute/prism/bench"
)

func TestSamplesEncoding(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []time.Duration
		size    int // the encoded length, where it is known
	}{
		{"none", nil, 0},
		{"one", []time.Duration{26499}, 1 + 3},
		{"close together", []time.Duration{26499, 25839, 24997, 24487, 25000}, 1 + 3 + 2 + 2 + 2 + 2},
		{"equal", []time.Duration{7, 7, 7, 7}, 1 + 4},
		{"far apart", []time.Duration{1, 5706715534, 2, time.Hour}, -1},
		{"the ends of int64", []time.Duration{math.MaxInt64, math.MinInt64, math.MaxInt64, 1, math.MinInt64}, -1},
		{"zero and below", []time.Duration{0, -1, -1000}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := encodeSamples(tc.samples)
			if tc.size >= 0 && len(b) != tc.size {
				t.Errorf("encoded in %d bytes (% x), want %d", len(b), b, tc.size)
			}
			got, err := decodeSamples(b)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.samples) {
				t.Errorf("decoded %v, encoded %v", got, tc.samples)
			}
		})
	}
	// A run's samples of some microseconds take 2 to 3 bytes each, not 8.
	run := make([]time.Duration, 1000)
	for i := range run {
		run[i] = 25*time.Microsecond + time.Duration((i*7919)%4000)
	}
	if b := encodeSamples(run); len(b) > 3*len(run) {
		t.Errorf("%d samples of about 25 µs take %d bytes", len(run), len(b))
	}
}

func TestSamplesDecodeDamage(t *testing.T) {
	good := encodeSamples([]time.Duration{26499, 25839, 24997})
	for _, tc := range []struct {
		name string
		b    []byte
		says string
	}{
		{"unknown encoding", append([]byte{2}, good[1:]...), "encoding 2, not 1"},
		{"text", []byte("26499,25839"), "encoding 50, not 1"},
		{"cut short", good[:len(good)-1], "sample 3, at byte 6 of 7, is cut short"},
		{"encoding byte only", []byte{sampleDeltas}, "no sample"},
		{"overflow", append([]byte{sampleDeltas}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "sample 1, at byte 1 of 12, is cut short or overflows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeSamples(tc.b)
			if !errors.Is(err, errSamples) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("decodeSamples(% x) = %v, %v; want an error saying %q", tc.b, got, err, tc.says)
			}
		})
	}
}

// storedSamples returns the samples of every result of the store, by result ID, as
// results.samples holds them.
func storedSamples(t testing.TB, s *Store) map[int64][]time.Duration {
	t.Helper()
	rows, err := s.db.Query("SELECT id, samples FROM results")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64][]time.Duration{}
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			t.Fatal(err)
		}
		if out[id], err = decodeSamples(b); err != nil {
			t.Fatalf("result %d: %v", id, err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// countSamples is the number of samples the store holds.
func countSamples(t testing.TB, s *Store) int {
	n := 0
	for _, ss := range storedSamples(t, s) {
		n += len(ss)
	}
	return n
}

// TestSamplesDamaged damages the samples of one result in each way: Check reports it,
// naming the result, its run and case, and what is wrong; History with samples refuses the
// value it cannot decode, and reads the others.
func TestSamplesDamaged(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		for _, tc := range []struct {
			name    string
			samples []byte
			says    string
			decodes bool
		}{
			{"one sample missing", encodeSamples([]time.Duration{1000, 1007, 1001}), "3 samples stored, 4 recorded, 4 runs", true},
			{"one sample too many", encodeSamples([]time.Duration{1000, 1007, 1001, 1008, 1002}), "5 samples stored, 4 recorded, 4 runs", true},
			{"none", []byte{}, "0 samples stored, 4 recorded, 4 runs", true},
			{"zero", encodeSamples([]time.Duration{1000, 0, 1001, 1008}), "sample 2 of 4 is 0 ns, not a positive time", true},
			{"negative", encodeSamples([]time.Duration{1000, 1007, 1001, -3}), "sample 4 of 4 is -3 ns, not a positive time", true},
			{"cut short", encodeSamples([]time.Duration{1000, 1007, 1001, 100000})[:6], "its samples do not decode: not a list of samples: sample 4, at byte 5 of 6, is cut short or overflows", false},
			{"not this encoding", []byte("1000,1007,1001,1008"), "its samples do not decode: not a list of samples: encoding 49, not 1", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				testSamplesDamaged(t, b.open(t), tc.samples, tc.says, tc.decodes)
			})
		}
	})
}

func testSamplesDamaged(t *testing.T, s *Store, samples []byte, says string, decodes bool) {
	ctx := context.Background()
	if _, err := s.Record(ctx, synthetic("h", "c", "cpu", time.Now(), 2, 4)); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check of a sound store: %v", err)
	}
	var id, run int64
	if err := s.db.QueryRow("SELECT id, run_id FROM results WHERE case_name = 'stream/triad/float32'").Scan(&id, &run); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(s.d.q("UPDATE results SET samples = ? WHERE id = ?"), samples, id); err != nil {
		t.Fatal(err)
	}
	err := s.Check(ctx)
	what := "result " + strconv.FormatInt(id, 10) + " of run " + strconv.FormatInt(run, 10) + " (stream/triad/float32): "
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "1 problem: "+what+says) || !strings.Contains(err.Error(), s.Path()) {
		t.Errorf("Check = %v; want ErrDamaged naming the store and saying %q", err, what+says)
	}
	_, err = s.History(ctx, Series{Case: "stream/triad/float32", Samples: true})
	if decodes && err != nil {
		t.Errorf("History of samples that decode: %v", err)
	}
	if !decodes && (!errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "the samples of stream/triad/float32") || !strings.Contains(err.Error(), s.Path())) {
		t.Errorf("History of samples that do not decode = %v; want ErrDamaged naming the store and the case", err)
	}
	if pts, err := s.History(ctx, Series{Case: "stream/triad/float32"}); err != nil || len(pts) != 1 {
		t.Errorf("History without samples = %d points, %v; want 1", len(pts), err)
	}
	if pts, err := s.History(ctx, Series{Case: "stream/copy/float32", Samples: true}); err != nil || len(pts) != 1 || len(pts[0].Samples) != 4 {
		t.Errorf("History of the sound case = %+v, %v; want 1 point of 4 samples", pts, err)
	}
}

// TestSamplesOfInvalidMeasurement records a result whose device times of zero or less made
// it an invalid measurement (bench/valid.go): it keeps them, and Check accepts them there,
// where the same samples in a valid result are damage (TestSamplesDamaged).
func TestSamplesOfInvalidMeasurement(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		r := synthetic("h", "c", "cpu", time.Now(), 1, 4)
		res := &r.Devices[0].Results[0]
		res.Stats = bench.Summarize([]time.Duration{1000, 0, 1001, -5})
		res.Invalid = bench.InvalidPrefix + "2 of 4 device times are not positive (the least is -5 ns): the driver's event profiling gave no usable time"
		res.GBs = 0
		if _, err := s.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.Check(ctx); err != nil {
			t.Errorf("Check of an invalid measurement's samples: %v", err)
		}
		pts, err := s.History(ctx, Series{Case: res.Case, Samples: true})
		if err != nil || len(pts) != 1 || !slices.Equal(pts[0].Samples, []time.Duration{1000, 0, 1001, -5}) || !strings.HasPrefix(pts[0].Failed, "invalid: ") {
			t.Errorf("History = %+v, %v; want the invalid point with its samples as recorded", pts, err)
		}
	})
}
