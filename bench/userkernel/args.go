package userkernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// Kinds of arguments, as their specs name them.
const (
	Buf    = "buf"    // a buffer the kernel reads: buf:TYPE:SIZE[:INIT] (in: is the same)
	Out    = "out"    // a buffer that starts at zeros, kept after the run: out:TYPE:SIZE
	InOut  = "inout"  // a buffer with initial values, kept after the run: inout:TYPE:SIZE[:INIT]
	Scalar = "scalar" // a value passed by value: scalar:TYPE:VALUE
	Local  = "local"  // a __local pointer parameter: local:BYTES or local:TYPE:COUNT
)

// Arg is one kernel argument, parsed from its spec (ParseArg).
type Arg struct {
	Index int          // its position among the kernel's arguments
	Spec  string       // the spec it was parsed from
	Kind  string       // Buf, Out, InOut, Scalar or Local
	Name  string       // of an output: NAME=out:... or KERNEL.argINDEX
	Param string       // the kernel parameter's name, where the caller knows it (for messages)
	Type  kernels.Type // the element type; zero for local:BYTES
	Len   int          // the elements of a buffer
	Init  []byte       // a buffer's initial contents, little-endian
	Value any          // a scalar's value, of the Go type engine passes (int32, engine.Half, ...)
	Bytes int64        // a local argument's bytes per work-group
}

// Saved reports whether the argument is an output (out or inout), kept after the run.
func (a *Arg) Saved() bool { return a.Kind == Out || a.Kind == InOut }

// Outputs returns the output arguments of args, in order.
func Outputs(args []*Arg) []*Arg {
	var out []*Arg
	for _, a := range args {
		if a.Saved() {
			out = append(out, a)
		}
	}
	return out
}

// ArgError is the error of argument Index, whose spec is Spec.
type ArgError struct {
	Index int
	Spec  string
	Err   error
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("userkernel: argument %d %q: %v", e.Index, e.Spec, e.Err)
}

func (e *ArgError) Unwrap() error { return e.Err }

// ParseArgs parses the specs of a kernel's arguments, in order, generating the buffers'
// initial values from seed (ParseArg); two outputs may not share a name. An error is an
// *ArgError.
func ParseArgs(specs []string, kernel string, seed uint64) ([]*Arg, error) {
	var args []*Arg
	names := map[string]int{}
	var reserved int64 // host bytes of the buffers parsed so far
	for i, spec := range specs {
		a, err := parseArg(i, spec, kernel, seed, reserved)
		if err != nil {
			return nil, &ArgError{i, spec, err}
		}
		reserved += int64(a.Len) * int64(a.Type.Size) * hostCopies(a.Kind)
		if a.Saved() {
			if j, ok := names[a.Name]; ok {
				return nil, &ArgError{i, spec, fmt.Errorf("the name %s is taken by --arg %d", a.Name, j)}
			}
			names[a.Name] = i
		}
		args = append(args, a)
	}
	return args, nil
}

// ParseArg parses the spec of argument i of kernel:
//
//	buf:TYPE:SIZE[:INIT]     a buffer the kernel reads (INIT: zeros)
//	out:TYPE:SIZE            a buffer that starts at zeros, kept after the run
//	inout:TYPE:SIZE[:INIT]   a buffer with initial values, kept after the run
//	scalar:TYPE:VALUE        a value passed by value
//	local:BYTES              a __local pointer parameter of BYTES bytes per work-group
//	local:TYPE:COUNT         the same, COUNT elements of TYPE
//
// TYPE is a name of Types or its OpenCL C name (LookupType); SIZE, BYTES and COUNT take K,
// M, G suffixes (bench.ParseSize). INIT is zeros, ones, range (0, 1, 2, ...), random
// (uniform in [-1, 1) for floats, integers in [-64, 64) or [0, 128) unsigned, from a
// generator seeded by seed and i), a constant or FILE.npy, a NumPy array of TYPE with SIZE
// elements. An output may be named, NAME=out:..., else it is KERNEL.argI.
//
// A buffer whose host copies (its initial values, and for an output the copy read back)
// exceed the host's available memory is refused before any is made, an error wrapping
// engine.ErrOutOfMemory that names the size and the limit; ParseArgs counts the buffers
// before it too. A FILE.npy is checked against TYPE and SIZE, and against its own length,
// before its data are read (ReadNPYFile).
func ParseArg(i int, spec, kernel string, seed uint64) (*Arg, error) {
	return parseArg(i, spec, kernel, seed, 0)
}

