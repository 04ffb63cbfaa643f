package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// errStale is returned by -check when the page's section differs from what the reports make.
var errStale = errors.New("perfdoc: the current results are out of date: run go run ./scripts/perfdoc")

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run parses the arguments and writes (or with -check compares) the page's section.
func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("perfdoc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	results := fs.String("results", "docs/results", "the folder of stored report files")
	page := fs.String("doc", "docs/PERFORMANCE.md", "the page whose section between the markers is written")
	check := fs.Bool("check", false, "write nothing; fail when the page's section is not what the reports make")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("perfdoc: unexpected arguments %q", fs.Args())
	}
	doc, err := readFile(*page)
	if err != nil {
		return err
	}
	want, err := generate(*results, *page)
	if err != nil {
		return err
	}
	out, err := splice(doc, want)
	if err != nil {
		return fmt.Errorf("%s: %w", *page, err)
	}
	if *check {
		if out != doc {
			return errStale
		}
		return nil
	}
	if out == doc {
		return nil
	}
	return os.WriteFile(*page, []byte(out), 0o644)
}

// generate returns the section that the reports in results make for the page at page.
func generate(results, page string) (string, error) {
	sources, err := loadResults(results)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(filepath.Dir(page), results)
	if err != nil {
		return "", fmt.Errorf("perfdoc: %w", err)
	}
	return render(current(sources), currentSplits(sources), filepath.ToSlash(rel)), nil
}
