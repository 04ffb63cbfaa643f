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
		histOp("bins4096", "uint32", 4096, "4096-bin histogram of uniform uint32 values (bin = v >> 20), local sub-histograms"),
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
		Variants: kernels.Portable(func(q *engine.Queue, p kernels.Params) (kernels.Instance, error) {
			return setupHist(q, name, typ, bins, p)
		}),
	}
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
}

func setupHist(q *engine.Queue, name, typ string, bins int, p kernels.Params) (_ kernels.Instance, err error) {
	if err := kernels.CheckSize(name, p); err != nil {
		return nil, err
	}
	h, err := NewHistogram(q.Device())
	if err != nil {
		return nil, err
	}
	n := p.Size
	in := &histInstance{h: h, float: typ == "float32", bins: bins, width: uint32((1 << 32) / bins), n: n}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	rng := kernels.NewRand(p.Seed, histStream)
	if in.float {
		in.f, err = kernels.NewInputs(context.TODO(), q, p, 4*n, func(int) [][]float32 {
			return [][]float32{kernels.RandFloats[float32](rng, n, histDataLo, histDataHi)}
		})
	} else {
		in.u, err = kernels.NewInputs(context.TODO(), q, p, 4*n, func(int) [][]uint32 {
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
	if in.counts, err = engine.Upload(context.TODO(), q, make([]uint32, bins)); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *histInstance) Run(q *engine.Queue) error {
	if in.float {
		return in.h.Float32(q, in.counts, in.f.Next()[0], in.n, in.bins, histLo, histHi)
	}
	return in.h.Uint32(q, in.counts, in.u.Next()[0], in.n, in.bins, in.width)
}

// Verify compares every count with the host reference, exactly.
func (in *histInstance) Verify(q *engine.Queue) error {
	got, err := in.counts.Download(context.TODO(), q)
	if err != nil {
		return err
	}
	var want []uint32
	if in.float {
		x, err := in.f.Last(context.TODO())
		if err != nil {
			return err
		}
		want = HistogramFloat32Ref(x[0], in.bins, histLo, histHi)
	} else {
		x, err := in.u.Last(context.TODO())
		if err != nil {
			return err
		}
		want = HistogramUint32Ref(x[0], in.bins, in.width)
	}
	return kernels.CheckEqual("histogram counts", got, want)
}

func (in *histInstance) Model() kernels.Model { return HistogramModel(in.n) }

func (in *histInstance) Shape() string { return fmt.Sprintf("n=%d bins=%d", in.n, in.bins) }

func (in *histInstance) Close() error {
	return errors.Join(in.counts.Close(), in.u.Close(), in.f.Close(), in.h.Close())
}
