package cuda

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
	"github.com/prism-compute/prism/engine/enginetest"
)

// The conformance suite (TestConformance) checks cuBLAS's GEMMs and cuFFT's transforms
// against float64 references on every device, their timing and concurrent calls on
// several streams; it needs a GPU. The tests below that need none check the pure-Go parts:
// the row-major to column-major mapping of GEMMs (against a column-major reference GEMM
// with cuBLAS's own argument checks), the plans' arguments, the loader and the status
// codes. TestVendorLibraries needs the GPU and the libraries.

// colMajorGemm is a reference of cuBLAS's strided batched GEMM, column-major, in float64:
// C[i + j*ldc] = alpha * sum_l op(A)[i,l] op(B)[l,j] + beta * C[i + j*ldc], with beta 0
// not reading C. It first applies the argument checks cuBLAS documents for
// cublas<t>gemmStridedBatched, returning an error where cuBLAS would return
// CUBLAS_STATUS_INVALID_VALUE.
func colMajorGemm(c cublasGemm, a, b, cm []float64) error {
	rowsA := c.m // op(A) is m x k: A is stored m x k, or k x m when transposed
	if c.transA == cublasOpT {
		rowsA = c.k
	}
	rowsB := c.k
	if c.transB == cublasOpT {
		rowsB = c.n
	}
	switch {
	case c.m < 0 || c.n < 0 || c.k < 0 || c.batch < 0:
		return fmt.Errorf("negative m %d, n %d, k %d or batch %d", c.m, c.n, c.k, c.batch)
	case c.lda < max(1, rowsA):
		return fmt.Errorf("lda %d < max(1, %d)", c.lda, rowsA)
	case c.ldb < max(1, rowsB):
		return fmt.Errorf("ldb %d < max(1, %d)", c.ldb, rowsB)
	case c.ldc < max(1, c.m):
		return fmt.Errorf("ldc %d < max(1, %d)", c.ldc, c.m)
	}
	opA := func(z, i, l int) float64 {
		if c.transA == cublasOpT {
			return a[z*int(c.strideA)+l+i*c.lda]
		}
		return a[z*int(c.strideA)+i+l*c.lda]
	}
	opB := func(z, l, j int) float64 {
		if c.transB == cublasOpT {
			return b[z*int(c.strideB)+j+l*c.ldb]
		}
		return b[z*int(c.strideB)+l+j*c.ldb]
	}
	for z := range c.batch {
		for j := range c.n {
			for i := range c.m {
				var acc float64
				for l := range c.k {
					acc += opA(z, i, l) * opB(z, l, j)
				}
				at := z*int(c.strideC) + i + j*c.ldc
				r := c.alpha * acc
				if c.beta != 0 {
					r += c.beta * cm[at]
				}
				cm[at] = r
			}
		}
	}
	return nil
}

// rowMajorGemm is Prism's GEMM by its definition (engine.GemmSpec), in float64.
func rowMajorGemm(g driver.GemmArgs, a, b, c []float64) {
	for z := range g.Batch {
		for i := range g.M {
			for j := range g.N {
				var acc float64
				for l := range g.K {
					ai := z*int(g.StrideA) + i*g.LDA + l
					if g.TransA {
						ai = z*int(g.StrideA) + l*g.LDA + i
					}
					bi := z*int(g.StrideB) + l*g.LDB + j
					if g.TransB {
						bi = z*int(g.StrideB) + j*g.LDB + l
					}
					acc += a[ai] * b[bi]
				}
				at := z*int(g.StrideC) + i*g.LDC + j
				r := g.Alpha * acc
				if g.Beta != 0 {
					r += g.Beta * c[at]
				}
				c[at] = r
			}
		}
	}
}

