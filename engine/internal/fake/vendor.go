package fake

import (
	"math"
	"math/cmplx"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/prism-compute/prism/engine/driver"
)

// The fake's vendor libraries: a BLAS and an FFT written in Go, computed in float64 and
// rounded to the element type once, so that engine's validation and plumbing (lifetimes,
// timing through Queue.Timed, the conformance suite's checks) are tested without a
// device. Like the rest of the fake they check the promises the SPI makes.

// blasLibrary and fftLibrary are what the fake's libraries report.
var (
	blasLibrary = driver.Library{Name: "fake BLAS", Version: "1.0", Path: "(built in)"}
	fftLibrary  = driver.Library{Name: "fake FFT", Version: "1.0", Path: "(built in)"}
)

var (
	_ driver.BLASProvider = (*device)(nil)
	_ driver.FFTProvider  = (*device)(nil)
)

// BLAS returns a new handle on the fake BLAS.
func (d *device) BLAS() (driver.BLAS, error) {
	count(d, "Device.BLAS")
	b := &blas{dev: d}
	if err := d.adopt(b, "Device.BLAS"); err != nil {
		return nil, err
	}
	return b, nil
}

// blas is a handle on the fake BLAS.
type blas struct {
	dev    *device
	closed atomic.Bool
}

func (b *blas) Library() driver.Library {
	count(b.dev, "BLAS.Library")
	return blasLibrary
}

func (b *blas) Close() error {
	count(b.dev, "BLAS.Close")
	if b.closed.Swap(true) {
		return violation("BLAS.Close called twice")
	}
	return b.dev.drop(b, "Device.BLAS")
}

// Gemm checks g against the SPI's promises and computes it at once.
func (b *blas) Gemm(dq driver.Queue, g driver.GemmArgs) (driver.Event, error) {
	count(b.dev, "BLAS.Gemm")
	if b.closed.Load() {
		return nil, violation("BLAS.Gemm on a closed BLAS")
	}
	q, ok := dq.(*queue)
	if !ok || q == nil || q.dev != b.dev {
		return nil, violation("BLAS.Gemm on a queue of another device")
	}
	if err := q.open("BLAS.Gemm"); err != nil {
		return nil, err
	}
	if g.Type.Size() == 0 || g.M < 1 || g.N < 1 || g.K < 1 || g.Batch < 1 {
		return nil, violation("BLAS.Gemm of %v, M=%d N=%d K=%d batch %d", g.Type, g.M, g.N, g.K, g.Batch)
	}
	rowsA, colsA := g.M, g.K
	if g.TransA {
		rowsA, colsA = colsA, rowsA
	}
	rowsB, colsB := g.K, g.N
	if g.TransB {
		rowsB, colsB = colsB, rowsB
	}
	es := int64(g.Type.Size())
	for _, x := range []struct {
		name       string
		buf        driver.Buffer
		rows, cols int
		ld         int
		stride     int64
	}{{"A", g.A, rowsA, colsA, g.LDA, g.StrideA}, {"B", g.B, rowsB, colsB, g.LDB, g.StrideB}, {"C", g.C, g.M, g.N, g.LDC, g.StrideC}} {
		if x.ld < x.cols || x.stride < 0 {
			return nil, violation("BLAS.Gemm: %s of %d columns with leading dimension %d, stride %d", x.name, x.cols, x.ld, x.stride)
		}
		span := int64(g.Batch-1)*x.stride + int64(x.rows-1)*int64(x.ld) + int64(x.cols)
		if err := asBuffer(x.buf).use(b.dev, "BLAS.Gemm "+x.name, 0, span*es); err != nil {
			return nil, err
		}
	}
	if g.Batch > 1 && g.StrideC < int64((g.M-1)*g.LDC+g.N) {
		return nil, violation("BLAS.Gemm: the matrices of C overlap (stride %d)", g.StrideC)
	}
	if g.C == g.A || g.C == g.B {
		return nil, violation("BLAS.Gemm: C is also an input")
	}
	start := time.Now()
	if g.Type == driver.Float64 {
		gemm[float64](g)
	} else {
		gemm[float32](g)
	}
	return q.event(start), nil
}

// gemm computes g in float64 and rounds each result to T once. When Beta is 0, C is not
// read.
func gemm[T float32 | float64](g driver.GemmArgs) {
	a, b, c := elems[T](g.A), elems[T](g.B), elems[T](g.C)
	at := func(m []T, ld int, trans bool, i, j int) float64 {
		if trans {
			return float64(m[j*ld+i])
		}
		return float64(m[i*ld+j])
	}
	for z := range g.Batch {
		az, bz, cz := a[int64(z)*g.StrideA:], b[int64(z)*g.StrideB:], c[int64(z)*g.StrideC:]
		for i := range g.M {
			for j := range g.N {
				var acc float64
				for k := range g.K {
					acc += at(az, g.LDA, g.TransA, i, k) * at(bz, g.LDB, g.TransB, k, j)
				}
				r := g.Alpha * acc
				if g.Beta != 0 {
					r += g.Beta * float64(cz[i*g.LDC+j])
				}
				cz[i*g.LDC+j] = T(r)
			}
		}
	}
}

// elems returns a fake buffer's memory as a slice of T.
func elems[T float32 | float64](db driver.Buffer) []T {
	b := asBuffer(db)
	var z T
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b.mem))), len(b.mem)/int(unsafe.Sizeof(z)))
}

// FFT returns a new handle on the fake FFT.
func (d *device) FFT() (driver.FFT, error) {
	count(d, "Device.FFT")
	f := &fft{dev: d}
	if err := d.adopt(f, "Device.FFT"); err != nil {
		return nil, err
	}
	return f, nil
}

