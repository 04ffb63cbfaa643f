package attention

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
)

//go:embed attention.cu
var mmaSource string

// MMATunables are the tunables of attention.cu (its header says what each does).
type MMATunables struct {
	// Warps per block and MT, 16-row query tiles per warp: a block serves Warps*MT*16 queries.
	Warps, MT int
	// BC is the number of keys per shared-memory tile (a multiple of 16).
	BC int
	// QInRegs keeps the Q fragments in registers for the whole key loop (QREG=1).
	QInRegs bool
}

// String spells t as Params.Tunables and ParseMMATunables take it: "WARPS=4 MT=1 BC=64 QREG=1".
func (t MMATunables) String() string {
	return fmt.Sprintf("WARPS=%d MT=%d BC=%d QREG=%d", t.Warps, t.MT, t.BC, b2i(t.QInRegs))
}

// ParseMMATunables reads tunables as MMATunables.String writes them; every key must be
// given once. Errors wrap engine.ErrInvalidArg.
func ParseMMATunables(s string) (MMATunables, error) {
	var t MMATunables
	qreg := 0
	if err := kernels.ParseTunableInts("attention tunables", s, true, kernels.TunableInt{Key: "WARPS", Dst: &t.Warps, Min: 0, Max: 1024},
		kernels.TunableInt{Key: "MT", Dst: &t.MT, Min: 0, Max: 1024}, kernels.TunableInt{Key: "BC", Dst: &t.BC, Min: 0, Max: 1024},
		kernels.TunableInt{Key: "QREG", Dst: &qreg, Min: 0, Max: 1}); err != nil {
		return MMATunables{}, err
	}
	t.QInRegs = qreg == 1
	return t, nil
}

// MMADefaults returns the tunables the cuda-mma variant uses for head dimension dim unless
// told otherwise: 4 warps of 16 queries, key tiles of 64, Q in registers.
func MMADefaults(dim int) MMATunables {
	return MMATunables{Warps: 4, MT: 1, BC: 64, QInRegs: true}
}

// mmaCandidates are the tunables prism tune measures besides the defaults.
var mmaCandidates = []MMATunables{
	{Warps: 4, MT: 1, BC: 64, QInRegs: true},
	{Warps: 8, MT: 1, BC: 64, QInRegs: true},
	{Warps: 4, MT: 1, BC: 128, QInRegs: true},
	{Warps: 8, MT: 1, BC: 32, QInRegs: true},
	{Warps: 4, MT: 2, BC: 64, QInRegs: false},
	{Warps: 4, MT: 2, BC: 32, QInRegs: false},
}

// check returns an error wrapping engine.ErrInvalidArg naming the constraint of attention.cu
// that t breaks for head dimension dim (in 16-bit elements: eb, the elements' bytes, is 2,
// the only size attention.cu takes).
func (t MMATunables) check(dim, _ int) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("kernels: attention tensor-core tunables %v: "+format+": %w", append([]any{t}, append(args, engine.ErrInvalidArg)...)...)
	}
	threads := t.Warps * 32
	switch {
	case t.Warps < 1 || t.MT < 1 || t.BC < 1:
		return bad("WARPS, MT and BC must be positive")
	case threads > 1024:
		return bad("%d threads per block, above 1024", threads)
	case t.BC%16 != 0:
		return bad("BC must be a multiple of 16")
	case (t.Warps*t.MT*16*dim/8)%threads != 0 || (t.BC*dim/8)%threads != 0:
		return bad("the Q tile and a K or V tile of dim %d must be whole 16-byte chunks per thread", dim)
	}
	return nil
}

// rows returns the queries per block (BR).
func (t MMATunables) rows() int { return t.Warps * t.MT * 16 }

// shared returns the dynamic shared memory of a launch for head dimension dim: the Q tile and
// two stages of a K and a V tile, rows padded by 8 elements (attention.cu).
func (t MMATunables) shared(dim int) int { return (t.rows() + 4*t.BC) * (dim + 8) * 2 }

// MMAElem is the set of storage types the tensor-core attention takes.
type MMAElem interface {
	engine.Half | engine.BFloat16
}

// MMA computes attention on NVIDIA tensor cores (attention.cu, FlashAttention-2 through
// mma.sync: the cuda-mma variant) in binary16 or bfloat16 with float32 accumulation and
// softmax, for head dimensions 64 and 128. It is safe for concurrent use by goroutines that
// each use their own Queue.
type MMA[S MMAElem] struct {
	dev  *engine.Device
	dim  int
	t    MMATunables
	prog *engine.Program
	k    *engine.Kernel
}

// MMACompute is the compute capability the tensor-core attention needs (sm_80: mma.sync
// m16n8k16 in bfloat16, cp.async, ldmatrix).
const MMACompute = 80

