// Command figures measures the figures of the performance page on this machine: it runs the
// benchmark behind every row of the page's table (go test -run '^$' -bench ... -benchmem, each
// package's tests built once), prints the machine, the load average before and after and the
// table, each figure the range over the runs; with -write it puts the table on the page
// between its markers.
//
//	go run ./internal/figures [-count 3] [-quick] [-only REGEXP] [-write docs/performance.md]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	root, err := moduleRoot()
	if err == nil {
		err = run(ctx, program{root: root, rows: Rows}, os.Args[1:], os.Stdout, os.Stderr)
	}
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "figures:", err)
		}
		os.Exit(2)
	}
}

// program is what run measures: the module at root and its rows.
type program struct {
	root string
	rows []Row
}

// moduleRoot is the folder of the go.mod above the working directory.
func moduleRoot() (string, error) {
	gomod, err := goCmd(".", "env", "GOMOD")
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("no go.mod found above the working directory (go env GOMOD: %q, %v): run this in the tasklog checkout", gomod, err)
	}
	return filepath.Dir(gomod), nil
}

// run parses the flags, measures the rows and prints the report; with -write it replaces the
// table on the page, which it reads before measuring so that a page without markers fails at
// once and is not written.
func run(ctx context.Context, p program, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("figures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	count := fs.Int("count", 3, "runs of each benchmark; each figure is the range over them")
	quick := fs.Bool("quick", false, "run each benchmark once with short benchtimes, to try this out")
	only := fs.String("only", "", "run only the rows whose label, package or benchmark matches this regexp")
	write := fs.String("write", "", "replace the table between the markers of this page (docs/performance.md)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: the flags are -count, -quick, -only and -write", fs.Args())
	}
	if *quick {
		*count = 1
	}
	if *count < 1 {
		return fmt.Errorf("-count %d: want 1 or more", *count)
	}
	rows, err := selectRows(p.rows, *only)
	if err != nil {
		return err
	}
	if *write != "" && *only != "" {
		return errors.New("-write replaces the whole table: it cannot be used with -only, which would drop the other rows")
	}
	var page []byte
	if *write != "" {
		if page, err = os.ReadFile(*write); err != nil {
			return fmt.Errorf("reading the page to write: %w", err)
		}
		if _, err := ReplaceTable(page, ""); err != nil {
			return fmt.Errorf("%s: %w; nothing was measured or written", *write, err)
		}
	}
	c := Config{Root: p.root, Count: *count, Quick: *quick, Log: stderr}
	before, err := ReadLoad()
	if err != nil {
		return err
	}
	if before[0] > 1 {
		fmt.Fprintf(stderr, "warning: the load average is %.2f (above 1): other work on this machine will slow the benchmarks; measure on a quiet machine for figures to publish\n", before[0])
	}
	date := time.Now()
	m, err := Measure(ctx, c, rows)
	if err != nil {
		return err
	}
	after, err := ReadLoad()
	if err != nil {
		return err
	}
	r := Report{Machine: ReadMachine(p.root), Date: date, Before: before, After: after, Count: *count, Quick: *quick,
		Took: m.Took, Lines: Lines(rows, m, c)}
	text := r.Markdown()
	fmt.Fprint(stdout, text)
	if *write != "" {
		out, err := ReplaceTable(page, text)
		if err != nil {
			return fmt.Errorf("%s: %w", *write, err)
		}
		if err := os.WriteFile(*write, out, 0o644); err != nil {
			return fmt.Errorf("writing the table to %s: %w", *write, err)
		}
	}
	return nil
}

// selectRows are the rows whose label, package or benchmark names match the regexp only.
func selectRows(rows []Row, only string) ([]Row, error) {
	if only == "" {
		return rows, nil
	}
	re, err := regexp.Compile(only)
	if err != nil {
		return nil, fmt.Errorf("-only: %w", err)
	}
	var out []Row
	for _, r := range rows {
		text := []string{r.What, r.Bench.Pkg}
		for _, p := range r.Parts {
			text = append(text, p.Name)
		}
		if slices.ContainsFunc(text, re.MatchString) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-only %q matches no row: it is matched against each row's label, package and benchmark names", only)
	}
	return out, nil
}
