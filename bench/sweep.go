package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/suite"
	"gonum.org/v1/gonum/stat"
)

// Shapes: the cases of the ops that take an explicit shape (kernels.Params.Shape: GEMM's
// MxNxK, attention's BxHxSxD), given instead of sizes (Config.Shapes, `prism bench
// --shapes`), and the named sweep of GEMM
// shapes whose summary against the vendor library (VendorSummaries) tells a user where
// Prism stands beside cuBLAS. This file is the one home of the sweep's list.

// SweepName names the sweep in --shapes: `--shapes sweep` is SweepShapes.
const SweepName = "sweep"

// SweepShapes are the shapes of the named GEMM sweep, MxNxK: the squares 512 to 16384, the
// squares just off the tiles (4095, 4097, 6000), rectangles (a long K among them), and
// skinny products with M, N or K of 64 to 256; some are both skinny and off the tiles. Its
// FLOPs (about 1.1e13 a pass, 16384^3 nearly 80% of them) take about 0.25 s a pass in
// fp32 on an H200: with the verification, 2 warm-up and 10 timed runs, Prism's and the
// vendor's, a precision's sweep is a minute or two of device time, most of it 16384^3.
var SweepShapes = []string{
	// Squares: the shapes of --sizes 256K to 256M.
	"512x512x512", "1024x1024x1024", "2048x2048x2048", "4096x4096x4096", "8192x8192x8192", "16384x16384x16384",
	// Squares that are no tile's multiple.
	"4095x4095x4095", "4097x4097x4097", "6000x6000x6000",
	// Rectangles.
	"4096x1024x512", "1024x4096x4096", "4096x4096x1024", "8192x8192x2048", "2048x2048x16384",
	// Skinny: N, then M, then K of 64 to 256.
	"8192x64x8192", "8192x128x8192", "8192x256x8192",
	"64x8192x8192", "128x8192x8192", "256x8192x8192",
	"8192x8192x128",
	// Skinny or rectangular, and no tile's multiple.
	"4095x128x4095", "6000x4095x2000",
}

// TakesShape reports whether op takes a shape (kernels.Params.Shape): the GEMM and
// attention ops.
func TakesShape(op kernels.Op) bool { return suite.TakesShape(op) }

// ShapeFamilies names the families whose ops take a shape, for messages.
func ShapeFamilies() []string { return suite.ShapeFamilies() }

