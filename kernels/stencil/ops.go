package stencil

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed stencil.cl
var source string

// Family returns the stencil family: its OpenCL C source (stencil.cl) and its operations, in the
// order listings show them.
func Family() kernels.Family {
	var ops []kernels.Op
	for _, k := range StencilKinds {
		ops = append(ops, stencilOp[float32](k))
	}
	return kernels.Family{Name: "stencil", Source: source, Ops: ops}
}

var stencilDocs = map[StencilKind]string{
	Stencil5pt:  "2D 5-point weighted stencil, interior points (boundary copied), 32x32 local-memory tiles",
	Stencil7pt:  "3D 7-point weighted stencil, interior points (boundary copied)",
	Stencil27pt: "3D 27-point weighted stencil, interior points (boundary copied)",
}

func stencilOp[T kernels.Float](k StencilKind) kernels.Op {
	name := "stencil/" + string(k) + "/" + kernels.TypeName[T]()
	sizeDoc := "2D grid nx = ny = round(sqrt(size))"
	if k.Dims() == 3 {
		sizeDoc = "3D grid nx = ny = nz = round(cbrt(size))"
	}
	quick := 1 << 20
	if k.Dims() == 3 {
		quick = 1 << 18 // 64^3: PoCL runs the z-marching kernels at about 20-50 ns a point
	}
	variants := kernels.Portable(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
		return setupStencil[T](ctx, q, name, k, false, p)
	})
	variants[0].Doc = portableDocs[k]
	if k.Dims() == 3 {
		variants = append([]kernels.Variant{zmarchVariant[T](name, k)}, variants...)
	}
	return kernels.Op{
		Name: name, Family: "stencil", Type: kernels.TypeName[T](), Doc: stencilDocs[k],
		SizeDoc: sizeDoc, DefaultSize: 1 << 26, QuickSize: quick, Variants: variants,
	}
}

var portableDocs = map[StencilKind]string{
	Stencil5pt:  "32x32 output tiles loaded with their halo into local memory (OpenCL C, every backend)",
	Stencil7pt:  "2.5D blocking: 32x8 columns of 32 planes, each plane with its halo staged in local memory, one barrier a plane (OpenCL C, every backend)",
	Stencil27pt: "2.5D blocking: 32x8 columns of 32 planes, each plane with its halo staged in local memory, one barrier a plane (OpenCL C, every backend)",
}

// zmarchVariant is the zmarch variant of the 3D stencil op name (stencil_zmarch.cl), placed
// before the portable one: OpenCL C that every device builds, shaped for GPUs with large
// L1 and L2 caches.
func zmarchVariant[T kernels.Float](name string, k StencilKind) kernels.Variant {
	doc := "32-wide x-y tiles of columns, RY rows a work-item, marching along z in registers with planes read ahead; x/y neighbours through L1, no local memory, no barrier (OpenCL C, every backend)"
	if k == Stencil27pt {
		doc = "32-wide x-y tiles of columns, RY rows a work-item, marching along z in registers with planes read ahead; each plane's three 9-point sums computed once, the plane tile in local memory (LM=1) or read through L1 (OpenCL C, every backend)"
	}
	return kernels.Variant{
		Name:    ZMarchName,
		Doc:     doc,
		Dialect: engine.DialectOpenCL,
		Tunables: func() string {
			d := ZMarchDefault(k)
			return fmt.Sprintf("%s (tile %dx%d columns x %d planes), or prism tune's", d, d.SX, d.SY*d.RY, d.ZC)
		}(),
		Candidates: kernels.CandidatesOf(zmarchCandidates(k)),
		Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			return setupStencil[T](ctx, q, name, k, true, p)
		},
	}
}

// stencilShape maps an op size to the grid of SizeDoc.
func stencilShape(k StencilKind, size int) (nx, ny, nz int) {
	if k.Dims() == 2 {
		s := max(int(math.Round(math.Sqrt(float64(size)))), 1)
		return s, s, 1
	}
	s := max(int(math.Round(math.Cbrt(float64(size)))), 1)
	return s, s, s
}

// verifyFullMax is the largest output a stencil Verify checks in full; above it, a seeded
// sample (see VerifyIndices) keeps the float64 reference fast at the default (GPU) sizes.
const verifyFullMax = 1 << 22

