//go:build !noopencl

package cl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	ocl "github.com/jgillich/go-opencl/cl"
	"github.com/prism-compute/prism/engine"
)

// commandBufferSupport reports whether q's device records graphs into command buffers,
// and if not, why.
func commandBufferSupport(t *testing.T, q *engine.Queue) error {
	t.Helper()
	dq, err := q.DriverQueue("a test's query")
	if err != nil {
		t.Fatal(err)
	}
	cq := dq.(*queue)
	return cq.th.Call(func() error { _, err := cq.commandBuffers(); return err })
}

// skipRecordedUnderOclgrind skips a test of graphs that fill a buffer a kernel then reads
// where the device has no command buffers and the run is Oclgrind's (small sizes): such a
// graph is engine's recording, which TestConformance's Graphs cases check, and Oclgrind
// 21.10 reports the values a replayed fill stored as uninitialized, though every element
// checks.
func skipRecordedUnderOclgrind(t *testing.T, support error) {
	t.Helper()
	if support != nil && small() {
		t.Skipf("no command buffers here (%v): engine's recording is TestConformance's", support)
	}
}

// newInts returns a buffer of n zeros, closed when the test ends.
func newInts(t *testing.T, dev *engine.Device, q *engine.Queue, n int) *engine.Buffer[int32] {
	t.Helper()
	b, err := engine.NewBuffer[int32](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.Fill(q, 0, n, 0); err != nil {
		t.Fatal(err)
	}
	return b
}

// readInts reads a whole buffer.
func readInts(t *testing.T, q *engine.Queue, b *engine.Buffer[int32]) []int32 {
	t.Helper()
	out := make([]int32, b.Len())
	if err := b.Read(t.Context(), q, 0, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantAll fails unless every element of got is want.
func wantAll(t *testing.T, what string, got []int32, want int32) {
	t.Helper()
	for i, v := range got {
		if v != want {
			t.Fatalf("%s[%d] = %d, want %d (all %d elements)", what, i, v, want, len(got))
		}
	}
}

// TestCommandBufferGraph captures launches of one kernel with a different argument each,
// a fill and a copy, launches the graph three times back to back and checks the counts,
// with and without simultaneous use. Where the device has cl_khr_command_buffer the graph
// must be one command buffer; elsewhere (Rusticl, Oclgrind) engine's recording. A launch
// of the same kernel object between capture and replay must not change what the graph
// runs: PoCL 3.1 reads a recorded kernel's arguments at enqueue time.
func TestCommandBufferGraph(t *testing.T) {
	t.Setenv(EnvCommandBuffer, "1") // off by default
	for _, sequential := range []bool{false, true} {
		name := "simultaneous"
		if sequential {
			name = "sequential"
		}
		t.Run(name, func(t *testing.T) {
			sequentialUseOnly.Store(sequential)
			defer sequentialUseOnly.Store(false)
			forEachDevice(t, func(t *testing.T, dev *engine.Device) {
				ctx := t.Context()
				const n = 300
				k := mustKernel(t, dev, "add_const")
				q, err := dev.NewQueue()
				if err != nil {
					t.Fatal(err)
				}
				defer q.Close()
				support := commandBufferSupport(t, q)
				t.Logf("command buffers: %v", support)
				skipRecordedUnderOclgrind(t, support)
				v, w, u, other := newInts(t, dev, q, n), newInts(t, dev, q, n), newInts(t, dev, q, n), newInts(t, dev, q, n)
				r := engine.Range1D(engine.RoundUp(n, 32), 32)
				before := commandBuffersRecorded.Load()
				g, err := q.Capture(func() error {
					// u = 7 + 1; v += 1 + 2 + 3 + 4 + 5; w = v.
					if err := u.Fill(q, 0, n, 7); err != nil {
						return err
					}
					if err := q.Launch(k, r, u, int32(1), int32(n)); err != nil {
						return err
					}
					for c := int32(1); c <= 5; c++ {
						if err := q.Launch(k, r, v, c, int32(n)); err != nil {
							return err
						}
					}
					return w.CopyFrom(q, 0, v, 0, n)
				})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				if g.Len() != 8 {
					t.Errorf("Len() = %d, want 8", g.Len())
				}
				recorded := commandBuffersRecorded.Load() - before
				if want := int64(0); support == nil && recorded != 1 || support != nil && recorded != want {
					t.Errorf("%d command buffers recorded; the device's support: %v", recorded, support)
				}
				// The kernel object's arguments change after the capture.
				if err := q.Launch(k, r, other, int32(100), int32(n)); err != nil {
					t.Fatal(err)
				}
				for range 3 {
					if err := g.Launch(q); err != nil {
						t.Fatal(err)
					}
				}
				if err := q.Finish(ctx); err != nil {
					t.Fatal(err)
				}
				wantAll(t, "u", readInts(t, q, u), 8)
				wantAll(t, "v", readInts(t, q, v), 45)
				wantAll(t, "w", readInts(t, q, w), 45)
				wantAll(t, "other", readInts(t, q, other), 100)
				// Timed counts the graph's device time.
				d, err := q.Timed(ctx, func() error { return g.Launch(q) })
				if err != nil || d <= 0 {
					t.Errorf("Timed of the graph: %v, %v", d, err)
				}
				wantAll(t, "w after a timed launch", readInts(t, q, w), 60)
			})
		})
	}
}

// TestCommandBufferOff checks that command buffers are off unless
// PRISM_OPENCL_COMMAND_BUFFER=1 (unset, off and 0 keep engine's recording), and that a graph of more commands than a command buffer holds here does
// too; both run right.
func TestCommandBufferOff(t *testing.T) {
	if small() {
		t.Skip("4097 launches under Oclgrind")
	}
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		k := mustKernel(t, dev, "add_const")
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		for _, c := range []struct {
			name     string
			env      string
			launches int
		}{
			{"unset", "", 10},
			{"off", "off", 10},
			{"0", "0", 10},
			{"on", "1", 10},
			{"too many commands", "1", maxCommandBufferCommands + 1},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Setenv(EnvCommandBuffer, c.env)
				v := newInts(t, dev, q, 64)
				before := commandBuffersRecorded.Load()
				g, err := q.Capture(func() error {
					for range c.launches {
						if err := q.Launch(k, engine.Range1D(64, 32), v, int32(1), int32(64)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				recorded := commandBuffersRecorded.Load() - before
				want := int64(0)
				if c.name == "on" && commandBufferSupport(t, q) == nil {
					want = 1
				}
				if recorded != want {
					t.Errorf("%s=%q, %d launches: %d command buffers recorded, want %d", EnvCommandBuffer, c.env, c.launches, recorded, want)
				}
				if err := g.Launch(q); err != nil {
					t.Fatal(err)
				}
				wantAll(t, "v", readInts(t, q, v), int32(c.launches))
			})
		}
	})
}

// TestCommandBufferClosed checks that a graph recorded into a command buffer refuses to
// launch once a buffer or the kernel it uses is closed, and closes after them.
func TestCommandBufferClosed(t *testing.T) {
	t.Setenv(EnvCommandBuffer, "1") // off by default
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		skipRecordedUnderOclgrind(t, commandBufferSupport(t, q))
		for _, closing := range []string{"buffer", "kernel"} {
			k := mustKernel(t, dev, "add_const")
			v := newInts(t, dev, q, 64)
			g, err := q.Capture(func() error {
				if err := v.Fill(q, 0, 64, 0); err != nil {
					return err
				}
				return q.Launch(k, engine.Range1D(64, 32), v, int32(1), int32(64))
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Launch(q); err != nil {
				t.Fatal(err)
			}
			if err := q.Finish(t.Context()); err != nil {
				t.Fatal(err)
			}
			if closing == "buffer" {
				v.Close()
			} else {
				k.Close()
			}
			if err := g.Launch(q); !errors.Is(err, engine.ErrClosed) || !strings.Contains(err.Error(), closing) {
				t.Errorf("launch of a graph whose %s is closed: %v, want ErrClosed naming it", closing, err)
			}
			if err := g.Close(); err != nil || g.Close() != nil {
				t.Errorf("Close: %v", err)
			}
			if err := g.Launch(q); !errors.Is(err, engine.ErrClosed) {
				t.Errorf("launch of a closed graph: %v", err)
			}
			v.Close()
			k.Close()
		}
	})
}

// TestCommandBufferTimed checks that a timed launch of a graph counts its kernels' device
// time: PoCL 3.1's event of clEnqueueCommandBufferKHR spans only a marker after them.
func TestCommandBufferTimed(t *testing.T) {
	t.Setenv(EnvCommandBuffer, "1") // off by default
	if small() {
		t.Skip("kernels of milliseconds under Oclgrind")
	}
	forEachDevice(t, func(t *testing.T, dev *engine.Device) {
		ctx := t.Context()
		prog, err := dev.Build(`__kernel void spin(__global uint* out, const uint n) {
	uint x = get_global_id(0);
	for (uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u;
	out[get_global_id(0)] = x;
}`)
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()
		k, err := prog.Kernel("spin")
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		q, err := dev.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		out := newInts(t, dev, q, 1)
		launches := func() error {
			for range 4 {
				if err := q.Launch(k, engine.Range1D(1, 1), out, uint32(1<<20)); err != nil {
					return err
				}
			}
			return nil
		}
		g, err := q.Capture(launches)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		// One launch's device time, the least of three: a test package running beside
		// others on a loaded machine may stretch a timing, never shorten it.
		var one time.Duration
		for i := range 3 {
			d, err := q.Timed(ctx, func() error { return q.Launch(k, engine.Range1D(1, 1), out, uint32(1<<20)) })
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 || d < one {
				one = d
			}
		}
		if q.TimedByHost() {
			t.Skip("the device reports no usable event times; Timed measured the host")
		}
		// The graph runs the same kernel four times in order, so its time is about four
		// launches'; the fault this catches (an event that spans only a marker after the
		// commands) reads a few microseconds, a thousandth of one launch. So the bar is
		// one launch, low enough that a load stretching the single launches more than
		// the graph does not cross it, and a reading below it is taken again, up to three
		// times, before it counts.
		var graph time.Duration
		for range 3 {
			if graph, err = q.Timed(ctx, func() error { return g.Launch(q) }); err != nil {
				t.Fatal(err)
			}
			if graph >= one {
				break
			}
		}
		t.Logf("4 launches as a graph: %v; one launch: %v (command buffers: %v)", graph, one, commandBufferSupport(t, q))
		if graph < one {
			t.Errorf("a timed graph of 4 launches took %v, one of its launches alone %v", graph, one)
		}
	})
}

// TestCommandBufferVersion checks which versions of cl_khr_command_buffer are recorded
// into and that the others are refused by name.
func TestCommandBufferVersion(t *testing.T) {
	version := func(major, minor, patch uint32) uint32 { return major<<22 | minor<<12 | patch }
	for _, c := range []struct {
		v    uint32
		ok   bool
		name string
	}{
		{0x9000, true, "0.9.0"}, // PoCL 3.1's
		{version(0, 9, 4), true, "0.9.4"},
		{version(0, 9, 5), false, "0.9.5"},
		{version(0, 9, 8), false, "0.9.8"},
		{version(1, 0, 0), false, "1.0.0"},
		{version(0, 8, 0), false, "0.8.0"},
	} {
		err := commandBufferVersion(c.v)
		if c.ok != (err == nil) || !c.ok && (!errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), c.name)) {
			t.Errorf("version %s (0x%x): %v", c.name, c.v, err)
		}
		if got := versionString(c.v); got != c.name {
			t.Errorf("versionString(0x%x) = %q, want %q", c.v, got, c.name)
		}
	}
}

// BenchmarkEnqueue enqueues an empty kernel 1,000 times back to back (clEnqueueNDRangeKernel
// with no event, as a launch and engine's replay of a recorded graph do) and waits for the
// queue, on a queue with CL_QUEUE_PROFILING_ENABLE (every queue of this package has it, for
// Timed) and on one without, and on the first again with the kernel's argument set before
// each enqueue (clSetKernelArg, as every launch and engine's replay do), and reports the
// time per kernel ("us/kernel") and the host's time per enqueue ("enqueue-us"): what
// profiling and the argument cost a launch, such as the replay of a graph where there are
// no command buffers (NVIDIA's OpenCL).
func BenchmarkEnqueue(b *testing.B) {
	ctx := context.Background()
	drv := &Driver{}
	infos, err := drv.Devices(ctx)
	if err != nil || len(infos) == 0 {
		b.Skipf("no OpenCL device: %v", err)
	}
	for _, info := range infos {
		dd, err := drv.Open(ctx, info.ID)
		if err != nil {
			b.Fatal(err)
		}
		d := dd.(*device)
		err = d.c.thread.Call(func() error {
			prog, err := d.c.ctx.CreateProgramWithSource([]string{"__kernel void empty(__global uint *p) { }"})
			if err != nil {
				return err
			}
			defer prog.Release()
			if err := prog.BuildProgram(nil, ""); err != nil {
				return err
			}
			k, err := prog.CreateKernel("empty")
			if err != nil {
				return err
			}
			defer k.Release()
			buf, err := d.c.ctx.CreateEmptyBuffer(ocl.MemReadWrite, 4)
			if err != nil {
				return err
			}
			defer buf.Release()
			if s := setArgBuffer(k, 0, buf); s != Success {
				return check("clSetKernelArg", s)
			}
			for _, c := range []struct{ profiling, setArgs bool }{{true, false}, {false, false}, {true, true}} {
				var props ocl.CommandQueueProperty
				if c.profiling {
					props = ocl.CommandQueueProfilingEnable
				}
				q, err := d.c.ctx.CreateCommandQueue(d.dev, props)
				if err != nil {
					return err
				}
				var sizes launchSizes
				sizes.set(0, 1, 1)
				name := fmt.Sprintf("opencl:%s/profiling=%v", info.ID, c.profiling)
				if c.setArgs {
					name += "/setargs" // clSetKernelArg before each, as a launch does
				}
				b.Run(name, func(b *testing.B) {
					const kernels = 1000
					var enqueue time.Duration
					for b.Loop() {
						start := time.Now()
						for range kernels {
							if c.setArgs {
								if s := setArgBuffer(k, 0, buf); s != Success {
									b.Fatal(check("clSetKernelArg", s))
								}
							}
							if s := enqueueKernel(q, k, 1, &sizes); s != Success {
								b.Fatal(check("clEnqueueNDRangeKernel", s))
							}
						}
						enqueue += time.Since(start)
						if err := q.Finish(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N*kernels), "us/kernel")
					b.ReportMetric(float64(enqueue.Nanoseconds())/1e3/float64(b.N*kernels), "enqueue-us")
				})
				q.Release()
			}
			return nil
		})
		dd.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
}
