package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/prism-compute/prism/bench/internal/term"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/internal/boundedio"
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
// unknown schema, and trailing data are errors naming what is wrong. A UTF-8 byte order
// mark at the start is skipped. A case, split or collective whose summary (runs,
// median_ns, min_ns, max_ns) contradicts its samples or itself, or with a negative rate,
// is an error wrapping ErrInconsistent that names it and the fields; a summary that is
// absent beside samples is computed from them. A result that claims to be verified and
// timed with a device time of zero or less is marked invalid (Result.Invalid); a valid
// result without a verdict (a report from before verdicts) gets one from the ceilings and
// overheads its device recorded.
type ReportReader struct {
	// MaxBytes is the largest input read, in bytes; 0 means DefaultMaxReportBytes. A larger
	// one is an error wrapping ErrTooLarge, returned once MaxBytes have been read (at once
	// for a regular file); input that does not start as JSON fails at its first byte.
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
//
// An input that starts as a JSON object is read whole (up to the limit) and decoded in
// one pass over each part: its time is linear in its size (200,000 results in about 3 s
// of CPU on the 2-core development machine). Anything else is decoded as a stream, so that
// input that is not JSON at all fails at its first byte.
func (rr ReportReader) Read(rd io.Reader) (*Report, error) { return rr.read(rd, 0) }

// read is Read, told the input's size where it is known (a regular file's; 0 otherwise),
// so that the input read whole is read into one buffer of that size.
func (rr ReportReader) read(rd io.Reader, size int64) (*Report, error) {
	limit := rr.limit()
	lr := &limitedReader{r: rd, left: limit}
	br := bufio.NewReaderSize(lr, recordChunk)
	var base int64 // the bytes before the JSON: a byte order mark, white space
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM)) // a byte order mark, as some editors on Windows write
		base = int64(len(utf8BOM))
	}
	for {
		c, err := br.ReadByte()
		if err != nil {
			break
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			br.UnreadByte()
			if c == '{' {
				var buf bytes.Buffer
				if size > 0 && size <= limit {
					buf.Grow(int(size-base) + bytes.MinRead)
				}
				_, err := buf.ReadFrom(br)
				data := buf.Bytes()
				switch {
				case lr.over:
					return nil, tooLarge(limit)
				case err != nil:
					return nil, fmt.Errorf("bench: reading the report: %w", err)
				}
				return decodeReport(data, base)
			}
			break
		}
		base++
	}
	rec := &recorder{r: br, base: base, off: base}
	dec := json.NewDecoder(rec)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		switch {
		case lr.over:
			return nil, tooLarge(limit)
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("bench: not a report: the input is empty")
		}
		return nil, fmt.Errorf("bench: not a report: %w", rec.syntaxError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if lr.over {
			return nil, tooLarge(limit)
		}
		return nil, fmt.Errorf("bench: not a report: data follows the JSON object")
	}
	return decodeReport(raw, base)
}

