//go:build !noopencl

package cl

import (
	"context"
	"os"
	"testing"

	"github.com/prism-compute/prism/engine"
)

// raceSource's kernel has a race on purpose: every work-item writes out[0].
const raceSource = `
__kernel void race(__global int* out) {
	out[0] = (int)get_global_id(0);
}
`

// TestOclgrindLog is the known report that make oclgrind checks scripts/oclgrind-run.sh
// with: a write-write race in a first OpenCL context, then a clean kernel in a second one.
// Oclgrind 21.10 opens its --log anew (truncating a plain file) for every context, so the
// script must keep the first context's report and fail. It runs only when
// PRISM_OCLGRIND_SELFCHECK=1 is set, under Oclgrind: elsewhere the race is reported by no
// one, and on Oclgrind it must not fail the ordinary pass.
func TestOclgrindLog(t *testing.T) {
	if os.Getenv("PRISM_OCLGRIND_SELFCHECK") != "1" {
		t.Skip("makes Oclgrind report a race on purpose: run by make oclgrind with PRISM_OCLGRIND_SELFCHECK=1")
	}
	infos := testDevices(t)
	if !underOclgrind(infos) {
		t.Skipf("checks Oclgrind's log: the platform is %q", infos[0].Platform)
	}
	const n = 4
	// The race, in the first context.
	inNewContext(t, "opencl:"+infos[0].ID, func(dev *engine.Device, q *engine.Queue) {
		prog, err := dev.Build(raceSource)
		if err != nil {
			t.Fatal(err)
		}
		k, err := prog.Kernel("race")
		if err != nil {
			t.Fatal(err)
		}
		out, err := engine.Upload(t.Context(), q, []int32{-1})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Launch(k, engine.Range1D(n, n), out); err != nil {
			t.Fatal(err)
		}
		got, err := out.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] < 0 || got[0] >= n {
			t.Fatalf("out[0] = %d, want one work-item's id in [0, %d)", got[0], n)
		}
	})
	// A clean kernel in a second context, made after the first was released.
	inNewContext(t, "opencl:"+infos[0].ID, func(dev *engine.Device, q *engine.Queue) {
		k := mustKernel(t, dev, "add_const")
		v, err := engine.Upload(t.Context(), q, []int32{1, 2, 3, 4})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Launch(k, engine.Range1D(n, n), v, int32(10), int32(n)); err != nil {
			t.Fatal(err)
		}
		got, err := v.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range got {
			if want := int32(i + 11); x != want {
				t.Errorf("v[%d] = %d, want %d", i, x, want)
			}
		}
	})
}

// inNewContext opens the device id ("opencl:0:0": a context of its own: no other device of it is open),
// calls f with it and a queue, then closes both.
func inNewContext(t *testing.T, id string, f func(dev *engine.Device, q *engine.Queue)) {
	t.Helper()
	dev, err := engine.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := dev.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	f(dev, q)
}

func TestCompilerOptions(t *testing.T) {
	for _, c := range []struct{ platform, opts, want string }{
		{"Portable Computing Language", "-DWG=64", "-DWG=64"},
		{"rusticl", "", ""},
		{"NVIDIA CUDA", "-cl-fast-relaxed-math", "-cl-fast-relaxed-math"},
		{"Oclgrind", "", "-DPRISM_OCLGRIND=1"},
		{"Oclgrind", "-DWG=64 -DTPR=4", "-DWG=64 -DTPR=4 -DPRISM_OCLGRIND=1"},
	} {
		if got := compilerOptions(c.platform, c.opts); got != c.want {
			t.Errorf("compilerOptions(%q, %q) = %q, want %q", c.platform, c.opts, got, c.want)
		}
	}
}

// oclgrindSource's kernel writes 1 where PRISM_OCLGRIND is defined, and the value of WG.
const oclgrindSource = `
__kernel void defined(__global int* out) {
#ifdef PRISM_OCLGRIND
	out[0] = PRISM_OCLGRIND;
#else
	out[0] = 0;
#endif
	out[1] = WG;
}
`

// TestOclgrindDefine checks that Build defines PRISM_OCLGRIND on Oclgrind only, after the
// options given.
func TestOclgrindDefine(t *testing.T) {
	oclgrind := underOclgrind(testDevices(t))
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		prog, err := dev.Build(oclgrindSource, "-DWG=7")
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()
		k, err := prog.Kernel("defined")
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		q := newTestQueue(t, dev)
		out, err := engine.Upload(t.Context(), q, []int32{-1, -1})
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		if err := q.Launch(k, engine.Range1D(1, 1), out); err != nil {
			t.Fatal(err)
		}
		got, err := out.Download(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		want := []int32{0, 7}
		if oclgrind {
			want[0] = 1
		}
		if got[0] != want[0] || got[1] != want[1] {
			t.Errorf("PRISM_OCLGRIND, WG = %d, %d; want %d, %d (Oclgrind: %v)", got[0], got[1], want[0], want[1], oclgrind)
		}
	})
}
