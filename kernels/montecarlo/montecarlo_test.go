package montecarlo

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestPhiloxKnownAnswers checks the Go Philox-4x32-10 against Random123's known-answer
// vectors (kat_vectors, philox4x32 with 10 rounds).
func TestPhiloxKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	} {
		if got := Philox4x32(c.ctr, c.key); got != c.want {
			t.Errorf("Philox4x32(%08x, %08x) = %08x, want %08x", c.ctr, c.key, got, c.want)
		}
	}
	// The stream layout: counter (block lo, block hi, stream lo, stream hi), key = seed.
	p := Philox{Seed: 0x299f31d0a4093822, Stream: 0x0370734413198a2e}
	if got := p.Block(0x85a308d3243f6a88); got != [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1} {
		t.Errorf("Philox.Block does not lay out the counter and key as documented: %08x", got)
	}
	if got := PhiloxRef(Philox{Offset: 2}, 3); got[0] != 0xbc57ac4c || got[1] != 0x9b00dbd8 || got[2] != Philox4x32([4]uint32{1}, [2]uint32{})[0] {
		t.Errorf("PhiloxRef at offset 2 = %08x", got)
	}
}

// mcStarts are stream positions the tests generate from: aligned and not, a block index
// past 2^32 (counter word 1 in use), other seeds and streams.
var mcStarts = []Philox{
	{Seed: 1},
	{Seed: 1, Offset: 1},
	{Seed: 1, Offset: 3},
	{Seed: 0xdeadbeefcafef00d, Stream: 7, Offset: 4<<32 - 6}, // crosses block 2^32
	{Seed: 2, Stream: 1 << 40, Offset: 1<<62 + 2},
}

