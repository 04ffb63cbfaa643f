package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/bench/userkernel"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/enginetest"
)

// corpusDir holds the OpenCL C corpus: one kernel file per feature of the language that
// the CUDA translation rewrites, each with one "// run:" line per launch, the flags of
// prism exec that run it.
const corpusDir = "../../cuda/clc/translate/testdata/corpus"

// corpusCheck is a corpus kernel's expected outputs: ref computes them in float64 from the
// arguments' initial values (in[i] for argument i: a buffer's elements, a scalar as one
// value, nil for a __local argument), one slice per out or inout argument, in order; ulps
// holds each output's tolerance in units in the last place of its element type (0 or
// missing: exact); abs, where given, accepts a float output element within that absolute
// difference too (for results that cancel, where a fused multiply-add moves the last
// bits of a value near zero by many ulps).
type corpusCheck struct {
	ulps []float64
	abs  []float64
	ref  func(in [][]float64) [][]float64
}

// f32 rounds x to float32, as a float kernel's one operation does.
func f32(x float64) float64 { return float64(float32(x)) }

// perItem returns, for each output, a slice of items*widths[j] zeros with the items below
// n set by f, which fills item i's components of every output.
func perItem(items, n int, widths []int, f func(i int, out [][]float64)) [][]float64 {
	outs := make([][]float64, len(widths))
	for j, w := range widths {
		outs[j] = make([]float64, items*w)
	}
	views := make([][]float64, len(widths))
	for i := range min(n, items) {
		for j, w := range widths {
			views[j] = outs[j][i*w : (i+1)*w]
		}
		f(i, views)
	}
	return outs
}

// minus1 is OpenCL's true of a vector comparison: -1, else 0.
func minus1(b bool) float64 {
	if b {
		return -1
	}
	return 0
}

