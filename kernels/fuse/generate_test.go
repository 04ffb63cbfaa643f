package fuse_test

import (
	"testing"

	"github.com/prism-compute/prism/kernels/fuse"
)

// TestSource checks the code generated for a few expressions, character for
// character: argument order, one temporary per distinct value, literals of their type,
// stores after every load.
func TestSource(t *testing.T) {
	for _, c := range []struct {
		expr  string
		types fuse.Types
		want  string
	}{
		{"y = a*x + exp(-z)", axpyExpTypes, `// y = a*x + exp(-z)
__kernel void fused_d87bc2ea(__global float *y, __global const float *x, __global const float *z, const float a, const int _n) {
    const int _i = (int)get_global_id(0);
    if (_i < _n) {
        const float _t0 = x[_i];
        const float _t1 = a * _t0;
        const float _t2 = z[_i];
        const float _t3 = -_t2;
        const float _t4 = exp(_t3);
        const float _t5 = _t1 + _t4;
        y[_i] = _t5;
    }
}
`},
		{"t = x*x; y = t > 1 ? sqrt(t) : 0.5*t; x = 2*x", fuse.Types{"x": "float64", "y": "float64"}, `#pragma OPENCL EXTENSION cl_khr_fp64 : enable

// t = x*x; y = t > 1 ? sqrt(t) : 0.5*t; x = 2*x
__kernel void fused_fc6b338e(__global double *x, __global double *y, const int _n) {
    const int _i = (int)get_global_id(0);
    if (_i < _n) {
        const double _t0 = x[_i];
        const double _t1 = _t0 * _t0;
        const int _t2 = _t1 > 1.0;
        const double _t3 = sqrt(_t1);
        const double _t4 = 0.5 * _t1;
        const double _t5 = _t2 ? _t3 : _t4;
        const double _t6 = 2.0 * _t0;
        y[_i] = _t5;
        x[_i] = _t6;
    }
}
`},
		{"k = i % 7 + abs(i); f = float32(i) / 3; u = w * 2654435761", fuse.Types{"i": "int32", "k": "int32", "f": "float32", "w": "uint32", "u": "uint32"}, `// k = i % 7 + abs(i); f = float32(i) / 3; u = w * 2654435761
__kernel void fused_0b72583d(__global int *k, __global float *f, __global uint *u, __global const int *i, __global const uint *w, const int _n) {
    const int _i = (int)get_global_id(0);
    if (_i < _n) {
        const int _t0 = i[_i];
        const int _t1 = _t0 % 7;
        const int _t2 = (int)abs(_t0);
        const int _t3 = _t1 + _t2;
        const float _t4 = (float)_t0;
        const float _t5 = _t4 / 3.0f;
        const uint _t6 = w[_i];
        const uint _t7 = _t6 * 2654435761u;
        k[_i] = _t3;
        f[_i] = _t5;
        u[_i] = _t7;
    }
}
`},
	} {
		e, err := fuse.Parse(c.expr, c.types)
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		if got := e.Source(); got != c.want {
			t.Errorf("%q: source\n%s\nwant\n%s", c.expr, got, c.want)
		}
	}
}
