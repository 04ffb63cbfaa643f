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
	const help = "write the output to `FILE` instead of stdout: replaced whole, or left as it was on error"
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

// writeFileAtomic replaces path with data whole: data goes to a temporary file in the same
// directory, which is synced, given the mode of the file it replaces (0644 for a new one)
// and renamed over path; the directory is then synced so that the rename survives a crash.
// A reader sees the old file or the new one, never a part. On error the temporary file is
// removed and path is left as it was.
func writeFileAtomic(path string, data []byte) (err error) {
	fail := func(err error) error { return fmt.Errorf("--out %s: %w", path, err) }
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return fail(fmt.Errorf("not a regular file"))
		}
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fail(err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if err = tmp.Sync(); err != nil {
		return fail(err)
	}
	if err = tmp.Close(); err != nil {
		return fail(err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fail(err)
	}
	if d, err := os.Open(dir); err == nil { // best effort: the file is in place either way
		d.Sync()
		d.Close()
	}
	return nil
}