func TestMonteCarloGenerators(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		m, err := NewMonteCarlo(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		wg := m.WorkGroup()
		sizes := append(kerneltest.EdgeSizes(wg), 2, 3, 4, 5, 4*wg-1, 4*wg+1, 1023, 1025)
		for _, n := range sizes {
			for si, at := range mcStarts {
				if si > 1 && (n > 5000 || kerneltest.Small() && n > 1000) {
					continue // large sizes from two starts are enough
				}
				t.Run(fmt.Sprintf("n=%d/start=%d", n, si), func(t *testing.T) {
					words := kerneltest.Guarded(t, q, make([]uint32, n))
					if err := mcGenerate(m, q, MCPhilox, m.bits, words, n, at); err != nil {
						t.Fatal(err)
					}
					if err := kernels.CheckEqual("bits", kerneltest.Download(t, q, "bits", words, n), PhiloxRef(at, n)); err != nil {
						t.Fatal(err)
					}
					unif := kerneltest.Guarded(t, q, make([]float32, n))
					if err := mcGenerate(m, q, MCUniform, m.uniform, unif, n, at); err != nil {
						t.Fatal(err)
					}
					if err := kernels.CheckEqual("uniform", kerneltest.Download(t, q, "uniform", unif, n), UniformRef(at, n)); err != nil {
						t.Fatal(err)
					}
					norm := kerneltest.Guarded(t, q, make([]float32, n))
					if err := mcGenerate(m, q, MCNormal, m.normal, norm, n, at); err != nil {
						t.Fatal(err)
					}
					want, tol := NormalRef(at, n)
					if err := kernels.CheckClose("normal", kerneltest.Download(t, q, "normal", norm, n), want, func(i int) float64 { return tol[i] }); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	})
}

// TestMonteCarloDeviceKnownAnswer checks the device against Random123's first vector
// (counter 0, key 0: seed 0, stream 0, offset 0) directly.
func TestMonteCarloDeviceKnownAnswer(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		m, err := NewMonteCarlo(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		out := kerneltest.Guarded(t, q, make([]uint32, 4))
		if err := mcGenerate(m, q, MCPhilox, m.bits, out, 4, Philox{}); err != nil {
			t.Fatal(err)
		}
		if err := kernels.CheckEqual("kat", kerneltest.Download(t, q, "kat", out, 4), []uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestMonteCarloContinuation checks that two calls, the second at the first's end, give
// the words (uniforms, normals) of one call over both, that seeds and streams give other
// words, and that uniforms and normals have the mean and variance they should.
func TestMonteCarloContinuation(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		m, err := NewMonteCarlo(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		n := 100003
		if kerneltest.Small() {
			n = 1001
		}
		whole := func(at Philox, op MonteCarloOp) []float32 {
			b := kerneltest.Guarded(t, q, make([]float32, n))
			k := map[MonteCarloOp]*engine.Kernel{MCUniform: m.uniform, MCNormal: m.normal}[op]
			if err := mcGenerate(m, q, op, k, b, n, at); err != nil {
				t.Fatal(err)
			}
			return kerneltest.Download(t, q, string(op), b, n)
		}
		for _, h := range []int{1, 2, 4, 5, n / 2, n - 1} {
			at := Philox{Seed: 42, Stream: 3, Offset: 9}
			t.Run(fmt.Sprintf("split=%d", h), func(t *testing.T) {
				for _, op := range []MonteCarloOp{MCUniform, MCNormal} {
					k := map[MonteCarloOp]*engine.Kernel{MCUniform: m.uniform, MCNormal: m.normal}[op]
					a, b := kerneltest.Guarded(t, q, make([]float32, h)), kerneltest.Guarded(t, q, make([]float32, n-h))
					if err := mcGenerate(m, q, op, k, a, h, at); err != nil {
						t.Fatal(err)
					}
					if err := mcGenerate(m, q, op, k, b, n-h, at.Advance(h)); err != nil {
						t.Fatal(err)
					}
					got := append(kerneltest.Download(t, q, "first", a, h), kerneltest.Download(t, q, "second", b, n-h)...)
					if err := kernels.CheckEqual(string(op)+" halves", got, whole(at, op)); err != nil {
						t.Fatal(err)
					}
				}
				wa, wb := kerneltest.Guarded(t, q, make([]uint32, h)), kerneltest.Guarded(t, q, make([]uint32, n-h))
				if err := mcGenerate(m, q, MCPhilox, m.bits, wa, h, at); err != nil {
					t.Fatal(err)
				}
				if err := mcGenerate(m, q, MCPhilox, m.bits, wb, n-h, at.Advance(h)); err != nil {
					t.Fatal(err)
				}
				got := append(kerneltest.Download(t, q, "first", wa, h), kerneltest.Download(t, q, "second", wb, n-h)...)
				if err := kernels.CheckEqual("word halves", got, PhiloxRef(at, n)); err != nil {
					t.Fatal(err)
				}
			})
		}
		t.Run("seeds and streams differ", func(t *testing.T) {
			base := whole(Philox{Seed: 1}, MCUniform)
			for _, at := range []Philox{{Seed: 2}, {Seed: 1 << 32}, {Seed: 1, Stream: 1}, {Seed: 1, Stream: 1 << 32}, {Seed: 1, Offset: 4}} {
				other := whole(at, MCUniform)
				same := 0
				for i := range base {
					if base[i] == other[i] {
						same++
					}
				}
				// Two independent 24-bit uniforms agree with probability 2^-24.
				if same > 2+n>>20 {
					t.Errorf("%+v: %d of %d uniforms equal those of seed 1 stream 0", at, same, n)
				}
			}
		})
		t.Run("moments", func(t *testing.T) {
			for _, c := range []struct {
				op       MonteCarloOp
				mean, sd float64 // of the distribution
				m2       float64 // E[x^2]
				sdOfX2   float64 // sd of x^2
			}{
				{MCUniform, 0.5, math.Sqrt(1.0 / 12), 1.0 / 3, math.Sqrt(1.0/5 - 1.0/9)},
				{MCNormal, 0, 1, 1, math.Sqrt2},
			} {
				x := whole(Philox{Seed: 77}, c.op)
				var s, s2 float64
				for _, v := range x {
					s += float64(v)
					s2 += float64(v) * float64(v)
				}
				mean, m2 := s/float64(n), s2/float64(n)
				se := 1 / math.Sqrt(float64(n))
				if math.Abs(mean-c.mean) > 5*c.sd*se || math.Abs(m2-c.m2) > 5*c.sdOfX2*se {
					t.Errorf("%s: mean %g (want %g), E[x^2] %g (want %g), n=%d: beyond 5 standard errors", c.op, mean, c.mean, m2, c.m2, n)
				}
			}
		})
	})
}

func TestMonteCarloPi(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		m, err := NewMonteCarlo(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		wg := m.WorkGroup()
		sizes := append(kerneltest.EdgeSizes(wg), 2, 2*wg-1, 2*wg+1, 2*wg*m.maxGroups+3)
		if !kerneltest.Small() {
			sizes = append(sizes, 3<<20+1)
		}
		for _, n := range sizes {
			for ai, at := range []Philox{{Seed: 5}, {Seed: 6, Stream: 2, Offset: 4<<32 - 8}} {
				if kerneltest.Small() && ai > 0 && n > 4097 {
					continue // Oclgrind: one start for the grid-stride size
				}
				t.Run(fmt.Sprintf("n=%d/offset=%d", n, at.Offset), func(t *testing.T) {
					count := kerneltest.Guarded(t, q, make([]uint32, 1))
					part := kerneltest.Guarded(t, q, make([]uint32, m.PiScratch(n)))
					if err := m.PiCountInto(q, count, part, n, at); err != nil {
						t.Fatal(err)
					}
					got := kerneltest.Download(t, q, "count", count, 1)
					kerneltest.Download(t, q, "part", part, m.PiScratch(n))
					want := PiRef(at, n)
					if got[0] != want {
						t.Fatalf("count %d, want %d", got[0], want)
					}
					if n >= 1<<16 {
						// Binomial: p = pi/4, standard error of 4*count/n is 4 sqrt(p(1-p)/n).
						p := math.Pi / 4
						est, se := 4*float64(got[0])/float64(n), 4*math.Sqrt(p*(1-p)/float64(n))
						if math.Abs(est-math.Pi) > 5*se {
							t.Errorf("pi estimate %g, %g standard errors from pi", est, math.Abs(est-math.Pi)/se)
						}
					}
				})
			}
		}
		t.Run("Pi", func(t *testing.T) {
			n := 4000
			est, err := m.Pi(t.Context(), q, n, Philox{Seed: 9})
			if err != nil {
				t.Fatal(err)
			}
			if want := 4 * float64(PiRef(Philox{Seed: 9}, n)) / float64(n); est != want {
				t.Errorf("Pi = %v, want %v", est, want)
			}
		})
	})
}

func TestMonteCarloOption(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		m, err := NewMonteCarlo(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		wg := m.WorkGroup()
		options := []Option{
			mcOption,
			{Spot: 90, Strike: 110, Rate: 0.01, Sigma: 0.35, T: 2.5}, // out of the money
			{Spot: 120, Strike: 80, Rate: -0.005, Sigma: 0.1, T: 0.25},
		}
		sizes := append(kerneltest.EdgeSizes(wg), 2, 4*wg-1, 4*wg+1, 4*wg*m.maxGroups+5)
		for _, n := range sizes {
			for oi, o := range options {
				if kerneltest.Small() && oi > 0 && n > 1000 {
					continue // Oclgrind: one option for the larger sizes
				}
				at := Philox{Seed: 3, Stream: uint64(oi), Offset: 8}
				t.Run(fmt.Sprintf("n=%d/option=%d", n, oi), func(t *testing.T) {
					price := kerneltest.Guarded(t, q, make([]float32, 1))
					part := kerneltest.Guarded(t, q, make([]float32, m.OptionScratch(n)))
					if err := m.OptionInto(q, price, part, n, o, at); err != nil {
						t.Fatal(err)
					}
					got := kerneltest.Download(t, q, "price", price, 1)
					kerneltest.Download(t, q, "part", part, m.OptionScratch(n))
					e := OptionRef(o, n, at)
					tol := OptionTolerance(e, o, m.OptionChain(n))
					if err := kernels.CheckClose("price", got, []float64{e.Price}, func(int) float64 { return tol }); err != nil {
						t.Fatal(err)
					}
					bs := BlackScholesCall(o)
					if n >= 1<<16 && math.Abs(e.Price-bs) > 4*e.StdErr {
						t.Errorf("price %g is %.2f standard errors (%g) from the Black-Scholes price %g", e.Price, math.Abs(e.Price-bs)/e.StdErr, e.StdErr, bs)
					}
					if n >= 1<<16 {
						t.Logf("n=%d: device %g, reference %g (tolerance %.3g, observed %.3g), Black-Scholes %g, standard error %.3g",
							n, got[0], e.Price, tol, math.Abs(float64(got[0])-e.Price), bs, e.StdErr)
					}
				})
			}
		}
		t.Run("OptionPrice", func(t *testing.T) {
			n := 5000
			got, err := m.OptionPrice(t.Context(), q, n, mcOption, Philox{Seed: 4})
			if err != nil {
				t.Fatal(err)
			}
			e := OptionRef(mcOption, n, Philox{Seed: 4})
			if d := math.Abs(float64(got) - e.Price); d > OptionTolerance(e, mcOption, m.OptionChain(n)) {
				t.Errorf("OptionPrice = %v, want %v", got, e.Price)
			}
		})
	})
}

// TestBlackScholesCall checks the closed form against a published value (Hull, Options,
// Futures and Other Derivatives, example 15.6: S0 = 42, K = 40, r = 0.1, sigma = 0.2,
// T = 0.5 gives a call of 4.76).
func TestBlackScholesCall(t *testing.T) {
	if got := BlackScholesCall(Option{Spot: 42, Strike: 40, Rate: 0.1, Sigma: 0.2, T: 0.5}); math.Abs(got-4.76) > 0.005 {
		t.Errorf("BlackScholesCall = %v, want 4.76", got)
	}
}

func TestMonteCarloInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		m, err := NewMonteCarlo(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		words, _ := engine.NewBuffer[uint32](dev, 16)
		defer words.Close()
		f, _ := engine.NewBuffer[float32](dev, 16)
		defer f.Close()
		part, _ := engine.NewBuffer[float32](dev, m.OptionScratch(1000))
		defer part.Close()
		partU, _ := engine.NewBuffer[uint32](dev, m.PiScratch(1000))
		defer partU.Close()
		for _, c := range []struct {
			name string
			err  error
		}{
			{"Bits nil", m.Bits(q, nil, Philox{})},
			{"Uniform nil", m.Uniform(q, nil, Philox{})},
			{"Normal nil", m.Normal(q, nil, Philox{})},
			{"n above buffer", mcGenerate(m, q, MCPhilox, m.bits, words, 17, Philox{})},
			{"n zero", mcGenerate(m, q, MCPhilox, m.bits, words, 0, Philox{})},
			{"offset wraps", m.Bits(q, words, Philox{Offset: math.MaxUint64 - 10})},
			{"pi n zero", m.PiCountInto(q, words, partU, 0, Philox{})},
			{"pi n too large", m.PiCountInto(q, words, partU, MonteCarloMax+1, Philox{})},
			{"pi unaligned", m.PiCountInto(q, words, partU, 1000, Philox{Offset: 2})},
			{"pi nil count", m.PiCountInto(q, nil, partU, 1000, Philox{})},
			{"pi short scratch", m.PiCountInto(q, words, words, 2*m.wg*m.maxGroups, Philox{})},
			{"option nil part", m.OptionInto(q, f, nil, 1000, mcOption, Philox{})},
			{"option short scratch", m.OptionInto(q, f, f, 4*m.wg*m.maxGroups, mcOption, Philox{})},
			{"option unaligned", m.OptionInto(q, f, part, 1000, mcOption, Philox{Offset: 1})},
			{"option sigma 0", m.OptionInto(q, f, part, 1000, Option{Spot: 1, Strike: 1, Sigma: 0, T: 1}, Philox{})},
			{"option NaN rate", m.OptionInto(q, f, part, 1000, Option{Spot: 1, Strike: 1, Rate: math.NaN(), Sigma: 1, T: 1}, Philox{})},
			{"option negative T", m.OptionInto(q, f, part, 1000, Option{Spot: 1, Strike: 1, Sigma: 1, T: -1}, Philox{})},
			{"option huge spot", m.OptionInto(q, f, part, 1000, Option{Spot: 1e39, Strike: 1, Sigma: 1, T: 1}, Philox{})},
			{"option n negative", func() error { _, err := m.OptionPrice(t.Context(), q, -1, mcOption, Philox{}); return err }()},
			{"Pi n zero", func() error { _, err := m.Pi(t.Context(), q, 0, Philox{}); return err }()},
		} {
			if !errors.Is(c.err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, c.err)
			}
		}
		if _, err := NewMonteCarlo(nil); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("NewMonteCarlo(nil): %v, want ErrInvalidArg", err)
		}
		if err := m.Close(); err != nil {
			t.Error(err)
		}
		if err := m.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// TestMonteCarloOpVerify checks that the generator ops' Verify catches a wrong element, both
// when it checks everything and when it checks a sample (above mcFullVerify elements).
func TestMonteCarloOpVerify(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		sizes := []int{1000}
		if !kerneltest.Small() {
			sizes = append(sizes, mcFullVerify+5)
		}
		for _, n := range sizes {
			for _, op := range []kernels.Op{monteCarloOp(MCNormal), monteCarloOp(MCUniform)} {
				t.Run(fmt.Sprintf("%s/n=%d", op.Name, n), func(t *testing.T) {
					in, err := op.Setup(t.Context(), q, kernels.Params{Size: n, Seed: 5})
					if err != nil {
						t.Fatal(err)
					}
					defer in.Close()
					if err := in.Run(t.Context(), q); err != nil {
						t.Fatal(err)
					}
					if err := in.Verify(t.Context(), q); err != nil {
						t.Fatal(err)
					}
					// The sample always holds the last element: make it wrong.
					if err := in.(*mcGenInstance[float32]).out.Write(t.Context(), q, n-1, []float32{2.5}); err != nil {
						t.Fatal(err)
					}
					if err := in.Verify(t.Context(), q); !errors.Is(err, kernels.ErrVerify) {
						t.Fatalf("Verify after a wrong element: %v, want ErrVerify", err)
					}
				})
			}
		}
	})
}
