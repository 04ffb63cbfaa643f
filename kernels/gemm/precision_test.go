package gemm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// TestPrecisions runs every precision's portable GEMM on every device, and its tensor-core
// GEMMs where the device has them (MMA and WGMMA through CUDA, CLMMA through NVIDIA's
// OpenCL), at shapes around the tiles of all (the portable kernel's 8 to 128, mma.cu's
// and gemm_mma.cl's 64 and 128 with k steps of 16 to 128 elements), every transpose,
// padded leading dimensions (which also take the element-by-element loads of mma.cu and
// gemm_mma.cl), strided batches with gaps, beta = 0 over a C of NaN, and a separate D;
// guard bands after C and D must stay untouched.
func TestPrecisions(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, p := range append(Precisions(), precisionOf("float64")) {
			t.Run(p.Name, func(t *testing.T) {
				switch p.In {
				case "float32":
					testPrecision[float32, float32](t, dev, q, p)
				case "float64":
					if !dev.Info().FP64 {
						t.Skipf("%s reports no fp64", dev.ID())
					}
					testPrecision[float64, float64](t, dev, q, p)
				case "float16":
					testPrecision[engine.Half, float32](t, dev, q, p)
				case "bfloat16":
					testPrecision[engine.BFloat16, float32](t, dev, q, p)
				case "float8e4m3":
					testPrecision[engine.Float8E4M3, float32](t, dev, q, p)
				case "float8e5m2":
					testPrecision[engine.Float8E5M2, float32](t, dev, q, p)
				default:
					t.Fatalf("no test for inputs of %s", p.In)
				}
			})
		}
	})
}

