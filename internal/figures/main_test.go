package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// tinyRows are rows over the benchmarks of testdata/tinymod, which take no time.
func tinyRows() []Row {
	tiny := Bench{Pkg: "tiny", Regexp: "^(BenchmarkJoin|BenchmarkSkipped)$", Benchtime: "1000x", Quick: "10x"}
	return []Row{
		{What: "join three strings: mean / answers / allocated", Bench: tiny, Parts: []Part{
			{Name: "BenchmarkJoin", Metric: NsOp},
			{Name: "BenchmarkJoin", Metric: Metric{Unit: "answers/op", Kind: Number, Label: "answers"}},
			{Name: "BenchmarkJoin", Metric: BOp},
		}},
		{What: "a benchmark without its input", Bench: tiny, Parts: []Part{{Name: "BenchmarkSkipped", Metric: NsOp}}},
		{What: "another package", Bench: Bench{Pkg: "other", Regexp: ".", Benchtime: "1x", Quick: "1x"},
			Parts: []Part{{Name: "BenchmarkOther", Metric: NsOp}}},
	}
}

// TestRunTiny runs the program end to end on a module of tiny benchmarks: it builds the test
// binary, runs the benchmarks, reads their output, prints the report and writes it on a page.
func TestRunTiny(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not found on PATH: the benchmarks are built with go test -c")
	}
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		t.Skip("/proc/loadavg not found: the load average is read from it")
	}
	root, err := filepath.Abs(filepath.Join("testdata", "tinymod"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	p := program{root: root, rows: tinyRows()}
	ctx := context.Background()

	var stdout, stderr bytes.Buffer
	if err := run(ctx, p, []string{"-quick", "-only", "join|input"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^- machine: .+, \d+ cores, .+ of memory; .+; go1\.`),
		regexp.MustCompile(`(?m)^- load average \(1, 5, 15 minutes\): [\d.]+, [\d.]+, [\d.]+ before; [\d.]+, [\d.]+, [\d.]+ after`),
		regexp.MustCompile(`(?m)^\| join three strings: mean / answers / allocated \| [\d.]+ (ns|µs) / 42 answers / [\d.]+ B \| ` +
			"`tiny` `BenchmarkJoin`, `-benchtime 10x` \\|$"),
		regexp.MustCompile(`(?m)^\| a benchmark without its input \| not measured: BenchmarkSkipped skipped: tiny_test\.go:\d+: input not found: set TINY_INPUT \|`),
		regexp.MustCompile(`(?m)^\*\*-quick: `),
	} {
		if !want.MatchString(out) {
			t.Errorf("the report does not match %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "another package") {
		t.Errorf("-only ran a row it does not match:\n%s", out)
	}

	page := filepath.Join(t.TempDir(), "performance.md")
	before, after := "# Performance\n\nIntro.\n\n"+BeginMarker+"\n", EndMarker+"\n\nThe rest.\n"
	if err := os.WriteFile(page, []byte(before+"| old |\n"+after), 0o644); err != nil {
		t.Fatal(err)
	}
	p.rows = tinyRows()[:2]
	stdout.Reset()
	if err := run(ctx, p, []string{"-quick", "-write", page}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	got, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if want := before + stdout.String() + "\n" + after; string(got) != want {
		t.Errorf("the page is\n%s\nwant the report between the markers:\n%s", got, want)
	}
}

func TestRunFlags(t *testing.T) {
	p := program{root: t.TempDir(), rows: tinyRows()}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"-only", "nothing matches this"}, "matches no row"},
		{[]string{"-only", "("}, "-only: error parsing regexp"},
		{[]string{"-only", "join", "-write", "docs/performance.md"}, "cannot be used with -only"},
		{[]string{"-count", "0"}, "-count 0: want 1 or more"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), p, tc.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: error %v, want one saying %q", tc.args, err, tc.err)
		}
		if stdout.Len() > 0 {
			t.Errorf("%q printed %q", tc.args, stdout.String())
		}
	}
}
