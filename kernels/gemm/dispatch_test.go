package gemm

import (
	"slices"
	"strings"
	"testing"
)

var implNames = map[impl]string{
	implWGMMA: "cuda-wgmma", implMMA: "cuda-mma", implSimt: "cuda-simt", implVendor: "vendor",
	implCLMMA: "opencl-mma", implCLSimt: "opencl-simt", implPortable: "portable",
}

func names(ims []impl) []string {
	var out []string
	for _, im := range ims {
		out = append(out, implNames[im])
	}
	return out
}

// TestDispatch pins which implementation runs for which precision: the implementations
// New tries, and those each layout's op lists, in priority order, for every precision.
func TestDispatch(t *testing.T) {
	const (
		wg, mma, simt, vendor, clmma, clsimt, portable = "cuda-wgmma", "cuda-mma", "cuda-simt", "vendor", "opencl-mma", "opencl-simt", "portable"
	)
	for _, c := range []struct {
		prec           string
		code           Prec
		newList        []string
		nn, nt, tn, tt []string
		tensor         bool
	}{
		{"float32", PrecFloat32, []string{simt, clsimt, portable},
			[]string{simt, vendor, clsimt, portable}, []string{simt, vendor, clsimt, portable}, []string{simt, vendor, clsimt, portable}, []string{simt, vendor, clsimt, portable}, false},
		{"float64", PrecFloat64, []string{portable},
			[]string{mma, vendor, portable}, []string{mma, vendor, portable}, []string{mma, vendor, portable}, []string{mma, vendor, portable}, true},
		{"tf32", PrecTF32, []string{wg, mma, clmma, portable},
			[]string{wg, mma, vendor, clmma, portable}, []string{wg, mma, vendor, clmma, portable}, []string{wg, mma, vendor, clmma, portable}, []string{wg, mma, vendor, clmma, portable}, true},
		{"float32x3tf32", PrecFloat32x3TF32, []string{wg, mma, portable},
			[]string{wg, mma, portable}, []string{wg, mma, portable}, []string{wg, mma, portable}, []string{wg, mma, portable}, true},
		{"float16", PrecFloat16, []string{wg, mma, clmma, portable},
			[]string{wg, mma, vendor, clmma, portable}, []string{wg, mma, vendor, clmma, portable}, []string{mma, vendor, clmma, portable}, []string{mma, vendor, clmma, portable}, true},
		{"bfloat16", PrecBFloat16, []string{wg, mma, clmma, portable},
			[]string{wg, mma, vendor, clmma, portable}, []string{wg, mma, vendor, clmma, portable}, []string{mma, vendor, clmma, portable}, []string{mma, vendor, clmma, portable}, true},
		{"float8e4m3", PrecFloat8E4M3, []string{wg, mma, portable},
			[]string{wg, mma, vendor, portable}, []string{wg, mma, vendor, portable}, []string{mma, vendor, portable}, []string{mma, vendor, portable}, true},
		{"float8e5m2", PrecFloat8E5M2, []string{wg, mma, portable},
			[]string{wg, mma, portable}, []string{wg, mma, portable}, []string{mma, portable}, []string{mma, portable}, true},
	} {
		p, ok := LookupPrecision(c.prec)
		if !ok {
			t.Fatalf("no precision %s", c.prec)
		}
		if p.MMA != c.code {
			t.Errorf("%s: MMA %d, want %d", c.prec, p.MMA, c.code)
		}
		if p.MMA.TensorCore() != c.tensor {
			t.Errorf("%s: TensorCore() = %v, want %v", c.prec, p.MMA.TensorCore(), c.tensor)
		}
		if got := names(newImpls(p.MMA)); !slices.Equal(got, c.newList) {
			t.Errorf("New(%s) tries %v, want %v", c.prec, got, c.newList)
		}
		for _, l := range []struct {
			name   string
			ta, tb bool
			want   []string
		}{{"nn", false, false, c.nn}, {"nt", false, true, c.nt}, {"tn", true, false, c.tn}, {"tt", true, true, c.tt}} {
			if got := names(opImpls(p.MMA, l.ta, l.tb)); !slices.Equal(got, l.want) {
				t.Errorf("gemm/%s/%s lists %v, want %v", l.name, c.prec, got, l.want)
			}
		}
	}
}

// TestOpVariantsFollowDispatch checks that every op of the family lists its variants in
// dispatch's order (the vendor entry standing for cuBLAS and CLBlast, or for cuBLASLt).
func TestOpVariantsFollowDispatch(t *testing.T) {
	layouts := map[string][2]bool{"nn": {false, false}, "nt": {false, true}, "tn": {true, false}, "batched": {false, false}}
	for _, op := range Family().Ops {
		var layout, prec string
		for i, part := range strings.Split(op.Name, "/") {
			switch i {
			case 1:
				layout = part
			case 2:
				prec = part
			}
		}
		p, ok := LookupPrecision(prec)
		l, okl := layouts[layout]
		if !ok || !okl {
			t.Fatalf("%s: unknown layout or precision", op.Name)
		}
		var want []string
		for _, n := range names(opImpls(p.MMA, l[0], l[1])) {
			if n == "vendor" && p.MMA.BLASLt() {
				want = append(want, "cuBLASLt")
				continue
			}
			if n == "vendor" {
				want = append(want, "cuBLAS", "CLBlast")
				continue
			}
			want = append(want, n)
		}
		if got := op.VariantNames(); !slices.Equal(got, want) {
			t.Errorf("%s: variants %v, want %v", op.Name, got, want)
		}
	}
}
