package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/prism-compute/prism/engine"
)

// DefaultMaxReportBytes is the largest report a ReportReader reads unless told otherwise:
// 256 MiB, a hundred times a report of the whole suite at ten sizes on eight devices.
const DefaultMaxReportBytes int64 = 256 << 20

// MaxReportDevices is the most devices a report may hold (merged reports together): the
// tables put them side by side, one column group each.
const MaxReportDevices = 1024

// ErrTooLarge is wrapped by the error for a report larger than a ReportReader's limit.
var ErrTooLarge = errors.New("report too large")

// ReportReader reads saved reports (WriteJSON's output), never more than MaxBytes of one,
// and checks them before any renderer sees them: the input must be one JSON object with
// "schema" (1 to SchemaVersion) or, for reports from before schema 1, "devices"; it must
// hold at least one device and at most MaxReportDevices. null, {}, an array, a newer or
// unknown schema, and trailing data are errors naming what is wrong. A result that claims
// to be verified and timed with a device time of zero or less is marked invalid
// (Result.Invalid).
type ReportReader struct {
	// MaxBytes is the largest input read, in bytes; 0 means DefaultMaxReportBytes. A larger
	// one is an error wrapping ErrTooLarge, returned once MaxBytes have been read (at once
	// for a regular file); input that is not JSON fails at its first byte.
	MaxBytes int64
}

func (rr ReportReader) limit() int64 {
	if rr.MaxBytes <= 0 {
		return DefaultMaxReportBytes
	}
	return rr.MaxBytes
}

// ReadReport reads a report with the default ReportReader.
func ReadReport(rd io.Reader) (*Report, error) { return ReportReader{}.Read(rd) }

// ReadReportFile reads a report file with the default ReportReader.
func ReadReportFile(path string) (*Report, error) { return ReportReader{}.ReadFile(path) }

// ReadReportFiles reads and merges report files with the default ReportReader.
func ReadReportFiles(paths ...string) (*Report, error) { return ReportReader{}.ReadFiles(paths...) }

// tooLarge returns the error for an input above limit bytes.
func tooLarge(limit int64) error {
	return fmt.Errorf("bench: the report is larger than %s, the most read: %w", FormatBytes(limit), ErrTooLarge)
}

// Read decodes a report written by WriteJSON. Reports from before schema 1 (no "schema"
// field: one size for the run, copy_gbs beside each device, n and fraction_of_copy in each
// result) are converted; a newer schema is an error.
func (rr ReportReader) Read(rd io.Reader) (*Report, error) {
	limit := rr.limit()
	lr := &limitedReader{r: rd, left: limit}
	dec := json.NewDecoder(lr)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		switch {
		case lr.over:
			return nil, tooLarge(limit)
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("bench: not a report: the input is empty")
		}
		return nil, fmt.Errorf("bench: not a report: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if lr.over {
			return nil, tooLarge(limit)
		}
		return nil, fmt.Errorf("bench: not a report: data follows the JSON object")
	}
	return decodeReport(raw)
}

