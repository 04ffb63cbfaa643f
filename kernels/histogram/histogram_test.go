package histogram

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/internal/kerneltest"
)

// builds are the family's two builds: the portable kernels and the privatized ones.
var builds = []struct {
	name string
	new  func(*engine.Device) (*Histogram, error)
}{{"portable", NewHistogram}, {PrivatizedName, NewPrivatized}}

func TestHistogram(t *testing.T) {
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) { testHistogram(t, b.name, b.new) })
	}
}

// onePattern reports whether testHistogram leaves out the pi-th data pattern at the
// si-th size n under Oclgrind, where the sizes below a work-group's edges (0 to 7: no
// input, the 16-byte vectors and their tails) take one pattern each, in turn. The
// patterns choose the values, so the bins a kernel touches; every pattern still runs at
// each size from wg-1 on, through the same code with more items (TestHistogram took 31 s
// there with every pattern at every size).
func onePattern(si, pi, n, wg int) bool {
	return kerneltest.Small() && n < wg-1 && pi != si%3
}

func testHistogram(t *testing.T, build string, newHist func(*engine.Device) (*Histogram, error)) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		h, err := newHist(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		t.Logf("%s", h.Tunables())
		rng := rand.New(rand.NewPCG(4, 5))
		// No input, fewer inputs than one 16-byte vector, one vector and a tail, and the
		// work-group edges.
		sizes := append([]int{0, 2, 3, 4, 5}, kerneltest.EdgeSizes(h.WorkGroup())...)
		// uint32: a power-of-two width (shift), widths that are not (division), values past
		// bins*width (clamped into the last bin), bin edges, one bin, the local limit and one past.
		for _, c := range []struct {
			bins  int
			width uint32
		}{{1, 1}, {7, 1000}, {256, 1 << 24}, {h.LocalBins(), 3}, {h.LocalBins() + 1, 1 << 12}} {
			if kerneltest.Small() && build == PrivatizedName && c.bins < 256 {
				continue // Oclgrind: TestHistogramPrivatizedGrid runs 7 bins
			}
			for si, n := range sizes {
				for pi, pat := range []string{"random", "edges", "skewed"} {
					if kerneltest.Small() && n > 4097 || n > 4097 && pat == "edges" || onePattern(si, pi, n, h.WorkGroup()) {
						continue
					}
					x := make([]uint32, n)
					span := uint64(c.bins) * uint64(c.width)
					for i := range x {
						switch pat {
						case "random": // about 1/8 past the last bin
							x[i] = uint32(min(rng.Uint64N(span+span/8+1), math.MaxUint32))
						case "edges": // k*width - 1, k*width, k*width + 1, and the extremes
							k := uint32(rng.IntN(c.bins + 2))
							x[i] = []uint32{k*c.width - 1, k * c.width, k*c.width + 1, 0, math.MaxUint32}[rng.IntN(5)]
						case "skewed": // nine in ten in one bin: contention
							x[i] = uint32(min(rng.Uint64N(span+1), math.MaxUint32))
							if rng.IntN(10) != 0 {
								x[i] = uint32(c.bins/2) * c.width
							}
						}
					}
					t.Run(fmt.Sprintf("uint32/bins=%d/width=%d/n=%d/%s", c.bins, c.width, n, pat), func(t *testing.T) {
						counts := kerneltest.Guarded(t, q, garbage(c.bins))
						if err := h.Uint32(q, counts, kerneltest.Guarded(t, q, x), n, c.bins, c.width); err != nil {
							t.Fatal(err)
						}
						got := kerneltest.Download(t, q, "counts", counts, c.bins)
						if err := kernels.CheckEqual("counts", got, HistogramUint32Ref(x, c.bins, c.width)); err != nil {
							t.Fatal(err)
						}
					})
				}
			}
		}
		// float32: values at and around every bin edge, at lo and hi, outside, NaN, infinities.
		for _, c := range []struct {
			bins   int
			lo, hi float32
		}{{1, 0, 1}, {7, -1, 1}, {256, -3.5, 100}, {h.LocalBins() + 1, 0.1, 0.7}} {
			for si, n := range sizes {
				for pi, pat := range []string{"random", "edges", "skewed"} {
					if kerneltest.Small() && n > 4097 || n > 4097 && pat == "edges" || onePattern(si, pi, n, h.WorkGroup()) {
						continue
					}
					x := make([]float32, n)
					w := float64(c.hi - c.lo)
					for i := range x {
						switch pat {
						case "random":
							x[i] = float32(float64(c.lo) - 0.1*w + 1.2*w*rng.Float64())
						case "edges":
							e := c.lo + float32(rng.IntN(c.bins+1))*(c.hi-c.lo)/float32(c.bins)
							specials := []float32{e, math.Nextafter32(e, -math.MaxFloat32), math.Nextafter32(e, math.MaxFloat32),
								c.lo, c.hi, math.Nextafter32(c.hi, -math.MaxFloat32), math.Nextafter32(c.lo, -math.MaxFloat32),
								float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1))}
							x[i] = specials[rng.IntN(len(specials))]
						case "skewed":
							x[i] = c.lo + (c.hi-c.lo)/3
							if rng.IntN(10) == 0 {
								x[i] = float32(float64(c.lo) + w*rng.Float64())
							}
						}
					}
					t.Run(fmt.Sprintf("float32/bins=%d/range=[%v,%v)/n=%d/%s", c.bins, c.lo, c.hi, n, pat), func(t *testing.T) {
						counts := kerneltest.Guarded(t, q, garbage(c.bins))
						if err := h.Float32(q, counts, kerneltest.Guarded(t, q, x), n, c.bins, c.lo, c.hi); err != nil {
							t.Fatal(err)
						}
						got := kerneltest.Download(t, q, "counts", counts, c.bins)
						if err := kernels.CheckEqual("counts", got, HistogramFloat32Ref(x, c.bins, c.lo, c.hi)); err != nil {
							t.Fatal(err)
						}
					})
				}
			}
		}
	})
}

