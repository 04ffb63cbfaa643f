package gemm

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed gemm.cl
var source string

// Family returns the gemm family: its OpenCL C source (gemm.cl) and its operations, in the
// order listings show them: float32 and float64, then one op per layout and Precision.
func Family() kernels.Family {
	ops := []kernels.Op{
		gemmOp[float32, float32]("float32", "nn", false, false, 1),
		gemmOp[float64, float64]("float64", "nn", false, false, 1),
		gemmOp[float32, float32]("float32", "nt", false, true, 1),
		gemmOp[float32, float32]("float32", "tn", true, false, 1),
		gemmOp[float32, float32]("float32", "batched", false, false, gemmOpBatch),
	}
	for _, p := range precisions {
		for _, l := range gemmLayouts {
			switch p.In {
			case "float32":
				ops = append(ops, gemmOp[float32, float32](p.Name, l.name, l.ta, l.tb, l.batch))
			case "float16":
				ops = append(ops, gemmOp[engine.Half, float32](p.Name, l.name, l.ta, l.tb, l.batch))
			case "bfloat16":
				ops = append(ops, gemmOp[engine.BFloat16, float32](p.Name, l.name, l.ta, l.tb, l.batch))
			case "float8e4m3":
				ops = append(ops, gemmOp[engine.Float8E4M3, float32](p.Name, l.name, l.ta, l.tb, l.batch))
			case "float8e5m2":
				ops = append(ops, gemmOp[engine.Float8E5M2, float32](p.Name, l.name, l.ta, l.tb, l.batch))
			}
		}
	}
	return kernels.Family{Name: "gemm", Source: source, Ops: ops}
}

// gemmLayouts are the layouts of the precision ops: nn, nt, tn and batched (nn).
var gemmLayouts = []struct {
	name   string
	ta, tb bool
	batch  int
}{{"nn", false, false, 1}, {"nt", false, true, 1}, {"tn", true, false, 1}, {"batched", false, false, gemmOpBatch}}

// gemmOpBatch is the batch count of gemm/batched.
const gemmOpBatch = 8

// gemmStream is the random stream constant of the gemm family's inputs ("gemm").
const gemmStream = 0x67656d6d

// gemmFullCheck is the largest M*N*K*batch that Verify checks in full; above it, a sample.
const gemmFullCheck = 1 << 27

// gemmSamples is the number of random elements Verify checks on large problems.
const gemmSamples = 1024

// Runner is one implementation of a GEMM call: the portable kernel (GEMMOf), the
// tensor-core one (MMA) or the SIMT CUDA one (SGEMMSimt). RunInto computes D =
// alpha*op(A)*op(B) + beta*C for a shape; Close releases the compiled kernels.
type Runner[In InputType, Out kernels.Float] interface {
	RunInto(q *engine.Queue, s GEMMShape, alpha Out, a, b *engine.Buffer[In], beta Out, c, d *engine.Buffer[Out]) error
	Close() error
}

