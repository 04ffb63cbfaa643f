//go:build !noopencl

package cl

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/prism-compute/prism/engine/driver"
)

// infoQuery asks one query of the clGet*Info kind (a device's, a kernel's) and returns
// the answer's raw bytes; it abstracts the call so that decoding can be tested without a
// device.
type infoQuery func(param uint32) ([]byte, error)

// cString converts a NUL-terminated answer to a string, trimming the padding some drivers
// add.
func cString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}

func queryString(q infoQuery, param uint32) (string, error) {
	b, err := q(param)
	if err != nil {
		return "", err
	}
	return cString(b), nil
}

func queryUint(q infoQuery, param uint32) (uint32, error) {
	b, err := q(param)
	if err != nil {
		return 0, err
	}
	if len(b) < 4 {
		return 0, fmt.Errorf("cl: query 0x%04x: %d bytes, want 4: %w", param, len(b), InvalidValue)
	}
	return binary.NativeEndian.Uint32(b), nil
}

func queryUlong(q infoQuery, param uint32) (uint64, error) {
	b, err := q(param)
	if err != nil {
		return 0, err
	}
	if len(b) < 8 {
		return 0, fmt.Errorf("cl: query 0x%04x: %d bytes, want 8: %w", param, len(b), InvalidValue)
	}
	return binary.NativeEndian.Uint64(b), nil
}

// querySizes decodes a size_t or size_t[] answer.
func querySizes(q infoQuery, param uint32) ([]uint64, error) {
	b, err := q(param)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || len(b)%sizeofSizeT != 0 {
		return nil, fmt.Errorf("cl: query 0x%04x: %d bytes is not a whole number of size_t: %w", param, len(b), InvalidValue)
	}
	out := make([]uint64, len(b)/sizeofSizeT)
	for i := range out {
		if sizeofSizeT == 8 {
			out[i] = binary.NativeEndian.Uint64(b[8*i:])
		} else {
			out[i] = uint64(binary.NativeEndian.Uint32(b[4*i:]))
		}
	}
	return out, nil
}

// kernelAttributes decodes what clGetKernelWorkGroupInfo tells of a kernel on its device:
// its work-group limit, its static local memory (no __local argument is set when it is
// asked), its private memory per work-item and its preferred work-group multiple. A query
// that fails leaves its field at zero.
func kernelAttributes(q infoQuery) (a driver.KernelAttributes) {
	if v, err := querySizes(q, kernelWorkGroupSize); err == nil {
		a.MaxWorkGroupSize = int(v[0])
	}
	if v, err := queryUlong(q, kernelLocalMemSize); err == nil {
		a.LocalBytes = int64(v)
	}
	if v, err := queryUlong(q, kernelPrivateMemSize); err == nil {
		a.PrivateBytes = int64(v)
	}
	if v, err := querySizes(q, kernelPreferredWGMultiple); err == nil {
		a.PreferredMultiple = int(v[0])
	}
	return a
}