func testPrecision[In InputType, Out kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue, p Precision) {
	impls := []struct {
		name string
		mk   func() (Runner[In, Out], error)
	}{
		{"portable", func() (Runner[In, Out], error) { return NewGEMMOf[In, Out](dev, p) }},
		{"cuda-mma", func() (Runner[In, Out], error) { return NewMMA[In, Out](dev, p) }},
	}
	if p.MMA.Warpgroup() {
		impls = append(impls, struct {
			name string
			mk   func() (Runner[In, Out], error)
		}{"cuda-wgmma", func() (Runner[In, Out], error) {
			w, err := NewWGMMA[In](dev, p)
			if err != nil {
				return nil, err
			}
			return any(w).(Runner[In, Out]), nil
		}})
		// The cluster path (B multicast into two blocks) at both widths, on the shapes the
		// defaults run: odd tile rows leave the second block of the last cluster past M.
		// And the persistent forms, ping-pong (2) too (one tile per block on these shapes;
		// TestWGMMAPersistent gives blocks many).
		for _, c := range []struct{ bn, cluster, persistent int }{{256, 2, 0}, {128, 2, 1}, {256, 1, 1}, {128, 1, 2}, {128, 2, 2}} {
			wt := WGMMADefaults(p.MMA)
			wt.BN, wt.Cluster, wt.Persistent = c.bn, c.cluster, c.persistent
			// The defaults' stages at BN=128 may not fit at 256: as many as fit.
			for wt.Stages > 2 && wgmmaShared(wt.BN, wgmmaBM, wt.Stages, splitsOf(p.MMA)) > 227*1024 {
				wt.Stages--
			}
			impls = append(impls, struct {
				name string
				mk   func() (Runner[In, Out], error)
			}{fmt.Sprintf("cuda-wgmma-bn%d-cluster%d-persistent%d", c.bn, c.cluster, c.persistent), func() (Runner[In, Out], error) {
				w, err := NewWGMMAWith[In](dev, p, wt)
				if err != nil {
					return nil, err
				}
				return any(w).(Runner[In, Out]), nil
			}})
		}
	}
	if p.MMA.OpenCLTensorCore() {
		impls = append(impls, struct {
			name string
			mk   func() (Runner[In, Out], error)
		}{"opencl-mma", func() (Runner[In, Out], error) {
			g, err := NewCLMMA[In](dev, p)
			if err != nil {
				return nil, err
			}
			return any(g).(Runner[In, Out]), nil
		}})
	}
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			if impl.name == "portable" && p.Name == "float64" {
				t.Skip("the portable float64 GEMM is TestGEMM's")
			}
			g, err := impl.mk()
			if errors.Is(err, engine.ErrUnsupported) {
				if impl.name == "cuda-mma" && dev.Backend() == "cuda" && dev.Info().ComputeCapability >= p.MMACompute {
					t.Fatalf("%s should run the tensor-core GEMM: %v", dev.ID(), err)
				}
				if strings.HasPrefix(impl.name, "cuda-wgmma") && dev.Backend() == "cuda" && dev.Info().ComputeCapability == 90 {
					t.Fatalf("%s should run the wgmma GEMM: %v", dev.ID(), err)
				}
				if impl.name == "opencl-mma" && dev.Backend() == "opencl" && clmmaNeeds(dev.Info()) == nil && dev.Info().ComputeCapability >= 80 {
					t.Fatalf("%s should run the OpenCL tensor-core GEMM: %v", dev.ID(), err)
				}
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			rng := rand.New(rand.NewPCG(11, uint64(p.MMA)))
			shapes := [][3]int{{1, 1, 1}, {7, 9, 13}, {65, 63, 200}, {128, 128, 128}, {129, 257, 33}, {256, 64, 512}}
			if kerneltest.Small() {
				// Oclgrind: 7x9x13 is one partial tile in every dimension, as 1x1x1 is (which
				// TestGEMM runs), and 17x16x33 crosses the K tiles.
				shapes = [][3]int{{7, 9, 13}, {17, 16, 33}}
			}
			for _, d := range shapes {
				for _, tr := range gemmTransposes {
					s := GEMMShape{TransA: tr[0], TransB: tr[1], M: d[0], N: d[1], K: d[2]}
					runPrecCase(t, q, g, p, s, gemmCase{alpha: 1.5, beta: -0.75}, rng)
				}
			}
			if kerneltest.Small() {
				return
			}
			if m, ok := g.(*MMA[In, Out]); ok {
				logMMA(t, m)
				// The candidates of one precision per way of loading fragments (scalar
				// 32-bit, ldmatrix, double): every build is an NVRTC compile of seconds.
				if p.Name == "tf32" || p.Name == "float16" || p.Name == "float64" {
					testMMACandidates[In, Out](t, dev, q, p, m.Tunables(), rng)
				}
			}
			pad := GEMMShape{M: 67, N: 45, K: 70}
			for _, tr := range gemmTransposes {
				s := pad
				s.TransA, s.TransB = tr[0], tr[1]
				_, colsA := s.StoredA()
				_, colsB := s.StoredB()
				ld := s
				ld.LDA, ld.LDB, ld.LDC = colsA+3, colsB+5, s.N+7
				runPrecCase(t, q, g, p, ld, gemmCase{alpha: -0.5, beta: 2}, rng)
				runPrecCase(t, q, g, p, s, gemmCase{alpha: 1, beta: 0, nanC: true}, rng)
				runPrecCase(t, q, g, p, s, gemmCase{alpha: 0.25, beta: 1, into: true}, rng)
				// Leading dimensions that keep 16-byte rows: the vector loads of mma.cu
				// over a sub-matrix of a wider array.
				wide := s
				wide.LDA, wide.LDB = colsA+64, colsB+32
				runPrecCase(t, q, g, p, wide, gemmCase{alpha: 1, beta: 0.5}, rng)
				b := GEMMShape{TransA: tr[0], TransB: tr[1], M: 70, N: 66, K: 35, Batch: 3}
				runPrecCase(t, q, g, p, b, gemmCase{alpha: 1.25, beta: -1}, rng)
				rowsA, colsA := b.StoredA()
				rowsB, colsB := b.StoredB()
				b.LDC, b.StrideC = b.N+1, (b.N+1)*b.M+5
				b.StrideA, b.StrideB = rowsA*colsA+11, rowsB*colsB+2
				runPrecCase(t, q, g, p, b, gemmCase{alpha: 0.75, beta: 0.5}, rng)
			}
		})
	}
}

