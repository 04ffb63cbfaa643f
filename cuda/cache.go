package cuda

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/internal/boundedio"
)

// The compiled-code cache keeps NVRTC's output on disk, one file per compilation, named by
// a key over everything that determines the output (see cacheInput.key). A file is written to a
// temporary name in the cache directory and renamed into place, so that a reader, in this
// process or another, sees either no entry or a whole one; two writers of one key write the
// same bytes, and the last rename wins. Each entry holds a checksum of its contents: an
// entry that is truncated, corrupt or unreadable, no regular file (a FIFO, a link to
// /dev/zero) or larger than any build writes is ignored, and the build that finds it
// compiles again and replaces it. Failures to write are not errors (the build succeeded);
// PRISM_TRACE=1 reports hits, misses and failures on stderr.

// cacheMagic starts every entry; the digit is the format's version.
const cacheMagic = "PRISMCU1"

// Entry kinds: the image is a CUBIN or PTX.
const (
	kindCUBIN byte = 'c'
	kindPTX   byte = 'p'
)

// cacheDir returns the cache directory: $PRISM_CACHE_DIR/cuda when PRISM_CACHE_DIR is
// set, else os.UserCacheDir()/prism/cuda; "" when neither can be found (no cache).
func cacheDir() string {
	if d := os.Getenv("PRISM_CACHE_DIR"); d != "" {
		return filepath.Join(d, "cuda")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "prism", "cuda")
}

// cacheInput is everything that determines what a build produces, and so its cache key.
type cacheInput struct {
	dialect       driver.Dialect
	text          string   // the whole text compiled (for OpenCL C, the prelude and the source)
	headers       []header // the in-memory headers NVRTC gets
	options       []string // in order: fixed, the caller's (translated) and -arch
	arch          string   // the device's architecture ("sm_90")
	target        string   // the virtual architecture compiled for ("compute_90a")
	nvrtcVersion  string   // "13.0"
	driverVersion int      // cuDriverGetVersion: 13000
}

// key returns the hex SHA-256 of the input: the dialect, the whole text compiled, the
// headers (names and contents), the options in order, the device's architecture and the
// target, NVRTC's version and the driver's (which loads and, for PTX, compiles the
// result). Fields are length-prefixed, so no two different inputs hash the same bytes.
func (in cacheInput) key() string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field(cacheMagic)
	field(in.dialect.String())
	field(in.text)
	field(fmt.Sprint(len(in.headers)))
	for _, hd := range in.headers {
		field(hd.name)
		field(hd.text)
	}
	field(fmt.Sprint(len(in.options)))
	for _, o := range in.options {
		field(o)
	}
	field(in.arch)
	field(in.target)
	field(in.nvrtcVersion)
	field(fmt.Sprint(in.driverVersion))
	return hex.EncodeToString(h.Sum(nil))
}

// cacheEntry encodes an entry: magic, kind, SHA-256 of the image, image.
func cacheEntry(kind byte, image []byte) []byte {
	sum := sha256.Sum256(image)
	out := make([]byte, 0, len(cacheMagic)+1+len(sum)+len(image))
	out = append(out, cacheMagic...)
	out = append(out, kind)
	out = append(out, sum[:]...)
	return append(out, image...)
}

// parseCacheEntry decodes an entry, checking its magic and checksum.
func parseCacheEntry(b []byte) (kind byte, image []byte, err error) {
	head := len(cacheMagic) + 1 + sha256.Size
	if len(b) < head || string(b[:len(cacheMagic)]) != cacheMagic {
		return 0, nil, errors.New("not a cache entry of this version")
	}
	kind = b[len(cacheMagic)]
	if kind != kindCUBIN && kind != kindPTX {
		return 0, nil, fmt.Errorf("unknown kind %q", kind)
	}
	image = b[head:]
	if sum := sha256.Sum256(image); !bytes.Equal(sum[:], b[len(cacheMagic)+1:head]) {
		return 0, nil, errors.New("checksum mismatch")
	}
	return kind, image, nil
}

// maxCacheEntryBytes bounds an entry read back: the header and the largest module image
// the backend takes from NVRTC (maxImageBytes).
const maxCacheEntryBytes = int64(len(cacheMagic)+1+sha256.Size) + maxImageBytes

// cachePath returns the file of key in dir.
func cachePath(dir, key string) string { return filepath.Join(dir, key+".bin") }

// cacheLoad returns the image cached under key, or ok false when there is none or it
// cannot be used.
func cacheLoad(dir, key string) (kind byte, image []byte, ok bool) {
	if dir == "" {
		return 0, nil, false
	}
	// Only a regular file, up to the largest entry a build writes: a FIFO or a link to
	// /dev/zero in its place is passed over at once (the build compiles again and its
	// store replaces it), neither a wait nor an unbounded read.
	b, err := boundedio.ReadFile(cachePath(dir, key), maxCacheEntryBytes)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			tracef("cache: ignoring unreadable entry %s, compiling again: %v", key[:16], err)
		}
		return 0, nil, false
	}
	kind, image, err = parseCacheEntry(b)
	if err != nil {
		tracef("cache: ignoring corrupt entry %s, compiling again: %v", key[:16], err)
		return 0, nil, false
	}
	return kind, image, true
}

// cacheStore writes an entry atomically (temporary file, then rename).
func cacheStore(dir, key string, kind byte, image []byte) error {
	if dir == "" {
		return errors.New("no cache directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-"+key[:16]+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(cacheEntry(kind, image))
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, cachePath(dir, key)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
