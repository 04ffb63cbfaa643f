package montecarlo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

// A montecarlo op split across devices (Op.Split) cuts the op's stream into consecutive
// ranges of outputs, one per device, on the work-group boundaries of the one-device op:
// a chunk is the wg counter blocks one work-group of the first device set up covers (4*wg
// words, normals or paths; 2*wg points), the unit PlanShares divides, and each device's
// range starts at the stream position where the one-device op reaches it.
//
// The generators' ranges are read back into one host array: every element is computed
// from its own counter, so the array is the one-device op's bit for bit (words and
// uniforms on every device, normals on devices of the same log, sqrt, sin and cos).
//
// pi and option read back the partial of every work-group, in device order, and the host
// adds them as mc_sum_uint and mc_sum_float do (float32 sums along the same chains, the
// same tree, the same final product by exp(-rT)/n: sumPartials). The count of pi is exact
// whatever the split. For option: where the one-device op gives each work-item at most
// one block (ceil(blocks / wg) at most its 32 groups per compute unit: up to 4*wg*32
// paths per compute unit, 32768 at wg = 256, 4.3M on a GPU of 132 multiprocessors), a
// device given chunks c0..c1 launches c1-c0 groups that are the one-device op's groups
// c0..c1 item for item, so the partials, and then the price, are the one-device op's bit
// for bit on devices of the same wg, compute units and exp. Beyond that the one-device
// op strides every work-item over the whole range (grid-stride), a pattern that a device
// covering part of the range cannot reproduce with mc_option as it is (its stride is its
// own launch's size): each device then strides over its own range, and the price agrees
// with the reference within OptionTolerance over the split's longest chain of additions
// (splitChain), not bit for bit.

