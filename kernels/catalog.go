package kernels

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/prism-compute/prism/engine"
)

// Op is one runnable operation of the suite in one element type, e.g. "gemm/nn/float32":
// what `prism run`, `prism bench` and the package's benchmarks run. Each family registers
// its operations in its own file; Ops lists them all.
type Op struct {
	// Name is "family/op/type", e.g. "stream/triad/float32". Unique.
	Name string
	// Family is the kernel family, the name of its .cl file ("stream").
	Family string
	// Type is the element type ("float32", "float64", "int32", "uint32").
	Type string
	// Doc is one line: what the operation computes.
	Doc string
	// SizeDoc says how Params.Size maps to the operation's shape, e.g. "n elements" or
	// "M = N = K = round(sqrt(size))". Size always counts elements of the main operand.
	SizeDoc string
	// DefaultSize is the size `prism bench` uses on a GPU; QuickSize the size of `make run`
	// and of the package's tests (a few hundred milliseconds on PoCL on two cores).
	DefaultSize, QuickSize int
	// Setup builds the operation on q's device with seeded random inputs. It returns an
	// error wrapping engine.ErrUnsupported when the device cannot run it (no fp64, ...).
	Setup func(q *engine.Queue, p Params) (Instance, error)
}

// Params are the inputs of Op.Setup.
type Params struct {
	// Size is the number of elements of the operation's main operand; Op.SizeDoc says how
	// it becomes a shape. Setup rounds it to the nearest valid shape (Instance.Shape says
	// which) and rejects Size < 1.
	Size int
	// Seed seeds the random inputs: equal seeds give equal inputs on every device.
	Seed uint64
	// Rotate asks for several input sets, used in turn by successive Runs, so that repeated
	// runs do not find their inputs in a cache: as many as RotationSets says.
	Rotate bool
	// Portable forces the portable OpenCL C kernels even where a backend-specific variant
	// exists (CUDA C++ with tensor cores or warp shuffles), for fair cross-API comparisons.
	Portable bool
}

// Instance is an operation set up on one device at one size. Not safe for concurrent use.
type Instance interface {
	// Run enqueues the operation once on q (with the next input set when rotating).
	Run(q *engine.Queue) error
	// Verify reads back the output of the last Run and compares it with the float64
	// reference on the same inputs. A mismatch is an error wrapping ErrVerify that names
	// the first element that differs, its value, the reference and the tolerance.
	Verify(q *engine.Queue) error
	// Model is the work of one Run.
	Model() Model
	// Shape describes the problem actually set up, e.g. "n=1048576" or "M=N=K=1024".
	Shape() string
	// Close releases the instance's buffers and kernels. Idempotent.
	Close() error
}

// ErrVerify is wrapped by every verification failure.
var ErrVerify = errors.New("verification failed")

var (
	catalogMu sync.Mutex
	catalog   = map[string]Op{}
	order     = map[string]int{} // registration sequence
)

// register adds ops to the catalog; families call it from init. It panics on a programming
// error (empty or duplicate name, missing Setup).
func register(ops ...Op) {
	catalogMu.Lock()
	defer catalogMu.Unlock()
	for _, op := range ops {
		switch {
		case op.Name == "" || op.Family == "" || op.Setup == nil || op.QuickSize < 1 || op.DefaultSize < 1:
			panic(fmt.Sprintf("kernels: incomplete op %+v", op))
		case catalog[op.Name].Name != "":
			panic("kernels: op registered twice: " + op.Name)
		}
		catalog[op.Name] = op
		order[op.Name] = len(order)
	}
}

// Ops returns every operation of the suite, sorted by family (in the order of
// FamilyOrder, then by name), and within a family in the order the family registered them.
func Ops() []Op {
	catalogMu.Lock()
	ops := make([]Op, 0, len(catalog))
	for _, op := range catalog {
		ops = append(ops, op)
	}
	seq := make(map[string]int, len(order))
	for k, v := range order {
		seq[k] = v
	}
	catalogMu.Unlock()
	rank := map[string]int{}
	for i, f := range FamilyOrder {
		rank[f] = i + 1
	}
	sort.Slice(ops, func(i, j int) bool {
		ri, rj := rank[ops[i].Family], rank[ops[j].Family]
		if ri == 0 {
			ri = len(FamilyOrder) + 1
		}
		if rj == 0 {
			rj = len(FamilyOrder) + 1
		}
		if ri != rj {
			return ri < rj
		}
		if ops[i].Family != ops[j].Family {
			return ops[i].Family < ops[j].Family
		}
		return seq[ops[i].Name] < seq[ops[j].Name]
	})
	return ops
}

// FamilyOrder is the order in which listings and reports show the families: memory-bound
// first, then compute-bound.
var FamilyOrder = []string{"stream", "map", "transpose", "reduce", "scan", "sort", "histogram",
	"stencil", "conv", "gemm", "fft", "softmax", "layernorm", "attention", "montecarlo"}

// Lookup returns the op named name ("stream/triad/float32").
func Lookup(name string) (Op, error) {
	catalogMu.Lock()
	op, ok := catalog[name]
	catalogMu.Unlock()
	if !ok {
		return Op{}, fmt.Errorf("kernels: no operation %q (see `prism kernels` for the list): %w", name, engine.ErrNotFound)
	}
	return op, nil
}

// Match returns the ops selected by patterns, in Ops order. A pattern selects an op when it
// equals its name or family, when it is a prefix of the name ending at a slash boundary
// ("stream/triad" selects stream/triad/float32 and /float64), or when it matches the name
// as a path.Match glob ("*/*/float64"). An empty list selects every op. A pattern that
// selects nothing is an error wrapping engine.ErrNotFound.
func Match(patterns ...string) ([]Op, error) {
	all := Ops()
	if len(patterns) == 0 {
		return all, nil
	}
	chosen := map[string]bool{}
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		found := false
		for _, op := range all {
			ok, err := path.Match(p, op.Name)
			if err != nil {
				return nil, fmt.Errorf("kernels: bad pattern %q: %v: %w", p, err, engine.ErrInvalidArg)
			}
			if ok || p == op.Family || p == op.Name || strings.HasPrefix(op.Name, strings.TrimSuffix(p, "/")+"/") {
				chosen[op.Name], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("kernels: %q selects no operation (families: %s): %w", p, strings.Join(Families(), ", "), engine.ErrNotFound)
		}
	}
	var out []Op
	for _, op := range all {
		if chosen[op.Name] {
			out = append(out, op)
		}
	}
	return out, nil
}

// checkSize rejects sizes below 1 with an error naming the op.
func checkSize(name string, p Params) error {
	if p.Size < 1 {
		return fmt.Errorf("kernels: %s: size %d; must be at least 1: %w", name, p.Size, engine.ErrInvalidArg)
	}
	return nil
}
