package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// The kinds of rows in results.
const (
	kindCase       = "case"       // a case of a device
	kindVendor     = "vendor"     // the vendor library's run of the case in baseline_of (Result.Vendor)
	kindSplit      = "split"      // an op split across devices (Report.Splits)
	kindCollective = "collective" // a collective across devices (Report.Collectives)
)

// Record stores the report as one run, in one transaction: all of it or, on any error,
// nothing. An interrupted run (Report.Interrupted) is kept and marked. The report itself
// is kept too, so that Export gives it back as it was.
func (s *Store) Record(ctx context.Context, r *bench.Report) (RunID, error) {
	if r == nil {
		return 0, fmt.Errorf("store: no report to record: %w", engine.ErrInvalidArg)
	}
	blob, err := compress(r)
	if err != nil {
		return 0, fmt.Errorf("store: encoding the report: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.fail("starting to record a run", err)
	}
	defer tx.Rollback()
	w := &writer{s: s, tx: tx, ctx: ctx}
	id, err := w.run(r, blob)
	if err != nil {
		return 0, s.fail("recording a run", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, s.fail("committing a run", err)
	}
	return id, nil
}

// compress returns the report's JSON (WriteJSON's), gzip-compressed.
func compress(r *bench.Report) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err := r.WriteJSON(zw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Export returns the run's report as it was recorded: the same report that Record was
// given, read as bench.ReadReport reads a report file. A run the store does not hold is an
// error wrapping ErrNotFound.
func (s *Store) Export(ctx context.Context, id RunID) (*bench.Report, error) {
	var blob []byte
	err := s.db.QueryRowContext(ctx, s.d.q("SELECT report FROM runs WHERE id = ?"), int64(id)).Scan(&blob)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: %s: no run %d: %w", s.path, id, ErrNotFound)
	}
	if err != nil {
		return nil, s.fail(fmt.Sprintf("reading run %d", id), err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return nil, fmt.Errorf("store: %s: run %d: the stored report is damaged: %w", s.path, id, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("store: %s: run %d: the stored report is damaged: %w", s.path, id, err)
	}
	rep, err := bench.ReadReport(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("store: %s: run %d: %w", s.path, id, err)
	}
	return rep, nil
}

// Fingerprint returns what decides whether two devices' results may be compared, as a
// short hash: the device (name, vendor, platform, PCI bus ID, backend), its driver and
// runtime versions, its clock and compute units, the host's CPU, the environment that
// changes results (bench.ResultEnv), and whether its queue was held while each run was
// enqueued (bench.TimingHeld: the CUDA backend since the hold, whose times of a few
// microseconds no longer count the host's enqueueing). Two results of equal fingerprints
// ran on like hardware and software and were timed alike; the host's name is not part of
// it, so that identical machines compare. A device timed without a hold has the
// fingerprint it had before holds existed.
func Fingerprint(r *bench.Report, d *bench.DeviceReport) string {
	in := d.Device
	var b strings.Builder
	for _, kv := range [][2]string{
		{"name", in.Name}, {"vendor", in.Vendor}, {"platform", in.Platform}, {"pci", in.PCIBusID},
		{"backend", d.Backend}, {"driver", in.DriverVersion}, {"api", in.APIVersion},
		{"language", in.LanguageVersion}, {"clock_mhz", strconv.Itoa(in.ClockMHz)},
		{"compute_units", strconv.Itoa(in.ComputeUnits)}, {"host_cpu", r.HostCPU},
		{"goos", r.GOOS}, {"goarch", r.GOARCH},
	} {
		fmt.Fprintf(&b, "%s=%q\n", kv[0], kv[1])
	}
	keys := make([]string, 0, len(r.Env))
	for k := range r.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "env %s=%q\n", k, r.Env[k])
	}
	if Held(d) {
		b.WriteString("timing=held\n")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}

// Held reports whether d's runs were timed with the queue held (bench.TimingHeld), a fact
// of its Fingerprint.
func Held(d *bench.DeviceReport) bool { return d.Timing == bench.TimingHeld }

// writer records one run in a transaction.
type writer struct {
	s      *Store
	tx     *sql.Tx
	ctx    context.Context
	result *sql.Stmt
}

// run inserts the run, its devices and its results.
func (w *writer) run(r *bench.Report, blob []byte) (RunID, error) {
	d := w.s.d
	var started int64
	if !r.Date.IsZero() {
		started = r.Date.UnixNano()
	}
	command, _ := json.Marshal(r.Command)
	config, _ := json.Marshal(r.Config)
	env, _ := json.Marshal(r.Env)
	var id int64
	err := w.tx.QueryRowContext(w.ctx, d.q(`INSERT INTO runs (started_ns, recorded_ns, host, host_cpu, prism_version, vcs_commit,
	command, config, env, interrupted, interrupted_at, report_schema, report)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		started, time.Now().UnixNano(), r.Host, r.HostCPU, r.Prism, r.Commit, string(command), string(config), string(env),
		boolInt(r.Interrupted), r.InterruptedAt, r.Schema, blob).Scan(&id)
	if err != nil {
		return 0, err
	}
	if w.result, err = w.tx.PrepareContext(w.ctx, d.q(`INSERT INTO results (run_id, device_ref, position, kind, baseline_of,
	case_name, family, type, variant, requested, vendor_library, size, shape, group_devices,
	median_ns, min_ns, max_ns, runs, sample_count, gbs, gflops, fraction, bound, verified, mismatch, error, skipped, invalid, samples, dims)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)); err != nil {
		return 0, err
	}
	defer w.result.Close()
	pos := 0
	for i := range r.Devices {
		dr := &r.Devices[i]
		in := dr.Device
		var dev int64
		err := w.tx.QueryRowContext(w.ctx, d.q(`INSERT INTO devices (run_id, position, device_id, name, vendor, kind, backend, platform,
	pci_bus_id, driver_version, api_version, clock_mhz, compute_units, global_mem_bytes, error, fingerprint)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			id, i, in.ID, in.Name, in.Vendor, in.Kind.String(), dr.Backend, in.Platform, in.PCIBusID, in.DriverVersion,
			in.APIVersion, in.ClockMHz, in.ComputeUnits, in.GlobalMemBytes, dr.Err, Fingerprint(r, dr)).Scan(&dev)
		if err != nil {
			return 0, err
		}
		for j := range dr.Results {
			res := &dr.Results[j]
			rid, err := w.caseRow(id, dev, pos, kindCase, nil, res)
			if err != nil {
				return 0, err
			}
			pos++
			if res.Vendor != nil {
				if _, err := w.caseRow(id, dev, pos, kindVendor, rid, res.Vendor); err != nil {
					return 0, err
				}
				pos++
			}
		}
	}
	for i := range r.Splits {
		sp := &r.Splits[i]
		row := groupRow{kind: kindSplit, name: sp.Case, size: int64(sp.Size), shape: sp.Shape, devices: sp.Devices,
			stats: sp.Stats, gbs: sp.GBs, gflops: sp.GFLOPs, verified: sp.Verified, err: sp.Err}
		if err := w.groupRow(id, pos, row); err != nil {
			return 0, err
		}
		pos++
	}
	for i := range r.Collectives {
		c := &r.Collectives[i]
		row := groupRow{kind: kindCollective, name: c.Case, size: int64(c.Count), shape: fmt.Sprintf("ranks=%d bytes=%d", c.Ranks, c.Bytes),
			variant: c.Library, devices: c.Devices, stats: c.Stats, gbs: c.BusBW, verified: c.Verified, err: c.Err}
		if err := w.groupRow(id, pos, row); err != nil {
			return 0, err
		}
		pos++
	}
	return RunID(id), nil
}

// caseRow inserts one result of a device, with its samples.
func (w *writer) caseRow(run, dev int64, pos int, kind string, baselineOf any, res *bench.Result) (int64, error) {
	family, typ := res.Family, res.Type
	var id int64
	err := w.result.QueryRowContext(w.ctx, run, dev, pos, kind, baselineOf,
		res.Case, family, typ, res.Variant, res.Requested, boolInt(res.VendorLibrary), res.Size, res.Shape, "",
		int64(res.Stats.Median), int64(res.Stats.Min), int64(res.Stats.Max), res.Stats.Runs, len(res.Stats.Samples),
		finite(res.GBs), finite(res.GFLOPs), finite(res.Fraction), res.Bound, boolInt(res.Verified), boolInt(res.Mismatch),
		res.Err, res.Skipped, res.Invalid, encodeSamples(res.Stats.Samples), res.Dims).Scan(&id)
	return id, err
}

// groupRow is a split or a collective, as a row of results.
type groupRow struct {
	kind, name, shape, variant string
	size                       int64
	devices                    []string
	stats                      bench.Stats
	gbs, gflops                float64
	verified                   bool
	err                        string
}

// groupRow inserts a split or collective, with its samples.
func (w *writer) groupRow(run int64, pos int, g groupRow) error {
	family, typ := "", ""
	if parts := strings.Split(g.name, "/"); len(parts) == 3 {
		family, typ = parts[0], parts[2]
	}
	var id int64
	err := w.result.QueryRowContext(w.ctx, run, nil, pos, g.kind, nil,
		g.name, family, typ, g.variant, "", 0, g.size, g.shape, strings.Join(g.devices, ","),
		int64(g.stats.Median), int64(g.stats.Min), int64(g.stats.Max), g.stats.Runs, len(g.stats.Samples),
		finite(g.gbs), finite(g.gflops), 0.0, "", boolInt(g.verified), 0, g.err, "", "", encodeSamples(g.stats.Samples), "").Scan(&id)
	return err
}

// boolInt is a boolean as the store keeps it: 1 or 0 (an INTEGER in every dialect).
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// finite returns x, or 0 for an infinity or NaN, which the report itself writes as 0.
func finite(x float64) float64 {
	if x != x || x > 1.7976931348623157e308 || x < -1.7976931348623157e308 {
		return 0
	}
	return x
}
