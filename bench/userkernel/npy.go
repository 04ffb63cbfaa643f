package userkernel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/internal/boundedio"
	"github.com/prism-compute/prism/kernels"
)

// descr returns the NumPy type string of t, little-endian ('<', or '|' for single
// bytes): i, u or f and the size in bytes; false for a type NumPy lacks (bfloat16, the
// fp8 types: of NumPy's floats only the IEEE binary formats).
func descr(t kernels.Type) (string, bool) {
	kind := "u"
	switch {
	case t.Float && t.Name != "float"+strconv.Itoa(8*t.Size):
		return "", false
	case t.Float:
		kind = "f"
	case t.Signed:
		kind = "i"
	}
	order := "<"
	if t.Size == 1 {
		order = "|"
	}
	return order + kind + strconv.Itoa(t.Size), true
}

// npyMagic begins every .npy file.
const npyMagic = "\x93NUMPY"

// npyHeader returns the header of a version 1.0 .npy file of a C-ordered array of shape
// with elements of NumPy type descr: the magic, the version, the header's length and its
// dictionary, padded with spaces and ended by a newline so that the data starts at a
// multiple of 64 bytes.
func npyHeader(descr string, shape []int) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	tuple := "(" + strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	tuple += ")"
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, tuple)
	const prefix = len(npyMagic) + 2 + 2 // magic, version, header length
	total := (prefix + len(dict) + 1 + 63) / 64 * 64
	h := make([]byte, 0, total)
	h = append(h, npyMagic...)
	h = append(h, 1, 0)
	h = binary.LittleEndian.AppendUint16(h, uint16(total-prefix))
	h = append(h, dict...)
	for len(h) < total-1 {
		h = append(h, ' ')
	}
	return append(h, '\n')
}

// EncodeNPY returns a version 1.0 .npy file holding data, the little-endian elements of t
// (one of Types), as a one-dimensional array.
func EncodeNPY(t kernels.Type, data []byte) []byte {
	d, _ := descr(t)
	h := npyHeader(d, []int{len(data) / t.Size})
	return append(h[:len(h):len(h)], data...)
}

// Array is an array read from a .npy file: its element type (one of Types), shape and
// little-endian elements in C order.
type Array struct {
	Type  kernels.Type
	Shape []int
	Data  []byte
}

// Len returns the number of elements.
func (a Array) Len() int { return len(a.Data) / a.Type.Size }

// maxNPYBytes is the largest .npy file read: the 1 TiB a buffer may hold and the largest
// header.
const maxNPYBytes = 1<<40 + 1<<20 + 12

// ReadNPYFile reads the .npy file at path (DecodeNPY), a regular file only: a FIFO, a
// device such as /dev/zero (or a link to one) or a directory is an error at once. The
// header's shape and element type are checked against the file's length before the data
// are read: a header that claims more (or fewer) elements than the file holds is an error
// naming both, whatever it claims, never an allocation of what it claims.
func ReadNPYFile(path string) (Array, error) { return readNPYFile(path, nil) }

