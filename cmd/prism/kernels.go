package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/suite"
	"github.com/prism-compute/prism/platform"
	"github.com/spf13/cobra"
)

type kernelsOptions struct {
	device    string
	occupancy bool
	outputFlags
}

func newKernelsCmd() *cobra.Command {
	opts := &kernelsOptions{}
	cmd := &cobra.Command{
		Use:   "kernels [FAMILY]",
		Short: "List the kernel suite: families, operations, variants and tunables",
		Long: `List every operation of the suite, grouped by family, with its variants, its default
and quick sizes, what it computes and what its size means, and the names of each family's
tunables (the -D defines the host picks per device), in lines of at most 120 columns.
--verbose lists the tunables with their defaults and the implementation notes beside them.
With a FAMILY, print that family's whole header: purpose, kernel arguments, tunables with
defaults, variants and launch ranges.

An operation may have several implementations, its variants, in priority order: CUDA C++
ones that use NVIDIA-only instructions (warp shuffles, tensor cores), vendor-library
baselines (cuBLAS, CLBlast, ...), and last the portable OpenCL C kernel that every device
runs. With --device, each operation's variants are checked against that device: the one
that would run there is marked with *, and the reason each other one does not apply is
printed below its family. 'prism run' and 'prism bench' take --variant NAME and --portable.

With --device and --occupancy, each operation is also set up on the device at its quick
size, with the variant that runs there, and run once (timed, not verified), and the kernels
it launched are listed below its family, one row per kernel and work-group shape: the
block (work-group size), what the backend reports of the kernel (registers, static local
memory, dynamic shared memory, private memory per work-item, the largest work-group, the
preferred multiple) and, on CUDA, its theoretical occupancy at that block: the blocks
resident on one multiprocessor, the fraction of its warps they fill, and what limits them
(registers, shared memory, threads, or blocks per multiprocessor). OpenCL reports neither
registers nor occupancy: columns no kernel reports are left out. This compiles every
kernel of the operations listed, which takes a minute or more for the whole suite on a
CPU device (PoCL): give a FAMILY to look at its operations alone. 'prism bench' records
the same figures for each case (the report's "launches").

Operation names are family/op/type; 'prism run' and 'prism bench --ops' take them, or a
family, a prefix ("gemm/nn") or a glob ("*/*/float64").`,
		Example: `  prism kernels
  prism kernels gemm
  prism kernels reduce --device cuda:0
  prism kernels gemm --device cuda:0 --occupancy
  prism kernels stream --device opencl:0:0 --occupancy --json | jq '.[].launches'
  prism kernels --json | jq '.[].name'`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return kernelsRun(cmd, opts, args)
		},
	}
	opts.add(cmd.Flags(), "json")
	cmd.Flags().StringVar(&opts.device, "device", "", "check each operation's variants against this device (ID, backend or class)")
	cmd.Flags().BoolVar(&opts.occupancy, "occupancy", false, "with --device: run each operation once at its quick size and list the kernels it launches, their resources and (CUDA) occupancy")
	return cmd
}

// opJSON is one operation in `prism kernels --json`; the launch fields are set with
// --occupancy.
type opJSON struct {
	Name        string        `json:"name"`
	Family      string        `json:"family"`
	Type        string        `json:"type"`
	Doc         string        `json:"doc"`
	Size        string        `json:"size"`
	DefaultSize int           `json:"default_size"`
	QuickSize   int           `json:"quick_size"`
	Variants    []variantJSON `json:"variants"`
	opLaunches
}

// opLaunches is what one run of an operation at its quick size launched on the device
// (--occupancy): the shape set up, the kernels launched (bench.LaunchesOf), or why there
// are none.
type opLaunches struct {
	Shape       string         `json:"launch_shape,omitempty"`
	Launches    []bench.Launch `json:"launches,omitempty"`
	LaunchError string         `json:"launch_error,omitempty"`
}

// launchesOf sets op up on q's device at its quick size with the variant that runs there,
// runs it once inside Queue.Timed (not verified) and describes the kernels it launched.
// A failure is recorded in LaunchError, not returned; an occupancy the backend failed to
// report too, beside the launches.
func launchesOf(ctx context.Context, q *engine.Queue, op kernels.Op) (ol opLaunches) {
	in, err := op.Setup(ctx, q, kernels.Params{Size: op.QuickSize, Seed: 1})
	if err != nil {
		return opLaunches{LaunchError: err.Error()}
	}
	defer in.Close()
	ol.Shape = in.Shape()
	if _, err := q.Timed(ctx, func() error { return in.Run(ctx, q) }); err != nil {
		ol.LaunchError = err.Error()
		return ol
	}
	ol.Launches, err = bench.LaunchesOf(q.TimedLaunches())
	if err != nil {
		ol.LaunchError = err.Error()
	}
	if len(ol.Launches) == 0 && ol.LaunchError == "" {
		ol.LaunchError = "no kernel launched through engine"
	}
	return ol
}

