// Command prism runs Prism's kernel suite on the compute devices of this machine: it lists
// them, benchmarks them side by side with verification, and runs single operations.
//
// Run `prism --help` for the commands. Exit codes:
//
//	0    success
//	1    an error (the message says which)
//	2    bad usage (unknown command or flag, bad argument)
//	3    no compute device or backend available
//	4    a result failed verification
//	5    the device cannot run what was asked (a variant, precision or operation it
//	     lacks); prism bench reports such cases as skipped and goes on
//	6    the results store could not be opened, read or written, or is damaged (a run's
//	     report is written first all the same; the message names the store and the cause)
//	7    prism check --fail-on-regression found a regression, or a case the run failed
//	     (the message lists them)
//	70   an internal error: a bug in Prism (a short "please report" line; PRISM_TRACE=1
//	     prints the stack)
//	130  interrupted by SIGINT (Ctrl-C), 143 by SIGTERM: the work stopped at the next
//	     check, the partial report was written and says "interrupted"; a second signal
//	     exits at once
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
	exitUnsupported = 5  // the device cannot run what was asked: a variant, precision or op
	exitStore       = 6  // the results store cannot be opened, read or written, or is damaged
	exitRegression  = 7  // prism check --fail-on-regression: a series regressed or failed
	exitInternal    = 70 // EX_SOFTWARE of sysexits.h
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
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var sig interrupted
	if cause := context.Cause(ctx); errors.As(cause, &sig) {
		fmt.Fprintln(os.Stderr, "prism:", sig)
		return sig.code()
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
