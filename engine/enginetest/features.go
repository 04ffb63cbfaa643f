package enginetest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/internal/suitekernels"
)

// testDialects checks Dialects and BuildSource: OpenCL C is always built, through
// BuildSource too; a dialect the device lacks is refused with ErrUnsupported naming the
// dialect and the device, before the driver; a CUDA C++ build error carries the log.
func (s *suite) testDialects(t *testing.T) {
	dls := s.dev.Dialects()
	t.Logf("%s builds %v", s.id, dls)
	if len(dls) == 0 || dls[0] != engine.DialectOpenCL {
		t.Fatalf("Dialects() = %v, want OpenCL C first", dls)
	}
	for _, dl := range []engine.Dialect{engine.DialectOpenCL, engine.DialectCUDA} {
		if s.dev.Builds(dl) != slices.Contains(dls, dl) {
			t.Errorf("Builds(%s) = %v, Dialects() = %v", dl, s.dev.Builds(dl), dls)
		}
		if s.dev.Builds(dl) {
			continue
		}
		t.Run("unsupported "+dl.String(), func(t *testing.T) {
			before := s.driverCalls()
			p, err := s.dev.BuildSource(engine.Source{Dialect: dl, Text: suitekernels.CUDASource, Name: "suite.cu"})
			if err == nil {
				p.Close()
				t.Fatalf("BuildSource in %s succeeded on a device that does not list it", dl)
			}
			if !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), dl.String()) || !strings.Contains(err.Error(), s.id) {
				t.Errorf("BuildSource in %s = %v, want ErrUnsupported naming the dialect and %s", dl, err, s.id)
			}
			checkPrefix(t, "BuildSource", err)
			s.checkNoDriverCalls(t, before, "a build in a dialect the device lacks")
			t.Logf("%v", err)
		})
	}
	t.Run("OpenCL C source", func(t *testing.T) {
		p, err := s.dev.BuildSource(engine.Source{Dialect: engine.DialectOpenCL, Text: suitekernels.Source, Name: "suite.cl"})
		if err != nil {
			t.Fatalf("BuildSource: %v", err)
		}
		defer p.Close()
		k, err := p.Kernel(suitekernels.Iota)
		if err != nil {
			t.Fatalf("Kernel: %v", err)
		}
		defer k.Close()
		q := s.queue(t)
		b := upload(t, q, sentinels[uint32](3+2*guard))
		if err := q.Launch(k, engine.Range1D(3, 1), int32(3), int32(guard), b); err != nil {
			t.Fatalf("Launch: %v", err)
		}
		checkBits(t, "out", download(t, q, b), guarded([]uint32{0, 1, 2}), guard)
	})
	t.Run("CUDA C++ build error", func(t *testing.T) {
		if !s.dev.Builds(engine.DialectCUDA) {
			t.Skipf("%s does not build CUDA C++", s.id)
		}
		p, err := s.dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: suitekernels.BadCUDASource, Name: "bad.cu"})
		if err == nil {
			p.Close()
			t.Fatal("a CUDA C++ source with an undeclared identifier built")
		}
		var be *engine.BuildError
		if !errors.Is(err, engine.ErrBuild) || !errors.As(err, &be) || !strings.Contains(be.Log, suitekernels.BadIdent) {
			t.Errorf("BuildSource = %v, want a *BuildError whose log names %s", err, suitekernels.BadIdent)
		}
	})
}

// testAttributes checks Kernel.Attributes for every kernel of the suite: the work-group
// limit is positive and within the device's, no field is negative, and the static local
// memory of GroupReverse, where the backend reports it, holds its __local array.
func (s *suite) testAttributes(t *testing.T) {
	devMax := s.dev.Info().MaxWorkGroupSize
	for _, name := range slices.Sorted(maps.Keys(suitekernels.NumArgs)) {
		t.Run(name, func(t *testing.T) {
			k := s.kernel(t, name)
			a := k.Attributes()
			t.Logf("%+v", a)
			if a.MaxWorkGroupSize <= 0 || (devMax > 0 && a.MaxWorkGroupSize > devMax) || a.MaxWorkGroupSize != k.MaxWorkGroupSize() {
				t.Errorf("MaxWorkGroupSize %d: want positive, at most the device's %d, and equal to Kernel.MaxWorkGroupSize() %d",
					a.MaxWorkGroupSize, devMax, k.MaxWorkGroupSize())
			}
			if a.Registers < 0 || a.LocalBytes < 0 || a.PrivateBytes < 0 || a.ConstBytes < 0 || a.PreferredMultiple < 0 ||
				a.BinaryVersion < 0 || a.PTXVersion < 0 {
				t.Errorf("negative attributes: %+v", a)
			}
			if m := s.dev.Info().MaxLocalBytes(); m > 0 && a.LocalBytes > m {
				t.Errorf("LocalBytes %d exceeds the device's %d", a.LocalBytes, m)
			}
			if name == suitekernels.GroupReverse && a.LocalBytes != 0 && a.LocalBytes < suitekernels.GroupMax*4 {
				t.Errorf("LocalBytes %d: the kernel's __local array alone is %d bytes", a.LocalBytes, suitekernels.GroupMax*4)
			}
		})
	}
}

