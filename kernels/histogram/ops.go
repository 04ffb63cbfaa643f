package histogram

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed histogram.cl
var source string

// Family returns the histogram family: its OpenCL C source (histogram.cl) and its operations, in the
// order listings show them.
func Family() kernels.Family {
	return kernels.Family{Name: "histogram", Source: source, Ops: []kernels.Op{
		histOp("bins256", "uint32", 256, "256-bin histogram of uniform uint32 values (bin = v >> 24), work-group sub-histograms in local memory"),
		histOp("bins256", "float32", 256, "256-bin histogram of float32 values over [-1, 1) (about 5% outside, dropped), local sub-histograms"),
		histOp("bins4096", "uint32", 4096, "4096-bin histogram of uniform uint32 values (bin = v >> 20), local sub-histograms (2 per group in the privatized variant)"),
	}}
}

// histStream is the NewRand stream constant of the histogram family's inputs ("hist").
const histStream = 0x68697374

// The float32 ops' range and the range of their inputs (a margin each side: dropped values).
const (
	histLo, histHi         = -1, 1
	histDataLo, histDataHi = -1.05, 1.05
)

func histOp(op, typ string, bins int, doc string) kernels.Op {
	name := "histogram/" + op + "/" + typ
	return kernels.Op{
		Name: name, Family: "histogram", Type: typ, Doc: doc,
		SizeDoc: "n input values", DefaultSize: 1 << 25, QuickSize: 1 << 20,
		Variants: []kernels.Variant{
			{
				Name: PrivatizedName, Doc: "a few work-groups per compute unit, grid-stride loop of 16-byte loads (4 in flight per item) into 32 lane-striped local sub-histograms (conflict-free atomics), one global atomic per bin per group (OpenCL C, every backend)",
				Dialect:    engine.DialectOpenCL,
				Tunables:   DefaultPrivTunables.String() + fmt.Sprintf(" (16-byte loads in flight per item, groups per compute unit; %d lane-striped copies, fewer where local memory or the group is smaller), or prism tune's", privMaxCopies),
				Candidates: kernels.CandidatesOf(privCandidates),
				Setup: func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
					return setupHist(ctx, q, name, typ, bins, true, p)
				},
			},
			portableVariant(func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
				return setupHist(ctx, q, name, typ, bins, false, p)
			}),
		},
	}
}

// PrivatizedName is the name of the histogram ops' privatized variant (NewPrivatized).
const PrivatizedName = "privatized"

// portableVariant is the portable variant (NewHistogram), its doc saying how it counts.
func portableVariant(setup func(ctx context.Context, q *engine.Queue, p kernels.Params) (kernels.Instance, error)) kernels.Variant {
	v := kernels.PortableVariant(setup)
	v.Doc = "work-group sub-histograms in local memory, one 4-byte input per item and step, 8 groups per compute unit (OpenCL C, every backend)"
	return v
}

// histInstance counts one of its input sets into counts.
type histInstance struct {
	h      *Histogram
	float  bool
	bins   int
	width  uint32
	u      *kernels.Inputs[uint32]  // the uint32 ops' inputs
	f      *kernels.Inputs[float32] // the float32 ops' inputs
	counts *engine.Buffer[uint32]
	n      int
	// tunables: the privatized variant's, with where they came from; "" for the portable.
	tunables string
}

// setupHist sets up a histogram op; priv selects the privatized variant (with p.Tunables,
// else the device's tuned set, else the defaults).
func setupHist(ctx context.Context, q *engine.Queue, name, typ string, bins int, priv bool, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	var h *Histogram
	tunables := ""
	if priv {
		t, from, err := privTunablesFor(q.Device(), name, p.Tunables)
		if err != nil {
			return nil, err
		}
		if h, err = NewPrivatizedWith(q.Device(), t); err != nil {
			return nil, err
		}
		tunables = h.Tunables() + " (" + from + ")"
	} else if h, err = NewHistogram(q.Device()); err != nil {
		return nil, err
	}
	n := p.Size
	in := &histInstance{h: h, float: typ == "float32", bins: bins, width: uint32((1 << 32) / bins), n: n, tunables: tunables}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	rng := kernels.NewRand(p.Seed, histStream)
	if in.float {
		in.f, err = kernels.NewInputs(ctx, q, p, 4*n, func(int) [][]float32 {
			return [][]float32{kernels.RandFloats[float32](rng, n, histDataLo, histDataHi)}
		})
	} else {
		in.u, err = kernels.NewInputs(ctx, q, p, 4*n, func(int) [][]uint32 {
			x := make([]uint32, n)
			for i := range x {
				x[i] = rng.Uint32()
			}
			return [][]uint32{x}
		})
	}
	if err != nil {
		return nil, err
	}
	// Written once from the host, though every Run clears it with a kernel: Oclgrind 21.10's
	// uninitialized-memory check keeps the shadow of a released buffer for the next buffer
	// in its slot until the host writes that one, so a larger counts buffer in the slot of a
	// smaller one lost the clear kernel's stores past the old size (and the atomic adds
	// reported reading them) when the suite's ops ran in one process.
	if in.counts, err = engine.Upload(ctx, q, make([]uint32, bins)); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *histInstance) Run(ctx context.Context, q *engine.Queue) error {
	if in.float {
		return in.h.Float32(q, in.counts, in.f.Next()[0], in.n, in.bins, histLo, histHi)
	}
	return in.h.Uint32(q, in.counts, in.u.Next()[0], in.n, in.bins, in.width)
}

// Verify compares every count with the host reference, exactly.
func (in *histInstance) Verify(ctx context.Context, q *engine.Queue) error {
	got, err := in.counts.Download(ctx, q)
	if err != nil {
		return err
	}
	var want []uint32
	if in.float {
		x, err := in.f.Last(ctx)
		if err != nil {
			return err
		}
		want = HistogramFloat32Ref(x[0], in.bins, histLo, histHi)
	} else {
		x, err := in.u.Last(ctx)
		if err != nil {
			return err
		}
		want = HistogramUint32Ref(x[0], in.bins, in.width)
	}
	return kernels.CheckEqual("histogram counts", got, want)
}

func (in *histInstance) Model() kernels.Model { return HistogramModel(in.n) }

// Tunables reports the privatized variant's shape and where it came from (kernels.
// TunablesReporter); "" for the portable variant.
func (in *histInstance) Tunables() string { return in.tunables }

func (in *histInstance) Shape() string { return fmt.Sprintf("n=%d bins=%d", in.n, in.bins) }

func (in *histInstance) Close() error {
	return errors.Join(in.counts.Close(), in.u.Close(), in.f.Close(), in.h.Close())
}
