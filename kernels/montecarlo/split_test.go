package montecarlo

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// mcOneDevice runs op once on dev at n with seed and returns its result: the output, or
// the count or price as a one-element slice, as uint32 bits.
func mcOneDevice(t *testing.T, dev *engine.Device, op MonteCarloOp, n int, seed uint64) []uint32 {
	t.Helper()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	in, err := monteCarloOp(op).Setup(t.Context(), q, kernels.Params{Size: n, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := in.Run(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	switch in := in.(type) {
	case *mcGenInstance[uint32]:
		got, err := in.out.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		return got
	case *mcGenInstance[float32]:
		got, err := in.out.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		return floatBits(got)
	case *mcReduceInstance:
		if op == MCPi {
			got, err := in.count.Download(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		got, err := in.price.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		return floatBits(got)
	}
	t.Fatalf("unexpected instance %T", in)
	return nil
}

func floatBits(x []float32) []uint32 {
	b := make([]uint32, len(x))
	for i, v := range x {
		b[i] = math.Float32bits(v)
	}
	return b
}

// splitResult returns the split's combined result as mcOneDevice does.
func splitResult(s *mcSplit) []uint32 {
	switch s.op {
	case MCPhilox:
		return s.words
	case MCPi:
		return []uint32{s.count}
	case MCOption:
		return floatBits([]float32{s.price})
	}
	return floatBits(s.floats)
}

func setupSplit(t *testing.T, op MonteCarloOp, devs []*engine.Device, p kernels.Params, f []float64) *mcSplit {
	t.Helper()
	in, err := monteCarloOp(op).Split(t.Context(), devs, p, kernels.SplitOptions{Fractions: f})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	return in.(*mcSplit)
}

// units returns the units s divides: work-groups of the one-device launch for pi and
// option, else outputs.
func (s *mcSplit) units() int {
	if s.reduce() {
		return s.groupsAll
	}
	return s.n
}

// TestMonteCarloSplitBitIdentical runs every montecarlo op split across devices that
// compute alike with fixed shares, at sizes that are not multiples of the chunk, and
// requires the one-device op's result bit for bit: the outputs, the count, the price,
// also where the one-device launch's items cover several blocks each.
func TestMonteCarloSplitBitIdentical(t *testing.T) {
	devs := kerneltest.SplitDevices(t, true)
	m, err := NewMonteCarlo(devs[0])
	if err != nil {
		t.Fatal(err)
	}
	wg, maxGroups := m.wg, m.maxGroups
	m.Close()
	for _, op := range MonteCarloOps {
		unit := 4 * wg
		if op == MCPi {
			unit = 2 * wg
		}
		// A few chunks, and a part of one; a device of a 13% share gets nothing at 7.
		// Every build takes PoCL about 80 ms: few sizes.
		sizes := []int{5*unit + 3}
		switch {
		case kerneltest.Small(): // Oclgrind
		case op == MCPhilox:
			sizes = append(sizes, 7)
		case op == MCOption || op == MCPi:
			sizes = append(sizes, 37*unit+11, 3*unit*maxGroups+5) // the last: three blocks an item
		}
		for _, n := range sizes {
			seed := uint64(n)*7 + 1
			var want []uint32
			for _, f := range kerneltest.SplitFractions(len(devs)) {
				t.Run(fmt.Sprintf("%s/n=%d/f=%v", op, n, f), func(t *testing.T) {
					s := setupSplit(t, op, devs, kernels.Params{Size: n, Seed: seed}, f)
					kerneltest.CheckShares(t, s.Shares(), s.units(), f)
					if err := s.Run(t.Context()); err != nil {
						t.Fatal(err)
					}
					if err := s.Verify(t.Context()); err != nil {
						t.Fatal(err)
					}
					if want == nil {
						want = mcOneDevice(t, devs[0], op, n, seed)
					}
					got := splitResult(s)
					if err := kernels.CheckEqual("split result bits", got, want); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}

// TestMonteCarloSplitMeasured splits every op across every device found with measured
// shares and checks the result against the reference.
func TestMonteCarloSplitMeasured(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	n := 40000
	if kerneltest.Small() {
		n = 3000
	}
	for _, op := range MonteCarloOps {
		t.Run(string(op), func(t *testing.T) {
			s := setupSplit(t, op, devs, kernels.Params{Size: n, Seed: 11}, nil)
			kerneltest.CheckShares(t, s.Shares(), s.units(), nil)
			for range 2 { // a second run combines afresh
				if err := s.Run(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Verify(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got, want := s.Model(), MonteCarloModel(op, n); got != want {
				t.Errorf("Model %+v, want %+v", got, want)
			}
			t.Logf("%s: shares %+v", s.Shape(), s.Shares())
		})
	}
}

// TestMonteCarloSplitVerifyCatches checks that the split's Verify sees a wrong element of
// the combined output.
func TestMonteCarloSplitVerifyCatches(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	s := setupSplit(t, MCUniform, devs, kernels.Params{Size: 5000, Seed: 3}, kerneltest.SplitFractions(len(devs))[0])
	if err := s.Verify(t.Context()); !errors.Is(err, engine.ErrInvalidArg) {
		t.Errorf("Verify before Run: %v, want ErrInvalidArg", err)
	}
	if err := s.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.floats[4999] = 2.5
	if err := s.Verify(t.Context()); !errors.Is(err, kernels.ErrVerify) {
		t.Errorf("Verify after a wrong element: %v, want ErrVerify", err)
	}
}

func TestMonteCarloSplitInvalid(t *testing.T) {
	devs := kerneltest.SplitDevices(t, false)
	op := monteCarloOp(MCPi)
	ok := kernels.Params{Size: 1000, Seed: 1}
	kerneltest.CheckSplitRefusals(t, op, append(kerneltest.PlacementRefusals(devs, ok), []kerneltest.SplitRefusal{
		{Name: "size 0", Devs: devs, P: kernels.Params{}, Want: engine.ErrInvalidArg},
		{Name: "size too large", Devs: devs, P: kernels.Params{Size: MonteCarloMax + 1}, Want: engine.ErrInvalidArg},
		{Name: "tunables", Devs: devs, P: kernels.Params{Size: 1000, Tunables: "WG=64"}, Want: engine.ErrInvalidArg},
		{Name: "variant", Devs: devs, P: kernels.Params{Size: 1000, Variant: "cuda-shfl"}, Want: engine.ErrUnsupported},
		{Name: "variant and portable", Devs: devs, P: kernels.Params{Size: 1000, Variant: "cuda-shfl", Portable: true}, Want: engine.ErrInvalidArg},
	}...))
	// The parts' results come back to the host: sharded data is refused, not run as host
	// data under the sharded name.
	if in, err := op.Split(t.Context(), devs, ok, kernels.SplitOptions{Fractions: kerneltest.SplitFractions(len(devs))[0], Placement: kernels.PlaceSharded}); !errors.Is(err, engine.ErrUnsupported) {
		if in != nil {
			in.Close()
		}
		t.Errorf("split on sharded data: %v, want unsupported", err)
	}
	in, err := op.Split(t.Context(), devs, kernels.Params{Size: 1000, Variant: "Portable"}, kernels.SplitOptions{Fractions: kerneltest.SplitFractions(len(devs))[0]})
	if err != nil {
		t.Fatal(err)
	}
	kerneltest.CheckSplitClose(t, in)
}