// runPrecCase runs one case through g as a subtest (runGEMM) within p's tolerance.
func runPrecCase[In InputType, Out kernels.Float](t *testing.T, q *engine.Queue, g Runner[In, Out], p Precision, s GEMMShape, c gemmCase, rng *rand.Rand) {
	name := fmt.Sprintf("%s/M=%d,N=%d,K=%d,lda=%d,ldb=%d,ldc=%d,batch=%d,beta=%g", s.String()[:2], s.M, s.N, s.K, s.LDA, s.LDB, s.LDC, max(s.Batch, 1), c.beta)
	if c.into {
		name += ",into"
	}
	t.Run(name, func(t *testing.T) { runGEMM(t, q, g, s, c, rng, p.Tolerance) })
}

// inPlace is a GEMM with Run, which writes the result over C.
type inPlace[In InputType, Out kernels.Float] interface {
	Run(q *engine.Queue, s GEMMShape, alpha Out, a, b *engine.Buffer[In], beta Out, c *engine.Buffer[Out]) error
}

// runGEMM runs case c of shape s through g on seeded random inputs (values of In, C of
// NaN when c.nanC): RunInto a separate D when c.into, else in place (Run where g has it)
// and checks D against the float64 reference of the inputs as stored within tol(K, alpha,
// mag); elements of C's buffer between rows and matrices and the guard bands after C and
// D keep their values, and RunInto leaves C as it was.
func runGEMM[In InputType, Out kernels.Float](t *testing.T, q *engine.Queue, g Runner[In, Out], s GEMMShape, c gemmCase, rng *rand.Rand, tol func(k int, alpha, mag float64) float64) {
	t.Helper()
	if err := checkShape(s); err != nil {
		t.Fatal(err)
	}
	la, lb, lc := s.Lens()
	a, b := randIn[In](rng, la, -1, 1), randIn[In](rng, lb, -1, 1)
	cin := kernels.RandFloats[Out](rng, lc, -1, 1)
	if c.nanC {
		for i := range cin {
			cin[i] = Out(math.NaN())
		}
	}
	// A and B without guard bands: a read past them is an error under Oclgrind.
	ba, err := engine.Upload(t.Context(), q, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ba.Close()
	bb, err := engine.Upload(t.Context(), q, b)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	bc := kerneltest.Guarded(t, q, cin)
	alpha, beta := Out(c.alpha), Out(c.beta)
	out, init := bc, cin // where the shape leaves gaps, the output keeps init
	if r, ok := g.(inPlace[In, Out]); ok && !c.into {
		err = r.Run(q, s, alpha, ba, bb, beta, bc)
	} else {
		if c.into {
			init = kernels.RandFloats[Out](rng, lc, -1, 1)
			out = kerneltest.Guarded(t, q, init)
		}
		err = g.RunInto(q, s, alpha, ba, bb, beta, bc, out)
	}
	if err != nil {
		t.Fatal(err)
	}
	got := kerneltest.Download(t, q, "D", out, lc)
	if c.into { // C is an input only
		in := kerneltest.Download(t, q, "C", bc, lc)
		for i := range in {
			if math.Float64bits(float64(in[i])) != math.Float64bits(float64(cin[i])) {
				t.Fatalf("RunInto changed C[%d] from %v to %v", i, cin[i], in[i])
			}
		}
	}
	want, mag := GEMMRef(s, c.alpha, widen(a), widen(b), c.beta, widen(cin))
	checkD(t, s, got, init, want, mag, func(m float64) float64 { return tol(s.K, c.alpha, m) })
}

// TestPrecisionAccumulation checks that the tolerances tell a float32 accumulation from
// one in the input precision: on positive inputs (no cancellation, so the bound is tight
// enough to mean something) a sum of products of bfloat16 or float16 values accumulated
// in bfloat16 or float16 exceeds the tolerance, the same sum accumulated in float32 stays
// within it; and every device's GEMMs (portable, and tensor cores where there are) stay
// within it on such inputs at K = 4096.
func TestPrecisionAccumulation(t *testing.T) {
	const k = 4096
	rng := rand.New(rand.NewPCG(7, 7))
	for _, c := range []struct {
		prec  string
		round func(float64) float64
	}{
		{"bfloat16", func(x float64) float64 { return engine.BFloat16FromFloat64(x).Float64() }},
		{"float16", func(x float64) float64 { return engine.HalfFromFloat64(x).Float64() }},
	} {
		p := precisionOf(c.prec)
		var exact, acc32, accIn, mag float64
		var f32 float32
		for range k {
			a, b := c.round(rng.Float64()), c.round(rng.Float64())
			exact += a * b
			mag += a * b
			f32 += float32(a * b) // exact products, float32 sums
			accIn = c.round(accIn + c.round(a*b))
		}
		acc32 = float64(f32)
		tol := p.Tolerance(k, 1, mag)
		if d := math.Abs(acc32 - exact); d > tol {
			t.Errorf("%s: a float32 accumulation is %.3g off, above the tolerance %.3g", c.prec, d, tol)
		}
		if d := math.Abs(accIn - exact); d <= tol {
			t.Errorf("%s: an accumulation in %s is %.3g off, within the tolerance %.3g: the tolerance cannot tell them apart", c.prec, c.prec, d, tol)
		}
	}
	if kerneltest.Small() {
		return
	}
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, name := range []string{"bfloat16", "float16"} {
			p := precisionOf(name)
			for _, impl := range []string{"portable", "cuda-mma", "opencl-mma"} {
				t.Run(name+"/"+impl, func(t *testing.T) {
					var g Runner[engine.BFloat16, float32]
					var h Runner[engine.Half, float32]
					var err error
					switch {
					case name == "bfloat16" && impl == "portable":
						g, err = NewGEMMOf[engine.BFloat16, float32](dev, p)
					case name == "bfloat16" && impl == "opencl-mma":
						var c *CLMMA[engine.BFloat16]
						if c, err = NewCLMMA[engine.BFloat16](dev, p); err == nil {
							g = c
						}
					case name == "bfloat16":
						g, err = NewMMA[engine.BFloat16, float32](dev, p)
					case impl == "portable":
						h, err = NewGEMMOf[engine.Half, float32](dev, p)
					case impl == "opencl-mma":
						var c *CLMMA[engine.Half]
						if c, err = NewCLMMA[engine.Half](dev, p); err == nil {
							h = c
						}
					default:
						h, err = NewMMA[engine.Half, float32](dev, p)
					}
					if errors.Is(err, engine.ErrUnsupported) {
						t.Skip(err)
					}
					if err != nil {
						t.Fatal(err)
					}
					rng := rand.New(rand.NewPCG(8, 8))
					s := GEMMShape{M: 64, N: 64, K: k}
					if g != nil {
						defer g.Close()
						runPositive(t, q, g, p, s, rng)
					} else {
						defer h.Close()
						runPositive(t, q, h, p, s, rng)
					}
				})
			}
		}
	})
}

