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
// order listings show them.
func Family() kernels.Family {
	return kernels.Family{Name: "gemm", Source: source, Ops: []kernels.Op{
		gemmOp[float32]("nn", false, false, 1),
		gemmOp[float64]("nn", false, false, 1),
		gemmOp[float32]("nt", false, true, 1),
		gemmOp[float32]("tn", true, false, 1),
		gemmOp[float32]("batched", false, false, gemmOpBatch),
	}}
}

// gemmOpBatch is the batch count of gemm/batched.
const gemmOpBatch = 8

// gemmStream is the random stream constant of the gemm family's inputs ("gemm").
const gemmStream = 0x67656d6d

// gemmFullCheck is the largest M*N*K*batch that Verify checks in full; above it, a sample.
const gemmFullCheck = 1 << 27

// gemmSamples is the number of random elements Verify checks on large problems.
const gemmSamples = 1024

func gemmOp[T kernels.Float](op string, ta, tb bool, batch int) kernels.Op {
	name := "gemm/" + op + "/" + kernels.TypeName[T]()
	doc := fmt.Sprintf("C = alpha*%s*%s + beta*C, row-major, tiled in local memory with register blocking",
		map[bool]string{false: "A", true: "A^T"}[ta], map[bool]string{false: "B", true: "B^T"}[tb])
	sizeDoc := "elements of C: M = N = K = round(sqrt(size))"
	if batch > 1 {
		doc = fmt.Sprintf("strided batched GEMM, %d matrices: C_z = alpha*A_z*B_z + beta*C_z", batch)
		sizeDoc = fmt.Sprintf("elements of C over the batch: %d matrices of M = N = K = round(sqrt(size/%d))", batch, batch)
	}
	return kernels.Op{
		Name: name, Family: "gemm", Type: kernels.TypeName[T](), Doc: doc, SizeDoc: sizeDoc,
		DefaultSize: 4096 * 4096, QuickSize: 256 * 256,
		Variants: append(vendorVariants[T](name, ta, tb, batch),
			kernels.PortableVariant(func(q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
				return setupGEMM[T](q, name, ta, tb, batch, p)
			})),
	}
}

// gemmInstance runs one GEMM shape over sets of inputs (A, B, C); the result goes to a
// separate buffer D (GEMM.RunInto), so that every Run computes the same function of its set
// and Verify can recompute it.
type gemmInstance[T kernels.Float] struct {
	g           *GEMM[T]
	shape       GEMMShape
	alpha, beta T
	abc         *kernels.Inputs[T] // A, B, C
	d           *engine.Buffer[T]
	seed        uint64
}

func setupGEMM[T kernels.Float](q *engine.Queue, name string, ta, tb bool, batch int, p kernels.Params) (kernels.Instance, error) {
	return newGEMMInstance[T](q, name, ta, tb, batch, p, true)
}

// newGEMMInstance sets up the shape and input sets of a GEMM op and the output D; kernel
// compiles Prism's GEMM (vendor variants run a library instead).
func newGEMMInstance[T kernels.Float](q *engine.Queue, name string, ta, tb bool, batch int, p kernels.Params, kernel bool) (_ *gemmInstance[T], err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	n := max(int(math.Round(math.Sqrt(float64(p.Size)/float64(batch)))), 1)
	s := GEMMShape{TransA: ta, TransB: tb, M: n, N: n, K: n, Batch: batch}.WithDefaults()
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("kernels: %s: size %d: %w", name, p.Size, err)
	}
	if kernels.TypeOf[T]().FP64 && !q.Device().Info().FP64 {
		return nil, fmt.Errorf("kernels: %s has no fp64: %w", q.Device().ID(), engine.ErrUnsupported)
	}
	in := &gemmInstance[T]{shape: s, seed: p.Seed}
	if kernel {
		if in.g, err = NewGEMM[T](q.Device()); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	rng := kernels.NewRand(p.Seed, gemmStream)
	in.alpha, in.beta = T(1+rng.Float64()), T(-0.5-0.5*rng.Float64())
	la, lb, lc := s.Lens()
	in.abc, err = kernels.NewInputs(context.TODO(), q, p, (la+lb+lc)*engine.SizeOf[T](), func(int) [][]T {
		return [][]T{kernels.RandFloats[T](rng, la, -1, 1), kernels.RandFloats[T](rng, lb, -1, 1), kernels.RandFloats[T](rng, lc, -1, 1)}
	})
	if err != nil {
		return nil, err
	}
	if in.d, err = engine.NewBuffer[T](q.Device(), lc); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *gemmInstance[T]) Run(q *engine.Queue) error {
	abc := in.abc.Next()
	return in.g.RunInto(q, in.shape, in.alpha, abc[0], abc[1], in.beta, abc[2], in.d)
}

// Verify checks D against the float64 reference: every element when M*N*K*batch is at most
// gemmFullCheck (the quick sizes), otherwise, since a full float64 GEMM on the host would
// take minutes at the default size, a seeded random sample of gemmSamples elements plus
// the four corners of every matrix of the batch, each against its own float64 dot product,
// and only those elements of D are read from the device.
func (in *gemmInstance[T]) Verify(q *engine.Queue) error {
	s := in.shape
	full := float64(s.M)*float64(s.N)*float64(s.K)*float64(s.Batch) <= gemmFullCheck
	var got []T
	if full {
		var err error
		if got, err = in.d.Download(context.TODO(), q); err != nil {
			return err
		}
	}
	abc, err := in.abc.Last(context.TODO())
	if err != nil {
		return err
	}
	a, b, c := abc[0], abc[1], abc[2]
	alpha, beta := float64(in.alpha), float64(in.beta)
	check := func(z, i, j int, g T, want, mag float64) error {
		tol := GEMMTolerance[T](s.K, alpha, mag)
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
	var g [1]T
	for _, p := range pts {
		if err := in.d.Read(context.TODO(), q, p[0]*s.StrideC+p[1]*s.LDC+p[2], g[:]); err != nil {
			return err
		}
		want, mag := GEMMRefAt(s, alpha, a, b, beta, c, p[0], p[1], p[2])
		if err := check(p[0], p[1], p[2], g[0], want, mag); err != nil {
			return err
		}
	}
	return nil
}

func (in *gemmInstance[T]) Model() kernels.Model { return GEMMModel(in.shape, engine.SizeOf[T]()) }

func (in *gemmInstance[T]) Shape() string {
	s := fmt.Sprintf("M=N=K=%d", in.shape.M)
	if in.shape.Batch > 1 {
		s = fmt.Sprintf("batch=%d %s", in.shape.Batch, s)
	}
	return s
}

func (in *gemmInstance[T]) Close() error {
	return errors.Join(in.d.Close(), in.abc.Close(), in.g.Close())
}