var corpusChecks = map[string]corpusCheck{
	"as_type": {ref: func(in [][]float64) [][]float64 {
		x, n := in[4], int(in[5][0])
		return perItem(1024, n, []int{4, 1, 4, 8}, func(i int, o [][]float64) {
			for c := range 4 {
				o[0][c] = float64(math.Float32bits(float32(x[4*i+c])))
				o[2][c] = float64(math.Float32bits(float32(x[4*i+1])) >> (8 * c) & 0xff)
			}
			o[1][0] = -x[4*i]
			for c := range 8 {
				o[3][c] = float64(int32(math.Float32bits(float32(x[4*i+c%4]))))
			}
		})
	}},
	"constant_table": {ref: func(in [][]float64) [][]float64 {
		coeffs := [3][4]float64{{1, 2, 3, 4}, {0.5, 0.5, 0.5, 0.5}, {-1, 0, 1, 0}}
		x, n := in[2], int(in[3][0])
		return perItem(1024, n, []int{4, 1}, func(i int, o [][]float64) {
			for c := range 4 {
				o[0][c] = f32(coeffs[i%3][c] * x[4*i+c])
			}
			o[1][0] = 2
		})
	}},
	"convert": {ref: func(in [][]float64) [][]float64 {
		x, n := in[7], int(in[8][0])
		return perItem(1024, n, []int{4, 4, 4, 4, 4, 1, 4}, func(i int, o [][]float64) {
			v := x[4*i : 4*i+4]
			for c := range 4 {
				o[0][c], o[1][c], o[2][c], o[3][c] = math.RoundToEven(v[c]), math.Trunc(v[c]), math.Ceil(v[c]), math.Floor(v[c])
				o[4][c] = min(max(math.RoundToEven(f32(v[c]*100)), 0), 255)
				o[6][c] = f32(math.Trunc(v[c]) + v[1])
			}
			o[5][0] = min(max(math.Trunc(f32(v[0]*100000)), -32768), 32767)
			if i > 0 { // convert_int_sat of i << 40 is INT_MAX, 2^31 as a float
				o[6][0] = f32(o[6][0] + 1<<31)
			}
		})
	}},
	"halves": {ref: func(in [][]float64) [][]float64 {
		x, n := in[3], int(in[4][0])
		return perItem(1024, n, []int{8, 4, 1}, func(i int, o [][]float64) {
			v := x[8*i : 8*i+8]
			copy(o[0], []float64{f32(v[0] + v[4]), f32(v[1] + v[5]), f32(v[2] + v[6]), f32(v[3] + v[7]),
				f32(v[0] - v[1]), f32(v[2] - v[3]), f32(v[4] - v[5]), f32(v[6] - v[7])})
			copy(o[1], []float64{v[0], 2 * v[1], v[1], 2 * v[0]})
			o[2][0] = v[2]
		})
	}},
	"splat": {ref: func(in [][]float64) [][]float64 {
		x, k, n := in[2], in[3][0], int(in[4][0])
		return perItem(1024, n, []int{4, 8}, func(i int, o [][]float64) {
			for c := range 4 {
				o[0][c] = f32(k + x[i])
			}
			for c := range 8 {
				o[1][c] = float64(2*i + 3)
			}
		})
	}},
	"swizzle_read": {ref: func(in [][]float64) [][]float64 {
		x, n := in[2], int(in[3][0])
		return perItem(1024, n, []int{4, 1}, func(i int, o [][]float64) {
			vx, vy, vz, vw := x[4*i], x[4*i+1], x[4*i+2], x[4*i+3]
			copy(o[0], []float64{f32(f32(vw+vx) + vx), f32(f32(vz+vy) + vx), f32(f32(vy+vw) + vx), f32(f32(vx+vz) + vx)})
			o[1][0] = f32(f32(vx+vw) + vw)
		})
	}},
	"swizzle_write": {ref: func(in [][]float64) [][]float64 {
		x, n := in[2], int(in[3][0])
		return perItem(1024, n, []int{4, 8}, func(i int, o [][]float64) {
			copy(o[0], []float64{x[4*i+1], x[4*i], f32(x[4*i+2] + 1), 9})
			t := math.Trunc(x[4*i])
			copy(o[1], []float64{0, 1, 2, 3, t, t, t, t})
		})
	}},
	"literal_float4": {ref: func(in [][]float64) [][]float64 {
		x, n := in[1], int(in[2][0])
		return perItem(1024, n, []int{4}, func(i int, o [][]float64) {
			copy(o[0], []float64{x[i], f32(x[i] + 1), f32(x[i] + 2), f32(x[i] + 3)})
		})
	}},
	"literal_mixed": {ref: func(in [][]float64) [][]float64 {
		x, n := in[1], int(in[2][0])
		return perItem(1024, n, []int{4}, func(i int, o [][]float64) {
			copy(o[0], []float64{x[2*i], x[2*i+1], 10, 20})
		})
	}},
	"literal_wide": {ref: func(in [][]float64) [][]float64 {
		n := int(in[2][0])
		return perItem(1024, n, []int{8, 16}, func(i int, o [][]float64) {
			for c := range 8 {
				o[0][c] = float64(c + i)
			}
			for c := range 16 {
				o[1][c] = float64((i + c) % 256)
			}
		})
	}},
	"vector_ops": {ref: func(in [][]float64) [][]float64 {
		x, y, p, n := in[4], in[5], in[6], int(in[7][0])
		return perItem(1024, n, []int{4, 4, 4, 4}, func(i int, o [][]float64) {
			for c := range 4 {
				a, b := int32(x[4*i+c]), int32(y[4*i+c])
				o[0][c] = float64((a+b)*2 - a/(b|1) + a%3 + a<<1 - b>>1 + (^a&b ^ 5))
				nz := minus1(a >= b && b != 0)
				o[1][c] = minus1(a < b) + minus1(a == b)*2 - nz + minus1(a == 0)
				v := float32(p[4*i+c])
				o[2][c] = float64(v*0.5 + 1 - v/4)
				o[3][c] = minus1(v > 0)
			}
		})
	}},
	"vload_vstore": {ref: func(in [][]float64) [][]float64 {
		x, n := in[6], int(in[7][0])
		return perItem(1024, n, []int{2, 3, 4, 8, 16, 3}, func(i int, o [][]float64) {
			for j, w := range []int{2, 3, 4, 8, 16} {
				for c := range w {
					o[j][c] = 2 * x[w*i+c]
				}
			}
			copy(o[5], x[1+3*i:4+3*i])
		})
	}},
	"wide_arith": {ulps: []float64{2, 2, 4}, ref: func(in [][]float64) [][]float64 {
		x, y, z, n := in[3], in[4], in[5], int(in[6][0])
		return perItem(1024, n, []int{8, 16, 1}, func(i int, o [][]float64) {
			dot := 0.0
			for c := range 8 {
				a, b := x[8*i+c], y[8*i+c]
				o[0][c] = a*b + 2 - a/4
				dot += a * a
			}
			o[2][0] = dot
			for c := range 16 {
				r := 2*z[16*i+c]*z[16*i] + 3
				if c >= 8 {
					r = -r
				}
				o[1][c] = r
			}
		})
	}},
	"local_args": {ref: func(in [][]float64) [][]float64 {
		x, w, n := in[0], in[1], int(in[6][0])
		sums, counts := make([]float64, 128), make([]float64, 128)
		for i := range min(n, len(x)) {
			v := x[i] * w[i%4]
			sums[i/32] += v
			if v > 0 {
				counts[i/32]++
			}
		}
		return [][]float64{sums, counts}
	}},
}

// kernelDecl finds the kernels of an OpenCL C source.
var kernelDecl = regexp.MustCompile(`(?m)(?:__kernel|^kernel)\s+(?:__attribute__\(\([^)]*\)\)\s*)?void\s+(\w+)`)

