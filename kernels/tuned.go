package kernels

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/internal/boundedio"
)

// Tuned is one winner of `prism tune`: the tunables of a variant of an op that measured
// fastest on a device, with the measurement that chose them.
type Tuned struct {
	Op       string `json:"op"`
	Variant  string `json:"variant"`
	Tunables string `json:"tunables"`  // as the variant's Candidates spell them
	Size     int    `json:"size"`      // the size they were measured at
	MedianNS int64  `json:"median_ns"` // their median time there
	Date     string `json:"date"`      // RFC 3339, UTC
}

// tunedFile is the on-disk form of one device's tuning: its key and its winners.
type tunedFile struct {
	Device  string  `json:"device"`
	Entries []Tuned `json:"entries"`
}

// maxTunedBytes bounds the tuning file read back: a few hundred entries at most.
const maxTunedBytes = 1 << 20

// TunedDir returns the directory of the tuning files: $PRISM_CACHE_DIR/tuning when
// PRISM_CACHE_DIR is set, else the user's cache directory's prism/tuning
// (~/.cache/prism/tuning); "" when neither can be found.
func TunedDir() string {
	if d := os.Getenv("PRISM_CACHE_DIR"); d != "" {
		return filepath.Join(d, "tuning")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "prism", "tuning")
}

// tuningKey names what tunings depend on: the device's name, backend, architecture and
// driver; a new driver or another card of the same name with another driver starts afresh.
func tuningKey(dev *engine.Device) string {
	in := dev.Info()
	arch := ""
	if in.ComputeCapability > 0 {
		arch = fmt.Sprintf(" sm_%d", in.ComputeCapability)
	}
	return fmt.Sprintf("%s %s%s driver %s", dev.Backend(), in.Name, arch, in.DriverVersion)
}

// tunedPath returns the file of dev's tunings, named after its key.
func tunedPath(dev *engine.Device) string {
	dir := TunedDir()
	if dir == "" {
		return ""
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, tuningKey(dev))
	return filepath.Join(dir, name+".json")
}

// readTuned returns dev's tuning file; none (no file) is an empty one.
func readTuned(dev *engine.Device) (tunedFile, error) {
	f := tunedFile{Device: tuningKey(dev)}
	path := tunedPath(dev)
	if path == "" {
		return f, nil
	}
	// Only a regular file, up to maxTunedBytes: a FIFO or a link to /dev/zero in its place
	// is an error at once, neither a wait nor an unbounded read.
	data, err := boundedio.ReadFile(path, maxTunedBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("kernels: tuning file: %w: %w", err, engine.ErrInvalidArg)
	}
	var got tunedFile
	if err := json.Unmarshal(data, &got); err != nil {
		return f, fmt.Errorf("kernels: tuning file %s: %v: %w", path, err, engine.ErrInvalidArg)
	}
	if got.Device != f.Device {
		return f, nil // another device's key in this name: not ours to use
	}
	return got, nil
}

// LookupTuned returns the tunables `prism tune` chose for variant of op on dev, if any. An
// unreadable or damaged tuning file counts as none: tuning is an optimization
// (PRISM_TRACE=1 says why it was ignored). Only a regular file of at most 1 MiB is read.
func LookupTuned(dev *engine.Device, op, variant string) (Tuned, bool) {
	f, err := readTuned(dev)
	if err != nil {
		if engine.Tracing() {
			fmt.Fprintf(os.Stderr, "prism: kernels: ignoring the tuning file: %v\n", err)
		}
		return Tuned{}, false
	}
	for _, e := range f.Entries {
		if e.Op == op && e.Variant == variant {
			return e, true
		}
	}
	return Tuned{}, false
}

// SaveTuned records e as dev's tuning of e.Variant of e.Op, replacing an earlier one. The
// file is written to a temporary file and renamed, so that a reader never sees it torn.
func SaveTuned(dev *engine.Device, e Tuned) error {
	path := tunedPath(dev)
	if path == "" {
		return fmt.Errorf("kernels: no cache directory for tunings (set PRISM_CACHE_DIR): %w", engine.ErrUnavailable)
	}
	f, err := readTuned(dev)
	if err != nil {
		f = tunedFile{Device: tuningKey(dev)} // a damaged file is replaced
	}
	if e.Date == "" {
		e.Date = time.Now().UTC().Format(time.RFC3339)
	}
	kept := f.Entries[:0]
	for _, x := range f.Entries {
		if x.Op != e.Op || x.Variant != e.Variant {
			kept = append(kept, x)
		}
	}
	f.Entries = append(kept, e)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("kernels: tuning file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tuning-*")
	if err != nil {
		return fmt.Errorf("kernels: tuning file: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("kernels: tuning file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("kernels: tuning file: %w", err)
	}
	return nil
}

// TunablesReporter is implemented by instances whose variant has tunables: Tunables says
// which it runs with and where they came from ("BM=128 ... (tuned)", "(table)",
// "(forced)"), for reports.
type TunablesReporter interface {
	Tunables() string
}

// TunableInt is an integer tunable that ParseTunableInts reads: its key, where its value
// goes, and the range the value must be in. An Optional key may be left out even where
// every key is wanted: its Dst keeps the default the caller put there (a key added after
// tuning files were written without it).
type TunableInt struct {
	Key      string
	Dst      *int
	Min, Max int
	Optional bool
}

// ParseTunableInts reads tunables spelled "KEY=integer KEY=integer ..." (a variant's
// Params.Tunables, the form its Candidates take) into fields; keys match without regard
// to case. With all, every key but the Optional ones must be given; a key left out keeps
// the value its Dst holds. Errors name what (as "histogram tunables"), s and the field at fault: one that
// is not KEY=integer, an unknown or repeated key, a value out of its range. They wrap
// engine.ErrInvalidArg.
func ParseTunableInts(what, s string, all bool, fields ...TunableInt) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("kernels: %s %q: %s: %w", what, s, fmt.Sprintf(format, args...), engine.ErrInvalidArg)
	}
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.Key
	}
	seen := map[int]bool{}
	for _, field := range strings.Fields(s) {
		k, v, ok := strings.Cut(field, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || strconv.Itoa(n) != v {
			return bad("%q is not KEY=integer", field)
		}
		i := slices.IndexFunc(fields, func(f TunableInt) bool { return strings.EqualFold(f.Key, k) })
		switch {
		case i < 0:
			return bad("unknown key %s (want %s)", k, strings.Join(keys, ", "))
		case seen[i]:
			return bad("%s given twice", fields[i].Key)
		case n < fields[i].Min || n > fields[i].Max:
			return bad("%s=%d is out of its range %d..%d", fields[i].Key, n, fields[i].Min, fields[i].Max)
		}
		seen[i] = true
		*fields[i].Dst = n
	}
	if !all {
		return nil
	}
	var required, optional, missing []string
	for i, f := range fields {
		switch {
		case f.Optional:
			optional = append(optional, f.Key)
		case !seen[i]:
			missing = append(missing, f.Key)
			fallthrough
		default:
			required = append(required, f.Key)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	may := ""
	if len(optional) > 0 {
		may = fmt.Sprintf(" (%s may be left out)", strings.Join(optional, ", "))
	}
	return bad("want all of %s%s; %s missing", strings.Join(required, ", "), may, strings.Join(missing, ", "))
}
