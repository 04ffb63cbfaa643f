package main

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/userkernel"
	"github.com/prism-compute/prism/engine"
)

// The device run of prism exec in a child process. A kernel that writes far past its
// buffers can corrupt the OpenCL driver's heap, and the driver then ends the process:
// PoCL 3.1 with SIGSEGV or SIGABRT ("corrupted double-linked list", "double free or
// corruption"), where prism would print nothing of what happened. So prism exec runs each
// device's launch in a child, the same prism started as `prism exec --device-child` with
// the job on its standard input (gob); the child builds, runs and times the kernel as the
// command itself did (execOn), writes the outputs' .npy files, and sends back its
// userkernel.Result, the outputs' data and its error on file descriptor 3. A child that
// dies instead is reported by the signal that ended it. The timings are the child's
// device events, as before; what the child costs is its start, the device's opening and
// the program's build once more (PoCL answers it from its cache).

// childJob is what the child runs: a device, and the launch of one prism exec run.
type childJob struct {
	Device       string
	File, Source string
	Kernel       string
	BuildOptions []string
	Specs        []string // the --arg specs, parsed again by the child from Seed
	Params       []string // the kernel parameters' names, by argument
	Seed         uint64
	Global       []int
	Local        []int
	Warmup       int
	Count        int
	SaveDir      string
	Guard        bool
	Expr         bool
}

// childHello is what the child sends first, once its device is open: the facts the
// command records, kept when the run then ends the child.
type childHello struct {
	Info    engine.DeviceInfo
	Backend string
	Builds  bool // the device builds OpenCL C
}

// childReply is what the child sends back after the run.
type childReply struct {
	Result userkernel.Result
	Err    string   // the error's message; "" for none
	Usage  bool     // the error is a usage error (exit 2)
	Is     []string // the sentinels the error wraps, by name (childSentinels)
	Log    string   // a build error's compiler log
}

// childSentinels are the errors whose identity crosses from the child to the command, so
// that its exit code is the one an error in the command's own process gives.
var childSentinels = []struct {
	name string
	err  error
}{
	{"verify", bench.ErrVerify},
	{"fault", userkernel.ErrFault},
	{"unavailable", engine.ErrUnavailable},
	{"unsupported", engine.ErrUnsupported},
	{"oom", engine.ErrOutOfMemory},
	{"notfound", engine.ErrNotFound},
	{"invalid", engine.ErrInvalidArg},
	{"canceled", context.Canceled},
	{"deadline", context.DeadlineExceeded},
}

// childError is an error of the child, rebuilt in the command: its message, and the
// sentinels (and the build error) it wrapped.
type childError struct {
	msg  string
	errs []error
}

func (e *childError) Error() string   { return e.msg }
func (e *childError) Unwrap() []error { return e.errs }

// sentinelNames names the childSentinels that err wraps.
func sentinelNames(err error) []string {
	var names []string
	for _, s := range childSentinels {
		if errors.Is(err, s.err) {
			names = append(names, s.name)
		}
	}
	return names
}

// replyError rebuilds the child's error from its reply.
func replyError(r *childReply) error {
	if r.Err == "" {
		return nil
	}
	e := &childError{msg: r.Err}
	for _, name := range r.Is {
		for _, s := range childSentinels {
			if s.name == name {
				e.errs = append(e.errs, s.err)
			}
		}
	}
	if r.Log != "" || strings.Contains(r.Err, "build failed on ") {
		e.errs = append(e.errs, &engine.BuildError{Device: r.Result.Name, Log: r.Log})
	}
	if r.Usage {
		return usageError{e}
	}
	return e
}

// selfCommand returns the command that starts this program with args. A variable, for the
// tests, whose binary is not prism.
var selfCommand = func(args ...string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find prism's own executable to run the device in a child: %w", err)
	}
	return exec.Command(self, args...), nil
}

// childFlag is the hidden flag of prism exec that makes it the child of a device run.
const childFlag = "device-child"