type stencilInstance[T kernels.Float] struct {
	kind       StencilKind
	s          *Stencil[T] // the portable variant, else nil
	zm         *ZMarch[T]  // the zmarch variant, else nil
	tunables   string      // the zmarch variant's, with where they came from
	nx, ny, nz int
	seed       uint64
	w          []T
	bw         *engine.Buffer[T]
	x          *kernels.Inputs[T]
	out        *engine.Buffer[T]
}

// setupStencil sets up a stencil op; zmarch selects the zmarch variant (3D kinds only).
func setupStencil[T kernels.Float](ctx context.Context, q *engine.Queue, name string, k StencilKind, zmarch bool, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	nx, ny, nz := stencilShape(k, p.Size)
	if float64(nx)*float64(ny)*float64(nz) > math.MaxInt32 {
		return nil, fmt.Errorf("kernels: %s: size %d exceeds the family's limit of 2^31-1 points: %w", name, p.Size, engine.ErrInvalidArg)
	}
	in := &stencilInstance[T]{kind: k, nx: nx, ny: ny, nz: nz, seed: p.Seed}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	if zmarch {
		t, from, err := zmarchTunables(q.Device(), k, name, p.Tunables)
		if err != nil {
			return nil, err
		}
		if in.zm, err = NewZMarch[T](q.Device(), k, t); err != nil {
			return nil, err
		}
		in.tunables = fmt.Sprintf("%s (%s)", in.zm.Tunables(), from)
	} else if in.s, err = NewStencil[T](q.Device()); err != nil {
		return nil, err
	}
	n := nx * ny * nz
	rng := kernels.NewRand(p.Seed, 0x5374)
	in.w = kernels.RandFloats[T](rng, k.Points(), -1, 1)
	if in.bw, err = engine.Upload(ctx, q, in.w); err != nil {
		return nil, err
	}
	in.x, err = kernels.NewInputs(ctx, q, p, n*engine.SizeOf[T](), func(int) [][]T { return [][]T{kernels.RandFloats[T](rng, n, -1, 1)} })
	if err != nil {
		return nil, err
	}
	if in.out, err = engine.NewBuffer[T](q.Device(), n); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *stencilInstance[T]) Run(ctx context.Context, q *engine.Queue) error {
	if in.zm != nil {
		return in.zm.Run(q, in.out, in.x.Next()[0], in.bw, in.nx, in.ny, in.nz)
	}
	return in.s.Run(q, in.kind, in.out, in.x.Next()[0], in.bw, in.nx, in.ny, in.nz)
}

// Verify checks the output against the float64 reference: every point up to
// verifyFullMax points, a seeded sample above (VerifyIndices).
func (in *stencilInstance[T]) Verify(ctx context.Context, q *engine.Queue) error {
	got, err := in.out.Download(ctx, q)
	if err != nil {
		return err
	}
	last, err := in.x.Last(ctx)
	if err != nil {
		return err
	}
	a := last[0]
	for _, i := range kernels.VerifyIndices(len(a), len(a) <= verifyFullMax, in.seed) {
		want, mag := StencilRefAt(in.kind, a, in.w, in.nx, in.ny, in.nz, i)
		tol := StencilTolerance[T](in.kind, mag)
		if d := math.Abs(float64(got[i]) - want); !(d <= tol) {
			return fmt.Errorf("%w: stencil %s out: element %d (x=%d y=%d z=%d) = %v, want %v (|diff| %.3g > tolerance %.3g)", kernels.ErrVerify, in.kind, i, i%in.nx, (i/in.nx)%in.ny, i/(in.nx*in.ny), got[i], want, d, tol)
		}
	}
	return nil
}

func (in *stencilInstance[T]) Model() kernels.Model {
	return StencilModel(in.kind, in.nx, in.ny, in.nz, engine.SizeOf[T]())
}

func (in *stencilInstance[T]) Shape() string {
	if in.kind.Dims() == 2 {
		return fmt.Sprintf("nx=%d ny=%d", in.nx, in.ny)
	}
	return fmt.Sprintf("nx=%d ny=%d nz=%d", in.nx, in.ny, in.nz)
}

// Tunables reports the zmarch variant's shape and where it came from; "" for the
// portable variant, which takes none.
func (in *stencilInstance[T]) Tunables() string { return in.tunables }

func (in *stencilInstance[T]) Close() error {
	var s error
	if in.s != nil {
		s = in.s.Close()
	}
	return errors.Join(in.out.Close(), in.bw.Close(), in.x.Close(), s, in.zm.Close())
}