// TestHistogramPrivatizedGrid runs the privatized kernels where their loops change course,
// at sizes Oclgrind runs: forced grids of several work-groups, inputs around one step of
// UNROLL vectors per item over the grid (the unrolled loop, the vectors left, the scalar
// tail), under the limits of small devices (Rusticl's 32 items: 32 copies of one item each;
// 4 KiB of local memory: 2 copies of 256 bins, and 4096 bins through global atomics).
func TestHistogramPrivatizedGrid(t *testing.T) {
	for _, lim := range []struct {
		wg, local string
		tun       PrivTunables
	}{
		{"", "", DefaultPrivTunables}, {"", "", PrivTunables{WG: 512, Unroll: 8, Groups: 2}}, {"", "", PrivTunables{WG: 64, Unroll: 1, Groups: 8}},
		{"32", "", DefaultPrivTunables}, {"64", "4096", DefaultPrivTunables}, {"1", "", DefaultPrivTunables},
	} {
		if kerneltest.Small() && (lim.tun != DefaultPrivTunables || lim.wg == "1") {
			continue // Oclgrind: the default shape, under Rusticl's and a 4 KiB device's limits
		}
		t.Run(fmt.Sprintf("wg=%s,local=%s,%s", lim.wg, lim.local, lim.tun), func(t *testing.T) {
			t.Setenv(kernels.EnvMaxWorkGroup, lim.wg)
			t.Setenv(kernels.EnvMaxLocalBytes, lim.local)
			kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
				h, err := NewPrivatizedWith(dev, lim.tun)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				t.Logf("%s, local bins %d", h.Tunables(), h.LocalBins())
				rng := rand.New(rand.NewPCG(6, 7))
				grids := []int{1, 3}
				if kerneltest.Small() {
					grids = grids[1:] // several groups: the merge of their counts
				}
				for _, groups := range grids {
					h.groups = groups
					step := 4 * h.unroll * groups * h.WorkGroup() // inputs of one unrolled step
					sizes := []int{step - 1, step, step + 3, 2*step + 4*groups*h.WorkGroup() + 1}
					if !kerneltest.Small() {
						sizes = append(sizes, 5*step+4*h.WorkGroup()+2)
					}
					for _, bins := range []int{7, 256, 4096} {
						for _, n := range sizes {
							if kerneltest.Small() && n*bins > 4096*4096 {
								continue
							}
							skewed := n%2 == 1              // nine in ten in one bin: every lane on one word
							width := uint32(1 << 32 / bins) // a shift: uniform bins
							if bins == 7 {
								width = 1000 // a division, and most values in the last bin
							}
							x := make([]uint32, n)
							f := make([]float32, n)
							for i := range x {
								x[i] = rng.Uint32()
								f[i] = float32(-1.1 + 2.2*rng.Float64())
								if skewed && rng.IntN(10) != 0 {
									x[i], f[i] = uint32(bins/2)*width, 0.25
								}
							}
							t.Run(fmt.Sprintf("groups=%d/bins=%d/n=%d", groups, bins, n), func(t *testing.T) {
								counts := kerneltest.Guarded(t, q, garbage(bins))
								if err := h.Uint32(q, counts, kerneltest.Guarded(t, q, x), n, bins, width); err != nil {
									t.Fatal(err)
								}
								got := kerneltest.Download(t, q, "uint32 counts", counts, bins)
								if err := kernels.CheckEqual("uint32 counts", got, HistogramUint32Ref(x, bins, width)); err != nil {
									t.Fatal(err)
								}
								if err := h.Float32(q, counts, kerneltest.Guarded(t, q, f), n, bins, -1, 1); err != nil {
									t.Fatal(err)
								}
								got = kerneltest.Download(t, q, "float32 counts", counts, bins)
								if err := kernels.CheckEqual("float32 counts", got, HistogramFloat32Ref(f, bins, -1, 1)); err != nil {
									t.Fatal(err)
								}
							})
						}
					}
				}
			})
		})
	}
}

