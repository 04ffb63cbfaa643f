package montecarlo

import (
	"context"
	"errors"
	"fmt"
	"math"

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
// pi and option divide the work-groups of the one-device launch (the reference: the device
// of the largest work-group among those with a share, its number of groups G): a device given
// groups g0..g1 launches g1-g0 groups whose items cover the blocks the one-device
// launch's items of those groups cover (mc_pi and mc_option take the first block and the
// stride, G work-groups' items), so every partial is the one-device launch's bit for bit.
// The partials are read back in group order, and the host adds them as mc_sum_uint and
// mc_sum_float do (float32 sums along the same chains, the same tree, the same final
// product by exp(-rT)/n: sumPartials), so the count and the price are the one-device
// op's bit for bit on the reference device (and on any device of the same work-group
// size, compute units and exp). A device of a smaller work-group (Rusticl's 32) runs the
// same items in its own groups, whose partials are added up per reference group on the
// host: its share of pi is still exact, of option within the tolerance of the reference's
// chain of additions, no longer bit for bit. Shares count work-groups.

// monteCarloSplit is the Splitter of the montecarlo op op.
func monteCarloSplit(name string, op MonteCarloOp) kernels.Splitter {
	return func(ctx context.Context, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (kernels.SplitInstance, error) {
		return setupMCSplit(ctx, name, op, devs, p, o)
	}
}

// mcSplit is a montecarlo op set up across devices.
type mcSplit struct {
	*kernels.SplitRun[*mcPart]
	op        MonteCarloOp
	at        Philox
	n         int
	wg, unit  int // the chunk: wg blocks, unit outputs
	groupsAll int // pi, option: work-groups of the one-device launch on the reference
	chain     int // option: the longest chain of additions of that launch's price

	words  []uint32  // philox: the whole output
	floats []float32 // uniform, normal: the whole output
	partU  []uint32  // pi: every work-group's count, in device order
	partF  []float32 // option: every work-group's payoff sum, in device order
	count  uint32    // pi's result
	price  float32   // option's result
}

// mcPart is one device's part: its build, queue, range of outputs (from at, n of them) and
// buffers; before the shares are known, a probe's buffers and read-back.
type mcPart struct {
	s      *mcSplit
	dev    *engine.Device
	m      *MonteCarlo
	q      *engine.Queue
	at     Philox
	off, n int // outputs: the first (from the op's start) and how many
	groups int // pi, option: work-groups of the part's launch
	first  int // pi, option: its first work-group in the one-device launch, where its partials go
	outU   *engine.Buffer[uint32]
	outF   *engine.Buffer[float32]
	hostU  []uint32 // probes: what they read back
	hostF  []float32
}

func (pt *mcPart) closeBuffers() error {
	err := errors.Join(pt.outU.Close(), pt.outF.Close())
	pt.outU, pt.outF = nil, nil
	return err
}

func (pt *mcPart) Close() error {
	errs := []error{pt.closeBuffers(), pt.q.Close()}
	if pt.m != nil {
		errs = append(errs, pt.m.Close())
	}
	return errors.Join(errs...)
}

// outputs returns what units chunks from the op's start produce: outputs, or for pi and
// option work-groups of the one-device launch.
func (s *mcSplit) outputs(units int) int {
	if s.reduce() {
		return min(units, s.groupsAll)
	}
	return min(units*s.unit, s.n)
}

// LoadProbe sizes pt's buffers for the outputs of units chunks from the op's start.
func (pt *mcPart) LoadProbe(ctx context.Context, units int) error {
	s := pt.s
	if err := pt.closeBuffers(); err != nil {
		return err
	}
	if err := s.alloc(pt, s.outputs(units)); err != nil {
		return err
	}
	size := max(pt.outU.Len(), pt.outF.Len())
	pt.hostU, pt.hostF = make([]uint32, size), make([]float32, size)
	return nil
}

// RunProbe runs the outputs of units chunks from the op's start and reads them back.
func (pt *mcPart) RunProbe(ctx context.Context, units int) error {
	s := pt.s
	n := s.outputs(units)
	groups, err := s.launch(pt, s.at, n)
	if err != nil {
		return err
	}
	return s.read(ctx, pt, n, groups, pt.hostU, pt.hostF)
}

// Load gives pt its share: units outputs from off, or for pi and option work-groups of
// the one-device launch.
func (pt *mcPart) Load(ctx context.Context, off, units int) error {
	s := pt.s
	if err := pt.closeBuffers(); err != nil {
		return err
	}
	pt.hostU, pt.hostF = nil, nil
	pt.off, pt.n, pt.at = off, units, s.advance(off)
	if s.reduce() {
		pt.first, pt.groups = off, units
	}
	return s.alloc(pt, pt.n)
}

// Run runs pt's share and reads it back into its place: the outputs, or the partials.
func (pt *mcPart) Run(ctx context.Context) error {
	s := pt.s
	var groups int
	var err error
	if s.reduce() {
		groups, err = pt.groups, s.launchGroups(pt, pt.first, pt.groups)
	} else {
		_, err = s.launch(pt, pt.at, pt.n)
	}
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

// alloc sizes pt's buffers for n outputs, or for pi and option the partials of n
// work-groups.
func (s *mcSplit) alloc(pt *mcPart, n int) error {
	var err error
	switch {
	case s.op == MCPhilox:
		pt.outU, err = engine.NewBuffer[uint32](pt.dev, n)
	case s.op == MCPi: // n work-groups of the reference, of sub(pt) of pt's each
		pt.outU, err = engine.NewBuffer[uint32](pt.dev, n*s.sub(pt))
	case s.op == MCOption:
		pt.outF, err = engine.NewBuffer[float32](pt.dev, n*s.sub(pt))
	default:
		pt.outF, err = engine.NewBuffer[float32](pt.dev, n)
	}
	return err
}

// launch enqueues the op over n outputs from at on pt's queue, into pt's buffers; for pi
// and option, over the first n work-groups of the one-device launch (returned).
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
	return n, s.launchGroups(pt, 0, n)
}

// launchGroups enqueues pi or option over work-groups g0 .. g0+groups of the one-device
// launch on pt's queue, their partials into pt's buffer.
func (s *mcSplit) launchGroups(pt *mcPart, g0, groups int) error {
	m := pt.m
	r := engine.Range1D(groups*s.wg, m.wg) // the reference's items, in pt's work-groups
	a := s.at.args()
	nblocks, first, stride := int32(s.blocks(s.n)), int32(g0*s.wg), int32(s.groupsAll*s.wg)
	if s.op == MCPi {
		return pt.q.Launch(m.pi, r, pt.outU, int32(s.n), nblocks, first, stride, a.k0, a.k1, a.s0, a.s1, a.bLo, a.bHi)
	}
	spot, strike, drift, vol := mcOption.params()
	return pt.q.Launch(m.option, r, pt.outF, int32(s.n), nblocks, first, stride, spot, strike, drift, vol,
		a.k0, a.k1, a.s0, a.s1, a.bLo, a.bHi)
}

// read copies what a launch of n outputs (groups partials) left in pt's buffers into
// dstU or dstF.
func (s *mcSplit) read(ctx context.Context, pt *mcPart, n, groups int, dstU []uint32, dstF []float32) error {
	switch s.op {
	case MCPhilox:
		return pt.outU.Read(ctx, pt.q, 0, dstU[:n])
	case MCPi:
		return readFolded(ctx, pt, pt.outU, dstU[:groups], s.sub(pt))
	case MCOption:
		return readFolded(ctx, pt, pt.outF, dstF[:groups], s.sub(pt))
	}
	return pt.outF.Read(ctx, pt.q, 0, dstF[:n])
}

// sub returns how many of pt's work-groups make one of the reference's.
func (s *mcSplit) sub(pt *mcPart) int { return s.wg / pt.m.wg }

// readFolded reads the partials of len(dst) reference work-groups: sub of pt's each,
// added in order where pt's work-groups are smaller.
func readFolded[E uint32 | float32](ctx context.Context, pt *mcPart, b *engine.Buffer[E], dst []E, sub int) error {
	if sub == 1 {
		return b.Read(ctx, pt.q, 0, dst)
	}
	tmp := make([]E, len(dst)*sub)
	if err := b.Read(ctx, pt.q, 0, tmp); err != nil {
		return err
	}
	for g := range dst {
		var a E
		for _, v := range tmp[g*sub : (g+1)*sub] {
			a += v
		}
		dst[g] = a
	}
	return nil
}

func setupMCSplit(ctx context.Context, name string, op MonteCarloOp, devs []*engine.Device, p kernels.Params, o kernels.SplitOptions) (_ kernels.SplitInstance, err error) {
	if err := kernels.CheckPortableSplit(ctx, name, devs, p, o); err != nil {
		return nil, err
	}
	// The parts' results are read back and combined on the host: no split on sharded data.
	if err := kernels.CheckSharded(name, o, false); err != nil {
		return nil, err
	}
	if p.Size > MonteCarloMax {
		return nil, fmt.Errorf("kernels: %s: size %d above %d: %w", name, p.Size, MonteCarloMax, engine.ErrInvalidArg)
	}
	s := &mcSplit{op: op, at: mcStart(op, p), n: p.Size}
	s.SplitRun = kernels.NewSplitRun(name, devs, o, func(_ context.Context, d *engine.Device) (_ *mcPart, err error) {
		pt := &mcPart{s: s, dev: d}
		defer func() {
			if err != nil {
				pt.Close()
			}
		}()
		if pt.m, err = NewMonteCarlo(d); err != nil {
			return nil, err
		}
		if pt.q, err = d.NewQueue(); err != nil {
			return nil, err
		}
		if s.wg == 0 {
			s.wg = pt.m.wg
		}
		return pt, nil
	}, s.combine)
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if err := s.OpenAll(ctx); err != nil {
		return nil, err
	}
	s.unit = 4 * s.wg
	if op == MCPi {
		s.unit = 2 * s.wg
	}
	units := (s.n + s.unit - 1) / s.unit
	if s.reduce() {
		// The reference is the device of the largest work-group; every other's must divide
		// it (sizes are powers of two), and its partials are added up per reference group.
		var ref *MonteCarlo
		for _, pt := range s.Parts() {
			if pt != nil && (ref == nil || pt.m.wg > ref.wg) {
				ref = pt.m
			}
		}
		for _, pt := range s.Parts() {
			if pt != nil && ref.wg%pt.m.wg != 0 {
				return nil, fmt.Errorf("kernels: %s: %s builds work-groups of %d, %s of %d, not a multiple: %w",
					name, ref.dev.ID(), ref.wg, pt.dev.ID(), pt.m.wg, engine.ErrUnsupported) // not a divisor
			}
		}
		s.wg = ref.wg
		s.groupsAll = ref.reduceGroups(s.blocks(s.n))
		s.chain = ref.OptionChain(s.n)
		for _, pt := range s.Parts() {
			if pt != nil {
				s.chain = max(s.chain, ref.OptionChain(s.n)+s.sub(pt)) // the folds of smaller groups
			}
		}
		units = s.groupsAll
	}
	// The probes run parts from the op's start.
	shares, err := s.Plan(ctx, units, 1)
	if err != nil {
		return nil, err
	}
	switch op {
	case MCPhilox:
		s.words = make([]uint32, s.n)
	case MCUniform, MCNormal:
		s.floats = make([]float32, s.n)
	case MCPi:
		s.partU = make([]uint32, s.groupsAll)
	case MCOption:
		s.partF = make([]float32, s.groupsAll)
	}
	if !s.reduce() {
		s.toOutputs(shares)
	}
	if err := s.Load(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// toOutputs rewrites a generator's shares, planned in chunks, in outputs: a share of
// chunks c0..c1 is outputs c0*unit .. min(c1*unit, n), so only the last share with work
// is cut short. pi's and option's units are the one-device launch's work-groups, as
// planned.
func (s *mcSplit) toOutputs(sh []kernels.Share) {
	off := 0
	for i := range sh {
		lo, hi := min(off*s.unit, s.n), min((off+sh[i].Units)*s.unit, s.n)
		off += sh[i].Units
		sh[i].Units = hi - lo
		sh[i].Fraction = float64(hi-lo) / float64(s.n)
		sh[i].Rate *= float64(s.unit)
	}
}

// combine adds pi's counts and option's payoff sums up, as the one-device op does.
func (s *mcSplit) combine() {
	switch s.op {
	case MCPi:
		s.count = 0
		for _, c := range s.partU {
			s.count += c
		}
	case MCOption:
		s.price = sumPartials(s.partF, s.wg, float32(math.Exp(-mcOption.Rate*mcOption.T)/float64(s.n)))
	}
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

func (s *mcSplit) Verify(ctx context.Context) error {
	if err := s.CheckRan(); err != nil {
		return err
	}
	what := "montecarlo " + string(s.op)
	switch s.op {
	case MCPi:
		return kernels.CheckEqual("montecarlo pi count", []uint32{s.count}, []uint32{PiRef(s.at, s.n)})
	case MCOption:
		e := OptionRef(mcOption, s.n, s.at)
		tol := OptionTolerance(e, mcOption, s.chain)
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