// readNPYFile is ReadNPYFile, with check called on the header (the type and shape of an
// Array without data, and its number of elements) before the data are read.
func readNPYFile(path string, check func(h Array, elems int) error) (Array, error) {
	f, size, err := boundedio.Open(path)
	if err != nil {
		return Array{}, err
	}
	defer f.Close()
	if size > maxNPYBytes {
		return Array{}, boundedio.TooLarge(path, size, maxNPYBytes)
	}
	a, err := decodeNPY(f, size, check)
	if err != nil {
		return Array{}, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// DecodeNPY reads a .npy file of format version 1, 2 or 3 holding little-endian integers or
// floats of one of Types, in C order (or Fortran order in one dimension). The data are
// read as they come, memory growing with what arrives: a header that claims more elements
// than r holds is an error once r ends, never an allocation of what it claims.
func DecodeNPY(r io.Reader) (Array, error) { return decodeNPY(r, -1, nil) }

// decodeNPY is DecodeNPY of an input of size bytes in all (-1: not known), with check, where
// not nil, called on the header before the data are read.
func decodeNPY(r io.Reader, size int64, check func(h Array, elems int) error) (Array, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return Array{}, fmt.Errorf("not a .npy file: %w", err)
	}
	if string(pre[:6]) != npyMagic {
		return Array{}, errors.New("not a .npy file: no \\x93NUMPY magic")
	}
	var hlen, head int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return Array{}, fmt.Errorf("truncated .npy header: %w", err)
		}
		hlen, head = int(binary.LittleEndian.Uint16(b[:])), 10
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return Array{}, fmt.Errorf("truncated .npy header: %w", err)
		}
		hlen, head = int(binary.LittleEndian.Uint32(b[:])), 12
	default:
		return Array{}, fmt.Errorf(".npy format version %d.%d: want 1.0, 2.0 or 3.0", pre[6], pre[7])
	}
	if hlen > 1<<20 {
		return Array{}, fmt.Errorf(".npy header of %d bytes: too long", hlen)
	}
	if size >= 0 && int64(head+hlen) > size {
		return Array{}, fmt.Errorf("truncated .npy header: it says %d bytes, the file holds %d after the first %d", hlen, size-int64(head), head)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return Array{}, fmt.Errorf("truncated .npy header: %w", err)
	}
	head += hlen
	dict, err := parseNPYDict(strings.TrimSpace(string(hdr)))
	if err != nil {
		return Array{}, fmt.Errorf("bad .npy header %q: %w", strings.TrimSpace(string(hdr)), err)
	}
	var a Array
	descr, ok := dict["descr"].(string)
	if !ok {
		return Array{}, errors.New("the .npy header has no 'descr' string")
	}
	if a.Type, ok = typeOfDescr(descr); !ok {
		return Array{}, fmt.Errorf(".npy element type %q: want little-endian %s", descr, TypeNames())
	}
	shape, ok := dict["shape"].([]int)
	if !ok {
		return Array{}, errors.New("the .npy header has no 'shape' tuple")
	}
	n := 1
	for _, d := range shape {
		if d < 0 || d > bench.MaxSize || n > bench.MaxSize/max(d, 1) {
			return Array{}, fmt.Errorf(".npy shape %v: more than %d elements", shape, bench.MaxSize)
		}
		n *= d
	}
	if fortran, _ := dict["fortran_order"].(bool); fortran && len(shape) > 1 {
		return Array{}, errors.New(".npy array in Fortran order: save it in C order (numpy.ascontiguousarray)")
	}
	a.Shape = shape
	if check != nil {
		if err := check(a, n); err != nil {
			return Array{}, err
		}
	}
	want := int64(n) * int64(a.Type.Size)
	if size >= 0 && size-int64(head) != want {
		return Array{}, fmt.Errorf(".npy shape %v of %s needs %d bytes of data; the file holds %d after its %d-byte header",
			shape, a.Type.Name, want, size-int64(head), head)
	}
	if size >= 0 {
		a.Data = make([]byte, want) // the file holds them: checked above
		if _, err := io.ReadFull(r, a.Data); err != nil {
			return Array{}, fmt.Errorf(".npy data: want %d bytes for shape %v: %w", want, shape, err)
		}
	} else {
		// Of an input of unknown length, what arrives, up to what the header says.
		var buf bytes.Buffer
		got, err := io.CopyN(&buf, r, want)
		if err != nil && !errors.Is(err, io.EOF) {
			return Array{}, fmt.Errorf(".npy data: %w", err)
		}
		if got != want {
			return Array{}, fmt.Errorf(".npy data: want %d bytes for shape %v, the input holds %d", want, shape, got)
		}
		a.Data = buf.Bytes()
	}
	if k, _ := r.Read(make([]byte, 1)); k > 0 {
		return Array{}, fmt.Errorf(".npy data: more than the %d bytes of shape %v", len(a.Data), shape)
	}
	return a, nil
}

// typeOfDescr returns the element type of a NumPy type string: little-endian ('<'), or of
// no byte order ('|', '=' on the little-endian hosts Prism runs on) for single bytes.
func typeOfDescr(d string) (kernels.Type, bool) {
	if len(d) < 2 {
		return kernels.Type{}, false
	}
	for _, t := range Types() {
		td, _ := descr(t)
		if td[1:] != d[1:] {
			continue
		}
		switch d[0] {
		case '<', '=':
			return t, true
		case '|':
			return t, t.Size == 1
		}
	}
	return kernels.Type{}, false
}

// parseNPYDict parses the Python dictionary of a .npy header: string keys whose values are
// strings, True or False, or tuples of integers.
func parseNPYDict(s string) (map[string]any, error) {
	p := &pyParser{s: s}
	out := map[string]any{}
	if !p.eat('{') {
		return nil, errors.New("want '{'")
	}
	for {
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if !p.eat(':') {
			return nil, fmt.Errorf("want ':' after '%s'", key)
		}
		if out[key], err = p.value(); err != nil {
			return nil, err
		}
		if !p.eat(',') {
			if !p.eat('}') {
				return nil, errors.New("want ',' or '}'")
			}
			break
		}
	}
	if p.skip(); p.i != len(p.s) {
		return nil, errors.New("text after '}'")
	}
	return out, nil
}

// pyParser reads the Python literals of a .npy header.
type pyParser struct {
	s string
	i int
}

func (p *pyParser) skip() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n\r", p.s[p.i]) >= 0 {
		p.i++
	}
}

// eat consumes c after spaces, reporting whether it was there.
func (p *pyParser) eat(c byte) bool {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) str() (string, error) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", errors.New("want a quoted string")
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v, nil
}

func (p *pyParser) value() (any, error) {
	p.skip()
	switch {
	case p.i >= len(p.s):
		return nil, errors.New("want a value")
	case p.s[p.i] == '\'' || p.s[p.i] == '"':
		return p.str()
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	case p.s[p.i] == '(':
		p.i++
		dims := []int{}
		for !p.eat(')') {
			p.skip()
			j := p.i
			for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
				p.i++
			}
			if p.i < len(p.s) && p.s[p.i] == 'L' { // Python 2's long
				p.i++
			}
			d, err := strconv.Atoi(strings.TrimSuffix(p.s[j:p.i], "L"))
			if err != nil {
				return nil, errors.New("want a dimension in the shape")
			}
			dims = append(dims, d)
			if !p.eat(',') {
				if !p.eat(')') {
					return nil, errors.New("want ',' or ')' in the shape")
				}
				break
			}
		}
		return dims, nil
	}
	return nil, fmt.Errorf("unknown value at %q", p.s[p.i:])
}

// descrOf returns the NumPy type string of t, one of Types.
func descrOf(t kernels.Type) string {
	d, _ := descr(t)
	return d
}