// runChild is prism exec --device-child: it reads a childJob from stdin, runs it and
// writes the childReply to file descriptor 3.
func runChild(cmd *cobra.Command) error {
	var job childJob
	if err := gob.NewDecoder(os.Stdin).Decode(&job); err != nil {
		return fmt.Errorf("--%s: reading the job: %w", childFlag, err)
	}
	out := os.NewFile(3, "reply")
	if out == nil {
		return fmt.Errorf("--%s: no reply descriptor (3)", childFlag)
	}
	defer out.Close()
	enc := gob.NewEncoder(out)
	reply := childRun(cmd.Context(), &job, func(h *childHello) error { return enc.Encode(h) })
	if cmd.Context().Err() != nil && reply.Result.Local == nil {
		// Interrupted before the launch, perhaps in a build it abandoned: file descriptor
		// 2 may still be the OpenCL backend's capture of the compiler's output, whose
		// lines (the signal's note, the abandoned build's trace) reach stderr through a
		// goroutine. Give it the time to pass them on before the process exits.
		time.Sleep(200 * time.Millisecond)
	}
	return enc.Encode(reply)
}

// childRun runs job on its device, as the command's own process would, calling hello
// with the device's facts once it is open (nil when it did not open, or does not build
// OpenCL C, which the reply then says).
func childRun(ctx context.Context, job *childJob, hello func(*childHello) error) *childReply {
	reply := &childReply{Result: userkernel.Result{Device: job.Device}}
	fail := func(err error) *childReply {
		reply.Err = err.Error()
		var ue usageError
		reply.Usage = errors.As(err, &ue)
		reply.Is = sentinelNames(err)
		var be *engine.BuildError
		if errors.As(err, &be) {
			reply.Log = be.Log
		}
		return reply
	}
	args, err := userkernel.ParseArgs(job.Specs, job.Kernel, job.Seed)
	if err != nil {
		return fail(err)
	}
	for i, a := range args {
		if i < len(job.Params) {
			a.Param = job.Params[i]
		}
	}
	dev, err := engine.Open(ctx, job.Device)
	if err != nil {
		hello(&childHello{})
		return fail(err)
	}
	defer dev.Close()
	reply.Result.Name = dev.Info().Name
	if err := hello(&childHello{Info: dev.Info(), Backend: dev.Backend(), Builds: dev.Builds(engine.DialectOpenCL)}); err != nil {
		return fail(err)
	}
	if !dev.Builds(engine.DialectOpenCL) {
		return fail(fmt.Errorf("%s does not build OpenCL C: %w", job.Device, engine.ErrUnsupported))
	}
	l := &userkernel.Launch{File: job.File, Source: job.Source, Kernel: job.Kernel, BuildOptions: job.BuildOptions, Args: args,
		Global: job.Global, Local: job.Local, Warmup: job.Warmup, Count: job.Count, SaveDir: job.SaveDir, Guard: job.Guard}
	res, err := execOn(ctx, dev, l, job.Expr)
	reply.Result = res
	if err != nil {
		return fail(err)
	}
	return reply
}

// childOptions are how the command starts a child: under a wrapper (oclgrind) and with
// environment variables of its own.
type childOptions struct {
	wrapper []string // a program and its flags to run the child under
	env     []string
	stderr  io.Writer // where the child's stderr goes besides the command's; nil: none
}

// crashError is the error of a device run whose child died.
type crashError struct {
	device string
	signal string // SIGSEGV, SIGABRT, ...; "" when it exited without a reply
	code   int
}

func (e *crashError) Error() string {
	driver := "OpenCL"
	if strings.HasPrefix(e.device, "cuda") {
		driver = "CUDA"
	}
	if e.signal == "" {
		return fmt.Sprintf("the kernel's run on %s ended without a result (exit %d): the %s driver may have ended the process; run with --check to find an access out of its buffers", e.device, e.code, driver)
	}
	return fmt.Sprintf("the kernel crashed the %s driver (%s) on %s: likely an access out of its buffers; run with --check to find it", driver, e.signal, e.device)
}