// groupLocals returns the 1D work-group sizes to launch a group-reverse kernel with: 1, 7,
// 16, 64 and 256 up to limit (and the kernel's and device's limits).
func (s *suite) groupLocals(k *engine.Kernel, limit int) []int {
	top := s.locals(k)[len(s.locals(k))-1]
	var out []int
	for _, l := range []int{1, 7, 16, 64, 256} {
		if l <= top && l <= limit {
			out = append(out, l)
		}
	}
	return out
}

// groupReverse is the host reference of the group-reverse kernels for work-groups of l
// items.
func groupReverse(in []uint32, l int) []uint32 {
	out := make([]uint32, len(in))
	for i := range in {
		base := i / l * l
		if j := base + l - 1 - (i - base); j < len(in) {
			out[i] = in[j]
		}
	}
	return out
}

// runGroupReverse launches a group-reverse kernel at sizes around l and checks the guarded
// result; extra are arguments after the kernel's four, extraOut elements the kernel writes
// after the n reversed ones (with their expected values).
func (s *suite) runGroupReverse(t *testing.T, k *engine.Kernel, l int, r func(engine.Range) engine.Range, extra []any, extraOut []uint32) {
	q := s.queue(t)
	for _, n := range s.fit([]int{1, l - 1, l, l + 1, 1000}) {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			in := random[uint32](rng(t), n)
			inBuf := upload(t, q, in)
			outBuf := upload(t, q, sentinels[uint32](n+len(extraOut)+2*guard))
			rg := r(engine.Range1D(engine.RoundUp(n, l), l))
			args := append([]any{int32(n), int32(guard), inBuf, outBuf}, extra...)
			if err := q.Launch(k, rg, args...); err != nil {
				t.Fatalf("Launch %+v: %v", rg, err)
			}
			want := append(groupReverse(in, l), extraOut...)
			checkBits(t, "out", download(t, q, outBuf), guarded(want), guard)
		})
	}
}

// testStaticLocal runs GroupReverse, which stages data through a kernel-scope __local
// array and a barrier, on every device.
func (s *suite) testStaticLocal(t *testing.T) {
	k := s.kernel(t, suitekernels.GroupReverse)
	for _, l := range s.groupLocals(k, suitekernels.GroupMax) {
		t.Run(fmt.Sprintf("local=%d", l), func(t *testing.T) {
			s.runGroupReverse(t, k, l, func(r engine.Range) engine.Range { return r }, nil, nil)
		})
	}
}

// testLocalArgs runs GroupReverseLocal, whose local memory is a __local pointer parameter
// sized at launch with engine.LocalBytes, on devices that take such parameters; on the
// others it checks that a LocalBytes argument is refused with ErrUnsupported.
func (s *suite) testLocalArgs(t *testing.T) {
	if !s.dev.LaunchFeatures().LocalArgs {
		k := s.kernel(t, suitekernels.Iota)
		q := s.queue(t)
		b := newBuffer[uint32](t, s, 1)
		before := s.driverCalls()
		err := q.Launch(k, engine.Range1D(1, 1), int32(1), engine.LocalBytes(4), b)
		if !errors.Is(err, engine.ErrUnsupported) {
			t.Errorf("a LocalBytes argument on %s: %v, want ErrUnsupported", s.id, err)
		}
		s.checkNoDriverCalls(t, before, "a LocalBytes argument the device does not take")
		t.Skipf("%s takes no __local pointer parameters (refused: %v)", s.id, err)
	}
	p, err := s.dev.Build(suitekernels.LocalArgSource)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	defer p.Close()
	k, err := p.Kernel(suitekernels.GroupReverseLocal)
	if err != nil {
		t.Fatalf("Kernel: %v", err)
	}
	defer k.Close()
	for _, l := range s.groupLocals(k, 1<<30) {
		// Exactly the tile, and more than it needs: both are valid.
		for _, bytes := range []int64{int64(l) * 4, int64(l)*4 + 60} {
			t.Run(fmt.Sprintf("local=%d/LocalBytes=%d", l, bytes), func(t *testing.T) {
				s.runGroupReverse(t, k, l, func(r engine.Range) engine.Range { return r }, []any{engine.LocalBytes(bytes)}, nil)
			})
		}
	}
}