// runPositive runs D = A*B on inputs in [0, 1) and checks D against the reference.
func runPositive[In InputType](t *testing.T, q *engine.Queue, g Runner[In, float32], p Precision, s GEMMShape, rng *rand.Rand) {
	la, lb, lc := s.Lens()
	a, b := randIn[In](rng, la, 0, 1), randIn[In](rng, lb, 0, 1)
	ba, err := engine.Upload(t.Context(), q, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ba.Close()
	bb, err := engine.Upload(t.Context(), q, b)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	cin := make([]float32, lc)
	bc := kerneltest.Guarded(t, q, cin)
	if err := g.RunInto(q, s, 1, ba, bb, 0, bc, bc); err != nil {
		t.Fatal(err)
	}
	got := kerneltest.Download(t, q, "D", bc, lc)
	want, mag := GEMMRef(s, 1, widen(a), widen(b), 0, widen(cin))
	var worst float64
	for o := range lc {
		tol := p.Tolerance(s.K, 1, mag[o])
		d := math.Abs(float64(got[o]) - want[o])
		if !(d <= tol) {
			t.Fatalf("D[%d] = %v, want %v (|diff| %.3g > tolerance %.3g)", o, got[o], want[o], d, tol)
		}
		worst = math.Max(worst, d/tol)
	}
	t.Logf("largest error %.3g of the tolerance", worst)
}

// logMMA logs the resources of m's builds: registers, shared memory and spills.
func logMMA[In InputType, Out kernels.Float](t *testing.T, m *MMA[In, Out]) {
	for _, tr := range gemmTransposes {
		k, err := m.kernel(tr[0], tr[1])
		if err != nil {
			t.Fatal(err)
		}
		at := k.Attributes()
		t.Logf("gemm_mma %s %v transA=%v transB=%v: %d registers, %d bytes dynamic shared, %d bytes private (spills), max block %d",
			m.p.Name, m.Tunables(), tr[0], tr[1], at.Registers, m.geom.shared(tr[0], tr[1]), at.PrivateBytes, at.MaxWorkGroupSize)
	}
}

// testMMACandidates runs shapes across the tiles of every tunable set the tuning
// benchmark measures (other than def, which the caller tests in full), so that whichever
// the table takes has been verified.
func testMMACandidates[In InputType, Out kernels.Float](t *testing.T, dev *engine.Device, q *engine.Queue, p Precision, def MMATunables, rng *rand.Rand) {
	for _, c := range mmaCandidates(engine.SizeOf[In](), dev.Info().ComputeCapability) {
		if c == def {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			g, err := NewMMAWith[In, Out](dev, p, c)
			if errors.Is(err, engine.ErrUnsupported) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			for _, tr := range [][2]bool{{false, false}, {false, true}} { // the layouts tuned and measured
				for _, d := range [][3]int{{c.BM + 1, c.BN - 1, 3*c.BK + 5}, {2 * c.BM, 2 * c.BN, 4 * c.BK}} {
					s := GEMMShape{TransA: tr[0], TransB: tr[1], M: d[0], N: d[1], K: d[2]}
					runPrecCase(t, q, g, p, s, gemmCase{alpha: 1.5, beta: -0.75}, rng)
				}
				b := GEMMShape{TransA: tr[0], TransB: tr[1], M: 70, N: 66, K: 35, Batch: 3}
				runPrecCase(t, q, g, p, b, gemmCase{alpha: 1, beta: 0, nanC: true}, rng)
			}
		})
	}
}

