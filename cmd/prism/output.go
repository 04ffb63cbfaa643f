package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/prism-compute/prism/bench"
)

// outputFlags are the output options of the commands that print data: one flag per format
// the command supports (--json, --csv, --markdown or --md, --benchstat), which exclude each
// other, and --out FILE (-o), which writes the output to FILE instead of stdout, whole or
// not at all. A command embeds it in its options, calls add when it declares its flags and
// check before it does any work, then prints through write (or writer and flush).
type outputFlags struct {
	json, csv, markdown, benchstat bool
	out                            string
	formats                        []string // the formats add registered, in order
}

// outputFormats are the format flags a command may support: help, and the spellings that
// set each (the first is its name).
var outputFormats = map[string]struct {
	help      string
	spellings []string
}{
	"json":      {"print JSON", []string{"json"}},
	"csv":       {"print CSV, one row per result", []string{"csv"}},
	"markdown":  {"print Markdown (also --md)", []string{"markdown", "md"}},
	"benchstat": {"print the results in Go benchmark format, one line per timed run (benchstat reads it)", []string{"benchstat"}},
}

// add registers the format flags named (json, csv, markdown, benchstat), which must be
// among outputFormats, and --out, with the shorthand -o unless the command has taken it.
func (o *outputFlags) add(f *pflag.FlagSet, formats ...string) {
	o.formats = formats
	for _, name := range formats {
		spec, ok := outputFormats[name]
		if !ok {
			panic("prism: unknown output format " + name)
		}
		v := map[string]*bool{"json": &o.json, "csv": &o.csv, "markdown": &o.markdown, "benchstat": &o.benchstat}[name]
		for i, s := range spec.spellings {
			help := spec.help
			if i > 0 {
				help = "the same as --" + name
			}
			f.BoolVar(v, s, false, help)
		}
	}
	const help = "write the output to `FILE` instead of stdout (- is stdout): replaced whole, or left as it was on error; a link is written through"
	if f.ShorthandLookup("o") == nil {
		f.StringVarP(&o.out, "out", "o", "", help)
	} else {
		f.StringVar(&o.out, "out", "", help)
	}
}

// check refuses two formats at once, counting also the command's other flags named in
// others (such as --html) as formats, with a usage error that names the flags given; and
// an empty --out.
func (o *outputFlags) check(f *pflag.FlagSet, others ...string) error {
	var groups [][]string
	for _, name := range o.formats {
		groups = append(groups, outputFormats[name].spellings)
	}
	for _, name := range others {
		groups = append(groups, []string{name})
	}
	if err := exclusive(f, groups...); err != nil {
		return err
	}
	if f.Changed("out") && o.out == "" {
		return usageError{fmt.Errorf("--out needs a file name")}
	}
	if o.out == "-" { // the convention: stdout
		o.out = ""
	}
	return nil
}

// notOver refuses an --out that is one of the command's input files, under any name (a
// path spelt otherwise, a link): writing it would destroy what the output is made from.
// Inputs that are not files (run references) are passed over.
func (o *outputFlags) notOver(inputs ...string) error {
	return notOver("--out", o.out, inputs...)
}

// notOver returns a usage error when the file that flag names (out) is one of inputs.
func notOver(flag, out string, inputs ...string) error {
	if out == "" {
		return nil
	}
	ofi, err := os.Stat(out)
	if err != nil || !ofi.Mode().IsRegular() {
		return nil // a new file, /dev/null or a pipe: no input can be it
	}
	for _, in := range inputs {
		if ifi, err := os.Stat(in); err == nil && os.SameFile(ofi, ifi) {
			if in == out {
				return usageError{fmt.Errorf("%s %s is also an input of this command: writing it would destroy it (write to another file)", flag, out)}
			}
			return usageError{fmt.Errorf("%s %s is the input %s: writing it would destroy it (write to another file)", flag, out, in)}
		}
	}
	return nil
}

// exclusive returns a usage error naming the flags given, when flags of more than one of
// the groups were set ("--json and --md exclude each other"). A group is one option's
// spellings (markdown, md); its flags may be given together.
func exclusive(f *pflag.FlagSet, groups ...[]string) error {
	var set []string
	for _, g := range groups {
		for _, name := range g {
			if f.Lookup(name) != nil && f.Changed(name) {
				set = append(set, "--"+name)
				break
			}
		}
	}
	if len(set) < 2 {
		return nil
	}
	list := strings.Join(set[:len(set)-1], ", ") + " and " + set[len(set)-1]
	return usageError{fmt.Errorf("%s exclude each other", list)}
}

// write runs print with the command's output: stdout, or with --out a buffer that is then
// written to the file atomically (writeFileAtomic). When print or the write fails, nothing
// is written and an existing file is left as it was.
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

// writeFileAtomic replaces path with data whole (bench.WriteFileAtomic), naming the flag in
// its errors.
func writeFileAtomic(path string, data []byte) error {
	if err := bench.WriteFileAtomic(path, data); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	return nil
}
