package main

import (
	"strings"
	"testing"
)

// TestCheckKernelArgs checks --arg specs against kernel signatures read from source: what
// fits passes, what does not is refused naming the parameter, and what the source does not
// say plainly is left to the driver.
func TestCheckKernelArgs(t *testing.T) {
	src := `#define REAL double
__kernel void vec(__global const float4 *v, __global float *out, __local float *tmp, const uint n) {}
__kernel void real(__global REAL *x, T a) {}
__kernel void any(__global void *p, __global size_t *q, size_t n) {}
void helper(__global float *p) {}
kernel void by_vector(float4 v) {}
`
	for _, c := range []struct {
		kernel  string
		defines []string
		specs   []string
		want    string // "" passes, else a part of the error
	}{
		{"vec", nil, []string{"buf:float32:16", "out:float32:4", "local:1K", "scalar:uint32:4"}, ""},
		{"vec", nil, []string{"buf:float32:16", "out:float32:4", "local:float32:64", "scalar:uint:4"}, ""},
		{"vec", nil, []string{"buf:float32:18", "out:float32:4", "local:1K", "scalar:uint32:4"},
			`parameter 0 v (__global const float4 *v) of vec: 18 float32 elements are not a whole number of float4 (a multiple of 4)`},
		{"vec", nil, []string{"buf:float32:16", "out:float32:4", "local:int32:64", "scalar:uint32:4"},
			`parameter 2 tmp (__local float *tmp) of vec: local memory of float, not of int32: want local:float32:COUNT`},
		{"vec", nil, []string{"buf:float32:16", "out:float32:4", "buf:float32:4", "scalar:uint32:4"},
			`parameter 2 tmp (__local float *tmp) of vec: a __local pointer wants local:BYTES or local:float32:COUNT, not a buf buffer of float32`},
		{"vec", nil, []string{"buf:float32:16", "out:float32:4", "local:1K", "scalar:int32:4"},
			`the kernel takes a uint, --arg passes an int32: want scalar:uint32:4`},
		{"real", []string{"-DT=int"}, []string{"buf:float64:8", "scalar:int32:1"}, ""},
		{"real", []string{"-DT=int"}, []string{"buf:float32:8", "scalar:int32:1"},
			`parameter 0 x (__global REAL *x) of real: the kernel reads double elements, the buffer holds float32: want buf:float64:8`},
		{"real", nil, []string{"buf:float64:8", "scalar:float32:1"}, ""}, // T unknown: left to the driver
		{"any", nil, []string{"buf:uint8:8", "buf:int32:8", "scalar:int32:1"}, ""},
		{"by_vector", nil, []string{"scalar:float32:1"}, "a float4 passed by value: prism exec passes scalars only"},
		{"helper", nil, []string{"buf:float32:8"}, ""}, // named in the source: the driver says it is no kernel
		{"nothere", nil, nil, "--kernel nothere: k.cl defines no kernel of that name; its kernels are vec, real, any, by_vector"},
	} {
		args, err := parseExecArgs(c.specs, c.kernel, 1)
		if err != nil {
			t.Fatal(err)
		}
		err = checkKernelArgs("k.cl", src, c.kernel, c.defines, args)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %q: %v, want it to pass", c.kernel, c.specs, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %q: %v, want an error saying %q", c.kernel, c.specs, err, c.want)
		}
	}
	// Pasted names are not read: the driver tells.
	if err := checkKernelArgs("k.cl", "#define K(n) __kernel void k_##n(int a) {}\nK(x)\n", "k_x", nil, nil); err != nil {
		t.Errorf("a kernel pasted with ##: %v", err)
	}
	// A kernel named through -D is found under the name the build gives it.
	args, _ := parseExecArgs([]string{"scalar:int32:1"}, "k", 1)
	if err := checkKernelArgs("k.cl", "__kernel void NAME(float a) {}\n", "scale", []string{"-DNAME=scale"}, args); err == nil ||
		!strings.Contains(err.Error(), "the kernel takes a float, --arg passes an int32") {
		t.Errorf("a kernel named by -D: %v, want its int32 argument refused", err)
	}
	if got := kernelNames(src, nil); strings.Join(got, " ") != "vec real any by_vector" {
		t.Errorf("kernelNames = %q", got)
	}
}
