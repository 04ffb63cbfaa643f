package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/engine"
	"github.com/prism-compute/prism/kernels"
	"github.com/prism-compute/prism/kernels/suite"
	"github.com/prism-compute/prism/platform"
)

// Shell completion ('prism completion bash|zsh|fish|powershell' prints the script): the
// operation names for the arguments of run and tune and for --ops, the family names for
// kernels, and device IDs, backends and classes for --device. Comma-separated flags
// (--ops a,b and --device x,y) complete their last item.

// completionTimeout bounds the device discovery of a completion: a driver that hangs
// leaves the IDs out, never the shell waiting. Discovery on a machine without a GPU takes
// well under a second.
var completionTimeout = 3 * time.Second

// discoverForCompletion finds the devices a completion offers (platform.Discover; tests
// replace it).
var discoverForCompletion = platform.Discover

// deviceClasses are the classes --device takes besides IDs and backends.
var deviceClasses = []string{"gpu", "accelerator", "cpu"}

// completionShells are the shells 'prism completion' writes a script for (cobra's).
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// completionScripts write each shell's script, with or without descriptions.
var completionScripts = map[string]func(root *cobra.Command, w io.Writer, desc bool) error{
	"bash": func(root *cobra.Command, w io.Writer, desc bool) error { return root.GenBashCompletionV2(w, desc) },
	"zsh": func(root *cobra.Command, w io.Writer, desc bool) error {
		if desc {
			return root.GenZshCompletion(w)
		}
		return root.GenZshCompletionNoDesc(w)
	},
	"fish": func(root *cobra.Command, w io.Writer, desc bool) error { return root.GenFishCompletion(w, desc) },
	"powershell": func(root *cobra.Command, w io.Writer, desc bool) error {
		if desc {
			return root.GenPowerShellCompletionWithDesc(w)
		}
		return root.GenPowerShellCompletion(w)
	},
}

// refuseOtherShells makes 'prism completion SHELL' for a shell it has no script for (tcsh)
// a usage error (exit code 2) that lists the shells, where cobra's completion command,
// which has no action of its own, printed its help and exited 0; without a shell it still
// prints the help. cobra's command is added here rather than when the root runs, so its
// scripts are written to the command's output when it runs, not to the one it had when
// it was made.
func refuseOtherShells(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" || c.Runnable() {
			continue
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usageError{fmt.Errorf("completion: no script for the shell %q: prism completion takes %s", args[0], strings.Join(completionShells, ", "))}
		}
		for _, sub := range c.Commands() {
			script, ok := completionScripts[sub.Name()]
			if !ok {
				continue
			}
			sub.RunE = func(cmd *cobra.Command, args []string) error {
				noDesc, _ := cmd.Flags().GetBool("no-descriptions")
				return script(cmd.Root(), cmd.OutOrStdout(), !noDesc)
			}
		}
	}
}

// addCompletions registers the completions of every command of root: those declared here
// for the commands' arguments, and for every --ops and --device flag whatever command
// declares it; 'prism completion' refuses a shell it has no script for.
func addCompletions(root *cobra.Command) {
	refuseOtherShells(root)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		switch c.Name() {
		case "run":
			c.ValidArgsFunction = completeOpArgs(cobra.ShellCompDirectiveNoFileComp)
		case "tune":
			// tune also takes FILE.cl: files where no operation matches.
			c.ValidArgsFunction = completeOpArgs(cobra.ShellCompDirectiveDefault)
		case "kernels":
			c.ValidArgsFunction = completeFamilies
		}
		if f := c.Flags().Lookup("ops"); f != nil {
			c.RegisterFlagCompletionFunc("ops", completeList(opCompletions))
		}
		if f := c.Flags().Lookup("device"); f != nil {
			c.RegisterFlagCompletionFunc("device", completeList(deviceCompletions))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// opCompletions returns the families and operation names that start with prefix, each
// operation with what it computes as its description.
func opCompletions(_ context.Context, prefix string) []string {
	var out []string
	for _, f := range suite.Families() {
		if strings.HasPrefix(f.Name, prefix) {
			out = append(out, f.Name+"\tevery "+f.Name+" operation")
		}
	}
	for _, op := range suite.Ops() {
		if strings.HasPrefix(op.Name, prefix) {
			out = append(out, op.Name+"\t"+shorten(op.Doc, 60))
		}
	}
	return out
}

// completeOpArgs completes operation names as arguments, none given twice; where none
// matches, directive says what the shell does (files for tune).
func completeOpArgs(directive cobra.ShellCompDirective) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, c := range opCompletions(cmd.Context(), toComplete) {
			name, _, _ := strings.Cut(c, "\t")
			if !slices.Contains(args, name) {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return nil, directive
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFamilies completes the one argument of kernels, a family name.
func completeFamilies(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, f := range suite.Families() {
		if strings.HasPrefix(f.Name, toComplete) {
			out = append(out, f.Name+"\t"+shorten(familyTitle(f.Source), 60))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// familyTitle is the first line of a family's header without its file name.
func familyTitle(src string) string {
	line, _, _ := strings.Cut(kernels.Header(src), "\n")
	if _, rest, ok := strings.Cut(line, ": "); ok {
		return rest
	}
	return line
}

// deviceCompletions returns the device IDs (discovered within completionTimeout), backends
// and classes that start with prefix.
func deviceCompletions(ctx context.Context, prefix string) []string {
	var out []string
	for _, d := range discoverDevices(ctx) {
		if strings.HasPrefix(d.ID, prefix) {
			out = append(out, fmt.Sprintf("%s\t%s, %s", d.ID, d.Name, d.Kind))
		}
	}
	for _, b := range engine.Backends() {
		if strings.HasPrefix(b, prefix) {
			out = append(out, b+"\tthe best device of the "+b+" backend")
		}
	}
	for _, c := range deviceClasses {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c+"\tthe best device of this class")
		}
	}
	return out
}

// discoverDevices runs discoverForCompletion for at most completionTimeout and returns the
// devices found, or none when it failed or ran out of time (its goroutine is left to
// finish: the completion process ends right after).
func discoverDevices(ctx context.Context) []platform.Device {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	done := make(chan []platform.Device, 1)
	discover := discoverForCompletion // read here: the goroutine may outlive this call
	go func() {
		dis, err := discover(ctx)
		if err != nil || dis == nil {
			done <- nil
			return
		}
		done <- dis.Devices
	}()
	select {
	case devs := <-done:
		return devs
	case <-ctx.Done():
		cobra.CompDebugln(fmt.Sprintf("device discovery took over %v: no device IDs offered", completionTimeout), true)
		return nil
	}
}

// completeList completes a comma-separated flag value: its last item, from the candidates
// of complete, none already given.
func completeList(complete func(ctx context.Context, prefix string) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		head, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			head, last = toComplete[:i+1], toComplete[i+1:]
		}
		given := strings.Split(strings.TrimSuffix(head, ","), ",")
		var out []string
		for _, c := range complete(cmd.Context(), last) {
			name, _, _ := strings.Cut(c, "\t")
			if !slices.Contains(given, name) {
				out = append(out, head+c)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// shorten returns s cut at a word boundary to at most n characters, with "..." where cut.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndex(s[:n-3], " ")
	if cut <= 0 {
		cut = n - 3
	}
	return s[:cut] + "..."
}