func gemmOp[In InputType, Out kernels.Float](prec, op string, ta, tb bool, batch int) kernels.Op {
	p := precisionOf(prec)
	name := "gemm/" + op + "/" + prec
	doc := fmt.Sprintf("C = alpha*%s*%s + beta*C, row-major",
		map[bool]string{false: "A", true: "A^T"}[ta], map[bool]string{false: "B", true: "B^T"}[tb])
	sizeDoc := "elements of C: M = N = K = round(sqrt(size))"
	if batch > 1 {
		doc = fmt.Sprintf("strided batched GEMM, %d matrices: C_z = alpha*A_z*B_z + beta*C_z", batch)
		sizeDoc = fmt.Sprintf("elements of C over the batch: %d matrices of M = N = K = round(sqrt(size/%d))", batch, batch)
	}
	if p.Doc != "" {
		doc += "; " + p.Doc
	}
	setup := func(mk func(*engine.Device) (Runner[In, Out], error)) func(ctx context.Context, q *engine.Queue, pr kernels.Params) (kernels.Instance, error) {
		return func(ctx context.Context, q *engine.Queue, pr kernels.Params) (kernels.Instance, error) {
			return newGEMMInstance[In, Out](ctx, q, name, p, ta, tb, batch, pr, mk)
		}
	}
	// The variants in dispatch's order: those that take the precision and the layout.
	var variants []kernels.Variant
	for _, im := range opImpls(p.MMA, ta, tb) {
		switch im {
		case implWGMMA:
			variants = append(variants, kernels.Variant{Name: "cuda-wgmma", Dialect: engine.DialectCUDA, Backend: "cuda", MinCompute: 90,
				Doc:      "Hopper's warpgroup tensor cores (wgmma m64nBN, 128-byte swizzle), tiles copied by TMA (B multicast in clusters of two), a producer and two consumer warpgroups (on alternate k steps of 64-row tiles for at most 64 rows); tf32 reads K-major operands in place, computes nn with at most 4096 rows transposed (B into the registers of wgmma's A), copies the rest K-major first; 3xTF32 splits both into rounded copies",
				Tunables: fmt.Sprintf("BM=%d (64 for at most %d rows) BK=%d bytes threads=%d, and per precision (wgmma.go), or prism tune's: %s", wgmmaBM, wgmmaRows64, wgmmaBKBytes, wgmmaThreads, WGMMADefaults(p.MMA)),
				Needs: func(info engine.DeviceInfo) error {
					if info.ComputeCapability != 90 {
						return fmt.Errorf("needs sm_90 (wgmma is Hopper's); the device is sm_%d", info.ComputeCapability)
					}
					return nil
				},
				Candidates: kernels.CandidatesOf(wgmmaCandidates(p.MMA)),
				Setup: func(ctx context.Context, q *engine.Queue, pr kernels.Params) (kernels.Instance, error) {
					t, from, err := wgmmaTunablesFor(q.Device(), name, p.MMA, pr.Tunables)
					if err != nil {
						return nil, err
					}
					in, err := newGEMMInstance[In, Out](ctx, q, name, p, ta, tb, batch, pr, func(dev *engine.Device) (Runner[In, Out], error) {
						w, err := NewWGMMAWith[In](dev, p, t)
						if err != nil {
							return nil, err
						}
						return any(w).(Runner[In, Out]), nil
					})
					if err != nil {
						return nil, err
					}
					in.tunables = t.String() + " (" + from + ")"
					return in, nil
				}})
		case implMMA:
			v := kernels.Variant{Name: "cuda-mma", Dialect: engine.DialectCUDA, Backend: "cuda", MinCompute: p.MMACompute,
				Doc:      "tensor cores through mma.sync (ldmatrix for 16-bit inputs), a cp.async pipeline in shared memory",
				Tunables: "per architecture (tuning.go), or prism tune's; sm_90: " + MMADefaults(prec, 90).String(),
				Candidates: func(dev *engine.Device) []string {
					list := []string{MMADefaults(prec, dev.Info().ComputeCapability).String()}
					for _, c := range mmaCandidates(engine.SizeOf[In](), dev.Info().ComputeCapability) {
						if s := c.String(); s != list[0] {
							list = append(list, s)
						}
					}
					return list
				},
				Setup: func(ctx context.Context, q *engine.Queue, pr kernels.Params) (kernels.Instance, error) {
					t, from, err := mmaTunablesFor(q.Device(), name, prec, pr.Tunables)
					if err != nil {
						return nil, err
					}
					in, err := newGEMMInstance[In, Out](ctx, q, name, p, ta, tb, batch, pr, func(dev *engine.Device) (Runner[In, Out], error) {
						return NewMMAWith[In, Out](dev, p, t)
					})
					if err != nil {
						return nil, err
					}
					in.tunables = t.String() + " (" + from + ")"
					return in, nil
				}}
			if p.MMA == PrecFloat64 {
				v.Doc = "the fp64 tensor cores (DMMA: mma.sync m16n8k8 on sm_90, m8n8k4 before) with a cp.async pipeline"
				v.Needs = func(info engine.DeviceInfo) error {
					if !info.FP64 {
						return errors.New("needs fp64")
					}
					return nil
				}
			}
			variants = append(variants, v)
		case implSimt:
			variants = append(variants, simtVariant[In, Out](name, setup))
		case implVendor:
			variants = append(variants, vendorVariants[In, Out](p, name, ta, tb, batch)...)
		case implCLMMA:
			variants = append(variants, kernels.Variant{Name: "opencl-mma", Dialect: engine.DialectOpenCL, Backend: "opencl", MinCompute: 80,
				Doc:      "NVIDIA's OpenCL on the tensor cores: mma.sync through inline PTX, double-buffered local tiles",
				Tunables: clmmaDefault.String() + ", k step 64 bytes",
				Needs:    clmmaNeeds,
				Setup: func(ctx context.Context, q *engine.Queue, pr kernels.Params) (kernels.Instance, error) {
					in, err := setup(func(dev *engine.Device) (Runner[In, Out], error) {
						g, err := NewCLMMA[In](dev, p)
						if err != nil {
							return nil, err
						}
						return any(g).(Runner[In, Out]), nil
					})(ctx, q, pr)
					if err != nil {
						return nil, err
					}
					in.(*gemmInstance[In, Out]).tunables = clmmaDefault.String() + " (fixed)"
					return in, nil
				}})
		case implCLSimt:
			variants = append(variants, clsimtVariant[In, Out](name, setup))
		case implPortable:
			portable := kernels.PortableVariant(func(ctx context.Context, q *engine.Queue, pr kernels.Params) (kernels.Instance, error) {
				tiles, from, err := portableTilesFor(q.Device(), name, pr.Tunables)
				if err != nil {
					return nil, err
				}
				in, err := newGEMMInstance[In, Out](ctx, q, name, p, ta, tb, batch, pr, func(dev *engine.Device) (Runner[In, Out], error) {
					if tiles == nil {
						return NewGEMMOf[In, Out](dev, p)
					}
					g, err := newGEMMTiles[In, Out](dev, p, tiles[0], tiles[1], tiles[2])
					if from == "tuned" && errors.Is(err, engine.ErrUnsupported) {
						// A tuning that no longer fits (limits lowered since): the device's own choice.
						from = "by device kind; the tuned " + tilesString(tiles[0], tiles[1], tiles[2]) + " do not fit"
						return NewGEMMOf[In, Out](dev, p)
					}
					return g, err
				})
				if err != nil {
					return nil, err
				}
				g := in.g.(*GEMMOf[In, Out])
				in.tunables = tilesString(g.ts, g.tsk, g.wpt) + " (" + from + ")"
				return in, nil
			})
			portable.Tunables = "TS, TSK, WPT by kind of device (gemmTiles), or prism tune's"
			portable.Candidates = func(dev *engine.Device) []string { return portableCandidates[Out](dev) }
			variants = append(variants, portable)
		}
	}
	o := kernels.Op{
		Name: name, Family: "gemm", Type: prec, Doc: doc, SizeDoc: sizeDoc,
		DefaultSize: 4096 * 4096, QuickSize: 256 * 256, Variants: variants,
	}
	// Across devices by rows of A and C, or by matrices of the batch (split.go).
	o.Split = gemmSplitter[In, Out](o, p, ta, tb, batch)
	return o
}