// TestHistogramPrivatizedTooSmall checks that the privatized build refuses a device with
// too little local memory as the portable one does (ErrUnsupported naming the local memory),
// so that the op says unsupported there whichever variant is picked.
func TestHistogramPrivatizedTooSmall(t *testing.T) {
	t.Setenv(kernels.EnvMaxLocalBytes, "512")
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, b := range builds {
			h, err := b.new(dev)
			if err == nil {
				h.Close()
			}
			if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "bytes of local memory") {
				t.Errorf("%s with 512 bytes of local memory: %v, want ErrUnsupported naming the local memory", b.name, err)
			}
		}
	})
}

// TestPrivTunables checks the tunables' spelling and its checks, and that every candidate
// parses back to itself.
func TestPrivTunables(t *testing.T) {
	for _, c := range privCandidates {
		if got, err := ParsePrivTunables(c.String()); err != nil || got != c {
			t.Errorf("ParsePrivTunables(%q) = %v, %v", c, got, err)
		}
	}
	if got, err := ParsePrivTunables(" UNROLL=2  GROUPS=3 WG=128"); err != nil || got != (PrivTunables{128, 2, 3}) {
		t.Errorf("fields in another order: %v, %v", got, err)
	}
	for _, s := range []string{"", "WG=256 UNROLL=4", "WG=256 UNROLL=4 GROUPS=4 WG=256", "WG=300 UNROLL=4 GROUPS=4", "WG=256 UNROLL=0 GROUPS=4",
		"WG=256 UNROLL=4 GROUPS=65", "WG=256 UNROLL=4 GROUPS=x", "WG=256 UNROLL=4 GROUPS=+4", "WG=256 UNROLL=4 COPIES=4", "WG=256 UNROLL=4 GROUPS"} {
		if _, err := ParsePrivTunables(s); !errors.Is(err, engine.ErrInvalidArg) {
			t.Errorf("ParsePrivTunables(%q): %v, want ErrInvalidArg", s, err)
		}
	}
}