// fft is a handle on the fake FFT.
type fft struct {
	dev    *device
	plans  atomic.Int64 // open plans: closing f before them is a violation
	closed atomic.Bool
}

func (f *fft) Library() driver.Library {
	count(f.dev, "FFT.Library")
	return fftLibrary
}

func (f *fft) Close() error {
	count(f.dev, "FFT.Close")
	if f.closed.Swap(true) {
		return violation("FFT.Close called twice")
	}
	err := f.dev.drop(f, "Device.FFT")
	if n := f.plans.Load(); n > 0 {
		return violation("FFT.Close with %d plans still open", n)
	}
	return err
}

func (f *fft) Plan(s driver.FFTSpec) (driver.FFTPlan, error) {
	count(f.dev, "FFT.Plan")
	if f.closed.Load() {
		return nil, violation("FFT.Plan on a closed FFT")
	}
	if s.Type.Size() == 0 || (s.Kind != driver.C2C && s.Kind != driver.R2C) || len(s.Shape) < 1 || len(s.Shape) > 2 ||
		s.Batch < 1 || (s.Kind == driver.R2C && s.Inverse) || slices.Min(s.Shape) < 1 {
		return nil, violation("FFT.Plan of %+v", s)
	}
	p := &plan{f: f, spec: s}
	p.spec.Shape = slices.Clone(s.Shape)
	if err := f.dev.adopt(p, "FFT.Plan"); err != nil {
		return nil, err
	}
	f.plans.Add(1)
	return p, nil
}

// plan is a fake FFT plan: a DFT computed in float64 at each run.
type plan struct {
	f      *fft
	spec   driver.FFTSpec
	closed atomic.Bool
}

func (p *plan) Close() error {
	count(p.f.dev, "FFTPlan.Close")
	if p.closed.Swap(true) {
		return violation("FFTPlan.Close called twice")
	}
	p.f.plans.Add(-1)
	return p.f.dev.drop(p, "FFT.Plan")
}

func (p *plan) Run(dq driver.Queue, in, out driver.Buffer) (driver.Event, error) {
	d := p.f.dev
	count(d, "FFTPlan.Run")
	if p.closed.Load() {
		return nil, violation("FFTPlan.Run on a closed plan")
	}
	q, ok := dq.(*queue)
	if !ok || q == nil || q.dev != d {
		return nil, violation("FFTPlan.Run on a queue of another device")
	}
	if err := q.open("FFTPlan.Run"); err != nil {
		return nil, err
	}
	if in == out {
		return nil, violation("FFTPlan.Run in place")
	}
	s := p.spec
	n := 1
	for _, v := range s.Shape {
		n *= v
	}
	last := s.Shape[len(s.Shape)-1]
	inLen, outLen := 2*n, 2*n
	if s.Kind == driver.R2C {
		inLen, outLen = n, 2*(n/last)*(last/2+1)
	}
	es := int64(s.Type.Size())
	if err := asBuffer(in).use(d, "FFTPlan.Run input", 0, int64(inLen*s.Batch)*es); err != nil {
		return nil, err
	}
	if err := asBuffer(out).use(d, "FFTPlan.Run output", 0, int64(outLen*s.Batch)*es); err != nil {
		return nil, err
	}
	start := time.Now()
	if s.Type == driver.Float64 {
		dft[float64](s, elems[float64](in), elems[float64](out))
	} else {
		dft[float32](s, elems[float32](in), elems[float32](out))
	}
	return q.event(start), nil
}

// dft computes the transforms of s from in to out by the definition, in float64.
func dft[T float32 | float64](s driver.FFTSpec, in, out []T) {
	rows, cols := 1, s.Shape[0]
	if len(s.Shape) == 2 {
		rows, cols = s.Shape[0], s.Shape[1]
	}
	n := rows * cols
	sign := -1.0
	if s.Inverse {
		sign = 1
	}
	x := make([]complex128, n)
	for t := range s.Batch {
		for k := range x {
			if s.Kind == driver.R2C {
				x[k] = complex(float64(in[t*n+k]), 0)
			} else {
				x[k] = complex(float64(in[2*(t*n+k)]), float64(in[2*(t*n+k)+1]))
			}
		}
		for r := range rows {
			transform(x[r*cols:(r+1)*cols], 1, sign)
		}
		for c := range cols {
			transform(x[c:], cols, sign)
		}
		if s.Kind == driver.R2C {
			h := cols/2 + 1
			for r := range rows {
				for c := range h {
					o := 2 * ((t*rows+r)*h + c)
					out[o], out[o+1] = T(real(x[r*cols+c])), T(imag(x[r*cols+c]))
				}
			}
			continue
		}
		for k, v := range x {
			out[2*(t*n+k)], out[2*(t*n+k)+1] = T(real(v)), T(imag(v))
		}
	}
}

// transform replaces x[0], x[stride], x[2*stride], ... (a row of a row-major matrix with
// stride 1, or a column with stride the row length, x then holding the matrix from the
// column's first element) by their DFT with exponent sign.
func transform(x []complex128, stride int, sign float64) {
	m := (len(x)-1)/stride + 1
	v := make([]complex128, m)
	for j := range m {
		v[j] = x[j*stride]
	}
	for k := range m {
		var acc complex128
		for j := range m {
			acc += v[j] * twiddle(j*k%m, m, sign)
		}
		x[k*stride] = acc
	}
}

// twiddle returns e^{sign 2 pi i t/m} for 0 <= t < m, exact at multiples of a quarter
// turn, so that transforms of small exact inputs come out exact.
func twiddle(t, m int, sign float64) complex128 {
	if 4*t%m == 0 {
		return [4]complex128{1, complex(0, sign), -1, complex(0, -sign)}[4*t/m]
	}
	return cmplx.Rect(1, sign*2*math.Pi*float64(t)/float64(m))
}
