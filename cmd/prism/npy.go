package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/bench"
)

// elemType is an element type of prism exec's buffers and scalars: its name, size in bytes,
// NumPy type string (little-endian) and class: 'i' signed integer, 'u' unsigned, 'f'
// floating point.
type elemType struct {
	name  string
	size  int
	descr string
	class byte
}

// elemTypes are the element types, in the order help lists them.
var elemTypes = []elemType{
	{"int8", 1, "|i1", 'i'}, {"uint8", 1, "|u1", 'u'},
	{"int16", 2, "<i2", 'i'}, {"uint16", 2, "<u2", 'u'},
	{"int32", 4, "<i4", 'i'}, {"uint32", 4, "<u4", 'u'},
	{"int64", 8, "<i8", 'i'}, {"uint64", 8, "<u8", 'u'},
	{"float16", 2, "<f2", 'f'}, {"float32", 4, "<f4", 'f'}, {"float64", 8, "<f8", 'f'},
}

// elemAliases are OpenCL C's names of the element types.
var elemAliases = map[string]string{
	"char": "int8", "uchar": "uint8", "short": "int16", "ushort": "uint16", "int": "int32",
	"uint": "uint32", "long": "int64", "ulong": "uint64", "half": "float16", "float": "float32",
	"double": "float64",
}

// lookupElemType returns the element type named s (a name of elemTypes or an OpenCL C
// name such as float or uint).
func lookupElemType(s string) (elemType, bool) {
	s = strings.ToLower(s)
	if a, ok := elemAliases[s]; ok {
		s = a
	}
	for _, t := range elemTypes {
		if t.name == s {
			return t, true
		}
	}
	return elemType{}, false
}

// elemTypeNames lists the element types' names, comma-separated.
func elemTypeNames() string {
	var names []string
	for _, t := range elemTypes {
		names = append(names, t.name)
	}
	return strings.Join(names, ", ")
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

// encodeNPY returns a version 1.0 .npy file holding data, the little-endian elements of t,
// as a one-dimensional array.
func encodeNPY(t elemType, data []byte) []byte {
	h := npyHeader(t.descr, []int{len(data) / t.size})
	return append(h[:len(h):len(h)], data...)
}

// npyArray is an array read from a .npy file: its element type, shape and little-endian
// elements in C order.
type npyArray struct {
	typ   elemType
	shape []int
	data  []byte
}

// len returns the number of elements.
func (a npyArray) len() int { return len(a.data) / a.typ.size }

// readNPYFile reads the .npy file at path (decodeNPY).
func readNPYFile(path string) (npyArray, error) {
	f, err := os.Open(path)
	if err != nil {
		return npyArray{}, err
	}
	defer f.Close()
	a, err := decodeNPY(f)
	if err != nil {
		return npyArray{}, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// decodeNPY reads a .npy file of format version 1, 2 or 3 holding little-endian integers or
// floats of one of elemTypes, in C order (or Fortran order in one dimension).
func decodeNPY(r io.Reader) (npyArray, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return npyArray{}, fmt.Errorf("not a .npy file: %w", err)
	}
	if string(pre[:6]) != npyMagic {
		return npyArray{}, errors.New("not a .npy file: no \\x93NUMPY magic")
	}
	var hlen int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return npyArray{}, fmt.Errorf("truncated .npy header: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return npyArray{}, fmt.Errorf("truncated .npy header: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return npyArray{}, fmt.Errorf(".npy format version %d.%d: want 1.0, 2.0 or 3.0", pre[6], pre[7])
	}
	if hlen > 1<<20 {
		return npyArray{}, fmt.Errorf(".npy header of %d bytes: too long", hlen)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return npyArray{}, fmt.Errorf("truncated .npy header: %w", err)
	}
	dict, err := parseNPYDict(strings.TrimSpace(string(hdr)))
	if err != nil {
		return npyArray{}, fmt.Errorf("bad .npy header %q: %w", strings.TrimSpace(string(hdr)), err)
	}
	var a npyArray
	descr, ok := dict["descr"].(string)
	if !ok {
		return npyArray{}, errors.New("the .npy header has no 'descr' string")
	}
	if a.typ, ok = typeOfDescr(descr); !ok {
		return npyArray{}, fmt.Errorf(".npy element type %q: want little-endian %s", descr, elemTypeNames())
	}
	shape, ok := dict["shape"].([]int)
	if !ok {
		return npyArray{}, errors.New("the .npy header has no 'shape' tuple")
	}
	n := 1
	for _, d := range shape {
		if d < 0 || d > bench.MaxSize || n > bench.MaxSize/max(d, 1) {
			return npyArray{}, fmt.Errorf(".npy shape %v: too large", shape)
		}
		n *= d
	}
	if fortran, _ := dict["fortran_order"].(bool); fortran && len(shape) > 1 {
		return npyArray{}, errors.New(".npy array in Fortran order: save it in C order (numpy.ascontiguousarray)")
	}
	a.shape = shape
	a.data = make([]byte, n*a.typ.size)
	if _, err := io.ReadFull(r, a.data); err != nil {
		return npyArray{}, fmt.Errorf(".npy data: want %d bytes for shape %v: %w", len(a.data), shape, err)
	}
	if k, _ := r.Read(make([]byte, 1)); k > 0 {
		return npyArray{}, fmt.Errorf(".npy data: more than the %d bytes of shape %v", len(a.data), shape)
	}
	return a, nil
}

// typeOfDescr returns the element type of a NumPy type string: little-endian ('<'), or of
// no byte order ('|', '=' on the little-endian hosts Prism runs on) for single bytes.
func typeOfDescr(descr string) (elemType, bool) {
	if len(descr) < 2 {
		return elemType{}, false
	}
	body := descr[1:]
	for _, t := range elemTypes {
		if t.descr[1:] != body {
			continue
		}
		switch descr[0] {
		case '<', '=':
			return t, true
		case '|':
			return t, t.size == 1
		}
	}
	return elemType{}, false
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