// testSharedBytes runs GroupReverseShared, a CUDA C++ kernel whose tile is dynamic shared
// memory sized by Range.SharedBytes, on devices that build CUDA C++ and size it: with the
// bytes it needs, and with the most a work-group may use (above 48 KiB on a GPU with an
// opt-in). It also checks the half and bfloat16 conversions of the embedded prism_cuda.h.
func (s *suite) testSharedBytes(t *testing.T) {
	f := s.dev.LaunchFeatures()
	if !s.dev.Builds(engine.DialectCUDA) || !f.SharedBytes {
		t.Skipf("%s: CUDA C++ %v, dynamic shared memory %v: the kernel needs both", s.id, s.dev.Builds(engine.DialectCUDA), f.SharedBytes)
	}
	p, err := s.dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: suitekernels.CUDASource, Name: "suite.cu"})
	if err != nil {
		t.Fatalf("BuildSource: %v", err)
	}
	defer p.Close()
	k, err := p.Kernel(suitekernels.GroupReverseShared)
	if err != nil {
		t.Fatalf("Kernel: %v", err)
	}
	defer k.Close()
	t.Logf("attributes: %+v", k.Attributes())
	most := s.dev.Info().MaxLocalBytes() - k.Attributes().LocalBytes
	top := s.locals(k)[len(s.locals(k))-1]
	for _, l := range s.fit([]int{32, top}) {
		for _, bytes := range []int64{int64(l) * 4, most} {
			if bytes < int64(l)*4 {
				continue
			}
			t.Run(fmt.Sprintf("local=%d/SharedBytes=%d", l, bytes), func(t *testing.T) {
				s.runGroupReverse(t, k, l, func(r engine.Range) engine.Range { return r.WithSharedBytes(bytes) }, nil, []uint32{suitekernels.HalfCheck})
			})
		}
	}
}

// testClusters launches ClusterRank in thread-block clusters of several shapes, up to the
// device's largest, and checks each block's cluster size and rank, on devices that build
// CUDA C++ and have clusters.
func (s *suite) testClusters(t *testing.T) {
	maxSize := s.dev.LaunchFeatures().MaxClusterSize
	if maxSize == 0 || !s.dev.Builds(engine.DialectCUDA) {
		t.Skipf("%s: clusters of up to %d work-groups, CUDA C++ %v: the test needs both", s.id, maxSize, s.dev.Builds(engine.DialectCUDA))
	}
	p, err := s.dev.BuildSource(engine.Source{Dialect: engine.DialectCUDA, Text: suitekernels.ClusterSource, Name: "cluster.cu"})
	if err != nil {
		t.Fatalf("BuildSource: %v", err)
	}
	defer p.Close()
	k, err := p.Kernel(suitekernels.ClusterRank)
	if err != nil {
		t.Fatalf("Kernel: %v", err)
	}
	defer k.Close()
	q := s.queue(t)
	const l = 32 // threads per block
	for _, c := range []struct {
		groups, cluster [3]int
	}{
		{[3]int{8, 1, 1}, [3]int{2, 1, 1}},
		{[3]int{12, 1, 1}, [3]int{4, 1, 1}},
		{[3]int{2 * maxSize, 1, 1}, [3]int{maxSize, 1, 1}},
		{[3]int{4, 6, 1}, [3]int{2, 2, 1}},
		{[3]int{2, 2, 4}, [3]int{1, 2, 2}},
	} {
		size := c.cluster[0] * c.cluster[1] * c.cluster[2]
		if size > maxSize {
			continue
		}
		t.Run(fmt.Sprintf("groups=%v/cluster=%v", c.groups, c.cluster), func(t *testing.T) {
			g := c.groups
			blocks := g[0] * g[1] * g[2]
			want := make([]uint32, blocks)
			for z := range g[2] {
				for y := range g[1] {
					for x := range g[0] {
						cl := c.cluster
						rank := x%cl[0] + cl[0]*(y%cl[1]+cl[1]*(z%cl[2]))
						want[x+g[0]*(y+g[1]*z)] = uint32(size)<<16 | uint32(rank)
					}
				}
			}
			out := upload(t, q, sentinels[uint32](blocks+2*guard))
			view := newBuffer[uint32](t, s, blocks)
			r := engine.Range3D(g[0]*l, g[1], g[2], l, 1, 1).WithCluster(c.cluster[0], c.cluster[1], c.cluster[2])
			if err := q.Launch(k, r, view); err != nil {
				t.Fatalf("Launch %+v: %v", r, err)
			}
			if err := out.CopyFrom(q, guard, view, 0, blocks); err != nil {
				t.Fatalf("CopyFrom: %v", err)
			}
			checkBits(t, "size<<16 | rank", download(t, q, out), guarded(want), guard)
		})
	}
}
