package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// testRows are rows over benchOutput: figures of several kinds, a skipped benchmark, a
// failed one, a renamed one, a unit not reported and a run whose input is missing.
func testRows() []Row {
	store := Bench{Pkg: "store", Regexp: "^(BenchmarkReopenAppend|BenchmarkRead|BenchmarkDiskUsage)$", Benchtime: "50x", Quick: "2x"}
	cline := Bench{Pkg: "session", Regexp: "^BenchmarkClineCorpus$", Benchtime: "400x", Quick: "20x", Needs: []Input{clineCorpus}}
	return []Row{
		{What: "reopen and append, p50, durable; 10k-event task | mean", Bench: store, Parts: []Part{
			{Name: "BenchmarkReopenAppend/events=10000/durable", Metric: P50us},
			{Label: "mean", Name: "BenchmarkReopenAppend/events=10000/durable", Metric: NsOp},
		}},
		{What: "read envelopes / bytes on disk per event", Bench: store, Parts: []Part{
			{Name: "BenchmarkRead/envelopes", Metric: EvS},
			{Name: "BenchmarkDiskUsage", Metric: Metric{Unit: "disk-B/event", Kind: Bytes}},
		}},
		{What: "1M-event task", Bench: store, Parts: []Part{{Name: "BenchmarkReopenAppend/events=1000000/durable", Metric: P50us}}},
		{What: "renamed", Bench: store, Parts: []Part{{Name: "BenchmarkReopenAppend/events=20000/durable", Metric: P50us}}},
		{What: "a unit not reported", Bench: store, Parts: []Part{{Name: "BenchmarkRead/envelopes", Metric: P99us}}},
		{What: "Cline's corpus", Bench: cline, Parts: []Part{{Name: "BenchmarkClineCorpus/ws50/paths10.json/watched/cached", Metric: P50us}}},
	}
}

func testReport(t *testing.T, quick bool) Report {
	t.Helper()
	o, err := ParseOutput([]byte(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	rows := testRows()
	m := &Measured{
		Out:     map[string]*Output{rows[0].Bench.key(): o},
		Missing: map[string]string{rows[5].Bench.key(): "input not found at /x/bench/cline-corpus/ws50: set TASKLOG_BENCH"},
	}
	c := Config{Count: 2, Quick: quick}
	if quick {
		c.Count = 1
	}
	return Report{
		Machine: Machine{CPU: "AMD EPYC", Cores: 2, Memory: "23.5 GB", Go: "go1.26.8", OS: "Debian GNU/Linux 12 (bookworm), Linux 6.18.44, linux/amd64", Commit: "7212d05"},
		Date:    time.Date(2026, 12, 3, 15, 24, 0, 0, time.UTC),
		Before:  Load{0.31, 0.45, 0.52},
		After:   Load{1.92, 1.1, 0.7},
		Count:   c.Count,
		Quick:   quick,
		Took:    9*time.Minute + 12400*time.Millisecond,
		Lines:   Lines(rows, m, c),
	}
}

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct {
		golden string
		quick  bool
		load   float64 // the 1-minute load average at the start
	}{{"table.golden.md", false, 0.31}, {"table-quick-loaded.golden.md", true, 9.58}} {
		t.Run(tc.golden, func(t *testing.T) {
			r := testReport(t, tc.quick)
			r.Before[0] = tc.load
			got := r.Markdown()
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("the report differs from %s (go test -update rewrites it; review the diff):\n%s", path, got)
			}
		})
	}
}

func TestReplaceTable(t *testing.T) {
	const block = "Measured on a machine.\n\n| what | figure | benchmark |\n|---|---|---|\n| a | 1 ms | `x` `BenchmarkA` |\n"
	for _, tc := range []struct {
		name, page, want string
		err              error
	}{
		{
			name: "replaced",
			page: "# Performance\n\nIntro.\n\n" + BeginMarker + "\nold table\n| old |\n" + EndMarker + "\n\nThe rest.\n",
			want: "# Performance\n\nIntro.\n\n" + BeginMarker + "\n" + block + "\n" + EndMarker + "\n\nThe rest.\n",
		},
		{
			name: "empty between the markers",
			page: BeginMarker + "\n" + EndMarker + "\n",
			want: BeginMarker + "\n" + block + "\n" + EndMarker + "\n",
		},
		{
			name: "markers quoted in the prose below",
			page: BeginMarker + "\n| old |\n" + EndMarker + "\n\nBetween `" + BeginMarker + "` and `" + EndMarker + "`.\n",
			want: BeginMarker + "\n" + block + "\n" + EndMarker + "\n\nBetween `" + BeginMarker + "` and `" + EndMarker + "`.\n",
		},
		{name: "no markers", page: "# Performance\n\n| old |\n", err: ErrMarkers},
		{name: "only quoted", page: "Between `" + BeginMarker + "` and `" + EndMarker + "`.\n", err: ErrMarkers},
		{name: "no end", page: BeginMarker + "\n| old |\n", err: ErrMarkers},
		{name: "no begin", page: "| old |\n" + EndMarker + "\n", err: ErrMarkers},
		{name: "end before begin", page: EndMarker + "\n" + BeginMarker + "\n", err: ErrMarkers},
		{name: "two pairs", page: BeginMarker + "\n" + EndMarker + "\n" + BeginMarker + "\n" + EndMarker + "\n", err: ErrMarkers},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReplaceTable([]byte(tc.page), block)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %q, %v; want %v", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestWriteWithoutMarkers checks that -write on a page without markers fails before measuring
// anything and leaves the page as it was.
func TestWriteWithoutMarkers(t *testing.T) {
	page := filepath.Join(t.TempDir(), "performance.md")
	const text = "# Performance\n\n| what | figure | benchmark |\n"
	if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// A root that does not exist: measuring would fail with another error.
	p := program{root: filepath.Join(t.TempDir(), "missing"), rows: testRows()}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), p, []string{"-write", page}, &stdout, &stderr)
	if !errors.Is(err, ErrMarkers) {
		t.Fatalf("got %v, want %v", err, ErrMarkers)
	}
	if !strings.Contains(err.Error(), "nothing was measured or written") {
		t.Errorf("error %q does not say that nothing was written", err)
	}
	if got, _ := os.ReadFile(page); string(got) != text {
		t.Errorf("the page was changed:\n%s", got)
	}
	if stdout.Len() > 0 || strings.Contains(stderr.String(), "run ") {
		t.Errorf("something ran: stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}
