package group

import (
	"context"
	"fmt"
	"time"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/engine/driver"
)

// The all-reduce of one device per process through a segment the device has
// page-locked: the devices reduce, not the host. Process me owns the elements
// [me*count/procs, (me+1)*count/procs) (its range):
//
//  1. its device copies the ranges the other processes own of its send into its part of
//     the segment; barrier;
//  2. its device copies the other processes' parts of its own range out of the segment
//     into scratch beside its own (rank order), reduces them in rank order into its
//     recv's range (one kernel), and copies that range into the result of the segment;
//     barrier;
//  3. its device copies the other ranges of the result into its recv.
//
// Each process's host memory sees its device's copies only, about two passes of the
// vector in all, where the host's reduction (allReduceShared) adds a pass of every part
// and of the result on the host's cores: on two H200 of one host the host summed about
// 8 GB/s a process and held a 1 GiB all-reduce to 4.4 GB/s (2026-11-29). The sums
// are those of the host's reduction: the parts in rank order, element by element.

// deviceReduce is a group's state for reducing on its device: the kernels built, by
// element type and reduction, and the scratch of the parts.
type deviceReduce struct {
	dev     *engine.Device
	prog    map[string]*engine.Program
	kernels map[string]*engine.Kernel
	// agreed says, by kernel, whether every process built it (deviceReduceAgreed).
	agreed  map[string]bool
	scratch any // *engine.Buffer[T] of the last collective's T
}

func (d *deviceReduce) close() {
	if d == nil {
		return
	}
	for _, k := range d.kernels {
		k.Close()
	}
	for _, p := range d.prog {
		p.Close()
	}
	if c, ok := d.scratch.(interface{ Close() error }); ok {
		c.Close()
	}
}

// reduceSource is the kernel of the device's reduction: r[roff + i] = the reduction of
// parts[p*n + i] over p in order, as reduceRange computes it (max and min as Go's: a NaN
// wins, +0 above -0). GROUP_T, GROUP_OP (0 sum, 1 product, 2 max, 3 min) and GROUP_FLOAT (a
// floating type) are given at build (names of their own: NVRTC's headers use T).
const reduceSource = `
#ifdef GROUP_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if GROUP_OP == 0
#define RED(a, b) ((a) + (b))
#elif GROUP_OP == 1
#define RED(a, b) ((a) * (b))
#elif GROUP_FLOAT
#if GROUP_OP == 2
#define RED(a, b) (isnan(a) ? (a) : isnan(b) ? (b) : (a) == (b) ? (signbit(a) ? (b) : (a)) : (a) > (b) ? (a) : (b))
#else
#define RED(a, b) (isnan(a) ? (a) : isnan(b) ? (b) : (a) == (b) ? (signbit(a) ? (a) : (b)) : (a) < (b) ? (a) : (b))
#endif
#elif GROUP_OP == 2
#define RED(a, b) ((a) > (b) ? (a) : (b))
#else
#define RED(a, b) ((a) < (b) ? (a) : (b))
#endif
__kernel void group_reduce(__global GROUP_T *r, ulong roff, __global const GROUP_T *parts, ulong n, uint procs) {
    const ulong i = get_global_id(0);
    if (i >= n) return;
    GROUP_T acc = parts[i];
    for (uint p = 1; p < procs; p++) acc = RED(acc, parts[(ulong)p * n + i]);
    r[roff + i] = acc;
}
`

// deviceReduceAgreed builds the kernel reducing T with op on dev where it was not built yet
// and reports whether every process of the group has it, all processes alike (the first
// time for each type and reduction, through MPI): where any could not build it (a device
// without float64, a compiler's refusal), every process reduces on the host instead, and
// PRISM_TRACE says why. The processes run the same collectives in the same order, so
// that they agree on the same kernels in turn.
func deviceReduceAgreed[T CollectiveScalar](g *Group, dev *engine.Device, op ReduceOp) (bool, error) {
	key := reduceKey[T](op)
	if g.dred != nil && g.dred.dev == dev {
		if ok, done := g.dred.agreed[key]; done {
			return ok, nil
		}
	}
	_, err := reduceKernel[T](g, dev, op)
	flag := []int32{1}
	if err != nil {
		flag[0] = 0
		engine.Tracef("group: the all-reduce's %s reduces on the host: %v", key, err)
	}
	if err := g.mpi.AllReduce(asBytes(flag), driver.CollInt32, ReduceMin); err != nil {
		return false, err
	}
	g.dred.agreed[key] = flag[0] == 1
	return flag[0] == 1, nil
}

// reduceKey names the reduction of T with op ("float/0").
func reduceKey[T CollectiveScalar](op ReduceOp) string {
	ctype, _ := cType[T]()
	return fmt.Sprintf("%s/%d", ctype, op)
}

// cType returns the OpenCL C type of T and whether it is a floating type.
func cType[T CollectiveScalar]() (string, bool) {
	var z T
	switch any(z).(type) {
	case float32:
		return "float", true
	case float64:
		return "double", true
	case int32:
		return "int", false
	case uint32:
		return "uint", false
	case int64:
		return "long", false
	}
	return "ulong", false
}