// variantJSON is one variant of an operation in `prism kernels --json`; Runs and
// NotApplicable are set with --device.
type variantJSON struct {
	Name          string `json:"name"`
	Doc           string `json:"doc"`
	Dialect       string `json:"dialect"`
	Backend       string `json:"backend,omitempty"`
	MinCompute    int    `json:"min_compute,omitempty"`
	Vendor        bool   `json:"vendor,omitempty"`
	Tunables      string `json:"tunables,omitempty"`
	Runs          bool   `json:"runs,omitempty"`
	NotApplicable string `json:"not_applicable,omitempty"`
}

// variantsOf describes op's variants, checked against dev when it is not nil: which one
// Pick chooses there, and why each other one does not apply.
func variantsOf(op kernels.Op, dev *engine.Device) []variantJSON {
	var picked string
	if dev != nil {
		if v, err := op.Pick(dev, kernels.Params{}); err == nil {
			picked = v.Name
		}
	}
	out := make([]variantJSON, len(op.Variants))
	for i, v := range op.Variants {
		out[i] = variantJSON{Name: v.Name, Doc: v.Doc, Dialect: v.Dialect.String(), Backend: v.Backend,
			MinCompute: v.MinCompute, Vendor: v.Vendor, Tunables: v.Tunables, Runs: v.Name == picked}
		if dev != nil {
			if err := v.Fits(dev); err != nil {
				out[i].NotApplicable = strings.TrimSuffix(strings.TrimPrefix(err.Error(), "kernels: variant "+v.Name+" "), ": "+engine.ErrUnsupported.Error())
			}
		}
	}
	return out
}

// variantCell is the variants column of the listing: names in priority order, the one that
// runs on the device marked with *.
func variantCell(vs []variantJSON) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
		if v.Runs {
			names[i] = "*" + v.Name
		}
	}
	return strings.Join(names, " ")
}

func kernelsRun(cmd *cobra.Command, opts *kernelsOptions, args []string) error {
	if err := opts.check(cmd.Flags()); err != nil {
		return err
	}
	if opts.occupancy && opts.device == "" {
		return usageError{fmt.Errorf("--occupancy needs --device: the kernels launched and their occupancy are a device's")}
	}
	return opts.write(cmd, func(out io.Writer) error { return kernelsPrint(cmd, opts, args, out) })
}

