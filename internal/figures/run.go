package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is what a measurement runs: where, how often, how long.
type Config struct {
	Root  string // the module root; rows' packages and inputs are relative to it
	Count int    // runs of each benchmark
	Quick bool   // each Bench's Quick benchtime instead of its Benchtime
	Log   io.Writer
}

// Measured is the output of each Bench that ran, and why each that did not run was skipped.
type Measured struct {
	Out     map[string]*Output // by Bench.key
	Missing map[string]string  // by Bench.key
	Took    time.Duration
}

// benchtime is the -benchtime b runs with under c.
func (c Config) benchtime(b Bench) string {
	if c.Quick {
		return b.Quick
	}
	return b.Benchtime
}

// Measure builds each package's test binary once, then runs every Bench of rows with it, in
// the order the rows name them.
func Measure(ctx context.Context, c Config, rows []Row) (*Measured, error) {
	start := time.Now()
	m := &Measured{Out: map[string]*Output{}, Missing: map[string]string{}}
	dir, err := os.MkdirTemp("", "tasklog-figures-")
	if err != nil {
		return nil, fmt.Errorf("temporary folder for the test binaries: %w", err)
	}
	defer os.RemoveAll(dir)
	bins := map[string]string{}
	for _, b := range benches(rows) {
		env, missing := inputs(c.Root, b.Needs)
		if missing != "" {
			m.Missing[b.key()] = missing
			fmt.Fprintf(c.Log, "skip %s %s: %s\n", b.Pkg, b.Regexp, missing)
			continue
		}
		bin, ok := bins[b.Pkg]
		if !ok {
			bin = filepath.Join(dir, strings.ReplaceAll(b.Pkg, "/", "_")+".test")
			fmt.Fprintf(c.Log, "build the tests of ./%s\n", b.Pkg)
			if err := build(ctx, c.Root, b.Pkg, bin); err != nil {
				return nil, err
			}
			bins[b.Pkg] = bin
		}
		fmt.Fprintf(c.Log, "run %s -bench '%s' -benchtime %s -count %d ... ", b.Pkg, b.Regexp, c.benchtime(b), c.Count)
		t0 := time.Now()
		out, runErr := runBench(ctx, c, b, bin, env)
		var exit *exec.ExitError
		if runErr != nil && !errors.As(runErr, &exit) {
			return nil, fmt.Errorf("running the benchmarks of %s: %w", b.Pkg, runErr)
		}
		o, err := ParseOutput(out)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Pkg, err)
		}
		fmt.Fprintf(c.Log, "%s\n", time.Since(t0).Round(time.Second))
		if runErr != nil {
			fmt.Fprintf(c.Log, "%s: %v; its output ends:\n%s\n", b.Pkg, runErr, tail(out, 20))
		}
		m.Out[b.key()] = o
	}
	m.Took = time.Since(start)
	return m, nil
}

// benches are the distinct Benches of rows, in the order the rows first name them.
func benches(rows []Row) []Bench {
	var out []Bench
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.Bench.key()] {
			seen[r.Bench.key()] = true
			out = append(out, r.Bench)
		}
	}
	return out
}

// inputs are the environment variables that point b's benchmarks at their inputs, or the one
// line saying which is missing.
func inputs(root string, needs []Input) (env []string, missing string) {
	for _, in := range needs {
		dir := os.Getenv(in.Env)
		if dir == "" {
			dir = filepath.Join(root, in.Default)
		}
		p := filepath.Join(dir, in.Check)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Sprintf("input not found at %s: set %s", p, in.Env)
		}
		env = append(env, in.Env+"="+dir)
	}
	return env, ""
}

// build compiles the test binary of pkg (relative to root) to bin.
func build(ctx context.Context, root, pkg, bin string) error {
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, "./"+pkg)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the tests of %s (go test -c ./%s): %w\n%s", pkg, pkg, err, stderr.String())
	}
	return nil
}

// runBench runs b's benchmarks with the test binary bin in the package's folder, as 'go test
// -run ^$ -bench b.Regexp -benchmem' does, and returns what it printed; -v, so that a skipped
// benchmark says why. A benchmark that fails
// makes the binary exit 1: its output is still read.
func runBench(ctx context.Context, c Config, b Bench, bin string, env []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", b.Regexp, "-test.benchmem", "-test.v",
		"-test.benchtime", c.benchtime(b), "-test.count", strconv.Itoa(c.Count), "-test.timeout", "60m")
	cmd.Dir = filepath.Join(c.Root, b.Pkg)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// tail is the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// key names b's run: rows with the same package, regexp and benchtimes share it.
func (b Bench) key() string {
	return b.Pkg + "\x00" + b.Regexp + "\x00" + b.Benchtime + "\x00" + b.Quick
}
