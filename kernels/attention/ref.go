package attention

import (
	"math"

	"github.com/prism-compute/prism/kernels"
)

// AttentionRef computes O = softmax(Q K^T * scale [+ causal mask]) V in float64 for tensors
// of shape s (row-major [batch, heads, seq, dim]) from the values of q, k and v as stored:
// the reference of attention.cl. scale is used as given (pass AttentionScale, the factor
// the device used).
func AttentionRef[S Elem](q, k, v []S, s AttentionShape, causal bool, scale float64) []float64 {
	out := make([]float64, s.Elems())
	r := newAttnRefRow(s.Seq, s.Dim)
	for h := range s.Batch * s.Heads {
		for i := range s.Seq {
			attnRefCompute(r, q, k, v, s, h, i, causal, scale)
			copy(out[(h*s.Seq+i)*s.Dim:], r.out)
		}
	}
	return out
}

// attnRefRow is one output row (one query of one head) and what its tolerance needs. It
// keeps the K and V of the last head computed in float64: one attnRefRow serves one set of
// inputs.
type attnRefRow struct {
	out   []float64                // the output row, dim elements
	w     []float64                // per dimension d: sum_j p_j |v_jd|, p_j the true probabilities
	vmax  []float64                // per dimension d: max_j |v_jd| over the unmasked keys
	qk    float64                  // scale * max_j sum_d |q_d k_jd| over the unmasked keys
	span  float64                  // max_j s_j - min_j s_j over the unmasked keys
	l     float64                  // sum_j exp(s_j - max_j s_j) over the unmasked keys: at least 1
	keys  int                      // unmasked keys
	score []float64                // scratch: the scores, then exp(s_j - max)
	acc   []kernels.CompensatedSum // scratch: the output sums
	qi    []float64                // scratch: the query row
	head  int                      // the head whose K and V kh and vh hold (-1: none)
	kh    []float64                // K of head, seq*dim values
	vh    []float64                // V of head, seq*dim values
}

func newAttnRefRow(seq, dim int) *attnRefRow {
	return &attnRefRow{out: make([]float64, dim), w: make([]float64, dim), vmax: make([]float64, dim),
		score: make([]float64, seq), acc: make([]kernels.CompensatedSum, dim), qi: make([]float64, dim),
		head: -1, kh: make([]float64, seq*dim), vh: make([]float64, seq*dim)}
}

// attnRefCompute fills r for query i of head h (h counts over batch*heads).
func attnRefCompute[S Elem](r *attnRefRow, q, k, v []S, s AttentionShape, h, i int, causal bool, scale float64) {
	base := h * s.Seq * s.Dim
	if r.head != h {
		widen(r.kh, k[base:base+s.Seq*s.Dim])
		widen(r.vh, v[base:base+s.Seq*s.Dim])
		r.head = h
	}
	widen(r.qi, q[base+i*s.Dim:base+(i+1)*s.Dim])
	qi := r.qi
	r.keys = s.Seq
	if causal {
		r.keys = i + 1
	}
	hi, lo := math.Inf(-1), math.Inf(1)
	r.qk = 0
	for j := range r.keys {
		kj := r.kh[j*s.Dim : (j+1)*s.Dim]
		var dot kernels.CompensatedSum
		var abs float64
		for d, x := range qi {
			p := x * kj[d] // exact: a product of two float32 (or narrower) values, or one rounding
			dot.Add(p)
			abs += math.Abs(p)
		}
		sc := scale * dot.Sum()
		r.score[j] = sc
		hi, lo = math.Max(hi, sc), math.Min(lo, sc)
		r.qk = math.Max(r.qk, math.Abs(scale)*abs)
	}
	r.span = hi - lo
	var ls kernels.CompensatedSum
	for j := range r.keys {
		r.score[j] = math.Exp(r.score[j] - hi)
		ls.Add(r.score[j])
	}
	l := ls.Sum()
	r.l = l
	clear(r.acc)
	clear(r.w)
	clear(r.vmax)
	for j := range r.keys {
		p := r.score[j] / l
		vj := r.vh[j*s.Dim : (j+1)*s.Dim]
		for d, f := range vj {
			r.acc[d].Add(p * f)
			r.w[d] += p * math.Abs(f)
			r.vmax[d] = math.Max(r.vmax[d], math.Abs(f))
		}
	}
	for d := range r.out {
		r.out[d] = r.acc[d].Sum()
	}
}