// execInChild runs job in a child process and returns its result, the device's facts
// (Info.ID empty when the device did not open) and the error, a *crashError when the
// child died. The child's stdout is the command's (a kernel's printf
// goes where it went before); its stderr goes to the command's stderr. When ctx ends the
// child gets SIGINT, as a first signal, and SIGKILL 5 s later; it dies with the command.
func execInChild(ctx context.Context, cmd *cobra.Command, job *childJob, o childOptions) (userkernel.Result, childHello, error) {
	res := userkernel.Result{Device: job.Device}
	var hello childHello
	c, err := selfCommand("exec", "--"+childFlag)
	if err != nil {
		return res, hello, err
	}
	if len(o.wrapper) > 0 {
		c.Args = append(append(o.wrapper[:len(o.wrapper):len(o.wrapper)], c.Path), c.Args[1:]...)
		c.Path = o.wrapper[0]
	}
	c.Env = append(childEnv(c.Env), o.env...)
	var in bytes.Buffer
	if err := gob.NewEncoder(&in).Encode(job); err != nil {
		return res, hello, err
	}
	c.Stdin = &in
	c.Stdout = os.Stdout
	tail := &tailBuffer{max: 64 << 10}
	errOut := io.Writer(cmd.ErrOrStderr())
	if o.stderr != nil {
		errOut = o.stderr
	}
	c.Stderr = io.MultiWriter(errOut, tail)
	pr, pw, err := os.Pipe()
	if err != nil {
		return res, hello, fmt.Errorf("the pipe of the child's reply: %w", err)
	}
	defer pr.Close()
	c.ExtraFiles = []*os.File{pw}
	// A process group of its own: a terminal's Ctrl-C reaches the command alone, which
	// passes one SIGINT on (two would make the child exit at once, without its reply).
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := c.Start(); err != nil {
		pw.Close()
		return res, hello, fmt.Errorf("starting the child of the device run (%s): %w", c.Path, err)
	}
	pw.Close()
	stop := context.AfterFunc(ctx, func() {
		c.Process.Signal(syscall.SIGINT)
		time.AfterFunc(5*time.Second, func() { c.Process.Kill() })
	})
	defer stop()
	var reply childReply
	var derr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		dec := gob.NewDecoder(pr)
		if derr = dec.Decode(&hello); derr == nil {
			derr = dec.Decode(&reply)
		}
		io.Copy(io.Discard, pr)
	}()
	werr := c.Wait()
	wg.Wait()
	if derr == nil {
		return reply.Result, hello, replyError(&reply)
	}
	ce := &crashError{device: job.Device, code: c.ProcessState.ExitCode()}
	if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		ce.signal = signalText(ws.Signal())
	} else if s := goFatalSignal(tail.String()); s != "" {
		ce.signal = s // the Go runtime caught it in a cgo call and exited 2
	} else if werr == nil {
		ce.code = 0
	}
	if hello.Info.Name != "" {
		res.Name = hello.Info.Name
	}
	return res, hello, ce
}

// childEnv returns the environment of a child: the command's, with GOTRACEBACK=none unless
// it is set or PRISM_TRACE is on, so that a driver's crash in the child prints the signal
// and not every goroutine's stack.
func childEnv(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	if os.Getenv("GOTRACEBACK") == "" && !engine.Tracing() {
		env = append(env, "GOTRACEBACK=none")
	}
	return env
}

// signalText names a signal as kill -l does, SIGSEGV.
func signalText(s syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS",
		syscall.SIGILL: "SIGILL", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM",
		syscall.SIGINT: "SIGINT", syscall.SIGTRAP: "SIGTRAP", syscall.SIGSYS: "SIGSYS"}
	if n, ok := names[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d, %v", int(s), s)
}

// goFatalSignal returns the signal of a Go runtime's fatal signal report in stderr
// ("[signal SIGSEGV: segmentation violation ...]", "SIGABRT: abort"), or "".
func goFatalSignal(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "[signal "); ok {
			if i := strings.IndexAny(rest, ": "); i > 0 {
				return rest[:i]
			}
		}
		if name, _, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(name, "SIG") && !strings.Contains(name, " ") {
			return name
		}
	}
	return ""
}

// tailBuffer keeps the last max bytes written to it. It is safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