// kernelsPrint writes the listing to out.
func kernelsPrint(cmd *cobra.Command, opts *kernelsOptions, args []string, out io.Writer) error {
	ops := suite.Ops()
	var dev *engine.Device
	if opts.device != "" {
		var err error
		if dev, err = platform.Open(cmd.Context(), opts.device); err != nil {
			return err
		}
		defer dev.Close()
	}
	if len(args) == 1 {
		f, err := suite.Family(args[0])
		if err != nil {
			return usageError{err}
		}
		if ops, err = suite.Match(args[0]); err != nil {
			return usageError{err}
		}
		if !opts.json {
			fmt.Fprint(out, fitLines(kernels.Header(f.Source), listingWidth))
			fmt.Fprintln(out)
		}
	}
	launches := make([]opLaunches, len(ops))
	if opts.occupancy {
		q, err := dev.NewQueue()
		if err != nil {
			return err
		}
		defer q.Close()
		for i, op := range ops {
			if err := cmd.Context().Err(); err != nil {
				return err
			}
			launches[i] = launchesOf(cmd.Context(), q, op)
		}
	}
	if opts.json {
		list := make([]opJSON, len(ops))
		for i, op := range ops {
			list[i] = opJSON{Name: op.Name, Family: op.Family, Type: op.Type, Doc: op.Doc, Size: op.SizeDoc,
				DefaultSize: op.DefaultSize, QuickSize: op.QuickSize, Variants: variantsOf(op, dev), opLaunches: launches[i]}
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if dev != nil {
		fmt.Fprintf(out, "Variants checked against %s (%s); * marks the one that runs there.\n\n", dev.ID(), dev.Info().Name)
	}
	cols := launchColumnsOf(launches)
	family := ""
	var (
		notes     []string   // why variants of the family do not apply on dev
		familyOps []int      // the indexes in ops of the family's operations
		rows      [][]string // the family's table
	)
	flush := func() {
		writeWrapped(out, "  ", rows, listingWidth)
		if len(notes) > 0 {
			fmt.Fprintf(out, "  not applicable on %s:\n", dev.ID())
			for _, n := range notes {
				fmt.Fprint(out, wrapText(n, "    ", "      ", listingWidth))
			}
		}
		if opts.occupancy {
			printLaunches(out, dev, ops, launches, familyOps, cols)
		}
		notes, familyOps, rows = nil, nil, nil
	}
	for i, op := range ops {
		if op.Family != family {
			if family != "" {
				flush()
				fmt.Fprintln(out)
			}
			family = op.Family
			src := ""
			if f, err := suite.Family(family); err == nil {
				src = f.Source
			}
			fmt.Fprint(out, wrapText(strings.SplitN(kernels.Header(src), "\n", 2)[0], "", "  ", listingWidth))
			if len(args) == 0 {
				if t := kernels.HeaderSection(src, "Tunables"); t != "" && verbose(cmd) {
					fmt.Fprintf(out, "  %s\n", strings.ReplaceAll(t, "\n", "\n  "))
				} else if names := tunableNames(t); len(names) > 0 {
					fmt.Fprint(out, wrapText(fmt.Sprintf("Tunables (-D): %s ('prism kernels %s' explains them)",
						strings.Join(names, " "), family), "  ", "    ", listingWidth))
				}
			}
			if size := familySize(ops, family); size != "" {
				fmt.Fprint(out, wrapText("size: "+size, "  ", "    ", listingWidth))
			}
			rows = append(rows, []string{"operation", "variants", "default", "quick", "computes"})
		}
		vs := variantsOf(op, dev)
		for _, v := range vs {
			if v.NotApplicable != "" {
				notes = append(notes, fmt.Sprintf("%s %s: %s", op.Name, v.Name, v.NotApplicable))
			}
		}
		computes := op.Doc
		if familySize(ops, family) == "" {
			computes += " [size: " + op.SizeDoc + "]"
		}
		rows = append(rows, []string{op.Name, variantCell(vs), bench.FormatSize(op.DefaultSize), bench.FormatSize(op.QuickSize), computes})
		familyOps = append(familyOps, i)
	}
	flush()
	return nil
}

// listingWidth is the width the listing of prism kernels fits in (its --occupancy tables
// aside).
const listingWidth = 120

// familySize returns what the size means for every operation of family among ops, or ""
// when the operations differ.
func familySize(ops []kernels.Op, family string) string {
	size := ""
	for _, op := range ops {
		if op.Family != family {
			continue
		}
		if size != "" && op.SizeDoc != size {
			return ""
		}
		size = op.SizeDoc
	}
	return size
}

// tunableNames returns the names a header's Tunables section defines: its lines that open,
// at the section's first indentation, with an upper-case name followed by two spaces.
func tunableNames(section string) []string {
	var names []string
	lines := strings.Split(section, "\n")
	indent := -1
	for _, line := range lines[min(1, len(lines)):] {
		trimmed := strings.TrimLeft(line, " ")
		if trimmed == "" {
			continue
		}
		n := len(line) - len(trimmed)
		if indent < 0 {
			indent = n
		}
		name, rest, ok := strings.Cut(trimmed, "  ")
		if n != indent || !ok || strings.TrimSpace(rest) == "" || !isTunableName(name) {
			continue
		}
		names = append(names, name)
	}
	return names
}

// isTunableName reports whether s is a -D name as the headers write them: upper case,
// digits and underscores, opening with a letter.
func isTunableName(s string) bool {
	for i, r := range s {
		if !(r >= 'A' && r <= 'Z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// writeWrapped writes rows as a table whose columns are padded to their widest cell and
// two spaces apart, each line opening with indent, its last column wrapped to keep lines
// within width. Where the other columns leave the last fewer than 30 columns, it goes
// on the lines below its row, indented by four more.
func writeWrapped(out io.Writer, indent string, rows [][]string, width int) {
	if len(rows) == 0 {
		return
	}
	last := len(rows[0]) - 1
	widths := make([]int, last)
	for _, r := range rows {
		for i := 0; i < last; i++ {
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	prefix := utf8.RuneCountInString(indent)
	for _, w := range widths {
		prefix += w + 2
	}
	below := width-prefix < 30
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i := 0; i < last; i++ {
			b.WriteString(r[i])
			if i < last-1 || !below {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(r[i])+2))
			}
		}
		if below {
			fmt.Fprintln(out, strings.TrimRight(b.String(), " "))
			fmt.Fprint(out, wrapText(r[last], indent+"    ", indent+"    ", width))
			continue
		}
		// Wrapped behind a blank prefix as wide as the other columns, whose first line the
		// row's cells then replace.
		pad := strings.Repeat(" ", prefix)
		first, rest, _ := strings.Cut(wrapText(r[last], pad, pad, width), "\n")
		fmt.Fprintln(out, strings.TrimRight(b.String()+strings.TrimPrefix(first, pad), " "))
		fmt.Fprint(out, rest)
	}
}

// fitLines returns text with each line longer than width wrapped at the line's own
// indentation; other lines are left as they are.
func fitLines(text string, width int) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		body := strings.TrimSuffix(line, "\n")
		if utf8.RuneCountInString(body) <= width {
			b.WriteString(line)
			continue
		}
		indent := body[:len(body)-len(strings.TrimLeft(body, " "))]
		b.WriteString(wrapText(body, indent, indent, width))
	}
	return b.String()
}

// wrapText returns s in lines of at most width runes, breaking at spaces (inside a word
// longer than a line where it must), the first line opening with first and the others
// with next; every line ends with a newline.
func wrapText(s, first, next string, width int) string {
	var b strings.Builder
	line, lead := first, first
	for _, word := range strings.Fields(s) {
		for {
			n := utf8.RuneCountInString(line)
			w := utf8.RuneCountInString(word)
			sep := 0
			if line != lead {
				sep = 1
			}
			if n+sep+w <= width {
				if sep == 1 {
					line += " "
				}
				line += word
				break
			}
			if line != lead {
				b.WriteString(line + "\n")
				line, lead = next, next
				continue
			}
			// A word longer than a whole line: cut it.
			room := max(width-n, 1)
			rs := []rune(word)
			b.WriteString(line + string(rs[:room]) + "\n")
			word = string(rs[room:])
			line, lead = next, next
			if word == "" {
				break
			}
		}
	}
	if line != lead || b.Len() == 0 {
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return b.String()
}

// launchColumns says which of the optional columns of the launch tables some launch
// fills: a backend that reports no registers (OpenCL) or no occupancy leaves them out.
type launchColumns struct {
	registers, dynamic, occupancy bool
}

func launchColumnsOf(all []opLaunches) (c launchColumns) {
	for _, ol := range all {
		for _, l := range ol.Launches {
			c.registers = c.registers || l.Registers > 0
			c.dynamic = c.dynamic || l.DynamicSharedBytes > 0
			c.occupancy = c.occupancy || l.ActiveBlocks > 0 || l.Limiter != ""
		}
	}
	return c
}

// printLaunches writes the launch table of one family (--occupancy): the kernels each of
// its operations launched at its quick size on dev (ops[i] for i in idx, launches[i]),
// one row per kernel and work-group shape, then why an operation has none.
func printLaunches(out io.Writer, dev *engine.Device, ops []kernels.Op, launches []opLaunches, idx []int, cols launchColumns) {
	if cols.occupancy {
		fmt.Fprintf(out, "  kernels launched on %s at the quick size:\n", dev.ID())
	} else {
		fmt.Fprintf(out, "  kernels launched on %s at the quick size (no occupancy: the %s backend does not report it):\n", dev.ID(), dev.Backend())
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	head := []string{"operation", "shape", "kernel", "block"}
	if cols.registers {
		head = append(head, "regs")
	}
	head = append(head, "local")
	if cols.dynamic {
		head = append(head, "dynamic")
	}
	head = append(head, "private", "max wg", "multiple")
	if cols.occupancy {
		head = append(head, "blocks/SM", "occupancy", "limiter")
	}
	fmt.Fprintf(tw, "    %s\n", strings.Join(head, "\t"))
	var failed []string
	for _, i := range idx {
		ol := launches[i]
		if ol.LaunchError != "" {
			failed = append(failed, fmt.Sprintf("%s: %s", ops[i].Name, ol.LaunchError))
		}
		for j, l := range ol.Launches {
			name, shape := ops[i].Name, ol.Shape
			if j > 0 {
				name, shape = "", ""
			}
			row := []string{name, shape, l.Kernel, l.BlockString()}
			if cols.registers {
				row = append(row, countCell(int64(l.Registers)))
			}
			row = append(row, bytesCell(l.LocalBytes))
			if cols.dynamic {
				row = append(row, bytesCell(l.DynamicSharedBytes))
			}
			row = append(row, bytesCell(l.PrivateBytes), countCell(int64(l.MaxWorkGroupSize)), countCell(int64(l.PreferredMultiple)))
			if cols.occupancy {
				occ, limiter := "-", l.Limiter
				if l.ActiveBlocks > 0 {
					occ = fmt.Sprintf("%.0f%%", 100*l.Occupancy)
				}
				if limiter == "" {
					limiter = "-"
				}
				row = append(row, countCell(int64(l.ActiveBlocks)), occ, limiter)
			}
			fmt.Fprintf(tw, "    %s\n", strings.Join(row, "\t"))
		}
	}
	tw.Flush()
	for _, f := range failed {
		fmt.Fprintf(out, "    %s\n", f)
	}
}

// countCell formats a count of the launch table, "-" when not reported.
func countCell(n int64) string {
	if n <= 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

// bytesCell formats a size of the launch table exactly enough to compare kernels: "0",
// bytes below 1 KiB, else KiB (to a tenth where not whole).
func bytesCell(n int64) string {
	switch {
	case n <= 0:
		return "0"
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}
