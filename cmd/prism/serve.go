package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
)

// defaultServeAddr is where prism serve listens without --addr: this machine only.
const defaultServeAddr = "127.0.0.1:8000"

type serveOptions struct {
	addr  string
	title string
}

func newServeCmd() *cobra.Command {
	opts := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve [DIR]",
		Short: "Preview the published site in a browser, on 127.0.0.1",
		Long: `Serve a site that 'prism publish' wrote in DIR over HTTP, to look at it in a browser; or,
without DIR, publish the results store (--store, PRISM_STORE) into a temporary directory
first and serve that (it is removed when prism serve stops).

It listens on --addr, by default ` + defaultServeAddr + `: this machine only. Another address
(0.0.0.0:8000) shows the results to whoever can reach it. --addr 127.0.0.1:0 takes a
free port. It prints the URL to open, and stops on Ctrl-C (or SIGTERM).

Publishing again into DIR while it serves shows the new site at the next page loaded:
the pages are not cached.`,
		Example: `  prism serve                           # the store's site, on http://127.0.0.1:8000/
  prism publish site && prism serve site
  prism serve site --addr 127.0.0.1:9000
  PRISM_STORE=team.db prism serve --addr 127.0.0.1:0 --title "Team results"`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs // DIR: directories
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			}
			return serveRun(cmd, opts, dir)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.addr, "addr", defaultServeAddr, "the address to listen on, host:port")
	f.StringVar(&opts.title, "title", "", "without DIR, the site's name at the top of every page")
	return cmd
}

func serveRun(cmd *cobra.Command, opts *serveOptions, dir string) error {
	host, _, err := net.SplitHostPort(opts.addr)
	if err != nil {
		return usageError{fmt.Errorf("--addr %q: want host:port, such as %s: %w", opts.addr, defaultServeAddr, err)}
	}
	if dir != "" {
		if cmd.Flags().Changed("title") {
			return usageError{errors.New("--title is for the site prism serve publishes itself, without DIR: 'prism publish DIR --title ...' titles the site in DIR")}
		}
		if fi, err := os.Stat(filepath.Join(dir, "index.html")); err != nil || !fi.Mode().IsRegular() {
			return usageError{fmt.Errorf("%s has no index.html: not a site ('prism publish %s' writes one)", dir, dir)}
		}
	} else {
		tmp, err := os.MkdirTemp("", "prism-site-")
		if err != nil {
			return fmt.Errorf("serve: a temporary directory for the site: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "site")
		sum, err := publishSite(cmd, dir, opts.title)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "published %d runs, %d cases, %d devices of %s\n", sum.Runs, sum.Cases, sum.Devices, storeName(cmd))
	}
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fmt.Errorf("serve: listening on %s (another server there? --addr 127.0.0.1:0 takes a free port): %w", opts.addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintf(cmd.ErrOrStderr(), "serving on %s: whoever can reach this machine there sees the results\n", opts.addr)
	}
	srv := &http.Server{Handler: siteHandler(dir), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	// The wording is set before the line that says the server is up, so that a signal
	// sent by whoever reads that line is told as what it does here.
	note := "stopping the server"
	onInterrupt.Store(&note)
	fmt.Fprintf(cmd.OutOrStdout(), "serving %s on http://%s/ (Ctrl-C stops)\n", displayPath(dir), ln.Addr())
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(stop)
	fmt.Fprintln(cmd.ErrOrStderr(), "stopped")
	return nil
}

// siteHandler serves the files under dir, never cached, so that a site published again
// shows at the next page loaded.
func siteHandler(dir string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// storeName names the store cmd uses, for people.
func storeName(cmd *cobra.Command) string {
	t, err := storeTargetOf(cmd)
	if err != nil || t.dsn == "" {
		return "the results store"
	}
	return displayPath(t.dsn)
}