// reduceKernel returns the group's kernel reducing T with op on dev, building it on first
// use (a failed build is tried again at the next call).
func reduceKernel[T CollectiveScalar](g *Group, dev *engine.Device, op ReduceOp) (*engine.Kernel, error) {
	if g.dred == nil || g.dred.dev != dev {
		g.dred.close()
		g.dred = &deviceReduce{dev: dev, prog: map[string]*engine.Program{}, kernels: map[string]*engine.Kernel{}, agreed: map[string]bool{}}
	}
	ctype, float := cType[T]()
	var code int
	switch op {
	case ReduceSum:
		code = 0
	case ReduceProd:
		code = 1
	case ReduceMax:
		code = 2
	case ReduceMin:
		code = 3
	default:
		return nil, fmt.Errorf("reduction %v: %w", op, engine.ErrInvalidArg)
	}
	key := reduceKey[T](op)
	if k := g.dred.kernels[key]; k != nil {
		return k, nil
	}
	if failDeviceBuild {
		return nil, fmt.Errorf("building the reduction of %s: refused for the test: %w", ctype, engine.ErrUnsupported)
	}
	opts := []string{"-DGROUP_T=" + ctype, fmt.Sprintf("-DGROUP_OP=%d", code), fmt.Sprintf("-DGROUP_FLOAT=%d", b2i(float))}
	if ctype == "double" {
		opts = append(opts, "-DGROUP_FP64")
	}
	prog, err := dev.Build(reduceSource, opts...)
	if err != nil {
		return nil, fmt.Errorf("building the reduction of %s: %w", ctype, err)
	}
	k, err := prog.Kernel("group_reduce")
	if err != nil {
		prog.Close()
		return nil, err
	}
	g.dred.prog[key], g.dred.kernels[key] = prog, k
	return k, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reduceScratch returns the group's scratch of at least n elements of T on dev.
func reduceScratch[T CollectiveScalar](g *Group, dev *engine.Device, n int) (*engine.Buffer[T], error) {
	if b, ok := g.dred.scratch.(*engine.Buffer[T]); ok && b.Len() >= n {
		return b, nil
	}
	if c, ok := g.dred.scratch.(interface{ Close() error }); ok {
		if err := c.Close(); err != nil {
			return nil, err
		}
	}
	g.dred.scratch = nil
	b, err := engine.NewBuffer[T](dev, n)
	if err != nil {
		return nil, err
	}
	g.dred.scratch = b
	return b, nil
}

// allReduceOnDevice is the all-reduce of one device per process, reduced on the device
// (see above). send may be recv.
func allReduceOnDevice[T CollectiveScalar](ctx context.Context, g *Group, q *engine.Queue, send, recv *engine.Buffer[T], op ReduceOp, count int) error {
	procs, me, seg := g.mpi.Size(), g.mpi.Rank(), g.shm
	span := func(p int) (int, int) { return p * count / procs, (p + 1) * count / procs }
	mine := sharedSlice[T](seg, me*count, count)
	result := sharedSlice[T](seg, procs*count, count)
	start := time.Now()
	var in, reduce, out time.Duration // the trace's (PRISM_TRACE)
	t := start
	for p := range procs {
		if a, b := span(p); p != me && a < b {
			if err := send.Read(ctx, q, a, mine[a:b]); err != nil {
				return err
			}
		}
	}
	t = lap(&in, t)
	if err := g.mpi.Barrier(); err != nil {
		return err
	}
	t = time.Now()
	lo, hi := span(me)
	if hi > lo {
		dev := q.Device()
		k, err := reduceKernel[T](g, dev, op)
		if err != nil {
			return err
		}
		// The range in pieces of at most deviceChunk bytes a part, so that the scratch
		// holds procs pieces, not procs ranges.
		step := min(hi-lo, max(1, deviceChunk/engine.SizeOf[T]()))
		scratch, err := reduceScratch[T](g, dev, procs*step)
		if err != nil {
			return err
		}
		for a := lo; a < hi; a += step {
			n := min(step, hi-a)
			for p := range procs {
				if p == me {
					err = scratch.CopyFrom(q, p*n, send, a, n)
				} else {
					err = scratch.Write(ctx, q, p*n, sharedSlice[T](seg, p*count+a, n))
				}
				if err != nil {
					return err
				}
			}
			local := 256 // or fewer where the device allows fewer for the kernel (Rusticl)
			if m := k.Attributes().MaxWorkGroupSize; m > 0 && m < local {
				local = m
			}
			if err := q.Launch(k, engine.Range1D((n+local-1)/local*local, local), recv, uint64(a), scratch, uint64(n), uint32(procs)); err != nil {
				return err
			}
			if err := recv.Read(ctx, q, a, result[a:a+n]); err != nil {
				return err
			}
		}
	}
	t = lap(&reduce, t)
	if err := g.mpi.Barrier(); err != nil {
		return err
	}
	t = time.Now()
	for p := range procs {
		if a, b := span(p); p != me && a < b {
			if err := recv.Write(ctx, q, a, result[a:b]); err != nil {
				return err
			}
		}
	}
	lap(&out, t)
	if engine.Tracing() {
		engine.Tracef("group: all-reduce of %d bytes through shared memory, reduced on %s in %v: the parts in %v, the range reduced and out %v, the results in %v",
			count*engine.SizeOf[T](), q.Device().ID(), time.Since(start), in, reduce, out)
	}
	return nil
}

// reduceOnDevice says whether the all-reduce of one device per process reduces on the
// device: where the device page-locked the segment (its copies run at the bus's speed),
// or where the tests ask for it.
func reduceOnDevice(g *Group, kind driver.CollectiveKind) bool {
	return kind == driver.AllReduce && len(g.devs) == 1 && (g.shm.pin != nil && !forceBounce || forceDevice)
}

// deviceChunk is the most bytes of each part a device reduces at once (its scratch holds
// one piece of every process's part). A variable for the tests.
var deviceChunk = 64 << 20

// failDeviceBuild makes every build of a reduction kernel fail in this process (the tests).
var failDeviceBuild = false

// forceDevice reduces a shared all-reduce on the device where the segment is not
// page-locked (the tests, on devices that page-lock nothing).
var forceDevice = false