// TestHistogramOpTunables sets the ops' privatized variant up as `prism tune` does, with a
// candidate forced, and checks that it runs, verifies and reports it; a bad set is refused.
func TestHistogramOpTunables(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, op := range Family().Ops {
			tun := privCandidates[len(privCandidates)-1].String()
			in, err := op.Setup(t.Context(), q, kernels.Params{Size: 9999, Seed: 3, Variant: PrivatizedName, Tunables: tun})
			if err != nil {
				t.Fatalf("%s: %v", op.Name, err)
			}
			err = in.Run(t.Context(), q)
			if err == nil {
				err = in.Verify(t.Context(), q)
			}
			got := in.(kernels.TunablesReporter).Tunables()
			in.Close()
			if err != nil {
				t.Fatalf("%s with %s: %v", op.Name, tun, err)
			}
			if !strings.HasSuffix(got, "(forced)") || !strings.Contains(got, "UNROLL=8 GROUPS=8") {
				t.Errorf("%s: tunables reported %q, want the forced %s", op.Name, got, tun)
			}
			if _, err := op.Setup(t.Context(), q, kernels.Params{Size: 9999, Variant: PrivatizedName, Tunables: "UNROLL=4"}); !errors.Is(err, engine.ErrInvalidArg) {
				t.Errorf("%s: bad tunables: %v, want ErrInvalidArg", op.Name, err)
			}
		}
	})
}

// TestHistogramVariants checks the ops' variant lists: the privatized variant first, for
// every device (OpenCL C, no requirement), the portable one last.
func TestHistogramVariants(t *testing.T) {
	for _, op := range Family().Ops {
		if got := op.VariantNames(); len(got) != 2 || got[0] != PrivatizedName || got[1] != kernels.PortableName {
			t.Errorf("%s: variants %v, want [%s %s]", op.Name, got, PrivatizedName, kernels.PortableName)
		}
		v := op.Variants[0]
		if v.Dialect != engine.DialectOpenCL || v.Backend != "" || v.MinCompute != 0 || v.Needs != nil || v.Tunables == "" {
			t.Errorf("%s: variant %s: want OpenCL C with no requirement and its tunables listed", op.Name, v.Name)
		}
	}
	for _, c := range []struct{ wg, local, bins, want int }{
		{256, 8192, 256, 5}, {32, 8192, 256, 5}, {8, 8192, 256, 3}, {1, 8192, 256, 0},
		{256, 512, 256, 1}, {256, 8192, 4096, 1}, {256, 4096, 4096, 0}, {256, 8192, 7, 5},
	} {
		if got := privCopies(c.wg, c.local, c.bins); got != c.want {
			t.Errorf("privCopies(wg %d, %d words, %d bins) = %d, want %d", c.wg, c.local, c.bins, got, c.want)
		}
	}
}

// garbage returns n non-zero counts: the histogram must overwrite them.
func garbage(n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = 0x5eed + uint32(i)
	}
	return out
}