// NewMMA compiles the tensor-core attention for head dimension dim (64 or 128) on dev with
// MMADefaults. It returns an error wrapping engine.ErrUnsupported on a device that is not a
// CUDA GPU of compute capability MMACompute or newer, for another head dimension, or when
// the device lacks the shared memory.
func NewMMA[S MMAElem](dev *engine.Device, dim int) (*MMA[S], error) {
	return NewMMAWith[S](dev, dim, MMADefaults(dim))
}

// NewMMAWith is NewMMA with tunables t (tuning, tests); invalid tunables are an error
// wrapping engine.ErrInvalidArg that names the constraint.
func NewMMAWith[S MMAElem](dev *engine.Device, dim int, t MMATunables) (*MMA[S], error) {
	if dev == nil {
		return nil, fmt.Errorf("kernels: attention: nil device: %w", engine.ErrInvalidArg)
	}
	info := dev.Info()
	if dev.Backend() != "cuda" || info.ComputeCapability < MMACompute {
		return nil, fmt.Errorf("kernels: attention on tensor cores needs a CUDA device of sm_%d or newer; %s is %s sm_%d: %w",
			MMACompute, dev.ID(), dev.Backend(), info.ComputeCapability, engine.ErrUnsupported)
	}
	if dim != 64 && dim != 128 {
		return nil, fmt.Errorf("kernels: attention on tensor cores takes head dims 64 and 128, not %d (the portable kernel takes any up to %d): %w",
			dim, AttentionMaxDim, engine.ErrUnsupported)
	}
	if err := t.check(dim, 2); err != nil {
		return nil, err
	}
	if need, limit := t.shared(dim), int(info.MaxLocalBytes()); need > limit {
		return nil, fmt.Errorf("kernels: attention on tensor cores (%v, dim %d) needs %d bytes of shared memory per block; %s allows %d: %w",
			t, dim, need, dev.ID(), limit, engine.ErrUnsupported)
	}
	prec := 3
	if _, ok := any(*new(S)).(engine.BFloat16); ok {
		prec = 4
	}
	opts := []string{fmt.Sprintf("-DPREC=%d", prec), fmt.Sprintf("-DD=%d", dim), fmt.Sprintf("-DWARPS=%d", t.Warps),
		fmt.Sprintf("-DMT=%d", t.MT), fmt.Sprintf("-DBC=%d", t.BC), fmt.Sprintf("-DQREG=%d", b2i(t.QInRegs))}
	prog, k, err := kernels.BuildCUDA(dev, mmaSource, "attention.cu", "attention_mma", t.Warps*32, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (%v, dim %d)", err, t, dim)
	}
	return &MMA[S]{dev: dev, dim: dim, t: t, prog: prog, k: k}, nil
}

// Tunables returns the tunables it runs with.
func (m *MMA[S]) Tunables() MMATunables { return m.t }

// BlockKeys returns the keys per tile (BC): the tolerance depends on it.
func (m *MMA[S]) BlockKeys() int { return m.t.BC }

// Forward computes o = softmax(q k^T * scale [+ causal mask]) v over the tensors of shape s
// (the first s.Elems() elements of each buffer); s.Dim must be the dim m was made for. causal
// masks key j > query i. scale 0 selects 1/sqrt(s.Dim); any other value may have either sign,
// and its product with log2(e) must lie in float32's normal range (ErrInvalidArg otherwise).
func (m *MMA[S]) Forward(q *engine.Queue, o, qb, kb, vb *engine.Buffer[S], s AttentionShape, causal bool, scale float64) error {
	if s.Dim != m.dim && s.Dim >= 1 {
		return fmt.Errorf("kernels: attention: dim %d; this tensor-core instance was made for dim %d: %w", s.Dim, m.dim, engine.ErrInvalidArg)
	}
	scale, err := checkForward(s, m.dim, scale, o, qb, kb, vb)
	if err != nil {
		return err
	}
	bh := s.Batch * s.Heads
	br, threads := m.t.rows(), m.t.Warps*32
	blocks := bh * ((s.Seq + br - 1) / br)
	if err := kernels.CheckGroups("attention", blocks, threads); err != nil {
		return err
	}
	var c int32
	if causal {
		c = 1
	}
	sl2e, err := kernelScale(scale)
	if err != nil {
		return err
	}
	r := engine.Range1D(blocks*threads, threads).WithSharedBytes(int64(m.t.shared(m.dim)))
	return q.Launch(m.k, r, o, qb, kb, vb, int32(s.Seq), sl2e, c)
}

// Close releases the compiled kernel. Idempotent.
func (m *MMA[S]) Close() error {
	if m == nil {
		return nil
	}
	return errors.Join(m.k.Close(), m.prog.Close())
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Attributes returns the compiled kernel's attributes (registers, spills, shared memory).
func (m *MMA[S]) Attributes() engine.KernelAttributes { return m.k.Attributes() }