// TestColumnMajor runs the row-major to column-major mapping of every transpose, leading
// dimensions wider than the rows, batches with gaps and dimensions of 1 through a
// column-major reference GEMM that checks the arguments as cuBLAS does, and compares the
// result with Prism's row-major definition, exactly (small integers: no rounding).
func TestColumnMajor(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	specs := []engine.GemmSpec{
		{M: 1, N: 1, K: 1},
		{M: 7, N: 5, K: 3},
		{M: 1, N: 9, K: 4},
		{M: 6, N: 1, K: 1},
		{M: 5, N: 7, K: 3, LDA: 9, LDB: 11, LDC: 8},
		{M: 4, N: 6, K: 5, Batch: 3},
		{M: 4, N: 6, K: 5, Batch: 3, LDA: 7, LDB: 9, LDC: 10, StrideA: 50, StrideB: 80, StrideC: 45},
	}
	for _, base := range specs {
		for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			s := base
			s.TransA, s.TransB = tr[0], tr[1]
			if s.LDA != 0 { // wide enough for either storage of A and B
				s.LDA = max(s.LDA, s.M, s.K)
				s.LDB = max(s.LDB, s.N, s.K)
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("%v: %v", s, err)
			}
			d := s.WithDefaults()
			la, lb, lc := d.Lens()
			ints := func(n int) []float64 {
				v := make([]float64, n)
				for i := range v {
					v[i] = float64(r.IntN(9) - 4)
				}
				return v
			}
			a, b, c := ints(la), ints(lb), ints(lc)
			for _, ab := range [][2]float64{{1, 0}, {2, -1}, {-3, 0.5}} {
				g := driver.GemmArgs{Type: driver.Float32, TransA: d.TransA, TransB: d.TransB, M: d.M, N: d.N, K: d.K,
					Alpha: ab[0], Beta: ab[1], LDA: d.LDA, LDB: d.LDB, LDC: d.LDC, Batch: d.Batch,
					StrideA: int64(d.StrideA), StrideB: int64(d.StrideB), StrideC: int64(d.StrideC)}
				cm, err := columnMajor(g, 1, 2, 3)
				if err != nil {
					t.Fatalf("%v: %v", s, err)
				}
				if cm.a != 2 || cm.b != 1 || cm.c != 3 || cm.m != d.N || cm.n != d.M || cm.k != d.K {
					t.Errorf("%v: operands %d, %d, %d and m, n, k %d, %d, %d: want B, A, C and N, M, K", s, cm.a, cm.b, cm.c, cm.m, cm.n, cm.k)
				}
				want, got := slices.Clone(c), slices.Clone(c)
				rowMajorGemm(g, a, b, want)
				// The column-major call's first operand is the buffer of B, its second A's.
				if err := colMajorGemm(cm, b, a, got); err != nil {
					t.Errorf("%v: cuBLAS would refuse the mapped arguments %+v: %v", s, cm, err)
					continue
				}
				if !slices.Equal(got, want) {
					t.Errorf("%v alpha %v beta %v: the column-major call computes\n%v\nwant\n%v", s, ab[0], ab[1], got, want)
				}
			}
		}
	}
}

func TestColumnMajorLimits(t *testing.T) {
	g := driver.GemmArgs{Type: driver.Float64, M: 2, N: 3, K: 4, LDA: 4, LDB: 3, LDC: 3, Batch: 2, StrideA: 8, StrideB: 12, StrideC: 6}
	c, err := columnMajor(g, 0, 0, 0)
	if err != nil || !c.double || c.routine() != "cublasDgemmStridedBatched" {
		t.Errorf("columnMajor = %+v, %v", c, err)
	}
	g.Batch, g.Type = 1, driver.Float32
	if c, _ := columnMajor(g, 0, 0, 0); c.routine() != "cublasSgemm_v2" {
		t.Errorf("routine = %s", c.routine())
	}
	g.K = 1 << 31
	if _, err := columnMajor(g, 0, 0, 0); !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "K = 2147483648") {
		t.Errorf("K = 2^31: %v, want ErrUnsupported naming K", err)
	}
}

