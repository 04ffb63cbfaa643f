package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"
)

// minimalReport is the smallest report the readers accept: schema 1, one device.
const minimalReport = `{"schema": 1, "devices": [{"device": {"id": "opencl:0:0"}, "results": []}]}`

// TestReadReportRejects feeds the reader what is not a report: each is an error that says
// what is wrong, never an empty report that renders as nothing.
func TestReadReportRejects(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "the input is empty"},
		{"white space", " \n\t", "the input is empty"},
		{"null", "null", "the JSON is null, not an object"},
		{"empty object", "{}", `neither "schema" nor "devices"`},
		{"array", "[]", "the JSON is an array"},
		{"string", `"report"`, "the JSON is a string"},
		{"number", "1", "the JSON is a number"},
		{"NUL bytes", "\x00\x00\x00", "invalid character"},
		{"schema 0", `{"schema": 0, "devices": []}`, "schema 0 is not one of prism's"},
		{"negative schema", `{"schema": -1, "devices": []}`, "schema -1 is not one of prism's"},
		{"newer schema", `{"schema": 99}`, "schema 99 is newer"},
		{"schema as a string", `{"schema": "1", "devices": []}`, "not a report"},
		{"no devices", `{"schema": 1}`, `no "devices"`},
		{"null devices", `{"schema": 1, "devices": null}`, `no "devices"`},
		{"zero devices", `{"schema": 1, "devices": []}`, "no devices"},
		{"legacy without devices", `{"count": 3, "devices": []}`, "no devices"},
		{"trailing data", minimalReport + `{}`, "data follows"},
		{"truncated", minimalReport[:30], "not a report"},
		{"results not a list", `{"schema": 1, "devices": [{"results": 3}]}`, "not a report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ReadReport(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadReport(%q) = %v, %v; want an error with %q", tc.in, r, err, tc.want)
			}
		})
	}
	if r, err := ReadReport(strings.NewReader(minimalReport + "\n\n")); err != nil || len(r.Devices) != 1 {
		t.Errorf("minimal report: %v", err)
	}
}

// TestReadReportBounded: an input above the limit is an error wrapping ErrTooLarge, from a
// stream as soon as the limit is passed and from a regular file before it is read; an
// endless stream of zeros fails at its first byte.
func TestReadReportBounded(t *testing.T) {
	big := minimalReport[:len(minimalReport)-1] + `, "host": "` + strings.Repeat("x", 4096) + `"}`
	rr := ReportReader{MaxBytes: 1024}
	if _, err := rr.Read(strings.NewReader(big)); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "larger than 1 KiB") {
		t.Errorf("stream above the limit: %v", err)
	}
	// White space past the object also counts.
	if _, err := rr.Read(strings.NewReader(minimalReport + strings.Repeat(" ", 2048))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("trailing white space above the limit: %v", err)
	}
	if _, err := (ReportReader{MaxBytes: 8192}).Read(strings.NewReader(big)); err != nil {
		t.Errorf("raised limit: %v", err)
	}
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := rr.ReadFile(path); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), path) {
		t.Errorf("file above the limit: %v", err)
	}
	// An endless reader: the limit, or the first byte that is not JSON, stops it.
	if _, err := rr.Read(endless{'x'}); err == nil {
		t.Error("endless x accepted")
	}
	if _, err := rr.Read(endless{' '}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("endless white space: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		start := time.Now()
		_, err := ReadReportFile("/dev/zero")
		if err == nil || !strings.Contains(err.Error(), "/dev/zero") {
			t.Errorf("/dev/zero: %v", err)
		}
		t.Logf("/dev/zero: %v after %v", err, time.Since(start))
	}
}

// endless is a reader of one byte forever.
type endless [1]byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e[0]
	}
	return len(p), nil
}