// corpusRun is one "// run:" line of a corpus file: prism exec's flags after the file.
type corpusRun struct {
	file, kernel string
	flags        []string
}

// corpusRuns reads the run lines of every corpus file; every __kernel must have one.
func corpusRuns(t *testing.T) []corpusRun {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.cl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in %s: %v", corpusDir, err)
	}
	var runs []corpusRun
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ran := map[string]bool{}
		for _, line := range strings.Split(string(src), "\n") {
			spec, ok := strings.CutPrefix(line, "// run: ")
			if !ok {
				continue
			}
			r := corpusRun{file: f, flags: strings.Fields(spec)}
			if i := slices.Index(r.flags, "--kernel"); i >= 0 && i+1 < len(r.flags) {
				r.kernel = r.flags[i+1]
			}
			if r.kernel == "" {
				t.Fatalf("%s: a run line without --kernel: %s", f, line)
			}
			ran[r.kernel] = true
			runs = append(runs, r)
		}
		for _, m := range kernelDecl.FindAllStringSubmatch(string(src), -1) {
			if !ran[m[1]] {
				t.Errorf("%s: kernel %s has no // run: line", f, m[1])
			}
		}
	}
	return runs
}

// corpusQuirks are known bugs of OpenCL implementations that a corpus kernel meets: the
// kernel does not run on a device whose name contains device, and the test says why.
var corpusQuirks = []struct{ device, kernel, why string }{
	{"Oclgrind", "convert", "Oclgrind 21.10 rounds convert_<integer>_rtp down and _rtn up"},
	{"Oclgrind", "vector_ops", "Oclgrind 21.10 makes a true component of && on int4 255, not -1"},
	{"Oclgrind", "integer_math", "Oclgrind 21.10 gives garbage for max(int4, int) and clamp(int4, int, int)"},
	{"Oclgrind", "select_float", "Oclgrind 21.10 gives wrong bits for bitselect on float4"},
}

// corpusDevice is a device the corpus runs on.
type corpusDevice struct{ id, name string }

// corpusDevices returns every device that builds OpenCL C: the OpenCL devices and the
// CUDA ones (a CUDA device missing fails the test under PRISM_REQUIRE=cuda).
func corpusDevices(t *testing.T) []corpusDevice {
	t.Helper()
	var devs []corpusDevice
	for _, backend := range []string{"opencl", "cuda"} {
		infos, err := engine.Devices(context.Background(), backend)
		if err == nil && len(infos) == 0 {
			err = fmt.Errorf("backend %s reports no device: %w", backend, engine.ErrUnavailable)
		}
		if err != nil && backend == "cuda" && !enginetest.Required("cuda") {
			t.Logf("the corpus runs without CUDA: %v", err)
			continue
		}
		enginetest.RequireOrSkip(t, backend, err)
		for _, in := range infos {
			devs = append(devs, corpusDevice{backend + ":" + in.ID, in.Name})
		}
	}
	return devs
}

// TestCorpus runs every kernel of the OpenCL C corpus, as its run lines say, through
// prism exec on every device that builds OpenCL C (OpenCL devices, and CUDA devices
// through the translation) at once: each device's outputs must match the float64
// reference here within the kernel's tolerance, and prism exec compares the devices'
// outputs with the first one's (integers exactly, floats within twice the tolerance).
// Every item beyond the kernels' n must leave its outputs untouched (zeros).
func TestCorpus(t *testing.T) {
	devs := corpusDevices(t)
	for _, d := range devs {
		t.Logf("device %s: %s", d.id, d.name)
	}
	for _, run := range corpusRuns(t) {
		t.Run(run.kernel, func(t *testing.T) {
			var ids []string
			for _, d := range devs {
				skip := false
				for _, q := range corpusQuirks {
					if q.kernel == run.kernel && strings.Contains(d.name, q.device) {
						t.Logf("not on %s (%s): %s", d.id, d.name, q.why)
						skip = true
					}
				}
				if !skip {
					ids = append(ids, d.id)
				}
			}
			if len(ids) == 0 {
				t.Skip("no device runs it correctly (see above)")
			}
			check, ok := corpusChecks[run.kernel]
			if !ok {
				check, ok = corpusBuiltinChecks[run.kernel]
			}
			if !ok {
				t.Fatalf("no expected outputs for %s", run.kernel)
			}
			tol := 0.0
			for _, u := range check.ulps {
				tol = max(tol, u)
			}
			dir := t.TempDir()
			args := append([]string{"exec", run.file}, run.flags...)
			args = append(args, "--device", strings.Join(ids, ","), "--count", "0", "--warmup", "0", "--seed", "1",
				"--tolerance-ulp", fmt.Sprint(2*tol), "--save-dir", dir, "--json")
			out, err := execPrism(t, args...)
			var sum execSummary
			if jerr := json.Unmarshal([]byte(out), &sum); jerr != nil {
				t.Fatalf("prism exec: %v\n%s", err, out)
			}
			if err != nil {
				for _, c := range sum.Compare {
					if !c.Within {
						t.Errorf("%s of %s against %s: %s", c.Output, c.Device, c.Baseline, c.Describe())
					}
				}
				t.Fatalf("prism exec: %v", err)
			}
			if len(sum.Devices) != len(ids) {
				t.Fatalf("%d devices ran, want %d", len(sum.Devices), len(ids))
			}
			specs := run.flags[:0:0]
			for i := 0; i+1 < len(run.flags); i++ {
				if run.flags[i] == "--arg" {
					specs = append(specs, run.flags[i+1])
				}
			}
			in, outs := corpusInputs(t, specs, run.kernel)
			want := check.ref(in)
			if len(want) != len(outs) {
				t.Fatalf("the reference gives %d outputs, the kernel has %d", len(want), len(outs))
			}
			for _, d := range sum.Devices {
				for j, a := range outs {
					if len(want[j]) != a.Len {
						t.Fatalf("the reference gives %d elements of %s, the kernel %d", len(want[j]), a.Name, a.Len)
					}
					got, err := userkernel.ReadNPYFile(d.Outputs[j].File)
					if err != nil {
						t.Fatal(err)
					}
					checkCorpusOutput(t, d.Device, a, want[j], got.Data, tolAt(check.ulps, j), tolAt(check.abs, j))
				}
			}
		})
	}
}