// checkD checks the output of a GEMM of shape s: every element of D's matrices within
// tol(k, mag) of the float64 reference want (mag its scale, GEMMRef), every element of the
// buffer between rows and matrices unchanged from init (compared bit for bit).
func checkD[Out kernels.Float](t *testing.T, s GEMMShape, got, init []Out, want, mag []float64, tol func(mag float64) float64) {
	t.Helper()
	d := s.WithDefaults()
	inside := make([]bool, len(got))
	for z := range d.Batch {
		for i := range d.M {
			for j := range d.N {
				inside[z*d.StrideC+i*d.LDC+j] = true
			}
		}
	}
	for o := range got {
		if !inside[o] {
			if math.Float64bits(float64(got[o])) != math.Float64bits(float64(init[o])) {
				t.Fatalf("%v: element %d, between rows or matrices, was changed from %v to %v", s, o, init[o], got[o])
			}
			continue
		}
		if diff, tl := math.Abs(float64(got[o])-want[o]), tol(mag[o]); !(diff <= tl) {
			z, r := o/d.StrideC, o%d.StrideC
			t.Fatalf("%v: D[%d][%d][%d] = %v, want %v (|diff| %.3g > tolerance %.3g)", s, z, r/d.LDC, r%d.LDC, got[o], want[o], diff, tl)
		}
	}
}

// TestNewPicks checks gemm.New on every device for float32, tf32 and bfloat16: the runner
// it returns is the fastest the device has (through CUDA SGEMMSimt for float32, WGMMA on
// sm_90, else MMA; on OpenCL GPUs CLSimt for float32, CLMMA on NVIDIA's; the portable
// kernel on CPUs and Oclgrind), and
// it computes a GEMM with edges in every layout within the precision's tolerance.
func TestNewPicks(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		t.Run("float32", func(t *testing.T) { testNewPicks[float32](t, dev, q, "float32") })
		t.Run("tf32", func(t *testing.T) { testNewPicks[float32](t, dev, q, "tf32") })
		t.Run("bfloat16", func(t *testing.T) { testNewPicks[engine.BFloat16](t, dev, q, "bfloat16") })
	})
}

