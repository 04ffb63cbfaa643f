package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/prism-compute/prism/bench/site"
)

type publishOptions struct {
	title string
}

func newPublishCmd() *cobra.Command {
	opts := &publishOptions{}
	cmd := &cobra.Command{
		Use:   "publish DIR",
		Short: "Write the results store as a static web site",
		Long: `Write every run of the results store as a static web site in DIR, as asv publishes its
results: open DIR/index.html in a browser, copy the directory anywhere, or serve it as it
is ('prism serve DIR' previews it on 127.0.0.1).

  index.html        the devices side by side per op: for each case and device fingerprint,
                    the latest run's best variant, its rate, the vendor library's time over
                    Prism's (above 1x: Prism is faster) and the verdict; the series slower
                    since their latest step
  cases/NAME.html   a case's history per size and device: a chart of each run's median
                    with its min-max bar, the steps of each series marked (bench/regress's
                    detector: the first run of a slower or a faster level), and a table
  runs.html         the runs, newest first
  runs/ID.html      a run: when, where, the command, the commit, the devices with every
                    field of their fingerprint and their ceilings, every result and verdict

No page loads anything from the network or runs a script; every link is relative. The
same store gives the same files. The site is written beside DIR and then swapped in
whole: DIR holds the old site or the new one, never a part, and a failed or interrupted
publish leaves it as it was. DIR may exist only as an empty directory or a site prism
published: anything else is refused (exit code 2), never overwritten.

--store or PRISM_STORE chooses the store, as for every command (a SQLite file or a
PostgreSQL DSN).`,
		Example: `  prism publish site && xdg-open site/index.html
  prism publish /var/www/prism --title "GPU lab results"
  PRISM_STORE=postgres://ci@db/prism prism publish public && rsync -a --delete public/ web:/srv/prism/
  prism serve site                      # preview it on http://127.0.0.1:8000/`,
		Args: usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs // DIR: directories
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return publishRun(cmd, opts, args[0])
		},
	}
	cmd.Flags().StringVar(&opts.title, "title", "", "the site's name at the top of every page (default \""+site.DefaultTitle+"\")")
	return cmd
}

func publishRun(cmd *cobra.Command, opts *publishOptions, dir string) error {
	sum, err := publishSite(cmd, dir, opts.title)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %d runs, %d cases, %d devices\n", filepath.Join(displayPath(sum.Dir), "index.html"), sum.Runs, sum.Cases, sum.Devices)
	if sum.Slower > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "%d series slower since their latest step: see the index\n", sum.Slower)
	}
	return nil
}

// publishSite writes the site of the store cmd uses into dir.
func publishSite(cmd *cobra.Command, dir, title string) (site.Summary, error) {
	s, err := openStore(cmd)
	if err != nil {
		return site.Summary{}, err
	}
	defer s.Close()
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	sum, err := site.Publish(ctx, s, dir, site.Options{Title: title})
	switch {
	case errors.Is(err, site.ErrNotSite), errors.Is(err, os.ErrNotExist):
		return sum, usageError{err}
	case err != nil:
		return sum, err
	}
	return sum, nil
}