// decodeReport checks and decodes one JSON value, raw, which starts at offset base of the
// input (for the offsets of syntax errors).
func decodeReport(raw []byte, base int64) (*Report, error) {
	if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("bench: not a report: the JSON is %s, not an object", jsonKind(raw))
	}
	// One pass: the schema and the devices land in fields of their own, which tell a
	// missing or null field from a present one, before they are moved into the Report.
	var doc struct {
		Report
		Schema  *int               `json:"schema"`
		Devices *[]json.RawMessage `json:"devices"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.HasSuffix(se.Error(), "after top-level value") {
			return nil, fmt.Errorf("bench: not a report: data follows the JSON object")
		}
		return nil, fmt.Errorf("bench: not a report: %w", syntaxError(err, raw, base))
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
	if len(*doc.Devices) > MaxReportDevices {
		return nil, fmt.Errorf("bench: the report has %d devices, more than %d", len(*doc.Devices), MaxReportDevices)
	}
	if doc.Schema != nil {
		raw = nil // only a report from before schema 1 is read again; the rest may go
	}
	r.Devices = make([]DeviceReport, len(*doc.Devices))
	for i, d := range *doc.Devices {
		if err := decodeDevice(d, &r.Devices[i]); err != nil {
			return nil, fmt.Errorf("bench: not a report: device %d: %w", i+1, err)
		}
		(*doc.Devices)[i] = nil // decoded: its JSON may go
	}
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
	r.fillGroupDevices()
	if err := r.reconcile(); err != nil {
		return nil, err
	}
	for i := range r.Devices {
		for j := range r.Devices[i].Results {
			r.Devices[i].Results[j].markTimes()
		}
		r.Devices[i].judgeResults() // reports from before verdicts
	}
	return &r, nil
}

// deviceEntry is one entry of "devices" as decodeDevice reads it, in one pass: a device
// report, or, in split and collective reports from before they were Reports, the device
// itself ({"id": ..., "name": ...}), whose fields land in the embedded DeviceInfo (the
// two share no field name).
type deviceEntry struct {
	DeviceReport
	engine.DeviceInfo
}

// decodeDevice decodes one entry of "devices": a device report, or the device itself as
// the split and collective reports wrote it before they were Reports ({"id": ...,
// "name": ...}), which becomes a device report without results.
func decodeDevice(raw []byte, d *DeviceReport) error {
	var e deviceEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return err
	}
	if reflect.ValueOf(e.DeviceReport.Device).IsZero() && !reflect.ValueOf(e.DeviceInfo).IsZero() {
		*d = DeviceReport{Device: e.DeviceInfo}
		d.Backend, _, _ = strings.Cut(d.Device.ID, ":")
		return nil
	}
	*d = e.DeviceReport
	return nil
}

// fillGroupDevices names the devices of the splits and collectives that do not name
// their own (reports from before they did): a split's devices alone, else the report's.
func (r *Report) fillGroupDevices() {
	all := make([]string, len(r.Devices))
	for i, d := range r.Devices {
		all[i] = d.Device.ID
	}
	for i := range r.Splits {
		s := &r.Splits[i]
		if len(s.Devices) > 0 {
			continue
		}
		for _, sd := range s.Single {
			s.Devices = append(s.Devices, sd.Device)
		}
		if len(s.Devices) == 0 {
			s.Devices = slices.Clone(all)
		}
	}
	for i := range r.Collectives {
		if c := &r.Collectives[i]; len(c.Devices) == 0 {
			c.Devices = slices.Clone(all)
		}
	}
}

// groupOnly reports whether d, a device of r, is only listed for r's splits or
// collectives: r has some, and d has no results, no error and no measured ceiling, so that
// a report of the same device's own cases may take its place when reports are merged.
func (r *Report) groupOnly(d *DeviceReport) bool {
	return (len(r.Splits) > 0 || len(r.Collectives) > 0) && len(d.Results) == 0 && d.Err == "" && d.Ceilings.CopyGBs == 0 && d.Ceilings.FP32GFLOPs == 0
}

// renameDevices applies rename to every device ID of the report: its devices, and those
// its splits and collectives name.
func (r *Report) renameDevices(rename func(string) string) {
	for i := range r.Devices {
		r.Devices[i].Device.ID = rename(r.Devices[i].Device.ID)
	}
	for i := range r.Splits {
		s := &r.Splits[i]
		for j := range s.Devices {
			s.Devices[j] = rename(s.Devices[j])
		}
		for j := range s.Shares {
			s.Shares[j].Device = rename(s.Shares[j].Device)
		}
		for j := range s.Single {
			s.Single[j].Device = rename(s.Single[j].Device)
		}
		if s.Fastest != "" {
			s.Fastest = rename(s.Fastest)
		}
	}
	for i := range r.Collectives {
		c := &r.Collectives[i]
		for j := range c.Devices {
			c.Devices[j] = rename(c.Devices[j])
		}
	}
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
//
// Only a regular file is read: a named pipe, a device (/dev/zero, or a link to it) or a
// directory is refused at once, naming what it is, so that a report never waits on a
// writer that may not come or reads without end (boundedio.Open).
func (rr ReportReader) ReadFile(path string) (*Report, error) {
	f, size, err := boundedio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > rr.limit() {
		return nil, fmt.Errorf("%s: %w", path, tooLarge(rr.limit()))
	}
	r, err := rr.read(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// ReadFiles reads one or more saved reports of any kind and merges them into the first:
// the devices of the later ones are appended after its own (more than MaxReportDevices in
// all is an error wrapping engine.ErrInvalidArg), and so are their splits and
// collectives. It puts a vendor.py report ("vendor:cuda:0") beside the run it is a
// baseline for. Reports of several hosts (one per node of a cluster, each with its cuda:0)
// are told apart by qualifying every device ID with its report's host ("node1/cuda:0",
// "vendor:node1/cuda:0") when IDs repeat across hosts. A device of a split or collective
// report (no results of its own) and the same device's cases from another report of its
// host become one device. Errors wrap engine.ErrInvalidArg: a device with results in two
// reports of one host, and a split or collective of the same case, size and devices in
// two reports (two runs of one thing are compared, not merged).
func (rr ReportReader) ReadFiles(paths ...string) (*Report, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("bench: no report to read: %w", engine.ErrInvalidArg)
	}
	reps := make([]*Report, len(paths))
	for i, p := range paths {
		r, err := rr.ReadFile(p)
		if err != nil {
			return nil, err
		}
		reps[i] = r
	}
	return Merge(paths, reps...)
}

// Merge merges reports read by other means (a results store) as ReadFiles merges files:
// into the first, with the same rules and errors. names[i] names reps[i] in the errors
// (a file, "run 42"). The reports are changed where device IDs are qualified by host.
func Merge(names []string, reps ...*Report) (*Report, error) {
	if len(reps) == 0 || len(names) != len(reps) {
		return nil, fmt.Errorf("bench: %d reports and %d names to merge: %w", len(reps), len(names), engine.ErrInvalidArg)
	}
	paths := names
	hostOf := map[string]string{}
	qualify := false
	for _, r := range reps {
		for _, d := range r.Devices {
			if h, ok := hostOf[d.Device.ID]; ok && h != r.Host {
				qualify = true
			}
			hostOf[d.Device.ID] = r.Host
		}
	}
	if qualify {
		for _, r := range reps {
			host := r.Host
			r.renameDevices(func(id string) string {
				if rest, ok := strings.CutPrefix(id, VendorPrefix); ok {
					return VendorPrefix + host + "/" + rest
				}
				return host + "/" + id
			})
		}
	}
	out := &Report{}
	*out = *reps[0]
	out.Devices, out.Splits, out.Collectives = nil, nil, nil
	where := map[string]int{}   // device ID -> index in out.Devices
	from := map[string]int{}    // device ID -> the index of the report it came from
	listed := map[string]bool{} // device ID -> only listed for splits or collectives
	groups := map[string]int{}  // split or collective -> the index of the report it came from
	twice := func(k string, i int) error {
		if prev := groups[k]; prev == i {
			return fmt.Errorf("bench: %s is repeated within %s: compare two runs with prism compare: %w", term.Safe(k), paths[i], engine.ErrInvalidArg)
		}
		prev := paths[groups[k]]
		if prev == paths[i] {
			prev += " (given twice)"
		}
		return fmt.Errorf("bench: %s is in both %s and %s: compare two runs with prism compare: %w", term.Safe(k), prev, paths[i], engine.ErrInvalidArg)
	}
	for i, r := range reps {
		p := paths[i]
		for k := range r.Devices {
			d := &r.Devices[k]
			id := d.Device.ID
			j, ok := where[id]
			switch {
			case !ok:
				where[id], from[id], listed[id] = len(out.Devices), i, r.groupOnly(d)
				out.Devices = append(out.Devices, *d)
			case listed[id]:
				// the device's own cases take the place of its listing
				out.Devices[j], from[id], listed[id] = *d, i, r.groupOnly(d)
			case r.groupOnly(d):
			case from[id] == i:
				return nil, fmt.Errorf("bench: device %q is repeated within %s, each time with results of its own: a report lists each device once: %w",
					term.Safe(id), p, engine.ErrInvalidArg)
			default:
				prev := paths[from[id]]
				if prev == p {
					prev += " (given twice)"
				}
				return nil, fmt.Errorf("bench: device %q is in both %s and %s with results of its own: merge reports of different devices or hosts, and compare two runs of one device with prism compare: %w",
					term.Safe(id), prev, p, engine.ErrInvalidArg)
			}
		}
		if len(out.Devices) > MaxReportDevices {
			return nil, fmt.Errorf("bench: the reports hold more than %d devices: %w", MaxReportDevices, engine.ErrInvalidArg)
		}
		for _, s := range r.Splits {
			k := fmt.Sprintf("split %s %s across %s", s.Case, FormatSize(s.Size), s.devicesText())
			if _, ok := groups[k]; ok {
				return nil, twice(k, i)
			}
			groups[k] = i
			out.Splits = append(out.Splits, s)
		}
		for _, c := range r.Collectives {
			k := fmt.Sprintf("%s %s on %s", c.Case, FormatSize(c.Count), strings.Join(c.Devices, "+"))
			if _, ok := groups[k]; ok {
				return nil, twice(k, i)
			}
			groups[k] = i
			out.Collectives = append(out.Collectives, c)
		}
	}
	return out, nil
}

// utf8BOM is the UTF-8 encoding of U+FEFF, the byte order mark, which the reader skips at
// the start of a report.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// recordChunk is the most bytes a recorder passes on in one read.
const recordChunk = 4096

// recorder passes the reads of r on, at most recordChunk bytes at a time, and keeps the
// bytes of the last read and their offset in the stream. encoding/json's decoder scans
// each read as it arrives, so the byte a syntax error stops at is among them, and the
// error can quote the character the user wrote (é) rather than its first byte read as
// Latin-1 (Ã).
type recorder struct {
	r    io.Reader
	base int64 // the offset in the input of the stream's first byte (after a byte order mark)
	off  int64 // the offset in the input of last[0]
	last []byte
}

func (c *recorder) Read(p []byte) (int, error) {
	if len(p) > recordChunk {
		p = p[:recordChunk]
	}
	n, err := c.r.Read(p)
	c.off += int64(len(c.last))
	c.last = append(c.last[:0], p[:n]...)
	return n, err
}

// syntaxError returns err, a *json.SyntaxError about a character, with that character
// quoted whole (a character of several bytes, read to its end) or, where it is not UTF-8,
// named as a byte, and with its offset; other errors are returned as they are.
func (c *recorder) syntaxError(err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) || se.Offset < 1 {
		return err
	}
	i := c.base + se.Offset - 1 - c.off // the offending byte: Offset counts the stream's bytes up to it
	if i < 0 || i >= int64(len(c.last)) {
		return err
	}
	b := c.last[i:]
	if !utf8.FullRune(b) { // the character continues past the last read
		more := make([]byte, utf8.UTFMax)
		n, _ := io.ReadFull(c.r, more[:utf8.UTFMax-len(b)])
		b = append(slices.Clip(b), more[:n]...)
	}
	return quoteSyntax(se, b, c.base+se.Offset)
}

// syntaxError is recorder.syntaxError for a value held whole, data, which starts at offset
// base of the input.
func syntaxError(err error, data []byte, base int64) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) || se.Offset < 1 || se.Offset > int64(len(data)) {
		return err
	}
	return quoteSyntax(se, data[se.Offset-1:], base+se.Offset)
}

// quoteSyntax rewrites se, whose offending character starts b, at byte at (from 1) of the
// input: "invalid character 'é' ... at byte 15" where encoding/json says 'Ã'.
func quoteSyntax(se *json.SyntaxError, b []byte, at int64) error {
	rest, ok := strings.CutPrefix(se.Error(), "invalid character "+jsonQuoteChar(b[0]))
	if !ok {
		return se
	}
	r, size := utf8.DecodeRune(b)
	var what string
	switch {
	case r == utf8.RuneError && size <= 1:
		what = fmt.Sprintf("byte 0x%02x (not UTF-8)", b[0])
	case unicode.IsPrint(r):
		what = "character '" + string(r) + "'"
	default:
		what = "character " + strconv.QuoteRune(r)
	}
	return fmt.Errorf("invalid %s%s at byte %d", what, rest, at)
}

// jsonQuoteChar quotes the byte c as encoding/json's syntax errors do (its quoteChar),
// which reads a byte above 0x7f as the Latin-1 character of that code.
func jsonQuoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
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
