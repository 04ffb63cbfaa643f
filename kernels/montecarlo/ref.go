package montecarlo

import (
	"math"
	"runtime"
	"sync"

	"github.com/prism-compute/prism/kernels"
)

// The Philox-4x32 constants (Salmon et al., SC'11; Random123's philox.h): the round
// multipliers and the Weyl sequence that bumps the key between rounds.
const (
	philoxM0 = 0xD2511F53
	philoxM1 = 0xCD9E8D57
	philoxW0 = 0x9E3779B9
	philoxW1 = 0xBB67AE85
)

// Philox4x32 returns Philox-4x32-10 of counter ctr under key: ten rounds, the key bumped
// by the Weyl constants before each round after the first (Random123's philox4x32_R with
// R = 10). It reproduces Random123's known-answer vectors (see the tests).
func Philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	c0, c1, c2, c3 := ctr[0], ctr[1], ctr[2], ctr[3]
	k0, k1 := key[0], key[1]
	for r := range 10 {
		if r > 0 {
			k0 += philoxW0
			k1 += philoxW1
		}
		p0 := uint64(philoxM0) * uint64(c0)
		p1 := uint64(philoxM1) * uint64(c2)
		c0, c1, c2, c3 = uint32(p1>>32)^c1^k0, uint32(p1), uint32(p0>>32)^c3^k1, uint32(p0)
	}
	return [4]uint32{c0, c1, c2, c3}
}

// Block returns the four words of counter block b of p's stream (words 4b .. 4b+3 counted
// from the start of the stream, not from p.Offset).
func (p Philox) Block(b uint64) [4]uint32 {
	return Philox4x32([4]uint32{uint32(b), uint32(b >> 32), uint32(p.Stream), uint32(p.Stream >> 32)},
		[2]uint32{uint32(p.Seed), uint32(p.Seed >> 32)})
}

// Word returns word p.Offset + j of p's stream.
func (p Philox) Word(j int) uint32 {
	i := p.Offset + uint64(j)
	return p.Block(i / 4)[i%4]
}

// PhiloxRef returns the n words of p's stream from p.Offset on: the reference of
// MonteCarlo.Bits, compared exactly.
func PhiloxRef(p Philox, n int) []uint32 {
	out := make([]uint32, n)
	for j := 0; j < n; {
		i := p.Offset + uint64(j)
		x := p.Block(i / 4)
		for w := i % 4; w < 4 && j < n; w++ {
			out[j] = x[w]
			j++
		}
	}
	return out
}

// Uniform24 returns the uniform of a word in [0, 1): (x >> 8) * 2^-24, exact in float32.
func Uniform24(x uint32) float32 { return float32(x>>8) * 0x1p-24 }

// uniform24c returns the uniform of a word in (0, 1]: ((x >> 8) + 1) * 2^-24, exact.
func uniform24c(x uint32) float32 { return float32(x>>8+1) * 0x1p-24 }

// UniformRef returns the n uniforms of p's stream from p.Offset on: the reference of
// MonteCarlo.Uniform, compared exactly (the conversion is exact in float32).
func UniformRef(p Philox, n int) []float32 {
	w := PhiloxRef(p, n)
	out := make([]float32, n)
	for i, x := range w {
		out[i] = Uniform24(x)
	}
	return out
}

// boxMuller returns, for the pair of words (a, b), the radius r = sqrt(-2 ln u1), the angle
// theta = 2 pi u2, and the two normals r cos(theta), r sin(theta), in float64 from the
// exact float32 uniforms u1 = uniform24c(a), u2 = Uniform24(b).
func boxMuller(a, b uint32) (r, theta, z0, z1 float64) {
	r = math.Sqrt(-2 * math.Log(float64(uniform24c(a))))
	theta = 2 * math.Pi * float64(Uniform24(b))
	s, c := math.Sincos(theta)
	return r, theta, r * c, r * s
}

// NormalAt returns normal j of p's stream counted from p.Offset (word p.Offset + j), in
// float64, and the tolerance of a float32 device result (see NormalTolerance).
func NormalAt(p Philox, j int) (z, tol float64) {
	i := p.Offset + uint64(j)
	x := p.Block(i / 4)
	w := i % 4
	r, theta, z0, z1 := boxMuller(x[w&^1], x[w|1])
	if w%2 == 1 {
		z0 = z1
	}
	c := 0.0
	if r > 0 {
		c = z0 / r
	}
	return z0, NormalTolerance(r, theta, c)
}