// monteCarloSplit is the Splitter of the montecarlo op op.
func monteCarloSplit(name string, op MonteCarloOp) kernels.Splitter {
	return func(ctx context.Context, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (kernels.SplitInstance, error) {
		return setupMCSplit(ctx, name, op, devs, p, o)
	}
}

// mcSplit is a montecarlo op set up across devices.
type mcSplit struct {
	op       MonteCarloOp
	name     string
	at       Philox
	n        int
	wg, unit int // the chunk: wg blocks, unit outputs
	shares   []kernels.Share
	parts    []*mcPart // one per device, nil where the device has no share

	words  []uint32  // philox: the whole output
	floats []float32 // uniform, normal: the whole output
	partU  []uint32  // pi: every work-group's count, in device order
	partF  []float32 // option: every work-group's payoff sum, in device order
	count  uint32    // pi's result
	price  float32   // option's result
	ran    bool
	closed bool
}

// mcPart is one device's part: its build, queue, range of outputs (from at, n of them) and
// buffers. The probes use one too, before the shares are known.
type mcPart struct {
	dev    *engine.Device
	m      *MonteCarlo
	q      *engine.Queue
	at     Philox
	off, n int // outputs: the first (from the op's start) and how many (a probe's: the most it holds)
	groups int // pi, option: work-groups of the launch
	first  int // pi, option: where the part's partials go in partU or partF
	outU   *engine.Buffer[uint32]
	outF   *engine.Buffer[float32]
}

func (pt *mcPart) Close() error {
	if pt == nil {
		return nil
	}
	errs := []error{pt.outU.Close(), pt.outF.Close(), pt.q.Close()}
	if pt.m != nil {
		errs = append(errs, pt.m.Close())
	}
	return errors.Join(errs...)
}

// reduce reports whether op reduces (pi, option) rather than generates.
func (s *mcSplit) reduce() bool { return s.op == MCPi || s.op == MCOption }

// blocks returns the counter blocks n outputs of the op read.
func (s *mcSplit) blocks(n int) int {
	if s.op == MCPi {
		return (n + 1) / 2
	}
	return (n + 3) / 4
}

// advance returns where the outputs from off on start in the op's stream.
func (s *mcSplit) advance(off int) Philox {
	if s.op == MCPi {
		return s.at.Advance(2 * off)
	}
	return s.at.Advance(off)
}

// alloc sizes pt's buffers for n outputs: the outputs, or the partials of a launch over
// them on pt's device.
func (s *mcSplit) alloc(pt *mcPart, n int) error {
	var err error
	switch {
	case s.op == MCPhilox:
		pt.outU, err = engine.NewBuffer[uint32](pt.dev, n)
	case s.op == MCPi:
		pt.outU, err = engine.NewBuffer[uint32](pt.dev, pt.m.reduceGroups(s.blocks(n)))
	case s.op == MCOption:
		pt.outF, err = engine.NewBuffer[float32](pt.dev, pt.m.reduceGroups(s.blocks(n)))
	default:
		pt.outF, err = engine.NewBuffer[float32](pt.dev, n)
	}
	return err
}

// launch enqueues the op over n outputs from at on pt's queue, into pt's buffers, and
// returns the work-groups whose partials a reducing op wrote.
func (s *mcSplit) launch(pt *mcPart, at Philox, n int) (int, error) {
	m, q := pt.m, pt.q
	switch s.op {
	case MCPhilox:
		return 0, mcGenerate(m, q, s.op, m.bits, pt.outU, n, at)
	case MCUniform:
		return 0, mcGenerate(m, q, s.op, m.uniform, pt.outF, n, at)
	case MCNormal:
		return 0, mcGenerate(m, q, s.op, m.normal, pt.outF, n, at)
	}
	nblocks := s.blocks(n)
	groups := m.reduceGroups(nblocks)
	r := engine.Range1D(groups*m.wg, m.wg)
	a := at.args()
	if s.op == MCPi {
		return groups, q.Launch(m.pi, r, pt.outU, int32(n), int32(nblocks), a.k0, a.k1, a.s0, a.s1, a.bLo, a.bHi)
	}
	spot, strike, drift, vol := mcOption.params()
	return groups, q.Launch(m.option, r, pt.outF, int32(n), int32(nblocks), spot, strike, drift, vol,
		a.k0, a.k1, a.s0, a.s1, a.bLo, a.bHi)
}

// read copies what a launch of n outputs (groups partials) left in pt's buffers into
// dstU or dstF.
func (s *mcSplit) read(ctx context.Context, pt *mcPart, n, groups int, dstU []uint32, dstF []float32) error {
	switch s.op {
	case MCPhilox:
		return pt.outU.Read(ctx, pt.q, 0, dstU[:n])
	case MCPi:
		return pt.outU.Read(ctx, pt.q, 0, dstU[:groups])
	case MCOption:
		return pt.outF.Read(ctx, pt.q, 0, dstF[:groups])
	}
	return pt.outF.Read(ctx, pt.q, 0, dstF[:n])
}

func setupMCSplit(ctx context.Context, name string, op MonteCarloOp, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (_ kernels.SplitInstance, err error) {
	if err := kernels.CheckPortableSplit(ctx, name, devs, p, o); err != nil {
		return nil, err
	}
	if p.Size > MonteCarloMax {
		return nil, fmt.Errorf("kernels: %s: size %d above %d: %w", name, p.Size, MonteCarloMax, engine.ErrInvalidArg)
	}
	s := &mcSplit{op: op, name: name, at: mcStart(op, p), n: p.Size}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	// Every device that may get a share is set up: all of them when the shares are
	// measured, those of a positive fraction when they are given (checked, one per
	// device, so at least one).
	s.parts = make([]*mcPart, len(devs))
	for i, d := range devs {
		if o.Fractions != nil && o.Fractions[i] == 0 {
			continue
		}
		pt := &mcPart{dev: d}
		s.parts[i] = pt
		if pt.m, err = NewMonteCarlo(d); err != nil {
			return nil, err
		}
		if pt.q, err = d.NewQueue(); err != nil {
			return nil, err
		}
		if s.wg == 0 {
			s.wg = pt.m.wg
		}
	}
	s.unit = 4 * s.wg
	if op == MCPi {
		s.unit = 2 * s.wg
	}
	chunks := (s.n + s.unit - 1) / s.unit
	if s.shares, err = s.plan(ctx, devs, chunks, o); err != nil {
		return nil, err
	}
	switch op {
	case MCPhilox:
		s.words = make([]uint32, s.n)
	case MCUniform, MCNormal:
		s.floats = make([]float32, s.n)
	}
	groups := 0
	offs := kernels.Offsets(s.shares)
	for i, sh := range s.shares {
		pt := s.parts[i]
		if sh.Units == 0 {
			if pt != nil {
				s.parts[i] = nil
				if err := pt.Close(); err != nil {
					return nil, err
				}
			}
			continue
		}
		pt.off = offs[i]
		pt.n, pt.at = sh.Units, s.advance(pt.off)
		if err := s.alloc(pt, pt.n); err != nil {
			return nil, err
		}
		if s.reduce() {
			pt.first = groups
			pt.groups = pt.m.reduceGroups(s.blocks(pt.n))
			groups += pt.groups
		}
	}
	switch op {
	case MCPi:
		s.partU = make([]uint32, groups)
	case MCOption:
		s.partF = make([]float32, groups)
	}
	return s, nil
}

// plan divides the op's chunks among devs (PlanShares, probing each device with parts
// from the op's start) and returns the shares in outputs: a share of chunks c0..c1 is
// outputs c0*unit .. min(c1*unit, n), so only the last share with work is cut short.
func (s *mcSplit) plan(ctx context.Context, devs []*engine.Device, chunks int, o kernels.SplitOptions) ([]kernels.Share, error) {
	limit := max(1, chunks/len(devs)) // PlanShares' largest probe, in chunks
	probes := map[*engine.Device]*mcPart{}
	defer func() {
		for _, pt := range probes {
			pt.outU.Close()
			pt.outF.Close()
		}
	}()
	var hostU []uint32
	var hostF []float32
	probe := func(ctx context.Context, dev *engine.Device, units int) (time.Duration, error) {
		var pt *mcPart
		for _, x := range s.parts {
			if x != nil && x.dev == dev {
				pt = x
				break
			}
		}
		if pt == nil {
			return 0, fmt.Errorf("kernels: %s: no part set up on %s: %w", s.name, dev.ID(), engine.ErrInvalidArg)
		}
		n := min(units*s.unit, s.n)
		bp := probes[dev]
		if bp == nil || bp.n < n {
			if bp != nil {
				bp.outU.Close()
				bp.outF.Close()
			}
			bp = &mcPart{dev: dev, m: pt.m, q: pt.q, n: min(max(limit, units)*s.unit, s.n)}
			probes[dev] = bp
			if err := s.alloc(bp, bp.n); err != nil {
				return 0, err
			}
		}
		if size := max(bp.outU.Len(), bp.outF.Len()); len(hostU) < size {
			hostU, hostF = make([]uint32, size), make([]float32, size)
		}
		start := time.Now()
		groups, err := s.launch(bp, s.at, n)
		if err != nil {
			return 0, err
		}
		if err := s.read(ctx, bp, n, groups, hostU, hostF); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	sh, err := kernels.PlanShares(ctx, devs, chunks, 1, o, probe)
	if err != nil {
		return nil, err
	}
	off := 0
	for i := range sh {
		lo, hi := min(off*s.unit, s.n), min((off+sh[i].Units)*s.unit, s.n)
		off += sh[i].Units
		sh[i].Units = hi - lo
		sh[i].Fraction = float64(hi-lo) / float64(s.n)
		sh[i].Rate *= float64(s.unit)
	}
	return sh, nil
}

func (s *mcSplit) Run(ctx context.Context) error {
	if s.closed {
		return fmt.Errorf("kernels: %s: split instance closed: %w", s.name, engine.ErrClosed)
	}
	s.ran = false
	err := kernels.RunParts(s.shares, func(i int) error {
		pt := s.parts[i]
		groups, err := s.launch(pt, pt.at, pt.n)
		if err != nil {
			return err
		}
		var dstU []uint32
		var dstF []float32
		switch s.op {
		case MCPhilox:
			dstU = s.words[pt.off:]
		case MCUniform, MCNormal:
			dstF = s.floats[pt.off:]
		case MCPi:
			dstU = s.partU[pt.first:]
		case MCOption:
			dstF = s.partF[pt.first:]
		}
		return s.read(ctx, pt, pt.n, groups, dstU, dstF)
	})
	if err != nil {
		return fmt.Errorf("kernels: %s: %w", s.name, err)
	}
	switch s.op {
	case MCPi:
		s.count = 0
		for _, c := range s.partU {
			s.count += c
		}
	case MCOption:
		s.price = sumPartials(s.partF, s.wg, float32(math.Exp(-mcOption.Rate*mcOption.T)/float64(s.n)))
	}
	s.ran = true
	return nil
}

// sumPartials is mc_sum_float on the host: work-item i of a group of wg adds part[i],
// part[i+wg], ... in float32 from 0, the group adds the items' sums by a tree (item l
// adds item l+s for s = wg/2, wg/4, ..., 1) and the result is scale times the total,
// rounded to float32: the device's result bit for bit.
func sumPartials(part []float32, wg int, scale float32) float32 {
	acc := make([]float32, wg)
	for i := range acc {
		var a float32
		for j := i; j < len(part); j += wg {
			a += part[j]
		}
		acc[i] = a
	}
	for h := wg / 2; h > 0; h >>= 1 {
		for l := range h {
			acc[l] += acc[l+h]
		}
	}
	return scale * acc[0]
}

// splitChain returns the longest chain of float additions in the split's sum of the
// payoffs: within a part's work-items (4 per block of the longest grid-stride), its
// work-group's tree, then the host's sum over all partials (sumPartials): the k of the
// gamma_k bound in OptionTolerance.
func (s *mcSplit) splitChain() int {
	chain := 0
	for _, pt := range s.parts {
		if pt == nil {
			continue
		}
		nblocks := s.blocks(pt.n)
		perItem := (nblocks + pt.groups*pt.m.wg - 1) / (pt.groups * pt.m.wg)
		chain = max(chain, 4*perItem+kernels.Log2Ceil(pt.m.wg))
	}
	return chain + kernels.Log2Ceil(s.wg) + (len(s.partF)+s.wg-1)/s.wg
}

func (s *mcSplit) Verify(ctx context.Context) error {
	if s.closed {
		return fmt.Errorf("kernels: %s: split instance closed: %w", s.name, engine.ErrClosed)
	}
	if !s.ran {
		return fmt.Errorf("kernels: %s: verify before a complete run: %w", s.name, engine.ErrInvalidArg)
	}
	what := "montecarlo " + string(s.op)
	switch s.op {
	case MCPi:
		return kernels.CheckEqual("montecarlo pi count", []uint32{s.count}, []uint32{PiRef(s.at, s.n)})
	case MCOption:
		e := OptionRef(mcOption, s.n, s.at)
		tol := OptionTolerance(e, mcOption, s.splitChain())
		return kernels.CheckClose("montecarlo option price", []float32{s.price}, []float64{e.Price}, func(int) float64 { return tol })
	}
	if s.n <= mcFullVerify { // everything, against the block-wise references
		switch s.op {
		case MCPhilox:
			return kernels.CheckEqual(what, s.words, PhiloxRef(s.at, s.n))
		case MCUniform:
			return kernels.CheckEqual(what, s.floats, UniformRef(s.at, s.n))
		}
		want, tol := NormalRef(s.at, s.n)
		return kernels.CheckClose(what, s.floats, want, func(i int) float64 { return tol[i] })
	}
	// A sample, as the one-device op checks: the first, the last and 4096 seeded ones.
	for _, i := range kernels.SampleIndices(s.n, kernels.NewRand(s.at.Seed, 0x6d63)) {
		var got, want, tol float64
		switch s.op {
		case MCPhilox:
			got, want = float64(s.words[i]), float64(s.at.Word(i))
		case MCUniform:
			got, want = float64(s.floats[i]), float64(Uniform24(s.at.Word(i)))
		default:
			got = float64(s.floats[i])
			want, tol = NormalAt(s.at, i)
		}
		if d := math.Abs(got - want); !(d <= tol) {
			return fmt.Errorf("%w: %s: element %d = %v, want %v (|diff| %.3g > tolerance %.3g)", kernels.ErrVerify, what, i, got, want, d, tol)
		}
	}
	return nil
}

func (s *mcSplit) Model() kernels.Model { return MonteCarloModel(s.op, s.n) }

func (s *mcSplit) Shape() string {
	switch s.op {
	case MCPi:
		return fmt.Sprintf("points=%d", s.n)
	case MCOption:
		return fmt.Sprintf("paths=%d", s.n)
	}
	return fmt.Sprintf("n=%d", s.n)
}

func (s *mcSplit) Shares() []kernels.Share { return append([]kernels.Share(nil), s.shares...) }

func (s *mcSplit) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, pt := range s.parts {
		errs = append(errs, pt.Close())
	}
	return errors.Join(errs...)
}
