package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench"
	"github.com/prism-compute/prism/bench/userkernel"
	"github.com/prism-compute/prism/engine"
)

// prism exec --check: the kernel runs once under Oclgrind, which simulates an OpenCL
// device and reports out-of-bounds accesses, data races and uninitialized values. Prism
// runs its device child (exec_child.go) under the oclgrind command, as make oclgrind runs
// the test binaries (scripts/oclgrind-run.sh): Oclgrind is then the child's only OpenCL
// platform, opencl:0:0. Its reports go to a FIFO (--log): Oclgrind 21.10 opens its log
// anew, truncating it, for every context, and a FIFO read here while the child runs keeps
// them all. Buffers are allocated exactly (PRISM_POOL=off, no guard band), so that an
// access past a buffer is past what Oclgrind knows of it, and each report is tied to the
// kernel argument whose buffer it names: Oclgrind numbers the buffers of a context from 1
// in the order they are made, in the top 16 bits of a 64-bit address, and prism exec
// makes the buffer arguments in order.

// oclgrindChecks are Oclgrind's checks that --check turns on, besides its bounds checks,
// which are always on.
var oclgrindChecks = []string{"--check-api", "--data-races", "--uninitialized"}

// Finding is what Oclgrind reported at one place: a kind of error, on one kernel argument
// (or local memory), at one source line, with the count of reports and the first
// work-items named.
type Finding struct {
	Kind     string `json:"kind"`  // Oclgrind's words: "Invalid write of size 4", "Write-write data race", ...
	Class    string `json:"class"` // out-of-bounds, data-race, uninitialized or other
	Memory   string `json:"memory,omitempty"`
	Arg      int    `json:"arg"`                // the kernel argument's index; -1 where none is known
	ArgName  string `json:"arg_name,omitempty"` // the parameter's name
	ArgSpec  string `json:"arg_spec,omitempty"`
	First    int    `json:"first_element"` // the elements of the argument reached, by the reports
	Last     int    `json:"last_element"`
	Len      int    `json:"elements,omitempty"` // the argument's length
	Reports  int    `json:"reports"`
	WorkItem string `json:"work_item"`                 // the first report's: global (48,0,0) local (48,0,0) group (0,0,0)
	Other    string `json:"other_work_item,omitempty"` // a race's second work-item
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Source   string `json:"source,omitempty"` // the text of the line
}

// String says the finding in one line.
func (f *Finding) String() string {
	var b strings.Builder
	b.WriteString(f.Kind)
	switch {
	case f.Arg >= 0:
		fmt.Fprintf(&b, " on argument %d", f.Arg)
		if f.ArgName != "" {
			b.WriteString(" " + f.ArgName)
		}
		fmt.Fprintf(&b, " (%s)", f.ArgSpec)
		where := "element"
		if f.First != f.Last {
			where = fmt.Sprintf("elements %d to", f.First)
		}
		fmt.Fprintf(&b, ", %s %d", where, f.Last)
		if f.Class == "out-of-bounds" && f.Len > 0 && f.Last >= f.Len {
			fmt.Fprintf(&b, " (past its end: it has %d)", f.Len)
		}
	case f.Memory != "":
		fmt.Fprintf(&b, " in %s memory", f.Memory)
	}
	fmt.Fprintf(&b, "; %d report", f.Reports)
	if f.Reports != 1 {
		b.WriteString("s")
	}
	if f.WorkItem != "" {
		fmt.Fprintf(&b, ", first by work-item %s", f.WorkItem)
	}
	if f.Other != "" {
		fmt.Fprintf(&b, " against %s", f.Other)
	}
	if f.Line > 0 {
		fmt.Fprintf(&b, "; %s:%d", cmp.Or(f.File, "line"), f.Line)
		if f.Source != "" {
			fmt.Fprintf(&b, ": %s", f.Source)
		}
	}
	return b.String()
}

// maxFindings bounds the places kept; reports beyond them are counted in Dropped.
const maxFindings = 100

