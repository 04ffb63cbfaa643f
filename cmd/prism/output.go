package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// outputFlags are the output options of the commands that print data: one format flag
// each (--json, --csv, --markdown or --md, --benchstat, as the command supports them), which
// exclude each other, and --out FILE, which writes the output to FILE instead of stdout,
// whole or not at all.
type outputFlags struct {
	json, csv, markdown, benchstat bool
	out                            string
	formats                        []string
}

// outputHelp is the help of each format flag.
var outputHelp = map[string]string{
	"json":      "print JSON",
	"csv":       "print CSV, one row per result",
	"markdown":  "print Markdown",
	"benchstat": "print the results in Go benchmark format, one line per timed run (benchstat reads it)",
}

// add registers the format flags named (json, csv, markdown, benchstat) and --out.
func (o *outputFlags) add(f *pflag.FlagSet, formats ...string) {
	o.formats = formats
	for _, name := range formats {
		switch name {
		case "json":
			f.BoolVar(&o.json, name, false, outputHelp[name])
		case "csv":
			f.BoolVar(&o.csv, name, false, outputHelp[name])
		case "markdown":
			f.BoolVar(&o.markdown, name, false, outputHelp[name])
			f.BoolVar(&o.markdown, "md", false, "the same as --markdown")
		case "benchstat":
			f.BoolVar(&o.benchstat, name, false, outputHelp[name])
		default:
			panic("prism: unknown output format " + name)
		}
	}
	f.StringVar(&o.out, "out", "", "write the output to this file (created or replaced whole, never half-written) instead of stdout")
}

// check refuses two formats at once (and also names others, such as --html, that the
// command counts as formats), as a usage error naming the flags.
func (o *outputFlags) check(f *pflag.FlagSet, others ...string) error {
	var set []string
	for _, name := range append(append([]string{}, o.formats...), others...) {
		if f.Changed(name) || (name == "markdown" && f.Changed("md")) {
			set = append(set, "--"+name)
		}
	}
	if len(set) > 1 {
		return usageError{fmt.Errorf("%s exclude each other", strings.Join(set, " and "))}
	}
	if f.Changed("out") && o.out == "" {
		return usageError{fmt.Errorf("--out needs a file name")}
	}
	return nil
}

// write runs print with the command's output: stdout, or with --out a buffer that is then
// written to the file atomically (a temporary file in the same directory, synced, then
// renamed over it). When print or the write fails, no file is left and nothing replaced.
func (o *outputFlags) write(cmd *cobra.Command, print func(w io.Writer) error) error {
	if o.out == "" {
		return print(cmd.OutOrStdout())
	}
	var buf bytes.Buffer
	if err := print(&buf); err != nil {
		return err
	}
	return writeFileAtomic(o.out, buf.Bytes())
}

// writeFileAtomic replaces path with data whole: written to a temporary file beside it,
// synced and renamed. On error the temporary file is removed and path is untouched.
func writeFileAtomic(path string, data []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	return nil
}

// writer returns where a command that prints as it goes writes: stdout, or with --out buf,
// which flush then writes to the file.
func (o *outputFlags) writer(cmd *cobra.Command, buf *bytes.Buffer) io.Writer {
	if o.out == "" {
		return cmd.OutOrStdout()
	}
	return buf
}

// flush writes buf to the --out file atomically; nothing without --out.
func (o *outputFlags) flush(buf *bytes.Buffer) error {
	if o.out == "" {
		return nil
	}
	return writeFileAtomic(o.out, buf.Bytes())
}
