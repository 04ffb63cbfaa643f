package userkernel

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
)

// Launch is a kernel of the user's and how to run it.
type Launch struct {
	File         string   // names the source in messages and in the build
	Source       string   // OpenCL C
	Kernel       string   // the kernel function to launch
	BuildOptions []string // -D NAME=VALUE and the like
	Args         []*Arg   // one per kernel parameter, in order
	// Global is the launch's global size, 1 to 3 dimensions; Local its work-group size in
	// as many, nil (or engine.Auto in a dimension) to let the launch choose it
	// (engine.Auto, Kernel.Resolve).
	Global, Local []int
	Warmup, Count int // untimed and timed runs after the first
	// SaveDir is the directory where the outputs are written, NAME.DEVICE.npy (the device
	// ID with '-' for ':'); "" writes none.
	SaveDir string
	// Guard gives every buffer argument a guard band after its data, checked after the
	// first run (guard.go): a write past a buffer's end is an *OverrunError, and nothing
	// is saved or timed.
	Guard bool
}

// Result is the outcome of a Launch on one device.
type Result struct {
	Device  string      `json:"device"`
	Name    string      `json:"device_name"`
	Local   []int       `json:"local,omitempty"`  // the work-group size that ran
	Timing  string      `json:"timing,omitempty"` // bench.TimingEvents or TimingHost
	Stats   bench.Stats `json:"stats"`
	Outputs []Output    `json:"outputs,omitempty"`
	Err     string      `json:"error,omitempty"` // for the caller to fill

	// Data holds the outputs after the first run, in argument order (Outputs of Args).
	Data [][]byte `json:"-"`
}

// Output is an output argument and the file it was written to.
type Output struct {
	Name string `json:"name"`
	Arg  int    `json:"arg"`
	Type string `json:"type"`
	Len  int    `json:"elements"`
	File string `json:"file,omitempty"`
}

// FitError is the error of a launch whose arguments or range do not fit the kernel
// (engine.ErrInvalidArg from the launch or from choosing its work-group size): the input
// given, not the device, is at fault.
type FitError struct{ Err error }

func (e *FitError) Error() string { return e.Err.Error() }
func (e *FitError) Unwrap() error { return e.Err }

// fitError returns err as a *FitError where it wraps engine.ErrInvalidArg.
func fitError(err error) error {
	if errors.Is(err, engine.ErrInvalidArg) {
		return &FitError{err}
	}
	return err
}