// NormalRef returns the n normals of p's stream from p.Offset on in float64 and the
// tolerance of each float32 device result: the reference of MonteCarlo.Normal.
func NormalRef(p Philox, n int) (z, tol []float64) {
	z, tol = make([]float64, n), make([]float64, n)
	for j := 0; j < n; {
		i := p.Offset + uint64(j)
		x := p.Block(i / 4)
		for pair := 0; pair < 2; pair++ {
			r, theta, z0, z1 := boxMuller(x[2*pair], x[2*pair+1])
			for w, zw := range [2]float64{z0, z1} {
				if uint64(2*pair+w) < i%4 || j >= n {
					continue // before the offset, or past the end
				}
				c := 0.0
				if r > 0 {
					c = zw / r
				}
				z[j], tol[j] = zw, NormalTolerance(r, theta, c)
				j++
			}
		}
	}
	return z, tol
}

// NormalTolerance returns the largest error allowed between a float32 device normal and
// the float64 reference r*c, where r = sqrt(-2 ln u1), theta = 2 pi u2 and c is
// cos(theta) or sin(theta). With u = 2^-24 and the OpenCL 1.2 bounds (section 7.4, the
// CUDA functions are tighter): log <= 3 ulp, sqrt <= 3 ulp, sin and cos <= 4 ulp, 1 ulp <=
// 2u relative:
//   - r: log errs by <= 6u relative, the product by -2 is exact, the square root halves it
//     and adds <= 6u: <= 9u relative;
//   - theta: 2 pi rounded to float (u) times u2 rounded (u): |theta' - theta| <= 2u theta;
//   - c: |cos(theta') - cos(theta)| <= |theta' - theta|, plus 8u |c| for the function:
//     <= 8u |c| + 2u theta (likewise sin);
//   - z = r*c rounded (u).
//
// Together, to first order: r (18u |c| + 2u theta), here times 1.01 for the second-order
// terms, plus one unit of float32 rounding at the smallest normal.
func NormalTolerance(r, theta, c float64) float64 {
	u := math.Ldexp(1, -24)
	return 1.01*r*(18*u*math.Abs(c)+2*u*theta) + math.SmallestNonzeroFloat32
}

// PiRef returns how many of n points fall in the unit quarter circle (see
// MonteCarlo.PiCountInto), by the same exact test: the reference, compared exactly.
// p.Offset must be a multiple of 4.
func PiRef(p Philox, n int) uint32 {
	b0 := p.Offset / 4
	nblocks := (n + 1) / 2
	parts := mcParallel(nblocks, func(lo, hi int) float64 {
		c := 0
		for b := lo; b < hi; b++ {
			x := p.Block(b0 + uint64(b))
			c += inCircle(x[0], x[1])
			if 2*b+1 < n {
				c += inCircle(x[2], x[3])
			}
		}
		return float64(c)
	})
	var c uint32
	for _, v := range parts {
		c += uint32(v[0])
	}
	return c
}

func inCircle(a, b uint32) int {
	x, y := uint64(a>>8), uint64(b>>8)
	if x*x+y*y < 1<<48 {
		return 1
	}
	return 0
}

// OptionEstimate is the float64 reference of a Monte Carlo option price over n paths, with
// what OptionTolerance needs.
type OptionEstimate struct {
	// Price is exp(-rT) times the mean payoff of the paths.
	Price float64
	// StdErr is the standard error of Price: exp(-rT) times the standard deviation of the
	// payoffs over sqrt(n).
	StdErr float64
	// PayoffSum is the sum of the payoffs; PathErr the sum over paths of the bound on the
	// error of one float32 device payoff (see OptionTolerance).
	PayoffSum, PathErr float64
	// N is the number of paths.
	N int
}