// AttentionTolerance returns the largest error allowed between a device attention output
// element and the float64 reference, for a query row with keys unmasked keys out of seq, head
// dimension dim, on a kernel with key blocks of bc keys (Attention.BlockKeys). qk is
// scale * max_j sum_d |q_d k_jd| and span the range max_j s_j - min_j s_j of the row's scores
// (over its unmasked keys j); w = sum_j p_j |v_jd| and vmax = max_j |v_jd| for the element's
// dimension d.
//
// Derivation (first order in u, the unit roundoff of T; Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., 3.1 and 4.2):
//   - Scores: the kernel scales q once (one rounding), then sums dim products in one chain,
//     so |s'_j - s_j| <= gamma_{dim+1} * scale * sum_d |q_d k_jd| <= Delta = gamma_{dim+1}*qk.
//     exp turns that into a relative error of at most expm1(Delta) on each unnormalized
//     weight exp(s_j).
//   - Online softmax: the weight of key j is exp(s_j - m_b) times the rescale factors
//     alpha = exp(m_old - m_new) of the later blocks (at most nb = ceil(seq/bc)). Each exp
//     errs by ExpErrU*u (3 ulp), each rescaling product by u; the exp arguments round by u
//     times their size, at most span for s_j - m_b and span in all for the telescoping
//     m_old - m_new. So each weight errs relatively by eps_w = 2u*span + (7*nb + 6)*u.
//   - The sums l = sum p_j and o_d = sum p_j v_jd run sequentially over the keys and the
//     nb rescalings: chains of at most n = keys + nb + 2 roundings, gamma_n.
//   - With a = expm1(Delta) + eps_w and b = (1+a)(1+gamma_n) - 1 the relative perturbation of
//     every term of numerator and denominator, o'/l' - o/l = (sum p_j v_jd beta_j - O*lambda)
//     /(1+lambda) with |beta_j|, |lambda| <= b, hence |o'/l' - O| <= 2b/(1-b) * w (|O| <= w);
//     the final division adds DivErrU*u*w.
//   - Weights below the smallest normal number tiny may be flushed to zero: at most
//     2*tiny*vmax per key, seq*2*tiny*vmax in all.
//
// The reference's own error (compensated sums: scores within 3*RefU*qk, weights within
// 2*RefU*span + 4*RefU, sums 2*RefU, products RefU) adds 2*(3*RefU*qk + 2*RefU*span +
// 8*RefU)*w. This is a worst-case bound: it grows like seq*u through gamma_n (e.g. 2.5e-4 relative to w
// at seq = 4096 in float32), while typical errors grow like sqrt(seq)*u.
func AttentionTolerance[T kernels.Float](seq, keys, dim, bc int, qk, span, w, vmax float64) float64 {
	u := kernels.Epsilon[T]()
	nb := (seq + bc - 1) / bc
	a := math.Expm1(kernels.Gamma[T](dim+1)*qk) + 2*u*span + float64(7*nb+6)*u
	b := (1+a)*(1+kernels.Gamma[T](keys+nb+2)) - 1
	if !(b < 1) {
		return math.Inf(1)
	}
	ref := 2 * (3*kernels.RefU*qk + 2*kernels.RefU*span + 8*kernels.RefU)
	return (2*b/(1-b)+kernels.DivErrU*u+ref)*w + float64(seq)*2*kernels.TypeOf[T]().MinNormal*vmax
}