// Run builds l's kernel on dev, runs it once from the arguments' initial values, keeps
// and writes its outputs, then times it: l.Warmup untimed runs, l.Count timed by device
// events (the host's clock where the device has none). The result names the device and
// the work-group size chosen; it holds what was done when the error is not nil. A build
// error is an *engine.BuildError with the compiler's log in its message; a kernel the
// program does not define wraps engine.ErrNotFound; arguments or a range that do not fit
// the kernel, or a range the device cannot run (CheckRange), give a *FitError; buffers
// the device cannot hold (CheckDevice) an *ArgError wrapping engine.ErrOutOfMemory,
// before any is made.
func Run(ctx context.Context, dev *engine.Device, l *Launch) (Result, error) {
	res := Result{Device: dev.ID(), Name: dev.Info().Name}
	prog, err := dev.BuildSourceContext(ctx, engine.Source{Text: l.Source, Name: filepath.Base(l.File)}, l.BuildOptions...)
	if err != nil {
		var be *engine.BuildError
		if errors.As(err, &be) && !strings.Contains(err.Error(), be.Log) {
			return res, fmt.Errorf("%s on %s: %w\ncompiler log:\n%s", l.File, dev.ID(), err, be.Log)
		}
		return res, fmt.Errorf("%s on %s: %w", l.File, dev.ID(), err)
	}
	defer prog.Close()
	k, err := prog.Kernel(l.Kernel)
	if err != nil {
		return res, fmt.Errorf("%s on %s: %w", l.File, dev.ID(), err)
	}
	defer k.Close()
	r, err := k.Resolve(launchRange(l.Global, l.Local))
	if err != nil {
		return res, fitError(err)
	}
	if err := CheckRange(dev, r); err != nil {
		return res, err
	}
	if err := CheckDevice(dev, l.Args); err != nil {
		return res, err
	}
	res.Local = r.Local[:r.Dims]
	q, err := dev.NewQueue()
	if err != nil {
		return res, err
	}
	defer q.Close()
	launch := make([]any, len(l.Args))
	bufs := make([]*engine.Buffer[uint8], len(l.Args))
	guards := make([]*guard, len(l.Args))
	defer func() {
		for _, b := range bufs {
			if b != nil {
				b.Close()
			}
		}
	}()
	for i, a := range l.Args {
		switch a.Kind {
		case Scalar:
			launch[i] = a.Value
		case Local:
			launch[i] = engine.LocalBytes(a.Bytes)
		default:
			data, band := a.Len*a.Type.Size, 0
			if l.Guard {
				band = guardBytes(dev, data)
			}
			if bufs[i], err = engine.NewBuffer[uint8](dev, data+band); err != nil {
				return res, err
			}
			if err := bufs[i].Write(ctx, q, 0, a.Init); err != nil {
				return res, err
			}
			if band > 0 {
				guards[i] = &guard{arg: a, offset: data, want: canary(i, band)}
				if err := guards[i].fill(ctx, q, bufs[i]); err != nil {
					return res, err
				}
			}
			launch[i] = bufs[i]
		}
	}
	if err := q.Launch(k, r, launch...); err != nil {
		return res, fitError(err)
	}
	if err := q.Finish(ctx); err != nil {
		if ctx.Err() != nil {
			return res, err
		}
		// A GPU driver reports a kernel's fault (an access out of its buffers, most often)
		// at the next wait, in its own words (NVIDIA's OpenCL: CL_INVALID_COMMAND_QUEUE).
		return res, &FaultError{Device: dev.ID(), Err: err}
	}
	if err := checkGuards(ctx, q, guards, bufs, dev.ID()); err != nil {
		return res, err
	}
	for i, a := range l.Args {
		if !a.Saved() {
			continue
		}
		data, err := bufs[i].Download(ctx, q)
		if err != nil {
			return res, err
		}
		data = data[:a.Len*a.Type.Size] // without its guard band
		res.Data = append(res.Data, data)
		out := Output{Name: a.Name, Arg: i, Type: a.Type.Name, Len: a.Len}
		if l.SaveDir != "" {
			out.File = filepath.Join(l.SaveDir, a.Name+"."+strings.ReplaceAll(dev.ID(), ":", "-")+".npy")
			if err := bench.WriteFileAtomic(out.File, EncodeNPY(a.Type, data)); err != nil {
				return res, err
			}
		}
		res.Outputs = append(res.Outputs, out)
	}
	for range l.Warmup {
		if err := q.Launch(k, r, launch...); err != nil {
			return res, err
		}
	}
	if err := q.Finish(ctx); err != nil {
		return res, err
	}
	var samples []time.Duration
	res.Timing = bench.TimingEvents
	for range l.Count {
		d, err := q.Timed(ctx, func() error { return q.Launch(k, r, launch...) })
		if err != nil {
			return res, err
		}
		if q.TimedByHost() {
			res.Timing = bench.TimingHost
		}
		samples = append(samples, d)
	}
	if len(samples) == 0 {
		res.Timing = ""
	}
	res.Stats = bench.Summarize(samples)
	res.Stats.Samples = nil
	return res, nil
}

// launchRange returns the range of global and local sizes, engine.Auto in every
// dimension local does not give.
func launchRange(global, local []int) engine.Range {
	l := make([]int, len(global))
	for i := range l {
		l[i] = engine.Auto
		if i < len(local) {
			l[i] = local[i]
		}
	}
	switch len(global) {
	case 1:
		return engine.Range1D(global[0], l[0])
	case 2:
		return engine.Range2D(global[0], global[1], l[0], l[1])
	}
	return engine.Range3D(global[0], global[1], global[2], l[0], l[1], l[2])
}

// ErrFault is wrapped by a FaultError: the kernel ran, and the device faulted.
var ErrFault = errors.New("device fault")

// FaultError is a device's fault during a kernel's run, reported by its driver at the next
// wait: the kernel ran (its summary is written), and most often accessed memory out of its
// buffers.
type FaultError struct {
	Device string
	Err    error // the driver's error at the wait
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("the kernel's run failed on %s (%v): a device fault, most often an access out of its buffers; run with --check to find it", e.Device, e.Err)
}

// Unwrap gives the driver's error and ErrFault.
func (e *FaultError) Unwrap() []error { return []error{e.Err, ErrFault} }
