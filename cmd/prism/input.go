package main

import (
	"fmt"

	"github.com/prism-compute/prism/bench"
	"github.com/spf13/pflag"
)

// inputFlags is --max-input, the largest report file that report, compare and plot read:
// a bound on what a file of unknown origin can make them allocate.
type inputFlags struct {
	maxInput string
}

func (o *inputFlags) addInput(f *pflag.FlagSet) {
	f.StringVar(&o.maxInput, "max-input", bench.FormatSize(int(bench.DefaultMaxReportBytes)),
		"the largest report file to read, in bytes (K, M, G suffixes: powers of 1024)")
}

// reader returns the report reader of the flag, or a usage error for a bad size.
func (o *inputFlags) reader() (bench.ReportReader, error) {
	n, err := bench.ParseSize(o.maxInput)
	if err != nil {
		return bench.ReportReader{}, usageError{fmt.Errorf("--max-input: %w", err)}
	}
	return bench.ReportReader{MaxBytes: int64(n)}, nil
}
