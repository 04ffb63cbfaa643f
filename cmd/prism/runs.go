package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench/store"
)

type runsOptions struct {
	device, op, commit, host string
	since, until             string
	limit                    int
	outputFlags
}

func newRunsCmd() *cobra.Command {
	opts := &runsOptions{}
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs in the results store, newest first",
		Long: `List the runs recorded in the results store (every prism bench, run and exec records
its report there unless --no-store or PRISM_STORE=off), newest first: the run's ID, its
start, host, commit, devices, the number of cases and whether it was interrupted.

The filters narrow the list: --device an ID (opencl:0:0) or part of a device's name
(pthread, h100), --op a case's name or part of it or a pattern with * (triad,
gemm/*/float32), --commit a commit's prefix, --host a host's name, --since and --until
a date (2006-01-02, the whole day for --until) or a time (RFC 3339:
2006-01-02T15:04:05Z07:00), --limit the most runs shown (the newest).

A run's ID, @last, @previous, @last~N, a commit prefix or a baseline's name is accepted
wherever a report file is ('prism compare @previous @last', 'prism report 42').`,
		Example: `  prism runs
  prism runs --device cuda:0 --op gemm --limit 10
  prism runs --since 2025-01-01 --until 2025-01-31 --host node1
  prism runs --commit 3f9c2a1 --json | jq '.[].id'
  prism compare @previous @last          # the last two runs`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runsRun(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.device, "device", "", "runs with a device of this ID, or whose name holds it")
	f.StringVar(&opts.op, "op", "", "runs with a case of this name, part of one, or pattern with *")
	f.StringVar(&opts.commit, "commit", "", "runs of a commit that starts with this")
	f.StringVar(&opts.host, "host", "", "runs of this host")
	f.StringVar(&opts.since, "since", "", "runs started on or after this date (2006-01-02) or time (RFC 3339)")
	f.StringVar(&opts.until, "until", "", "runs started on or before this date (the whole day) or before this time (RFC 3339)")
	f.IntVar(&opts.limit, "limit", 0, "the most runs shown, the newest (0: all)")
	opts.add(f, "json")
	return cmd
}

// runJSON is a run as prism runs --json lists it.
type runJSON struct {
	ID            int64        `json:"id"`
	Date          time.Time    `json:"date"`
	Host          string       `json:"host"`
	Prism         string       `json:"prism_version"`
	Commit        string       `json:"commit,omitempty"`
	Command       []string     `json:"command,omitempty"`
	Devices       []deviceJSON `json:"devices"`
	Cases         int          `json:"cases"`
	Interrupted   bool         `json:"interrupted,omitempty"`
	InterruptedAt string       `json:"interrupted_at,omitempty"`
}

// deviceJSON is a device of a run or a point, with the fingerprint that decides what it
// is compared with.
type deviceJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Backend     string `json:"backend,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
}

func deviceOf(d store.Device) deviceJSON { return deviceJSON{d.ID, d.Name, d.Backend, d.Fingerprint} }

func runsRun(cmd *cobra.Command, opts *runsOptions) error {
	if err := opts.check(cmd.Flags()); err != nil {
		return err
	}
	if opts.limit < 0 {
		return usageError{fmt.Errorf("--limit %d: must be 0 (all) or more", opts.limit)}
	}
	since, err := parseWhen("--since", opts.since, false)
	if err != nil {
		return err
	}
	until, err := parseWhen("--until", opts.until, true)
	if err != nil {
		return err
	}
	s, err := openStore(cmd)
	if err != nil {
		return err
	}
	defer s.Close()
	runs, err := s.Runs(storeContext(cmd), store.Filter{Device: opts.device, Case: opts.op, Commit: opts.commit, Host: opts.host,
		Since: since, Until: until, Limit: opts.limit})
	if err != nil {
		return storeError{err}
	}
	return opts.write(cmd, func(w io.Writer) error {
		if opts.json {
			out := make([]runJSON, len(runs))
			for i, r := range runs {
				out[i] = runJSON{ID: int64(r.ID), Date: r.Date, Host: r.Host, Prism: r.Prism, Commit: r.Commit, Command: r.Command,
					Cases: r.Results, Interrupted: r.Interrupted, InterruptedAt: r.InterruptedAt, Devices: []deviceJSON{}}
				for _, d := range r.Devices {
					out[i].Devices = append(out[i].Devices, deviceOf(d))
				}
			}
			return writeJSON(w, out)
		}
		if len(runs) == 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "no runs in %s match\n", displayPath(s.Path()))
			return nil
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tDATE\tHOST\tCOMMIT\tDEVICES\tCASES\t")
		for _, r := range runs {
			note := ""
			if r.Interrupted {
				note = "interrupted"
				if r.InterruptedAt != "" {
					note += " at " + r.InterruptedAt
				}
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, r.Date.Local().Format("2006-01-02 15:04"), safeText(r.Host),
				shortCommit(r.Commit), safeText(deviceIDsOf(r.Devices)), r.Results, safeText(note))
		}
		return tw.Flush()
	})
}

// deviceIDsOf lists the devices' IDs, comma-separated.
func deviceIDsOf(devs []store.Device) string {
	ids := make([]string, len(devs))
	for i, d := range devs {
		ids[i] = d.ID
	}
	return strings.Join(ids, ",")
}

// shortCommit is a commit as the tables show it: 9 hex digits and -dirty where it was.
func shortCommit(c string) string {
	base, dirty := strings.CutSuffix(c, "-dirty")
	if len(base) > 9 {
		base = base[:9]
	}
	if base == "" {
		return "-"
	}
	if dirty {
		base += "-dirty"
	}
	return base
}

// parseWhen parses the date or time of flag: 2006-01-02 (local midnight; with
// endOfDay, the next midnight, so that the day is included) or RFC 3339. Empty: no bound.
func parseWhen(flag, v string, endOfDay bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", v, time.Local); err == nil {
		if endOfDay {
			t = t.AddDate(0, 0, 1)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, usageError{fmt.Errorf("%s %q: want a date (2006-01-02) or a time (RFC 3339: 2006-01-02T15:04:05Z07:00)", flag, v)}
	}
	return t, nil
}

// safeText escapes what a terminal would act on in text from the store (control
// characters, bidirectional controls), as reports are printed: "\x1b", "\u202e".
func safeText(s string) string {
	bad := func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }
	if strings.IndexFunc(s, bad) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if bad(r) {
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