// TestReadReportFilesMerge: devices of several files side by side, an ID in two files
// refused with the files named, and the ID escaped in the message.
func TestReadReportFilesMerge(t *testing.T) {
	dir := t.TempDir()
	write := func(name, id string) string {
		p := filepath.Join(dir, name)
		doc := `{"schema": 1, "devices": [{"device": {"id": "` + id + `"}, "results": []}]}`
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c := write("a.json", "cuda:0"), write("b.json", "vendor:cuda:0"), write("c.json", `cuda:0`)
	r, err := ReadReportFiles(a, b)
	if err != nil || len(r.Devices) != 2 || r.Devices[1].Device.ID != "vendor:cuda:0" {
		t.Fatalf("merge: %v", err)
	}
	if _, err := ReadReportFiles(a, c); err == nil || !strings.Contains(err.Error(), "a.json") || !strings.Contains(err.Error(), "c.json") {
		t.Errorf("device twice: %v", err)
	}
	e, f := write("e.json", `x\u001b[2Jy`), write("f.json", `x\u001b[2Jy`)
	if _, err := ReadReportFiles(e, f); err == nil || strings.ContainsRune(err.Error(), 0x1b) {
		t.Errorf("device twice, with an escape sequence: %q", err)
	}
}

// TestReadReportFilesRepeatedDevice: a device listed twice within one file is said to be
// repeated within it, not to be "in both" that file and itself; one file given twice says
// so; two files keep the message naming both.
func TestReadReportFilesRepeatedDevice(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "twice.json")
	doc := `{"schema": 1, "devices": [{"device": {"id": "cuda:0"}, "results": []}, {"device": {"id": "cuda:0"}, "results": []}]}`
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadReportFiles(p)
	if err == nil || !strings.Contains(err.Error(), `device "cuda:0" is repeated within `+p) || strings.Contains(err.Error(), "in both") {
		t.Errorf("one file naming a device twice: %v", err)
	}
	one := filepath.Join(dir, "one.json")
	if err := os.WriteFile(one, []byte(minimalReport), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReportFiles(one, one); err == nil || !strings.Contains(err.Error(), "in both "+one+" (given twice) and "+one) {
		t.Errorf("one file given twice: %v", err)
	}
}

// TestReadReportBOMAndCharacters: a report that starts with a UTF-8 byte order mark is
// read; a syntax error quotes the character the user wrote whole (é, 😀), or names a byte
// that is not UTF-8, with its offset, never a byte read as Latin-1 (Ã, ï).
func TestReadReportBOMAndCharacters(t *testing.T) {
	r, err := ReadReport(strings.NewReader("\ufeff" + minimalReport))
	if err != nil || len(r.Devices) != 1 {
		t.Errorf("a report with a byte order mark: %v", err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"é first", "é", "invalid character 'é' looking for beginning of value at byte 1"},
		{"after a byte order mark", "\ufeffé", "invalid character 'é' looking for beginning of value at byte 4"},
		{"é in an object", `{"schema": 1, é}`, "invalid character 'é' looking for beginning of object key string at byte 15"},
		{"four bytes", `{"schema": 1, 😀}`, "invalid character '😀' looking for beginning of object key string at byte 15"},
		{"not UTF-8", "\xff{}", "invalid byte 0xff (not UTF-8) looking for beginning of value at byte 1"},
		{"a bidi control", "\u202e", `invalid character '\u202e' looking for beginning of value at byte 1`},
		{"ASCII", "x", "invalid character 'x' looking for beginning of value at byte 1"},
	} {
		_, err := ReadReport(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.ContainsAny(err.Error(), "Ãïâð") {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
		// a byte at a time: every character of several bytes is cut between reads
		_, err = ReadReport(iotest.OneByteReader(strings.NewReader(tc.in)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s, a byte a read: %v; want %q", tc.name, err, tc.want)
		}
	}
}

// TestReadMarksZeroTimesInvalid: a saved result that claims a verified time of zero (as
// Rusticl's profiling gave) is read as an invalid measurement, not as infinitely fast.
func TestReadMarksZeroTimesInvalid(t *testing.T) {
	doc := `{"schema": 1, "devices": [{"device": {"id": "opencl:1:0"}, "results": [
		{"case": "stream/copy/float32", "size": 32768, "verified": true, "bytes": 262144, "gbs": 262144, "fraction": 2600,
		 "stats": {"runs": 3, "median_ns": 1, "min_ns": 0, "max_ns": 2, "samples_ns": [0, 1, 2]}},
		{"case": "stream/scale/float32", "size": 32768, "verified": true, "bytes": 262144,
		 "stats": {"runs": 2, "median_ns": 0, "min_ns": 0, "max_ns": 0}},
		{"case": "stream/triad/float32", "size": 32768, "verified": true, "bytes": 393216, "gbs": 39.3,
		 "stats": {"runs": 2, "median_ns": 10000, "min_ns": 10000, "max_ns": 10000, "samples_ns": [10000, 10000]}}]}]}`
	r, err := ReadReport(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	res := r.Devices[0].Results
	for i, want := range []bool{true, true, false} {
		if got := res[i].Invalid != ""; got != want || res[i].OK() == want {
			t.Errorf("%s: invalid %q, OK %v", res[i].Case, res[i].Invalid, res[i].OK())
		}
	}
	if res[0].GBs != 0 || res[0].Fraction != 0 || !strings.HasPrefix(res[0].Invalid, InvalidPrefix) {
		t.Errorf("an invalid result keeps its rates: %+v", res[0])
	}
	if err := r.Check(); err == nil || !strings.Contains(err.Error(), "2 cases or ceilings have no valid device time") {
		t.Errorf("Check: %v", err)
	}
}

// TestReadReportAllocations: a report is read in one buffer and decoded in one pass over
// each part, allocating less than 7 bytes per byte of input for a report of 20,000 results
// (8.1 before: the input held by a stream decoder whose buffer doubled, copied whole, its
// devices copied again, and every device decoded twice).
func TestReadReportAllocations(t *testing.T) {
	r := &Report{Schema: SchemaVersion, Prism: "devel", Host: "test", Config: ConfigInfo{Count: 8}}
	for dev := range 2 {
		d := DeviceReport{Backend: "opencl"}
		d.Device.ID = fmt.Sprintf("opencl:0:%d", dev)
		for i := range 10_000 {
			res := Result{Case: fmt.Sprintf("stream/op%d/float32", i%100), Family: "stream", Type: "float32", Size: 1024 + i/100, Verified: true, Bound: BoundMemory}
			s := make([]time.Duration, 8)
			for j := range s {
				s[j] = time.Duration(90_000 + 2_000*j + 1_000*dev)
			}
			res.measured(s, 0, 12<<10)
			d.Results = append(d.Results, res)
		}
		r.Devices = append(r.Devices, d)
	}
	p := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := ReadReportFile(p)
	runtime.ReadMemStats(&after)
	if err != nil || len(got.Devices) != 2 || len(got.Devices[1].Results) != 10_000 {
		t.Fatalf("read: %v", err)
	}
	if per := float64(after.TotalAlloc-before.TotalAlloc) / float64(st.Size()); per > 7 {
		t.Errorf("reading a report of %d bytes allocated %.2f bytes per byte; want below 7", st.Size(), per)
	}
}

// TestReadReportFileNotRegular checks that a report is read only from a regular file: a
// named pipe with no writer, /dev/zero through a link and a directory are refused at once,
// naming what they are, where a read used to wait or run on.
func TestReadReportFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, zero, dir} {
		done := make(chan error, 1)
		go func() { _, err := ReadReportFile(path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: %v; want an error saying it is not a regular file", path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still reading after 5 s", path)
		}
	}
}