// oclgrindLog reads Oclgrind's reports and groups them into findings.
type oclgrindLog struct {
	args     []*userkernel.Arg
	file     string            // names the source in findings
	buffers  []*userkernel.Arg // the buffer arguments, in order: Oclgrind's buffers 1, 2, ...
	findings []*Finding
	byKey    map[string]*Finding
	Dropped  int
	Reports  int
}

func newOclgrindLog(args []*userkernel.Arg) *oclgrindLog {
	g := &oclgrindLog{args: args, byKey: map[string]*Finding{}}
	for _, a := range args {
		if a.Kind == userkernel.Buf || a.Kind == userkernel.Out || a.Kind == userkernel.InOut {
			g.buffers = append(g.buffers, a)
		}
	}
	return g
}

var (
	reAddress = regexp.MustCompile(`^(.*?) (?:at|to|from) (global|local|private|constant) memory address 0x([0-9a-fA-F]+)`)
	reEntity  = regexp.MustCompile(`Global\(([^)]*)\) Local\(([^)]*)\) Group\(([^)]*)\)`)
	reLine    = regexp.MustCompile(`^At line (\d+) \(column (\d+)\)`)
)

// block is one report as Oclgrind writes it: a header line, then lines indented by a tab.
type block struct {
	header string
	lines  []string
}

// read parses the reports of r until it ends.
func (g *oclgrindLog) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cur *block
	flush := func() {
		if cur != nil {
			g.add(cur)
			cur = nil
		}
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case strings.HasPrefix(line, "\t"):
			if cur != nil {
				cur.lines = append(cur.lines, strings.TrimPrefix(line, "\t"))
			}
		default:
			flush()
			cur = &block{header: strings.TrimSpace(line)}
		}
	}
	flush()
	return sc.Err()
}

// add groups one report into the findings.
func (g *oclgrindLog) add(b *block) {
	g.Reports++
	f := &Finding{Kind: strings.TrimSuffix(b.header, ":"), Class: "other", Arg: -1, First: -1, Last: -1, File: g.file}
	elem := -1
	if m := reAddress.FindStringSubmatch(b.header); m != nil {
		f.Kind, f.Memory = m[1], m[2]
		addr, _ := strconv.ParseUint(m[3], 16, 64)
		if f.Memory == "global" {
			if k := int(addr >> 48); k >= 1 && k <= len(g.buffers) {
				a := g.buffers[k-1]
				f.Arg, f.ArgName, f.ArgSpec, f.Len = a.Index, a.Param, a.Spec, a.Len
				elem = int(addr&(1<<48-1)) / a.Type.Size
			}
		}
	}
	low := strings.ToLower(f.Kind)
	switch {
	case strings.HasPrefix(low, "invalid read"), strings.HasPrefix(low, "invalid write"):
		f.Class = "out-of-bounds"
	case strings.Contains(low, "data race"):
		f.Class = "data-race"
	case strings.Contains(low, "uninitialized"):
		f.Class = "uninitialized"
	}
	for i, l := range b.lines {
		l = strings.TrimSpace(l)
		if m := reEntity.FindStringSubmatch(l); m != nil {
			wi := fmt.Sprintf("global (%s) local (%s) group (%s)", m[1], m[2], m[3])
			if f.WorkItem == "" {
				f.WorkItem = wi
			} else if f.Other == "" {
				f.Other = wi
			}
		}
		if m := reLine.FindStringSubmatch(l); m != nil && f.Line == 0 {
			f.Line, _ = strconv.Atoi(m[1])
			f.Column, _ = strconv.Atoi(m[2])
			if i+1 < len(b.lines) {
				f.Source = strings.TrimSpace(b.lines[i+1])
			}
		}
	}
	key := fmt.Sprintf("%s|%s|%d|%d", f.Kind, f.Memory, f.Arg, f.Line)
	if old, ok := g.byKey[key]; ok {
		old.Reports++
		if elem >= 0 {
			old.First, old.Last = min(old.First, elem), max(old.Last, elem)
		}
		return
	}
	if len(g.findings) >= maxFindings {
		g.Dropped++
		return
	}
	f.Reports = 1
	if elem >= 0 {
		f.First, f.Last = elem, elem
	}
	g.byKey[key] = f
	g.findings = append(g.findings, f)
}