// ParseShapes reads the --shapes list: GEMM shapes written MxNxK ("4096x1024x512"),
// attention shapes written BxHxSxD ("4x32x4096x128"), or SweepName for SweepShapes, in the
// order given, each once (a shape given twice, or given and in the sweep, runs once),
// spelled canonically ("4095X4095X4095" is "4095x4095x4095"). Errors are
// suite.ParseShape's, which wrap engine.ErrInvalidArg and name the shape at fault; whether
// each op takes each shape is CheckShapes'.
func ParseShapes(list []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(s string) error {
		c, err := suite.ParseShape(s)
		if err != nil {
			return err
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
		return nil
	}
	for _, s := range list {
		if strings.EqualFold(strings.TrimSpace(s), SweepName) {
			for _, w := range SweepShapes {
				if err := add(w); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := add(s); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: no shape given: %w", engine.ErrInvalidArg)
	}
	return out, nil
}

// CheckShapes checks that every op takes a shape and that each of its shapes fits it (the
// family's spelling, the kernels' index range, over a batch; an attention op's head
// dimension): errors wrap engine.ErrInvalidArg and name the op and shape.
func CheckShapes(ops []kernels.Op, shapes []string) error {
	for _, op := range ops {
		if !suite.TakesShape(op) {
			return fmt.Errorf("bench: %s takes a size, not a shape: only the ops of the %s take shapes: %w",
				op.Name, familiesText(ShapeFamilies()), engine.ErrInvalidArg)
		}
		for _, s := range shapes {
			if _, _, err := suite.CheckShape(op, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// familiesText names families in a sentence: "gemm family", "attention and gemm
// families".
func familiesText(fs []string) string {
	switch len(fs) {
	case 0:
		return "no family"
	case 1:
		return fs[0] + " family"
	}
	return strings.Join(fs[:len(fs)-1], ", ") + " and " + fs[len(fs)-1] + " families"
}

// point is one size or shape a case runs at: shape is empty for a size, and for a square
// shape, which is the case of its size.
type point struct {
	size  int
	shape string
}

// points returns the sizes or shapes op runs at on a device of kind.
func (cfg Config) points(op kernels.Op, kind engine.Kind) []point {
	if len(cfg.Shapes) == 0 {
		var out []point
		for _, s := range cfg.sizes(op, kind) {
			out = append(out, point{size: s})
		}
		return out
	}
	var out []point
	for _, s := range cfg.Shapes {
		sh, ok, err := suite.CheckShape(op, s)
		if !ok || err != nil {
			continue // Run refused this (CheckShapes)
		}
		canon := sh.Canon
		if sh.Square {
			canon = ""
		}
		out = append(out, point{size: sh.Size, shape: canon})
	}
	return out
}

// at returns cfg set to run the cases of point p: kernels.Params.Shape and Result.Dims
// come from it.
func (cfg Config) at(p point) Config {
	cfg.shape = p.shape
	return cfg
}

// checkShapesConfig refuses a Config that gives both sizes and shapes, or a shape that an
// op does not take.
func (cfg Config) checkShapesConfig() error {
	if len(cfg.Shapes) == 0 {
		return nil
	}
	if len(cfg.Sizes) > 0 {
		return fmt.Errorf("bench: sizes %v and shapes %v: give one or the other: %w", cfg.Sizes, cfg.Shapes, engine.ErrInvalidArg)
	}
	return CheckShapes(cfg.Ops, cfg.Shapes)
}

// checkCaseFootprint is checkFootprint for a case at size, or at cfg's shape where set:
// a shape needs memory in proportion to the elements of its operands (a skinny product's
// A and B can be far larger than its C, which its size counts; an attention shape's Q, K,
// V and O are 4 x its size, as its size's own shape's), named in the error.
func (cfg Config) checkCaseFootprint(dev *engine.Device, op kernels.Op, size int) error {
	if cfg.shape == "" {
		return checkFootprint(dev, op, size)
	}
	sh, _, err := suite.CheckShape(op, cfg.shape)
	if err != nil {
		return err
	}
	// The size whose footprint is the shape's: a GEMM square's operands are 3 x its size.
	like := sh.Like
	if err := checkFootprint(dev, op, like); err != nil {
		return fmt.Errorf("%w (shape %s: about the memory of size %s)", err, cfg.shape, FormatSize(like))
	}
	return nil
}

// SizeText writes a case's size for reports and progress: its shape where one was given
// that its size does not give (Result.Dims, "4096x1024x512"), else its size (FormatSize).
func SizeText(size int, dims string) string {
	if dims != "" {
		return dims
	}
	return FormatSize(size)
}

// BestVariant is VendorSummary.Variant for the fastest of Prism's variants, case by case.
const BestVariant = "best"

// VendorSummary is how Prism compares with the vendor library on one device over the cases
// of one family of a report that have a vendor baseline (a sweep of shapes, several sizes),
// for one precision and one of Prism's variants: the geometric mean and the worst of the
// ratios of the "vs vendor" column, the vendor's time over Prism's (above 1: Prism is
// faster).
type VendorSummary struct {
	// Device is the device's ID; Family the ops' family (summaryFamilies); Type the
	// precision (Result.Type).
	Device string `json:"device"`
	Family string `json:"family"`
	Type   string `json:"type"`
	// Variant is Prism's variant, or BestVariant: in each case the fastest of Variants,
	// Prism's variants that ran it (--variant).
	Variant  string   `json:"variant"`
	Variants []string `json:"variants,omitempty"`
	// Library is the vendor library the baselines ran, with its version ("cuBLAS
	// 13.0.2"), where the baselines name one.
	Library string `json:"library,omitempty"`
	// Cases counts the cases with a baseline; GeoMean is the geometric mean of their
	// ratios.
	Cases   int     `json:"cases"`
	GeoMean float64 `json:"geomean"`
	// Worst is the smallest ratio, of the case WorstCase (the op's name) at WorstSize,
	// WorstShape (the shape set up, "M=8192 N=64 K=8192") and WorstDims (the shape asked
	// for, where its size does not give it).
	Worst      float64 `json:"worst"`
	WorstCase  string  `json:"worst_case"`
	WorstSize  int     `json:"worst_size"`
	WorstShape string  `json:"worst_shape"`
	WorstDims  string  `json:"worst_dims,omitempty"`
}

// summaryFamilies are the families VendorSummaries summarizes, in order: the ops that take
// shapes (--shapes), whose cases a sweep multiplies.
var summaryFamilies = []string{"gemm", "attention"}

// VendorSummaries returns, for each device of Prism's, each family of summaryFamilies and
// each precision of its cases that have a vendor baseline (Report.VendorBaseline: the same run's --vendor, or a vendor
// pseudo-device from scripts/vendor.py merged in), one VendorSummary per variant of Prism's
// that ran them and, where several did, one for the fastest of them case by case
// (BestVariant). Groups of fewer than two cases are left out: one ratio is the table's
// own. Devices keep the report's order, precisions and variants their first appearance.
func (r *Report) VendorSummaries() []VendorSummary {
	var out []VendorSummary
	for i := range r.Devices {
		if r.Devices[i].IsVendor() {
			continue
		}
		for _, fam := range summaryFamilies {
			out = append(out, r.vendorSummaries(i, fam)...)
		}
	}
	return out
}

// vendorSummaries returns VendorSummaries' summaries of device i's cases of family fam.
func (r *Report) vendorSummaries(i int, fam string) []VendorSummary {
	var out []VendorSummary
	d := &r.Devices[i]
	var types []string
	variantsOf := map[string][]string{}        // type -> Prism's variants, in order
	byVariant := map[[2]string][]vendorRatio{} // type, variant -> ratios
	best := map[CaseKey]vendorRatio{}          // per case, the fastest variant's
	var bestOrder []CaseKey
	for j := range d.Results {
		res := &d.Results[j]
		if res.Family != fam || res.VendorLibrary || !res.OK() || res.Stats.Median <= 0 {
			continue
		}
		v := r.VendorBaseline(i, res)
		if v == nil {
			continue
		}
		x := vendorRatio{res, float64(v.Stats.Median) / float64(res.Stats.Median), v.Library}
		if !slices.Contains(types, res.Type) {
			types = append(types, res.Type)
		}
		if !slices.Contains(variantsOf[res.Type], res.Variant) {
			variantsOf[res.Type] = append(variantsOf[res.Type], res.Variant)
		}
		tv := [2]string{res.Type, res.Variant}
		byVariant[tv] = append(byVariant[tv], x)
		k := res.Key()
		k.Variant = ""
		if b, ok := best[k]; !ok || res.Stats.Median < b.res.Stats.Median {
			if !ok {
				bestOrder = append(bestOrder, k)
			}
			best[k] = x
		}
	}
	for _, t := range types {
		for _, v := range variantsOf[t] {
			if s, ok := summarize(d.Device.ID, t, v, byVariant[[2]string{t, v}]); ok {
				s.Family = fam
				out = append(out, s)
			}
		}
		if len(variantsOf[t]) < 2 {
			continue
		}
		var xs []vendorRatio
		for _, k := range bestOrder {
			if b := best[k]; b.res.Type == t {
				xs = append(xs, b)
			}
		}
		if s, ok := summarize(d.Device.ID, t, BestVariant, xs); ok {
			s.Family, s.Variants = fam, variantsOf[t]
			out = append(out, s)
		}
	}
	return out
}

// vendorRatio is one case of a VendorSummary: Prism's result, the vendor's time over its
// time, and the vendor's library.
type vendorRatio struct {
	res   *Result
	ratio float64
	lib   string
}

// summarize is the VendorSummary of one group of ratios; false for fewer than two.
func summarize(dev, typ, variant string, xs []vendorRatio) (VendorSummary, bool) {
	if len(xs) < 2 {
		return VendorSummary{}, false
	}
	s := VendorSummary{Device: dev, Type: typ, Variant: variant, Cases: len(xs), Worst: math.Inf(1)}
	var libs []string
	ratios := make([]float64, len(xs))
	for i, x := range xs {
		ratios[i] = x.ratio
		if x.ratio < s.Worst {
			s.Worst, s.WorstCase, s.WorstSize, s.WorstShape, s.WorstDims = x.ratio, x.res.Case, x.res.Size, x.res.Shape, x.res.Dims
		}
		if x.lib != "" && !slices.Contains(libs, x.lib) {
			libs = append(libs, x.lib)
		}
	}
	s.GeoMean = stat.GeometricMean(ratios, nil)
	s.Library = strings.Join(libs, ", ")
	return s, true
}
