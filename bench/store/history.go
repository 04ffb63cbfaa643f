package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/prism-compute/prism/engine"
)

// Series selects one case's results across runs for History.
type Series struct {
	// Case is a case's name ("stream/triad/float32"), or a part of one or a pattern with *
	// (as Filter.Case) that matches exactly one case recorded.
	Case string
	// Device keeps the results of devices of this ID or whose name holds it
	// (case-insensitively), as Filter.Device; empty: every device.
	Device string
	// Variant keeps the results of this variant (the one that ran: "portable",
	// "cuda-shfl", "cuBLAS"); empty: every variant.
	Variant string
	// Size keeps the results of this size; 0: every size.
	Size int
	// Dims keeps the results of this shape asked for (bench.Result.Dims, "4096x1024x512");
	// empty: every shape and size.
	Dims string
	// Samples asks for every timing of each point (Point.Samples), read with the point
	// itself (they are kept in one value with their result). Without it History reads each
	// point's summary only (median, min, max, runs).
	Samples bool
}

// Point is one result of a series: a case on a device in one run.
type Point struct {
	Run    RunID
	Date   time.Time // the start of the run, UTC
	Commit string
	Host   string
	// Device is the device, with the fingerprint that decides what the point may be
	// compared with. A split or collective has no device of its own: its ID lists the
	// group's devices, joined by commas.
	Device  Device
	Case    string
	Variant string
	Size    int
	// Dims is the shape the case was asked for where its size does not give it
	// (bench.Result.Dims); a series is a device's variant at one size and Dims.
	Dims   string
	Median time.Duration
	Min    time.Duration
	Max    time.Duration
	Runs   int
	// Samples are every timing of the result, in the order taken, where Series.Samples
	// asks for them (none in reports from before samples were kept).
	Samples []time.Duration
	// Failed says why the result has no valid time ("error: ...", "skipped: ...",
	// "invalid: ...", "mismatch"); empty for a verified, validly timed result.
	Failed string
}

// History returns the results of a case across runs, oldest first (by the run's start,
// then its ID; the devices of one run in their order). A case that matches no case
// recorded is an error wrapping ErrNotFound; a pattern that matches several, one wrapping
// engine.ErrInvalidArg that lists them.
func (s *Store) History(ctx context.Context, q Series) ([]Point, error) {
	name, err := s.oneCase(ctx, q.Case)
	if err != nil {
		return nil, err
	}
	where := []string{"r.case_name = ?", "r.kind <> '" + kindVendor + "'"}
	args := []any{name}
	if q.Device != "" {
		where = append(where, `(d.device_id = ? OR LOWER(d.name) LIKE ? ESCAPE '\' OR r.group_devices LIKE ? ESCAPE '\')`)
		args = append(args, q.Device, like(q.Device), like(q.Device))
	}
	if q.Variant != "" {
		where = append(where, "r.variant = ?")
		args = append(args, q.Variant)
	}
	if q.Size != 0 {
		where = append(where, "r.size = ?")
		args = append(args, q.Size)
	}
	if q.Dims != "" {
		where = append(where, "r.dims = ?")
		args = append(args, q.Dims)
	}
	// The samples, where asked for, come with their result's row: one value per point
	// (samples.go), read in the same pass. Why a point failed (Point.Failed) is put
	// together by the database, one column (NULL for most points) where five were read.
	samples := ", NULL"
	if q.Samples {
		samples = ", r.samples"
	}
	rows, err := s.db.QueryContext(ctx, s.d.q(`SELECT ru.id, ru.started_ns, ru.vcs_commit, ru.host,
	COALESCE(d.device_id, r.group_devices), COALESCE(d.name, ''), COALESCE(d.backend, ''), COALESCE(d.fingerprint, ''),
	r.variant, r.size, r.dims, r.median_ns, r.min_ns, r.max_ns, r.runs,
	CASE WHEN r.error <> '' THEN 'error: ' || r.error WHEN r.skipped <> '' THEN 'skipped: ' || r.skipped
	WHEN r.mismatch <> 0 THEN 'mismatch: the result differed from the reference' WHEN r.invalid <> '' THEN 'invalid: ' || r.invalid
	WHEN r.verified = 0 THEN 'not verified' END`+samples+`
	FROM results r JOIN runs ru ON ru.id = r.run_id LEFT JOIN devices d ON d.id = r.device_ref
	WHERE `+strings.Join(where, " AND ")+`
	ORDER BY ru.started_ns, ru.id, r.position`), args...)
	if err != nil {
		return nil, s.fail("reading a case's history", err)
	}
	defer rows.Close()
	var out []Point
	// The samples of the points share large arrays (a point's is capped at its own
	// length), a few allocations where a slice per point would make thousands.
	var arena []time.Duration
	for rows.Next() {
		var p Point
		var started, median, minNS, maxNS int64
		var failed sql.NullString
		var blob sql.RawBytes // decoded before the next row
		if err := rows.Scan(&p.Run, &started, &p.Commit, &p.Host, &p.Device.ID, &p.Device.Name, &p.Device.Backend,
			&p.Device.Fingerprint, &p.Variant, &p.Size, &p.Dims, &median, &minNS, &maxNS, &p.Runs, &failed, &blob); err != nil {
			return nil, s.fail("reading a case's history", err)
		}
		p.Case, p.Date, p.Failed = name, fromNanos(started), failed.String
		p.Median, p.Min, p.Max = time.Duration(median), time.Duration(minNS), time.Duration(maxNS)
		if len(blob) > 0 {
			if n := sampleCount(blob); cap(arena)-len(arena) < n {
				arena = make([]time.Duration, 0, max(n, 1<<14))
			}
			start := len(arena)
			if arena, err = appendSamples(arena, blob); err != nil {
				return nil, fmt.Errorf("store: %s: run %d: the samples of %s: %w: %w", s.path, p.Run, name, err, ErrDamaged)
			}
			p.Samples = arena[start:len(arena):len(arena)]
		}
		if len(out) == cap(out) { // doubling: a long history is copied about once
			out = append(make([]Point, 0, max(64, 2*cap(out))), out...)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("reading a case's history", err)
	}
	return out, nil
}

// oneCase returns the case recorded that c names: itself where a case has that name,
// else the one case its pattern matches.
func (s *Store) oneCase(ctx context.Context, c string) (string, error) {
	if strings.TrimSpace(c) == "" {
		return "", fmt.Errorf("store: no case given for a history: %w", engine.ErrInvalidArg)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, s.d.q("SELECT COUNT(*) FROM (SELECT 1 FROM results WHERE case_name = ? LIMIT 1) x"), c).Scan(&n); err != nil {
		return "", s.fail("looking up a case", err)
	}
	if n > 0 {
		return c, nil
	}
	cases, err := s.Cases(ctx, c)
	if err != nil {
		return "", err
	}
	switch len(cases) {
	case 0:
		return "", fmt.Errorf("store: %s: no case %q recorded: %w", s.path, c, ErrNotFound)
	case 1:
		return cases[0], nil
	}
	shown := cases
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(cases)-10))
	}
	return "", fmt.Errorf("store: %q matches %d cases: %s; name one: %w", c, len(cases), strings.Join(shown, ", "), engine.ErrInvalidArg)
}