// parseArg is ParseArg with reserved bytes of host memory taken by the arguments before.
func parseArg(i int, spec, kernel string, seed uint64, reserved int64) (*Arg, error) {
	a := &Arg{Index: i, Spec: spec, Name: fmt.Sprintf("%s.arg%d", kernel, i)}
	body := spec
	if name, rest, ok := strings.Cut(spec, "="); ok && !strings.Contains(name, ":") {
		if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			return nil, fmt.Errorf("bad name %q: want letters, digits, '.', '_' or '-'", name)
		}
		a.Name, body = name, rest
	}
	kind, rest, _ := strings.Cut(body, ":")
	a.Kind = strings.ToLower(kind)
	if a.Kind == "in" {
		a.Kind = Buf
	}
	if body != spec && !a.Saved() {
		return nil, errors.New("only out and inout buffers take a name")
	}
	fields := strings.SplitN(rest, ":", 3)
	typ := func() error {
		t, ok := LookupType(fields[0])
		if !ok {
			return fmt.Errorf("unknown element type %q (want %s)", fields[0], TypeNames())
		}
		a.Type = t
		return nil
	}
	switch a.Kind {
	case Scalar:
		if rest == "" || len(fields) != 2 {
			return nil, errors.New("want scalar:TYPE:VALUE")
		}
		if err := typ(); err != nil {
			return nil, err
		}
		v, err := parseScalar(a.Type, fields[1])
		if err != nil {
			return nil, err
		}
		a.Value = v
	case Local:
		switch {
		case rest == "":
			return nil, errors.New("want local:BYTES or local:TYPE:COUNT")
		case len(fields) == 1:
			n, err := bench.ParseSize(fields[0])
			if err != nil {
				return nil, err
			}
			a.Bytes = int64(n)
		default:
			if len(fields) != 2 {
				return nil, errors.New("want local:BYTES or local:TYPE:COUNT")
			}
			if err := typ(); err != nil {
				return nil, err
			}
			n, err := bench.ParseSize(fields[1])
			if err != nil {
				return nil, err
			}
			a.Bytes = int64(n) * int64(a.Type.Size)
		}
	case Buf, Out, InOut:
		if rest == "" || len(fields) < 2 {
			return nil, fmt.Errorf("want %s:TYPE:SIZE%s", a.Kind, map[bool]string{true: "", false: "[:INIT]"}[a.Kind == Out])
		}
		if err := typ(); err != nil {
			return nil, err
		}
		n, err := bench.ParseSize(fields[1])
		if err != nil {
			return nil, err
		}
		if int64(n)*int64(a.Type.Size) > 1<<40 {
			return nil, fmt.Errorf("%d elements of %s: above 1 TiB", n, a.Type.Name)
		}
		a.Len = n
		if err := checkHost(a.Kind, n, a.Type.Size, reserved); err != nil {
			return nil, err
		}
		init := "zeros"
		if len(fields) == 3 {
			if a.Kind == Out {
				return nil, fmt.Errorf("an out buffer starts at zeros: inout:%s:%s:%s gives it initial values", fields[0], fields[1], fields[2])
			}
			init = fields[2]
		}
		if a.Init, err = initValues(a.Type, n, init, rand.New(rand.NewPCG(seed, uint64(i)))); err != nil {
			return nil, err
		}
	case "":
		return nil, errors.New("empty: want buf:, out:, inout:, scalar: or local:")
	default:
		return nil, fmt.Errorf("unknown kind %q: want buf, out, inout, scalar or local", kind)
	}
	return a, nil
}

