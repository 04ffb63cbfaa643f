package engine

import (
	"bytes"
	"errors"
	"testing"
)

// TestScalarArgs checks the bytes every scalar kernel argument type becomes, the 16- and
// 8-bit float types included, and that other types are refused.
func TestScalarArgs(t *testing.T) {
	for _, c := range []struct {
		arg  any
		want []byte
	}{
		{int32(-2), []byte{0xfe, 0xff, 0xff, 0xff}},
		{uint16(0x1234), []byte{0x34, 0x12}},
		{HalfFromFloat32(1), []byte{0x00, 0x3c}},
		{BFloat16FromFloat32(-2), []byte{0x00, 0xc0}},
		{Float8E4M3FromFloat32(1), []byte{0x38}},
		{Float8E5M2FromFloat32(1), []byte{0x3c}},
		{float64(1), []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
	} {
		var values []byte
		a, err := toArg(c.arg, nil, &values)
		if err != nil {
			t.Errorf("%T(%v): %v", c.arg, c.arg, err)
			continue
		}
		if !bytes.Equal(a.Value, c.want) {
			t.Errorf("%T(%v) = % x, want % x", c.arg, c.arg, a.Value, c.want)
		}
	}
	var values []byte
	if _, err := toArg("text", nil, &values); !errors.Is(err, ErrInvalidArg) {
		t.Errorf("a string argument: %v, want ErrInvalidArg", err)
	}
}
