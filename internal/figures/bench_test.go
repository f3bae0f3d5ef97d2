package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// benchOutput is benchmark output as a test binary prints it with -count 2 and -test.v: a
// header, sub-benchmarks with custom metrics, a benchmark skipped below its top and one at its
// top (their reasons before the status line), one that fails after its name is printed (the
// reason after the status line, as without -test.v) and one that fails later (before), one that fails in the second of its runs.
const benchOutput = `goos: linux
goarch: amd64
pkg: github.com/tasklog/tasklog/store
cpu: AMD EPYC
BenchmarkReopenAppend/events=10000/durable-2         	      50	   3200000 ns/op	      3150 p50-µs	   12000 B/op	     150 allocs/op
BenchmarkReopenAppend/events=10000/durable-2         	      50	   3400000 ns/op	      3310 p50-µs	   12100 B/op	     151 allocs/op
BenchmarkReopenAppend/events=1000000/durable
    reopen_bench_test.go:400: builds a million-event task; skipped with -short
--- SKIP: BenchmarkReopenAppend/events=1000000/durable
BenchmarkRead/envelopes-2   	       5	  29000000 ns/op	   3450000 events/s	 1000 B/op	 10 allocs/op
BenchmarkRead/envelopes-2   	       5	  28000000 ns/op	   3510000 events/s	 1000 B/op	 10 allocs/op
BenchmarkDiskUsage-2        	1000000000	         0.0000010 ns/op	       276.0 disk-B/event	        76.70 payload-B/event
BenchmarkBroken-2           	--- FAIL: BenchmarkBroken-2
    bench_test.go:12: open fixture: no such file
    bench_test.go:13: second line
BenchmarkFlaky-2            	     100	      1000 ns/op
BenchmarkFlaky
    bench_test.go:30: lost the race
--- FAIL: BenchmarkFlaky-2
BenchmarkLate
    bench_test.go:20: late failure
--- FAIL: BenchmarkLate-2
BenchmarkClineCorpus
    clinecorpus_bench_test.go:45: Cline corpus not found at /x/cline-corpus: set TASKLOG_BENCH to run this
--- SKIP: BenchmarkClineCorpus
PASS
ok  	github.com/tasklog/tasklog/store	12.3s
`

func TestValues(t *testing.T) {
	o, err := ParseOutput([]byte(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, unit string
		want       []float64
		err        string // a part of the error, when one is wanted
		is         error
	}{
		{name: "BenchmarkReopenAppend/events=10000/durable", unit: "p50-µs", want: []float64{3150, 3310}},
		{name: "BenchmarkReopenAppend/events=10000/durable", unit: "ns/op", want: []float64{3.2e6, 3.4e6}},
		{name: "BenchmarkReopenAppend/events=10000/durable", unit: "B/op", want: []float64{12000, 12100}},
		{name: "BenchmarkRead/envelopes", unit: "events/s", want: []float64{3.45e6, 3.51e6}},
		{name: "BenchmarkDiskUsage", unit: "payload-B/event", want: []float64{76.7}},
		{name: "BenchmarkReopenAppend/events=1000000/durable", unit: "p50-µs",
			err: "BenchmarkReopenAppend/events=1000000/durable skipped: reopen_bench_test.go:400: builds a million-event task"},
		{name: "BenchmarkBroken", unit: "ns/op", err: "BenchmarkBroken failed: bench_test.go:12: open fixture: no such file"},
		{name: "BenchmarkClineCorpus/ws50/paths10.json/watched/cached", unit: "p50-µs",
			err: "BenchmarkClineCorpus skipped: clinecorpus_bench_test.go:45: Cline corpus not found"},
		{name: "BenchmarkLate", unit: "ns/op", err: "BenchmarkLate failed: bench_test.go:20: late failure"},
		{name: "BenchmarkFlaky", unit: "ns/op", err: "BenchmarkFlaky failed: bench_test.go:30: lost the race"},
		{name: "BenchmarkRenamed", unit: "ns/op", is: ErrNoBenchmark},
		{name: "BenchmarkRead/payloads", unit: "events/s", is: ErrNoBenchmark},
		{name: "BenchmarkRead/envelopes", unit: "p50-µs", is: ErrNoMetric},
	} {
		t.Run(tc.name+"/"+tc.unit, func(t *testing.T) {
			got, err := o.Values(tc.name, tc.unit)
			switch {
			case tc.err != "" || tc.is != nil:
				if err == nil {
					t.Fatalf("got %v, want an error", got)
				}
				if !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %q, want it to contain %q", err, tc.err)
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("error %q is not %v", err, tc.is)
				}
			case err != nil:
				t.Fatal(err)
			case !slices.Equal(got, tc.want):
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseOutputFailedMessage(t *testing.T) {
	o, err := ParseOutput([]byte(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := "bench_test.go:12: open fixture: no such file\nbench_test.go:13: second line"
	if got := o.Failed["BenchmarkBroken"]; got != want {
		t.Errorf("failure message %q, want %q", got, want)
	}
}

func TestParseOutputBadLines(t *testing.T) {
	for _, line := range []string{
		"BenchmarkX-2   10   12 ns/op   7",       // a value without its unit
		"BenchmarkX-2   10   twelve ns/op",       // a value that is not a number
		"BenchmarkX-2   10   12 ns/op   1e ms/x", // a malformed number
	} {
		if _, err := ParseOutput([]byte(line + "\n")); err == nil {
			t.Errorf("%q: parsed, want an error", line)
		}
	}
}

func TestParseOutputIgnoresOtherLines(t *testing.T) {
	o, err := ParseOutput([]byte("BenchmarkX is not a result\nBenchmarks ran\nFAIL\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Results)+len(o.Failed)+len(o.Skipped) != 0 {
		t.Errorf("read %+v from lines that are no results", o)
	}
}