// checkSummary is what --check found, for the summary.
type checkSummary struct {
	Tool     string     `json:"tool"` // oclgrind and its checks
	Reports  int        `json:"reports"`
	Findings []*Finding `json:"findings"`
	Dropped  int        `json:"reports_not_grouped,omitempty"`
}

// checkError returns the error of a --check that found something, which wraps
// bench.ErrVerify (exit 4); nil when it found nothing.
func checkError(kernel string, s *checkSummary) error {
	if len(s.Findings) == 0 {
		return nil
	}
	var lines []string
	for _, f := range s.Findings {
		lines = append(lines, "  "+f.String())
	}
	return &foundError{fmt.Sprintf("--check: Oclgrind found %d problem(s) in %s (%d reports):\n%s", len(s.Findings), kernel, s.Reports, strings.Join(lines, "\n"))}
}

// foundError is what --check found: a verification failure.
type foundError struct{ msg string }

func (e *foundError) Error() string { return e.msg }
func (e *foundError) Unwrap() error { return bench.ErrVerify }

// lookOclgrind returns the path of the oclgrind command, or an error naming it that wraps
// engine.ErrUnavailable (exit 3).
func lookOclgrind() (string, error) {
	p, err := exec.LookPath("oclgrind")
	if err != nil {
		return "", fmt.Errorf("--check runs the kernel under Oclgrind, and no oclgrind command was found in PATH (Debian and Ubuntu: apt-get install oclgrind): %w", engine.ErrUnavailable)
	}
	return p, nil
}

// execCheck runs job once under Oclgrind and returns the child's result, what Oclgrind
// found (nil when it could not run) and the run's error.
func execCheck(ctx context.Context, cmd *cobra.Command, job *childJob, args []*userkernel.Arg) (userkernel.Result, *checkSummary, error) {
	res := userkernel.Result{Device: job.Device}
	tool, err := lookOclgrind()
	if err != nil {
		return res, nil, err
	}
	dir, err := os.MkdirTemp("", "prism-check-")
	if err != nil {
		return res, nil, err
	}
	defer os.RemoveAll(dir)
	fifo := filepath.Join(dir, "oclgrind.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		return res, nil, fmt.Errorf("--check: the FIFO of Oclgrind's log: %w", err)
	}
	// The reader first (without blocking), then a writer held until the child ends, so
	// that the reader sees no end while Oclgrind closes and reopens the log.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return res, nil, err
	}
	defer r.Close()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		return res, nil, err
	}
	log := newOclgrindLog(args)
	log.file = filepath.Base(job.File)
	done := make(chan error, 1)
	go func() { done <- log.read(r) }()
	wrapper := append([]string{tool}, oclgrindChecks...)
	wrapper = append(wrapper, "--log", fifo)
	res, _, runErr := execInChild(ctx, cmd, job, childOptions{wrapper: wrapper, env: []string{"PRISM_POOL=off"}})
	w.Close()
	readErr := <-done
	sum := &checkSummary{Tool: strings.Join(append([]string{"oclgrind"}, oclgrindChecks...), " "), Reports: log.Reports,
		Findings: log.findings, Dropped: log.Dropped}
	var ce *crashError
	if errors.As(runErr, &ce) {
		runErr = fmt.Errorf("--check: Oclgrind ended without a result on %s (%v): it may not simulate what the kernel does; its reports before the end are below", job.Device, ce.signalOrCode())
	}
	return res, sum, errors.Join(runErr, readErr)
}

// signalOrCode says how a child ended: its signal, else its exit code.
func (e *crashError) signalOrCode() string {
	if e.signal != "" {
		return e.signal
	}
	return "exit " + strconv.Itoa(e.code)
}