// parseScalar parses s as a value of t, of the Go type engine passes for it.
func parseScalar(t kernels.Type, s string) (any, error) {
	bits := 8 * t.Size
	switch {
	case t.Float:
		v, err := parseFloat(t, s)
		if err != nil {
			return nil, err
		}
		switch t.Size {
		case 2:
			return engine.HalfFromFloat64(v), nil
		case 4:
			return float32(v), nil
		}
		return v, nil
	case t.Signed:
		v, err := strconv.ParseInt(s, 0, bits)
		if err != nil {
			return nil, fmt.Errorf("%q is not a %s", s, t.Name)
		}
		return map[int]any{1: int8(v), 2: int16(v), 4: int32(v), 8: v}[t.Size], nil
	}
	v, err := strconv.ParseUint(s, 0, bits)
	if err != nil {
		return nil, fmt.Errorf("%q is not a %s", s, t.Name)
	}
	return map[int]any{1: uint8(v), 2: uint16(v), 4: uint32(v), 8: v}[t.Size], nil
}

// parseFloat parses s as a float of t, refusing finite values beyond its range.
func parseFloat(t kernels.Type, s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a %s", s, t.Name)
	}
	if !math.IsInf(v, 0) && math.Abs(v) > floatLimit(t) {
		return 0, fmt.Errorf("%s is beyond the range of %s", s, t.Name)
	}
	return v, nil
}

// initValues returns n elements of t, little-endian, as init says: zeros, ones, range,
// random (from rng), a constant or a .npy file.
func initValues(t kernels.Type, n int, init string, rng *rand.Rand) ([]byte, error) {
	if strings.HasSuffix(strings.ToLower(init), ".npy") {
		// The type and the count are checked against the header, before the data are read.
		arr, err := readNPYFile(init, func(h Array, elems int) error {
			if h.Type.Name != t.Name {
				return fmt.Errorf("holds %s (%s), not %s", h.Type.Name, descrOf(h.Type), t.Name)
			}
			if elems != n {
				return fmt.Errorf("holds %d elements (shape %v), not %d", elems, h.Shape, n)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return arr.Data, nil
	}
	data := make([]byte, n*t.Size)
	put := func(i int, f float64, v int64) {
		if t.Float {
			putFloat(t, data, i, f)
		} else {
			putBits(t, data, i, uint64(v))
		}
	}
	switch strings.ToLower(init) {
	case "zeros", "zero", "0":
	case "ones":
		for i := range n {
			put(i, 1, 1)
		}
	case "range", "iota":
		for i := range n {
			put(i, float64(i), int64(i))
		}
	case "random", "rand":
		for i := range n {
			switch {
			case t.Float:
				putFloat(t, data, i, 2*rng.Float64()-1)
			case t.Signed:
				putBits(t, data, i, uint64(rng.Int64N(128)-64))
			default:
				putBits(t, data, i, uint64(rng.Int64N(128)))
			}
		}
	default:
		v, err := parseScalar(t, init)
		if err != nil {
			return nil, fmt.Errorf("bad INIT: %w (want zeros, ones, range, random, a constant or FILE.npy)", err)
		}
		var one [8]byte
		switch x := v.(type) {
		case float32:
			binary.LittleEndian.PutUint32(one[:], math.Float32bits(x))
		case float64:
			binary.LittleEndian.PutUint64(one[:], math.Float64bits(x))
		default:
			binary.LittleEndian.PutUint64(one[:], toBits(v))
		}
		for i := range n {
			copy(data[i*t.Size:], one[:t.Size])
		}
	}
	return data, nil
}

// toBits returns the bits of an integer or Half scalar, zero-extended.
func toBits(v any) uint64 {
	switch x := v.(type) {
	case int8:
		return uint64(uint8(x))
	case int16:
		return uint64(uint16(x))
	case int32:
		return uint64(uint32(x))
	case int64:
		return uint64(x)
	case uint8:
		return uint64(x)
	case uint16:
		return uint64(x)
	case uint32:
		return uint64(x)
	case uint64:
		return x
	case engine.Half:
		return uint64(x)
	}
	return 0
}