// AttentionToleranceOf returns the largest error allowed between a device attention output
// element stored in S and the float64 reference (computed from the inputs as stored), with
// the arguments of AttentionTolerance and l, the row's sum_j exp(s_j - max_j s_j) over its
// unmasked keys (at least 1). For float32 and float64 it is AttentionTolerance[S]. For
// float16, bfloat16 and float8e4m3, whose inputs convert exactly and whose arithmetic is
// float32:
//
//	2*AttentionTolerance[float32](seq, keys, dim, bc, qk, span, w, vmax) + (uP + uOut)*w
//	+ (keys*vmax/l + 1)*sub [+ 2*2^-13*w in float8e4m3]
//
// with uP = uOut = the unit roundoff of S (2^-11 for float16, 2^-8 for bfloat16, 2^-4 for
// float8e4m3) and sub half its smallest subnormal (2^-25, 2^-134, 2^-10):
//   - The factor 2 takes the float32 computation to a unit of 2^-23: tensor cores may
//     truncate rather than round as they align and add (Fasi, Higham, Mikaitis and
//     Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ Comput. Sci. 7:e330,
//     2021); the portable kernel rounds, within the bound undoubled.
//   - uP*w covers an implementation that rounds the probabilities P to S before the P V
//     product, as FlashAttention does on tensor cores: each weight p_j then errs relatively
//     by uP, so the output by at most uP*sum_j p_j |v_jd| = uP*w (the normalization l
//     sums the unrounded weights in float32). The portable kernel does not round P.
//   - uOut*w is the rounding of O to S as it is stored: |O| <= w.
//   - Below S's smallest normal, rounding errs absolutely, by at most sub: once for O, and
//     once per weight rounded to S (keys of them, each multiplying a |v_jd| <= vmax). A
//     kernel holds the weights unnormalized, exp(s_j - m) against a reference m no larger
//     than the row's max (a running max, or one moved only past a margin), which a later
//     rescaling by exp(m - m') <= 1 only shrinks, and divides by their sum, at least l:
//     the weights' part of O's error is at most keys*vmax*sub/l.
//   - In float8e4m3 the wgmma kernel takes some weights from a cubic on the FMA pipes
//     (wgmma.cu's exp2_poly, within 2^-13 relatively) rather than ex2.approx: each such
//     weight errs by that much more in O's sum and in l, at most 2*2^-13*w in all.
//
// The reference's own error is in AttentionTolerance's part. Outputs beyond S's range (not
// reached by softmax averages of values in S) are not covered.
func AttentionToleranceOf[S Elem](seq, keys, dim, bc int, qk, span, w, vmax, l float64) float64 {
	stored, _ := elemTypes[S]()
	switch stored.Name {
	case "float32":
		return AttentionTolerance[float32](seq, keys, dim, bc, qk, span, w, vmax)
	case "float64":
		return AttentionTolerance[float64](seq, keys, dim, bc, qk, span, w, vmax)
	}
	uP, uOut, sub := stored.Unit, stored.Unit, stored.MinSubnormal/2
	tol := 2*AttentionTolerance[float32](seq, keys, dim, bc, qk, span, w, vmax) + (uP+uOut)*w + (float64(keys)*vmax/max(l, 1)+1)*sub
	if stored.Name == "float8e4m3" {
		tol += 2 * attnExpPolyErr * w
	}
	return tol
}

// attnExpPolyErr bounds the relative error of wgmma.cu's exp2_poly (9.97e-5 measured over
// its range in float32 arithmetic).
const attnExpPolyErr = 0x1p-13

// attnRowTol returns the tolerance of element d of the row r, stored in S.
func attnRowTol[S Elem](r *attnRefRow, s AttentionShape, bc, d int) float64 {
	return AttentionToleranceOf[S](s.Seq, r.keys, s.Dim, bc, r.qk, r.span, r.w[d], r.vmax[d], r.l)
}
