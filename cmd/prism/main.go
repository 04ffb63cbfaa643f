// Command prism runs Prism's kernel suite on the compute devices of this machine: it lists
// them, benchmarks them side by side with verification, and runs single operations.
//
// Run `prism --help` for the commands. Exit codes:
//
//	0  success
//	1  an error (the message says which)
//	2  bad usage (unknown flag, bad argument)
//	3  no compute device or backend available
//	4  a result failed verification
//
// docs/ARCHITECTURE.md describes the packages the commands are built on.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

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
)

// usageError marks errors that come from bad command-line input.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(os.Stderr, "prism:", err)
	var ue usageError
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, bench.ErrVerify):
		return exitVerify
	case errors.Is(err, engine.ErrUnavailable), errors.Is(err, platform.ErrNoDevice):
		return exitUnavailable
	}
	return exitError
}