// OptionRef prices o over n paths in float64 (see MonteCarlo.OptionInto): path j takes the
// float64 Box-Muller normal of word p.Offset + j from the same float32 uniforms as the
// device (p.Offset a multiple of 4). The paths are split among goroutines.
func OptionRef(o Option, n int, p Philox) OptionEstimate {
	u := math.Ldexp(1, -24)
	drift, vol := (o.Rate-o.Sigma*o.Sigma/2)*o.T, o.Sigma*math.Sqrt(o.T)
	b0 := p.Offset / 4
	nblocks := (n + 3) / 4
	sums := mcParallelN(nblocks, 3, func(lo, hi int, acc []float64) {
		for b := lo; b < hi; b++ {
			x := p.Block(b0 + uint64(b))
			var zs, rs, ts [4]float64
			rs[0], ts[0], zs[0], zs[1] = boxMuller(x[0], x[1])
			rs[2], ts[2], zs[2], zs[3] = boxMuller(x[2], x[3])
			rs[1], ts[1], rs[3], ts[3] = rs[0], ts[0], rs[2], ts[2]
			for w := range 4 {
				if 4*b+w >= n {
					break
				}
				z := zs[w]
				s := o.Spot * math.Exp(drift+vol*z)
				pay := math.Max(s-o.Strike, 0)
				acc[0] += pay
				acc[1] += pay * pay
				// The error bound of the device's payoff (OptionTolerance).
				c := 0.0
				if rs[w] > 0 {
					c = z / rs[w]
				}
				dz := NormalTolerance(rs[w], ts[w], c)
				ea := vol*dz + 3*u*(math.Abs(drift)+vol*(math.Abs(z)+dz))
				relS := math.Expm1(ea) + 8.01*u*math.Exp(ea)
				if s*(1+relS) < o.Strike*(1-u) {
					continue // both payoffs are exactly 0
				}
				acc[2] += s*relS + u*o.Strike + u*(math.Abs(s-o.Strike)+s*relS+u*o.Strike)
			}
		}
	})
	var sum, sq, perr float64
	for _, a := range sums {
		sum, sq, perr = sum+a[0], sq+a[1], perr+a[2]
	}
	disc := math.Exp(-o.Rate * o.T)
	mean := sum / float64(n)
	variance := 0.0
	if n > 1 {
		variance = math.Max(sq/float64(n)-mean*mean, 0) * float64(n) / float64(n-1)
	}
	return OptionEstimate{Price: disc * mean, StdErr: disc * math.Sqrt(variance/float64(n)),
		PayoffSum: sum, PathErr: perr, N: n}
}

// OptionTolerance returns the largest error allowed between the float32 device price and
// e.Price when the device sums the payoffs along chains of at most chain additions
// (MonteCarlo.OptionChain). With u = 2^-24:
//   - one payoff: z errs by dz (NormalTolerance); the float32 spot, strike, drift and vol
//     are rounded once (u each), vol*z and the sum round once more: the exponent errs by
//     ea <= vol dz + 3u (|drift| + vol (|z| + dz)); exp adds <= 3 ulp (6u), the product by
//     the spot u and the spot's rounding u: S_T errs by S_T (expm1(ea) + 8u e^ea); the
//     strike's rounding (u K) and the subtraction (u |S_T - K|) follow, and max(., 0) does
//     not increase an error. A path whose S_T stays below K by more than its error pays 0
//     on both sides and adds nothing. The sum over paths is e.PathErr;
//   - the float sum of the payoffs errs by at most gamma_chain times their sum (Higham,
//     Accuracy and Stability of Numerical Algorithms, 2nd ed., 4.2), the payoffs being at
//     most e.PayoffSum + e.PathErr;
//   - the scale exp(-rT)/n is rounded to float (u) and the final product rounds (u).
func OptionTolerance(e OptionEstimate, o Option, chain int) float64 {
	u := math.Ldexp(1, -24)
	scale := math.Exp(-o.Rate*o.T) / float64(e.N)
	g := kernels.Gamma[float32](chain)
	sumErr := e.PathErr + g*(e.PayoffSum+e.PathErr)
	return scale*sumErr + 2.01*u*(e.Price+scale*sumErr) + math.SmallestNonzeroFloat32
}

// BlackScholesCall returns the closed-form Black-Scholes price of the European call o:
// S0 N(d1) - K exp(-rT) N(d2), d1 = (ln(S0/K) + (r + sigma^2/2) T) / (sigma sqrt(T)),
// d2 = d1 - sigma sqrt(T).
func BlackScholesCall(o Option) float64 {
	st := o.Sigma * math.Sqrt(o.T)
	d1 := (math.Log(o.Spot/o.Strike) + (o.Rate+o.Sigma*o.Sigma/2)*o.T) / st
	d2 := d1 - st
	cdf := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	return o.Spot*cdf(d1) - o.Strike*math.Exp(-o.Rate*o.T)*cdf(d2)
}

// mcParallel splits [0, n) into chunks, runs f on each in its own goroutine and returns the
// results in chunk order (so sums over them are deterministic).
func mcParallel(n int, f func(lo, hi int) float64) [][1]float64 {
	out := mcParallelN(n, 1, func(lo, hi int, acc []float64) { acc[0] = f(lo, hi) })
	r := make([][1]float64, len(out))
	for i, a := range out {
		r[i][0] = a[0]
	}
	return r
}

// mcParallelN is mcParallel with k accumulators per chunk.
func mcParallelN(n, k int, f func(lo, hi int, acc []float64)) [][]float64 {
	chunks := max(min(runtime.GOMAXPROCS(0), (n+65535)/65536), 1)
	out := make([][]float64, chunks)
	var wg sync.WaitGroup
	for c := range chunks {
		out[c] = make([]float64, k)
		lo, hi := c*n/chunks, (c+1)*n/chunks
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi, out[c])
		}()
	}
	wg.Wait()
	return out
}