func TestCUFFTPlanOf(t *testing.T) {
	for _, c := range []struct {
		spec driver.FFTSpec
		want cufftPlan
	}{
		{driver.FFTSpec{Kind: driver.C2C, Type: driver.Float32, Shape: []int{8}, Batch: 3},
			cufftPlan{rank: 1, n: [2]int{8, 0}, typ: 0x29, batch: 3, exec: execC2C, dir: -1}},
		{driver.FFTSpec{Kind: driver.C2C, Type: driver.Float64, Shape: []int{4, 6}, Batch: 1, Inverse: true},
			cufftPlan{rank: 2, n: [2]int{4, 6}, typ: 0x69, batch: 1, exec: execZ2Z, dir: 1}},
		{driver.FFTSpec{Kind: driver.R2C, Type: driver.Float32, Shape: []int{3, 16}, Batch: 2},
			cufftPlan{rank: 2, n: [2]int{3, 16}, typ: 0x2a, batch: 2, exec: execR2C, dir: -1}},
		{driver.FFTSpec{Kind: driver.R2C, Type: driver.Float64, Shape: []int{7}, Batch: 1},
			cufftPlan{rank: 1, n: [2]int{7, 0}, typ: 0x6a, batch: 1, exec: execD2Z, dir: -1}},
	} {
		got, err := cufftPlanOf(c.spec)
		if err != nil || got != c.want {
			t.Errorf("%+v: %+v, %v; want %+v", c.spec, got, err, c.want)
		}
		if name := cufftSymbols[got.exec].name; !strings.HasPrefix(name, "cufftExec") {
			t.Errorf("exec index %d names %s", got.exec, name)
		}
	}
	for _, s := range []driver.FFTSpec{
		{Kind: driver.R2C, Type: driver.Float32, Shape: []int{8}, Batch: 1, Inverse: true},
		{Kind: driver.C2C, Type: driver.Float32, Shape: []int{1 << 16, 1 << 16}, Batch: 1},
		{Kind: driver.C2C, Type: driver.Float32, Shape: []int{2, 2, 2}, Batch: 1},
	} {
		if _, err := cufftPlanOf(s); !errors.Is(err, engine.ErrUnsupported) {
			t.Errorf("%+v: %v, want ErrUnsupported", s, err)
		}
	}
}

func TestVendorStatusNames(t *testing.T) {
	for _, c := range []struct {
		err  error
		name string
		is   error
	}{
		{BLASInvalidValue, "CUBLAS_STATUS_INVALID_VALUE", engine.ErrInvalidArg},
		{BLASAllocFailed, "CUBLAS_STATUS_ALLOC_FAILED", engine.ErrOutOfMemory},
		{BLASNotInitialized, "CUBLAS_STATUS_NOT_INITIALIZED", engine.ErrUnavailable},
		{BLASArchMismatch, "CUBLAS_STATUS_ARCH_MISMATCH", engine.ErrUnsupported},
		{BLASStatus(99), "cublasStatus_t(99)", nil},
		{FFTInvalidSize, "CUFFT_INVALID_SIZE", engine.ErrInvalidArg},
		{FFTAllocFailed, "CUFFT_ALLOC_FAILED", engine.ErrOutOfMemory},
		{FFTNotSupported, "CUFFT_NOT_SUPPORTED", engine.ErrUnsupported},
		{FFTMissingDependency, "CUFFT_MISSING_DEPENDENCY", engine.ErrUnavailable},
		{FFTResult(77), "cufftResult(77)", nil},
	} {
		if c.err.Error() != c.name || (c.is != nil && !errors.Is(c.err, c.is)) {
			t.Errorf("%v: want %q, matching %v", c.err, c.name, c.is)
		}
	}
	for s := range blasStatusNames {
		if s != BLASSuccess && !strings.HasPrefix(s.Error(), "CUBLAS_STATUS_") {
			t.Errorf("%d: %s", int(s), s)
		}
	}
	err := checkBLAS("cublasSgemm_v2(m=1 n=2 k=3)", BLASInvalidValue)
	var st BLASStatus
	if !errors.As(err, &st) || st != BLASInvalidValue || err.Error() != "cuda: cublasSgemm_v2(m=1 n=2 k=3): CUBLAS_STATUS_INVALID_VALUE" {
		t.Errorf("checkBLAS = %v", err)
	}
	var fr FFTResult
	if err := checkFFT("cufftExecC2C", FFTExecFailed); !errors.As(err, &fr) || fr != FFTExecFailed {
		t.Errorf("checkFFT = %v", err)
	}
	if checkBLAS("x", BLASSuccess) != nil || checkFFT("x", FFTSuccess) != nil {
		t.Error("success is an error")
	}
}