// decodeReport checks and decodes one JSON value.
func decodeReport(raw []byte) (*Report, error) {
	if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("bench: not a report: the JSON is %s, not an object", jsonKind(raw))
	}
	// One pass: the schema and the devices land in fields of their own, which tell a
	// missing or null field from a present one, before they are moved into the Report.
	var doc struct {
		Report
		Schema  *int            `json:"schema"`
		Devices *[]DeviceReport `json:"devices"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("bench: not a report: %w", err)
	}
	switch {
	case doc.Schema == nil && doc.Devices == nil:
		return nil, fmt.Errorf(`bench: not a report: neither "schema" nor "devices" (prism bench --json writes both)`)
	case doc.Schema != nil && *doc.Schema > SchemaVersion:
		return nil, fmt.Errorf("bench: report schema %d is newer than this prism's (%d)", *doc.Schema, SchemaVersion)
	case doc.Schema != nil && *doc.Schema < 1:
		return nil, fmt.Errorf("bench: report schema %d is not one of prism's (1 to %d)", *doc.Schema, SchemaVersion)
	case doc.Devices == nil:
		return nil, fmt.Errorf(`bench: not a report: no "devices"`)
	}
	r := doc.Report
	r.Devices = *doc.Devices
	if doc.Schema != nil {
		r.Schema = *doc.Schema
	}
	if doc.Schema == nil {
		if err := r.convertLegacy(raw); err != nil {
			return nil, err
		}
		r.Schema = SchemaVersion // converted: written again, it is a report of this schema
	}
	switch n := len(r.Devices); {
	case n == 0:
		return nil, fmt.Errorf("bench: the report has no devices")
	case n > MaxReportDevices:
		return nil, fmt.Errorf("bench: the report has %d devices, more than %d", n, MaxReportDevices)
	}
	for i := range r.Devices {
		for j := range r.Devices[i].Results {
			r.Devices[i].Results[j].markTimes()
		}
	}
	return &r, nil
}

// convertLegacy fills the fields of a report from before schema 1 from raw, its JSON.
func (r *Report) convertLegacy(raw []byte) error {
	var old struct {
		Count   int `json:"count"`
		Devices []struct {
			CopyGBs float64 `json:"copy_gbs"`
			CopyHow string  `json:"copy_how"`
			Results []struct {
				N        int     `json:"n"`
				Fraction float64 `json:"fraction_of_copy"`
			} `json:"results"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(raw, &old); err != nil {
		return fmt.Errorf("bench: not a report: %w", err)
	}
	if len(old.Devices) != len(r.Devices) {
		return fmt.Errorf("bench: not a report: no devices")
	}
	r.Config.Count = old.Count
	for i, od := range old.Devices {
		d := &r.Devices[i]
		d.Ceilings.CopyGBs, d.Ceilings.CopyHow = od.CopyGBs, od.CopyHow
		for j, or := range od.Results {
			if j >= len(d.Results) {
				break
			}
			res := &d.Results[j]
			res.Size, res.Fraction, res.Bound = or.N, or.Fraction, BoundMemory
			if parts := strings.Split(res.Case, "/"); len(parts) == 3 {
				res.Family, res.Type = parts[0], parts[2]
			}
		}
	}
	return nil
}

// jsonKind names the kind of a JSON value by its first byte.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// ReadFile reads a report from a JSON file; errors name the file. A regular file larger
// than the limit is refused before it is read.
func (rr ReportReader) ReadFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > rr.limit() {
		return nil, fmt.Errorf("%s: %w", path, tooLarge(rr.limit()))
	}
	r, err := rr.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// ReadFiles reads one or more saved reports and merges them into the first: the devices
// of the later ones are appended after its own (more than MaxReportDevices in all is an
// error wrapping engine.ErrInvalidArg). It puts a vendor.py report ("vendor:cuda:0")
// beside the run it is a baseline for. Reports of several hosts (one per node of a
// cluster, each with its cuda:0) are told apart by qualifying every device ID with its
// report's host ("node1/cuda:0", "vendor:node1/cuda:0") when IDs repeat across hosts; a
// device ID seen twice on one host is an error wrapping engine.ErrInvalidArg.
func (rr ReportReader) ReadFiles(paths ...string) (*Report, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("bench: no report to read: %w", engine.ErrInvalidArg)
	}
	reps := make([]*Report, len(paths))
	type seenAt struct{ path, host string }
	seen := map[string]seenAt{}
	qualify := false
	n := 0
	for i, p := range paths {
		r, err := rr.ReadFile(p)
		if err != nil {
			return nil, err
		}
		reps[i] = r
		n += len(r.Devices)
		for _, d := range r.Devices {
			if prev, ok := seen[d.Device.ID]; ok {
				if prev.host == r.Host {
					return nil, fmt.Errorf("bench: device %q is in both %s and %s: %w", termSafe(d.Device.ID), prev.path, p, engine.ErrInvalidArg)
				}
				qualify = true
			}
			seen[d.Device.ID] = seenAt{p, r.Host}
		}
	}
	if n > MaxReportDevices {
		return nil, fmt.Errorf("bench: the reports hold %d devices, more than %d: %w", n, MaxReportDevices, engine.ErrInvalidArg)
	}
	out := reps[0]
	for i, r := range reps {
		if qualify {
			for j := range r.Devices {
				d := &r.Devices[j].Device
				if id, ok := strings.CutPrefix(d.ID, VendorPrefix); ok {
					d.ID = VendorPrefix + r.Host + "/" + id
				} else {
					d.ID = r.Host + "/" + d.ID
				}
			}
		}
		if i > 0 {
			out.Devices = append(out.Devices, r.Devices...)
		}
	}
	return out, nil
}

// limitedReader reads at most left bytes of r; reading beyond sets over and fails.
type limitedReader struct {
	r    io.Reader
	left int64
	over bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.over {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if l.left -= int64(n); l.left < 0 {
		l.over = true
		return 0, ErrTooLarge
	}
	return n, err
}