// tolAt returns v[j], or 0 past its end.
func tolAt(v []float64, j int) float64 {
	if j < len(v) {
		return v[j]
	}
	return 0
}

// corpusInputs returns the initial values of the arguments the specs give, as prism exec
// makes them (seed 1), and the output arguments.
func corpusInputs(t *testing.T, specs []string, kernel string) ([][]float64, []*userkernel.Arg) {
	t.Helper()
	args, err := parseExecArgs(specs, kernel, 1)
	if err != nil {
		t.Fatal(err)
	}
	in := make([][]float64, len(args))
	for i, a := range args {
		switch a.Kind {
		case userkernel.Local:
		case userkernel.Scalar:
			in[i] = []float64{scalarFloat(t, a.Value)}
		default:
			in[i] = make([]float64, a.Len)
			for k := range a.Len {
				in[i][k] = userkernel.ElemFloat(a.Type, a.Init, k)
			}
		}
	}
	return in, userkernel.Outputs(args)
}

// scalarFloat returns the value of a scalar argument, of one of the Go types engine passes.
func scalarFloat(t *testing.T, v any) float64 {
	switch x := v.(type) {
	case float32:
		return float64(x)
	case float64:
		return x
	case engine.Half:
		return x.Float64()
	case int8:
		return float64(x)
	case int16:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case uint8:
		return float64(x)
	case uint16:
		return float64(x)
	case uint32:
		return float64(x)
	case uint64:
		return float64(x)
	}
	t.Fatalf("scalar of type %T", v)
	return 0
}

// checkCorpusOutput compares a device's output a with the reference want (rounded to
// a's type): within ulps units in the last place, or within abs.
func checkCorpusOutput(t *testing.T, id string, a *userkernel.Arg, want []float64, got []byte, ulps, abs float64) {
	t.Helper()
	size := a.Type.Size
	ref := make([]byte, len(got))
	for i, w := range want {
		bits := uint64(int64(w))
		if a.Type.Float {
			bits = a.Type.FromFloat64(w)
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], bits)
		copy(ref[i*size:(i+1)*size], b[:size])
	}
	c := userkernel.Compare(a, ref, got, uint64(ulps))
	if c.Within {
		return
	}
	bad := 0
	one := &userkernel.Arg{Type: a.Type, Len: 1}
	for i := range a.Len {
		g, w := userkernel.ElemFloat(a.Type, got, i), userkernel.ElemFloat(a.Type, ref, i)
		gb, wb := got[i*size:(i+1)*size], ref[i*size:(i+1)*size]
		if bytes.Equal(gb, wb) || math.IsNaN(g) && math.IsNaN(w) {
			continue
		}
		if a.Type.Float && (math.Abs(g-w) <= abs || userkernel.Compare(one, wb, gb, uint64(ulps)).Within) {
			continue
		}
		if bad++; bad <= 5 {
			t.Errorf("%s: %s[%d] = %s, want %s (%v)", id, a.Name, i, userkernel.ElemString(a.Type, got, i), userkernel.ElemString(a.Type, ref, i), w)
		}
	}
	if bad > 5 {
		t.Errorf("%s: %s: %d elements wrong", id, a.Name, bad)
	}
}