func TestVendorVersions(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{cublasVersionString(130002), "13.0.2"},
		{cublasVersionString(120905), "12.9.5"},
		{cublasVersionString(10201), "10.2.1"},
		{cufftVersionString(12000), "12.0.0"},
		{cufftVersionString(11303), "11.3.3"},
		{propertyVersion(func(p int) (int, bool) { return []int{13, 0, 2}[p], true }), "13.0.2"},
		{propertyVersion(func(p int) (int, bool) { return 0, p != propPatch }), ""},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestVendorLoader checks the loader without the CUDA libraries: the toolkit's
// directories, an error naming every file tried (PRISM_VENDOR_PATH's first), the
// dependency opened from a library's own directory, and a library that loads, whose path
// is the file the loader found.
func TestVendorLoader(t *testing.T) {
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, "lib64"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CUDA_HOME", home)
	t.Setenv("CUDA_PATH", "")
	if dirs := cudaLibDirs(); dirs[0] != filepath.Join(home, "lib64") || !slices.Contains(dirs, "/usr/local/cuda/lib64") {
		t.Errorf("cudaLibDirs = %q", dirs)
	}
	extra := t.TempDir()
	// A file that is not a library: dlopen fails on it with its own message.
	if err := os.WriteFile(filepath.Join(extra, "libcublas-missing.so.13"), []byte("not ELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(driver.VendorPathEnv, extra)
	var depsAsked []string
	_, err := loadVendor("cuBLAS", []string{"libcublas-missing.so.13"}, cublasSymbols, func(base string) []string {
		depsAsked = append(depsAsked, base)
		return cublasDeps(base)
	})
	if !errors.Is(err, engine.ErrUnavailable) {
		t.Fatalf("loadVendor of a missing library = %v, want ErrUnavailable", err)
	}
	msg := err.Error()
	for _, want := range []string{
		filepath.Join(extra, "libcublas-missing.so.13"), "libcublas-missing.so.13: cannot open shared object file",
		filepath.Join(home, "lib64", "libcublas-missing.so.13"), driver.VendorPathEnv,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
	if strings.Index(msg, extra) > strings.Index(msg, "; ") {
		t.Errorf("PRISM_VENDOR_PATH is not tried first: %v", err)
	}
	if !slices.Contains(depsAsked, "libcublas-missing.so.13") {
		t.Errorf("deps asked for %q", depsAsked)
	}
	if got := cublasDeps("libcublas.so.13"); !slices.Equal(got, []string{"libcublasLt.so.13"}) {
		t.Errorf("cublasDeps = %q", got)
	}
	t.Log(err)

	// libm is on every Linux machine: the loader finds it by name and reports its file.
	lib, err := loadVendor("libm", []string{"libm.so.6"}, []vendorSymbol{{"cos", false}, {"prism_no_such_function", true}}, nil)
	if err != nil {
		t.Fatalf("loadVendor(libm.so.6): %v", err)
	}
	if !filepath.IsAbs(lib.path) || !strings.Contains(lib.path, "libm") || lib.fns[0] == nil || lib.fns[1] != nil {
		t.Errorf("libm: path %q, functions %v", lib.path, lib.fns)
	}
	if _, err := loadVendor("libm", []string{"libm.so.6"}, []vendorSymbol{{"prism_no_such_function", false}}, nil); err == nil ||
		!strings.Contains(err.Error(), "too old, no prism_no_such_function") {
		t.Errorf("a library without a required function: %v", err)
	}
}

// TestVendorLibraries (GPU) checks what cuBLAS and cuFFT report, and that a BLAS and an
// FFT close cleanly with their device. PRISM_REQUIRE=cublas or cufft (or blas, fft) makes a
// missing library a failure.
func TestVendorLibraries(t *testing.T) {
	enginetest.ForEachDevice(t, "cuda", func(t *testing.T, dev *engine.Device) {
		b, err := dev.BLAS()
		enginetest.RequireVendorOrSkip(t, dev, "blas", err)
		f, err := dev.FFT()
		enginetest.RequireVendorOrSkip(t, dev, "fft", err)
		version := regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
		for _, c := range []struct {
			lib  engine.Library
			name string
		}{{b.Library(), "cuBLAS"}, {f.Library(), "cuFFT"}} {
			t.Logf("%s: %v", dev.ID(), c.lib)
			if c.lib.Name != c.name || !version.MatchString(c.lib.Version) || !filepath.IsAbs(c.lib.Path) {
				t.Errorf("Library() = %+v: want %s, a version major.minor.patch, an absolute path", c.lib, c.name)
			}
		}
		// A plan made and run on two queues in turn, then left for the device to close.
		q1, _ := dev.NewQueue()
		q2, _ := dev.NewQueue()
		p, err := f.Plan(engine.FFTSpec{Kind: engine.C2C, Shape: []int{256}, Batch: 2})
		if err != nil {
			t.Fatal(err)
		}
		in, _ := engine.Upload(t.Context(), q1, make([]float32, 1024))
		out, _ := engine.NewBuffer[float32](dev, 1024)
		for _, q := range []*engine.Queue{q1, q2, q1} {
			if err := engine.RunFFT(p, q, in, out); err != nil {
				t.Fatal(err)
			}
			if err := q.Finish(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// BenchmarkVendor (GPU) times cuBLAS's SGEMM and DGEMM and cuFFT's c2c with Queue.Timed
// after a warm-up call: `cuda.test -test.run '^$' -test.bench Vendor`. The figures compare
// with those of the vendor's own tools (docs/PERFORMANCE.md, GPU.md's peers).
func BenchmarkVendor(b *testing.B) {
	ids := enginetest.DeviceIDs(b, "cuda")
	dev, err := engine.Open(context.Background(), ids[0])
	if err != nil {
		b.Fatal(err)
	}
	defer dev.Close()
	q, err := dev.NewQueue()
	if err != nil {
		b.Fatal(err)
	}
	blas, berr := dev.BLAS()
	for _, n := range []int{1024, 4096, 8192} {
		b.Run(fmt.Sprintf("cuBLASSgemm/n=%d", n), func(b *testing.B) {
			if berr != nil {
				b.Skip(berr)
			}
			benchGemm[float32](b, dev, q, blas, n)
		})
	}
	b.Run("cuBLASDgemm/n=4096", func(b *testing.B) {
		if berr != nil {
			b.Skip(berr)
		}
		benchGemm[float64](b, dev, q, blas, 4096)
	})
	f, ferr := dev.FFT()
	for _, lg := range []int{20, 24} {
		n := 1 << lg
		b.Run(fmt.Sprintf("cuFFT/c2c/n=2^%d", lg), func(b *testing.B) {
			if ferr != nil {
				b.Skip(ferr)
			}
			p, err := f.Plan(engine.FFTSpec{Kind: engine.C2C, Shape: []int{n}})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			in, err := engine.Upload(b.Context(), q, randomFloats[float32](2*n))
			if err != nil {
				b.Fatal(err)
			}
			defer in.Close()
			out, err := engine.NewBuffer[float32](dev, 2*n)
			if err != nil {
				b.Fatal(err)
			}
			defer out.Close()
			benchTimed(b, q, func() error { return engine.RunFFT(p, q, in, out) }, 5*float64(n)*float64(lg))
		})
	}
}

func benchGemm[T float32 | float64](b *testing.B, dev *engine.Device, q *engine.Queue, blas *engine.BLAS, n int) {
	a, err := engine.Upload(b.Context(), q, randomFloats[T](n*n))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	c, err := engine.NewBuffer[T](dev, n*n)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	spec := engine.GemmSpec{M: n, N: n, K: n}
	benchTimed(b, q, func() error { return engine.Gemm(blas, q, spec, 1, a, a, 0, c) }, 2*float64(n)*float64(n)*float64(n))
}

func randomFloats[T float32 | float64](n int) []T {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]T, n)
	for i := range out {
		out[i] = T(r.Float64()*2 - 1)
	}
	return out
}

// benchTimed runs f once to warm up, then once per iteration under Queue.Timed, and
// reports the median device time and the flop rate at it.
func benchTimed(b *testing.B, q *engine.Queue, f func() error, flops float64) {
	ctx := context.Background()
	if err := f(); err != nil {
		b.Fatal(err)
	}
	if err := q.Finish(ctx); err != nil {
		b.Fatal(err)
	}
	var ds []float64
	for b.Loop() {
		d, err := q.Timed(ctx, f)
		if err != nil {
			b.Fatal(err)
		}
		ds = append(ds, d.Seconds())
	}
	slices.Sort(ds)
	med := ds[len(ds)/2]
	b.ReportMetric(med*1e6, "device-us/op")
	b.ReportMetric(flops/med/1e9, "GFLOP/s")
}