func TestHistogramRef(t *testing.T) {
	got := HistogramFloat32Ref([]float32{0, 0.25, 0.5, 0.75, 1, -0.01, float32(math.NaN()), 0.9999999, float32(math.Copysign(0, -1))}, 4, 0, 1)
	if err := kernels.CheckEqual("float ref", got, []uint32{2, 1, 1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := kernels.CheckEqual("uint ref", HistogramUint32Ref([]uint32{0, 9, 10, 29, 30, math.MaxUint32}, 3, 10), []uint32{2, 1, 3}); err != nil {
		t.Fatal(err)
	}
}

// TestHistogramInvalid checks the validation of the exported launchers.
func TestHistogramInvalid(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		h, err := NewHistogram(dev)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		const n = 100
		u, _ := engine.NewBuffer[uint32](dev, n)
		f, _ := engine.NewBuffer[float32](dev, n)
		counts, _ := engine.NewBuffer[uint32](dev, 16)
		defer u.Close()
		defer f.Close()
		defer counts.Close()
		inf := float32(math.Inf(1))
		for _, c := range []struct {
			name string
			err  error
		}{
			{"nil counts", h.Uint32(q, nil, u, n, 16, 1)},
			{"nil input", h.Uint32(q, counts, nil, n, 16, 1)},
			{"negative n", h.Uint32(q, counts, u, -1, 16, 1)},
			{"n over input", h.Uint32(q, counts, u, n+1, 16, 1)},
			{"zero bins", h.Uint32(q, counts, u, n, 0, 1)},
			{"bins over counts", h.Uint32(q, counts, u, n, 17, 1)},
			{"zero width", h.Uint32(q, counts, u, n, 16, 0)},
			{"float nil counts", h.Float32(q, nil, f, n, 16, 0, 1)},
			{"float nil input", h.Float32(q, counts, nil, n, 16, 0, 1)},
			{"float n over input", h.Float32(q, counts, f, n+1, 16, 0, 1)},
			{"float bins over max", h.Float32(q, counts, f, n, MaxFloatBins+1, 0, 1)},
			{"lo == hi", h.Float32(q, counts, f, n, 16, 1, 1)},
			{"lo > hi", h.Float32(q, counts, f, n, 16, 2, 1)},
			{"infinite hi", h.Float32(q, counts, f, n, 16, 0, inf)},
			{"NaN lo", h.Float32(q, counts, f, n, 16, float32(math.NaN()), 1)},
			{"span overflows", h.Float32(q, counts, f, n, 16, -math.MaxFloat32, math.MaxFloat32)},
			{"scale overflows", h.Float32(q, counts, f, n, 16, 0, 1e-44)},
		} {
			if !errors.Is(c.err, engine.ErrInvalidArg) {
				t.Errorf("%s: %v, want ErrInvalidArg", c.name, c.err)
			}
		}
		if err := h.Uint32(q, counts, u, 0, 16, 1); err != nil {
			t.Errorf("n = 0: %v, want nil", err)
		}
		got, err := counts.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if err := kernels.CheckEqual("counts of no input", got, make([]uint32, 16)); err != nil {
			t.Error(err)
		}
		if err := q.Finish(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestHistogramLoopGroups checks the work-groups of every kernel against a loop limit
// (kernels.LoopLimit): at the device's own limit, where it has one (Mesa's llvmpipe),
// 2^31-1 inputs keep every work-item within 90% of it; and with a limit of 600 lowered on
// every device, so that a 1M-input histogram spreads over more groups than the usual cap,
// the portable, privatized and global-atomic kernels still count exactly.
func TestHistogramLoopGroups(t *testing.T) {
	kerneltest.ForEachDevice(t, func(t *testing.T, dev *engine.Device, q *engine.Queue) {
		for _, priv := range []bool{false, true} {
			var h *Histogram
			var err error
			if priv {
				h, err = NewPrivatized(dev)
			} else {
				h, err = NewHistogram(dev)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			for _, bins := range []int{256, h.LocalBins() + 1} {
				within := func(n, limit int) error {
					copies, r, global := h.plan(n, bins)
					groups := r.Global[0] / h.wg
					step, counters := 1, bins*copies
					if priv && !global {
						step, counters = 4*h.unroll, bins<<copies
					}
					if global {
						counters = 0
					}
					items := groups * h.wg
					if it := (n+items*step-1)/(items*step) + 2*counters/h.wg + 64; it > limit/10*9 {
						return fmt.Errorf("privatized %v, %d bins, %d inputs: %d groups, about %d loop iterations a work-item, past 90%% of %d", priv, bins, n, groups, it, limit)
					}
					return nil
				}
				if h.loops > 0 {
					if err := within(math.MaxInt32, h.loops); err != nil {
						t.Error(err)
					}
				}
				if kerneltest.Small() {
					continue
				}
				saved := h.loops
				h.loops = 600
				n := 1 << 20
				if err := within(n, h.loops); err != nil {
					t.Error(err)
				}
				rng := rand.New(rand.NewPCG(8, uint64(bins)))
				x := make([]uint32, n)
				for i := range x {
					x[i] = rng.Uint32()
				}
				width := uint32(1<<32/bins) + 1
				counts := kerneltest.Guarded(t, q, garbage(bins))
				if err := h.Uint32(q, counts, kerneltest.Guarded(t, q, x), n, bins, width); err != nil {
					t.Fatal(err)
				}
				got := kerneltest.Download(t, q, "uint32 counts", counts, bins)
				if err := kernels.CheckEqual(fmt.Sprintf("privatized %v, %d bins: counts", priv, bins), got, HistogramUint32Ref(x, bins, width)); err != nil {
					t.Error(err)
				}
				h.loops = saved
			}
		}
	})
}