// gemmInstance runs one GEMM shape over sets of inputs (A and B, and C); the result goes
// to a separate buffer D (RunInto), so that every Run computes the same function of its
// set and Verify can recompute it.
type gemmInstance[In InputType, Out kernels.Float] struct {
	g           Runner[In, Out] // nil for vendor variants
	prec        Precision
	shape       GEMMShape
	betaZero    bool // D = alpha*A*B, C not read (Shape.BetaZero)
	alpha, beta Out
	ab          *kernels.Inputs[In]  // A, B
	c           *kernels.Inputs[Out] // C
	d           *engine.Buffer[Out]
	seed        uint64
	tunables    string // what Tunables reports; empty for implementations without tunables
}

// Tunables reports the tunables of the tensor-core variant and where they came from.
func (in *gemmInstance[In, Out]) Tunables() string { return in.tunables }

// newGEMMInstance sets up the shape and input sets of a GEMM op and the output D; mk
// readies the implementation (nil for vendor variants, which run a library instead).
func newGEMMInstance[In InputType, Out kernels.Float](ctx context.Context, q *engine.Queue, name string, prec Precision, ta, tb bool, batch int, p kernels.Params, mk func(*engine.Device) (Runner[In, Out], error)) (_ *gemmInstance[In, Out], err error) {
	s, betaZero, err := shapeOf(name, ta, tb, batch, p) // p.Shape, else p.Size's square (shape.go)
	if err != nil {
		return nil, err
	}
	if kernels.TypeOf[Out]().FP64 && !q.Device().Info().FP64 {
		return nil, fmt.Errorf("kernels: %s has no fp64: %w", q.Device().ID(), engine.ErrUnsupported)
	}
	in := &gemmInstance[In, Out]{prec: prec, shape: s, betaZero: betaZero, seed: p.Seed}
	if mk != nil {
		if in.g, err = mk(q.Device()); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	rng := kernels.NewRand(p.Seed, gemmStream)
	in.alpha, in.beta = Out(1+rng.Float64()), Out(-0.5-0.5*rng.Float64())
	if betaZero { // D = alpha*A*B: C is not read (the draw above keeps the inputs' stream)
		in.beta = 0
	}
	la, lb, lc := s.Lens()
	// Both input sets rotate together: each is sized by the whole set's bytes.
	setBytes := (la+lb)*engine.SizeOf[In]() + lc*engine.SizeOf[Out]()
	var cs [][]Out
	in.ab, err = kernels.NewInputs(ctx, q, p, setBytes, func(int) [][]In {
		ab := [][]In{randIn[In](rng, la, -1, 1), randIn[In](rng, lb, -1, 1)}
		cs = append(cs, kernels.RandFloats[Out](rng, lc, -1, 1))
		return ab
	})
	if err != nil {
		return nil, err
	}
	set := 0
	in.c, err = kernels.NewInputs(ctx, q, p, setBytes, func(int) [][]Out {
		c := cs[set]
		cs[set], set = nil, set+1
		return [][]Out{c}
	})
	if err != nil {
		return nil, err
	}
	if in.d, err = engine.NewBuffer[Out](q.Device(), lc); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *gemmInstance[In, Out]) Run(ctx context.Context, q *engine.Queue) error {
	ab, c := in.ab.Next(), in.c.Next()
	return in.g.RunInto(q, in.shape, in.alpha, ab[0], ab[1], in.beta, c[0], in.d)
}

// Verify checks D against the float64 reference: every element when M*N*K*batch is at most
// gemmFullCheck (the quick sizes), otherwise, since a full float64 GEMM on the host would
// take minutes at the default size, a seeded random sample of gemmSamples elements plus
// the four corners of every matrix of the batch, each against its own float64 dot product,
// and only those elements of D are read from the device.
func (in *gemmInstance[In, Out]) Verify(ctx context.Context, q *engine.Queue) error {
	s := in.shape
	full := float64(s.M)*float64(s.N)*float64(s.K)*float64(s.Batch) <= gemmFullCheck
	var got []Out
	if full {
		var err error
		if got, err = in.d.Download(ctx, q); err != nil {
			return err
		}
	}
	ab, err := in.ab.Last(ctx)
	if err != nil {
		return err
	}
	cs, err := in.c.Last(ctx)
	if err != nil {
		return err
	}
	// The reference takes the inputs' values as stored, exactly, in float64.
	a, b, c := widen(ab[0]), widen(ab[1]), widen(cs[0])
	alpha, beta := float64(in.alpha), float64(in.beta)
	check := func(z, i, j int, g Out, want, mag float64) error {
		tol := in.prec.Tolerance(s.K, alpha, mag)
		if d := math.Abs(float64(g) - want); !(d <= tol) {
			return fmt.Errorf("%w: gemm %v: D[%d][%d][%d] = %v, want %v (|diff| %.3g > tolerance %.3g)", kernels.ErrVerify, s, z, i, j, g, want, d, tol)
		}
		return nil
	}
	if full {
		want, mag := GEMMRef(s, alpha, a, b, beta, c)
		for z := range s.Batch {
			for i := range s.M {
				for j := range s.N {
					o := z*s.StrideC + i*s.LDC + j
					if err := check(z, i, j, got[o], want[o], mag[o]); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	rng := kernels.NewRand(in.seed, gemmStream+1)
	var pts [][3]int
	for z := range s.Batch {
		pts = append(pts, [3]int{z, 0, 0}, [3]int{z, 0, s.N - 1}, [3]int{z, s.M - 1, 0}, [3]int{z, s.M - 1, s.N - 1})
	}
	for range gemmSamples {
		pts = append(pts, [3]int{rng.IntN(s.Batch), rng.IntN(s.M), rng.IntN(s.N)})
	}
	var g [1]Out
	for _, p := range pts {
		if err := in.d.Read(ctx, q, p[0]*s.StrideC+p[1]*s.LDC+p[2], g[:]); err != nil {
			return err
		}
		want, mag := GEMMRefAt(s, alpha, a, b, beta, c, p[0], p[1], p[2])
		if err := check(p[0], p[1], p[2], g[0], want, mag); err != nil {
			return err
		}
	}
	return nil
}

func (in *gemmInstance[In, Out]) Model() kernels.Model {
	m := GEMMModelOf(in.shape, engine.SizeOf[In](), engine.SizeOf[Out]())
	if in.betaZero { // C neither read nor scaled
		s := in.shape.WithDefaults()
		mn := float64(s.Batch) * float64(s.M) * float64(s.N)
		m.Flops -= 2 * mn
		m.Bytes -= mn * float64(engine.SizeOf[Out]())
	}
	return m
}

func (in *gemmInstance[In, Out]) Shape() string { return shapeText(in.shape, in.betaZero) }

func (in *gemmInstance[In, Out]) Close() error {
	var errs []error
	if in.g != nil {
		errs = append(errs, in.g.Close())
	}
	return errors.Join(append(errs, in.d.Close(), in.ab.Close(), in.c.Close())...)
}

// simtVariant is the CUDA C++ variant of the float32 ops that uses no tensor cores:
// sgemm.cu's SIMT kernel (cuda-simt), true fp32 as the portable kernel.
func simtVariant[In InputType, Out kernels.Float](name string, setup func(func(*engine.Device) (Runner[In, Out], error)) func(context.Context, *engine.Queue, kernels.Params) (kernels.Instance, error)) kernels.Variant {
	return kernels.Variant{Name: "cuda-simt", Dialect: engine.DialectCUDA, Backend: "cuda",
		Doc:        "CUDA C++ SIMT kernel: warp tiling, 8 x 8 outputs per thread, double-buffered shared memory, 16-byte loads",
		Tunables:   DefaultSimtTunables.String() + ", or prism tune's",
		Candidates: kernels.CandidatesOf(simtCandidates),
		Setup: func(ctx context.Context, q *engine.Queue, pr kernels.Params) (kernels.Instance, error) {
			t, from, err := simtTunablesFor(q.Device(), name, pr.Tunables)
			if err != nil {
				return nil, err
			}
			in, err := setup(func(dev *engine.Device) (Runner[In, Out], error) {
				g, err := NewSGEMMSimtWith(dev, t)
				if err != nil {
					return nil, err
				}
				return any(g).(Runner[In, Out]), nil
			})(ctx, q, pr)
			if err != nil {
				return nil, err
			}
			in.(*gemmInstance[In, Out]).tunables = t.String() + " (" + from + ")"
			return in, nil
		}}
}

// clsimtVariant is the opencl-simt variant of the float32 ops (sgemm.cl, CLSimt).
func clsimtVariant[In InputType, Out kernels.Float](name string, setup func(func(*engine.Device) (Runner[In, Out], error)) func(context.Context, *engine.Queue, kernels.Params) (kernels.Instance, error)) kernels.Variant {
	return kernels.Variant{Name: "opencl-simt", Dialect: engine.DialectOpenCL, Backend: "opencl",
		Doc:      "OpenCL C port of cuda-simt for OpenCL GPUs: warp tiling, 8 x 8 outputs per work-item, double-buffered local memory, 16-byte loads",
		Tunables: clsimtString(DefaultCLSimtTunables) + ", or prism tune's",
		Needs:    clsimtNeeds,
		Candidates: func(*engine.Device) []string {
			var out []string
			for _, c := range clsimtCandidates {
				out = append(out, clsimtString(c))
			}
			return out
		},
		Setup: func(ctx context.Context, q *engine.Queue, pr kernels.Params) (kernels.Instance, error) {
			t, from, err := clsimtTunablesFor(q.Device(), name, pr.Tunables)
			if err != nil {
				return nil, err
			}
			in, err := setup(func(dev *engine.Device) (Runner[In, Out], error) {
				g, err := NewCLSimtWith(dev, t)
				if err != nil {
					return nil, err
				}
				return any(g).(Runner[In, Out]), nil
			})(ctx, q, pr)
			if err != nil {
				return nil, err
			}
			in.(*gemmInstance[In, Out]).tunables = clsimtString(t) + " (" + from + ")"
			return in, nil
		}}
}
