// Command prism runs Prism's kernel suite on the compute devices of this machine: it lists
// them, benchmarks them side by side with verification, and runs single operations.
//
// Run `prism --help` for the commands. Exit codes:
//
//	0    success
//	1    an error (the message says which)
//	2    bad usage (unknown command or flag, bad argument)
//	3    no compute device or backend available
//	4    a result failed verification (prism exec: also a guard band overrun, a --check
//	     finding or an --expect mismatch)
//	5    the device cannot run what was asked (a variant, precision or operation it
//	     lacks); prism bench reports such cases as skipped and goes on
//	6    the results store could not be opened, read or written, or is damaged (a run's
//	     report is written first all the same; the message names the store and the cause)
//	7    prism check --fail-on-regression found a regression, or a case the run failed
//	     (the message lists them)
//	70   an internal error: a bug in Prism (a short "please report" line; PRISM_TRACE=1
//	     prints the stack)
//	124  the time limit of --timeout (bench, run, exec, tune) ended the work, as a signal
//	     would (GNU timeout's code): the partial report was written and says
//	     "interrupted", at the step that was running and that it was the time limit
//	130  interrupted by SIGINT (Ctrl-C), 143 by SIGTERM: the work stopped within about a
//	     second (a kernel that never returns and a compile that runs on are left to the
//	     driver: see docs/RELIABILITY.md), the partial report was written and says
//	     "interrupted"; a second signal exits at once
//
// docs/ARCHITECTURE.md describes the packages the commands are built on.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	_ "github.com/prism-compute/prism/cl"
	_ "github.com/prism-compute/prism/cuda"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/platform"
)

// Exit codes, documented in the package comment and in `prism --help`.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitUnavailable = 3
	exitVerify      = 4
	exitUnsupported = 5   // the device cannot run what was asked: a variant, precision or op
	exitStore       = 6   // the results store cannot be opened, read or written, or is damaged
	exitRegression  = 7   // prism check --fail-on-regression: a series regressed or failed
	exitInternal    = 70  // EX_SOFTWARE of sysexits.h
	exitTimeout     = 124 // --timeout: GNU timeout's code
	exitSIGINT      = 130
	exitSIGTERM     = 143
)

// usageError marks errors that come from bad command-line input.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// interrupted is the cause of the context a signal cancels.
type interrupted struct{ sig os.Signal }

func (e interrupted) Error() string { return "interrupted by " + signalName(e.sig) }

// code returns the exit code of a process ended by the signal: 128 + its number.
func (e interrupted) code() int {
	if e.sig == syscall.SIGTERM {
		return exitSIGTERM
	}
	return exitSIGINT
}

// timedOut is the cause of the context --timeout ends.
type timedOut struct{ limit time.Duration }

func (e timedOut) Error() string { return "time limit of " + e.limit.String() + " reached (--timeout)" }

// addTimeout gives cmd the flag --timeout DURATION, which ends the command's context
// after DURATION as a first signal would (what finished is written, marked interrupted,
// and the exit code is exitTimeout). A duration that does not parse or is not positive
// is a usage error.
func addTimeout(cmd *cobra.Command) {
	var limit time.Duration
	cmd.Flags().DurationVar(&limit, "timeout", 0, "end the work after DURATION (90s, 10m, 1h30m) as a signal would: what finished is written, marked interrupted, and prism exits with code 124")
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if !cmd.Flags().Changed("timeout") {
			return nil
		}
		if limit <= 0 {
			return usageError{fmt.Errorf("--timeout %v: want a positive duration such as 90s, 10m or 1h30m", limit)}
		}
		ctx, cancel := context.WithCancelCause(cmd.Context())
		errOut := cmd.ErrOrStderr()
		time.AfterFunc(limit, func() {
			if ctx.Err() == nil {
				cancel(timedOut{limit})
				fmt.Fprintf(errOut, "prism: time limit of %v reached (--timeout): %s\n", limit, interruptNote())
			}
		})
		cmd.SetContext(ctx)
		return nil
	}
}

// interruptedAtStep returns step, the step a report says was running when its context ended,
// with the time limit named when --timeout ended it.
func interruptedAtStep(ctx context.Context, step string) string {
	var t timedOut
	if errors.As(context.Cause(ctx), &t) {
		return step + " (--timeout " + t.limit.String() + ")"
	}
	return step
}

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// onInterrupt is what the first SIGINT or SIGTERM is said to do: a command that does not
// measure (prism serve) says its own.
var onInterrupt atomic.Pointer[string]

// interruptNote returns what the first signal does, for its line on stderr.
func interruptNote() string {
	if p := onInterrupt.Load(); p != nil {
		return *p
	}
	return "stopping at the next check and writing what was done"
}

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		first := <-sigs
		cancel(interrupted{first})
		fmt.Fprintf(os.Stderr, "prism: %s: %s (again to exit at once)\n", signalName(first), interruptNote())
		second := <-sigs
		bench.RemoveTemps() // a file being written is left as it was, without a half-written twin
		os.Exit(interrupted{second}.code())
	}()
	os.Exit(run(ctx, os.Args[1:]))
}

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string) int { return runRoot(ctx, newRootCmd(), args) }

// runRoot executes args with root and returns the exit code. A panic in a command is
// recovered into exitInternal with a short message (the stack under PRISM_TRACE).
func runRoot(ctx context.Context, root *cobra.Command, args []string) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "prism: internal error: %v\nprism: this is a bug in Prism; please report it with the command line and the output of 'prism devices'%s\n",
				p, traceHint())
			if engine.Tracing() {
				os.Stderr.Write(debug.Stack())
			}
			code = exitInternal
		}
	}()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	cause := context.Cause(ctx)
	if cmd != nil && cmd.Context() != nil && cause == nil {
		cause = context.Cause(cmd.Context()) // --timeout's
	}
	var sig interrupted
	var limit timedOut
	switch {
	case errors.As(cause, &sig):
		fmt.Fprintln(os.Stderr, "prism:", sig)
		return sig.code()
	case errors.As(cause, &limit):
		fmt.Fprintln(os.Stderr, "prism:", limit)
		return exitTimeout
	}
	fmt.Fprintln(os.Stderr, "prism:", err)
	var ue usageError
	var se storeError
	var re regressionError
	switch {
	case errors.As(err, &ue), isCobraUsage(err):
		return exitUsage
	case errors.Is(err, bench.ErrVerify):
		return exitVerify
	case errors.Is(err, engine.ErrUnavailable), errors.Is(err, platform.ErrNoDevice):
		return exitUnavailable
	case errors.Is(err, engine.ErrUnsupported):
		return exitUnsupported
	case errors.As(err, &se):
		return exitStore
	case errors.As(err, &re):
		return exitRegression
	}
	return exitError
}

// traceHint says how to see the stack when tracing is off.
func traceHint() string {
	if engine.Tracing() {
		return ""
	}
	return " (PRISM_TRACE=1 prints the stack)"
}

// isCobraUsage reports whether err is cobra's own complaint about the command line (an
// unknown command), which it returns as a plain error.
func isCobraUsage(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command ")
}