func testNewPicks[In InputType](t *testing.T, dev *engine.Device, q *engine.Queue, name string) {
	p, ok := LookupPrecision(name)
	if !ok {
		t.Fatalf("no precision %s", name)
	}
	g, err := New[In, float32](dev, p)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	want := "*gemm.GEMMOf"
	info := dev.Info()
	gpu := dev.Backend() == "opencl" && info.Kind == engine.KindGPU && !strings.Contains(info.Platform, "Oclgrind")
	switch {
	case dev.Backend() == "cuda" && name == "float32":
		want = "*gemm.SGEMMSimt"
	case dev.Backend() == "cuda" && info.ComputeCapability == 90:
		want = "*gemm.WGMMA"
	case dev.Backend() == "cuda" && info.ComputeCapability >= p.MMACompute:
		want = "*gemm.MMA"
	case gpu && name == "float32":
		want = "*gemm.CLSimt"
	case gpu && strings.Contains(info.Platform, "NVIDIA") && info.ComputeCapability >= 80:
		want = "*gemm.CLMMA"
	}
	if got := fmt.Sprintf("%T", g); !strings.HasPrefix(got, want) {
		t.Errorf("New(%s) on %s is %s, want %s", name, dev.ID(), got, want)
	}
	t.Logf("New(%s) on %s: %T", name, dev.ID(), g)
	rng := rand.New(rand.NewPCG(5, 5))
	m, n, k := 70, 33, 129
	layouts := [][2]bool{{false, false}, {false, true}, {true, false}}
	if kerneltest.Small() {
		// Oclgrind, where New picks the portable kernel: TestGEMM (float32) and
		// TestPrecisions (tf32, bfloat16) run it in every layout at these edges.
		m, n, k = 17, 9, 33
		layouts = layouts[:1]
	}
	for _, tr := range layouts {
		s := GEMMShape{M: m, N: n, K: k, TransA: tr[0], TransB: tr[1]}
		runPrecCase(t, q, Runner[In, float32](g), p, s, gemmCase{s: s, alpha: 1, beta: 0.5}, rng)
	}
}

// TestRandIn checks that randIn's chunked, parallel rounding gives the values of drawing
// and rounding one value at a time, in every input type, across a chunk's end and the
// parallel pieces.
func TestRandIn(t *testing.T) {
	n := 1<<20 + 70001 // past RandRounded's first chunk of 1 Mi values
	check := func(name string, got []float64, round func(float64) float64) {
		rng := rand.New(rand.NewPCG(3, 4))
		for i, g := range got {
			if want := round(-1 + 2*rng.Float64()); g != want && !(math.IsNaN(g) && math.IsNaN(want)) {
				t.Fatalf("%s: value %d = %v, want %v", name, i, g, want)
			}
		}
	}
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(3, 4)) }
	check("float32", widen(randIn[float32](rng(), n, -1, 1)), func(x float64) float64 { return float64(float32(x)) })
	check("float64", widen(randIn[float64](rng(), n, -1, 1)), func(x float64) float64 { return x })
	check("float16", widen(randIn[engine.Half](rng(), n, -1, 1)), func(x float64) float64 { return engine.HalfFromFloat64(x).Float64() })
	check("bfloat16", widen(randIn[engine.BFloat16](rng(), n, -1, 1)), func(x float64) float64 { return engine.BFloat16FromFloat64(x).Float64() })
	check("float8e4m3", widen(randIn[engine.Float8E4M3](rng(), n, -1, 1)), func(x float64) float64 { return engine.Float8E4M3FromFloat64(x).Float64() })
	check("float8e5m2", widen(randIn[engine.Float8E5M2](rng(), n, -1, 1)), func(x float64) float64 { return engine.Float8E5M2FromFloat64(x).Float64() })
	if got := randIn[engine.Half](rng(), 0, -1, 1); len(got) != 0 {
		t.Errorf("randIn of 0 values gave %d", len(got))
	}
}
