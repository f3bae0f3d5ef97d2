package main

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Output is what one run of benchmarks printed, by benchmark name (without the -GOMAXPROCS
// suffix): every result line of a benchmark (one per -count), and why a benchmark that gave no
// result failed or was skipped.
type Output struct {
	Results map[string][]Result
	Failed  map[string]string
	Skipped map[string]string
}

// Result is one line of a benchmark's results: its iterations and each value by unit
// ("ns/op", "B/op", "p50-µs", ...).
type Result struct {
	N      int64
	Values map[string]float64
}

// resultLine is a benchmark's name, its iterations and the rest of the line.
var resultLine = regexp.MustCompile(`^(Benchmark\S*)\s+(\d+)\s+(.*)$`)

// status is a benchmark's FAIL or SKIP line and the indented lines before and after it.
type status struct {
	name          string
	fail          bool
	before, after []string
}

// statusLine is a failed or skipped benchmark, possibly after its name printed before it ran.
var statusLine = regexp.MustCompile(`--- (FAIL|SKIP): (Benchmark\S*)`)

// procsSuffix is the -GOMAXPROCS the testing package appends to a name when it is above 1.
var procsSuffix = regexp.MustCompile(`-\d+$`)

// ParseOutput reads the standard benchmark output format
// (https://go.googlesource.com/proposal/+/master/design/14313-benchmark-format.md), as a test
// binary prints it with or without -test.v: result lines "BenchmarkName-2  N  value unit  value
// unit ...", and the "--- FAIL:" and "--- SKIP:" lines with the indented lines that say why,
// which come after the status line without -test.v and before it with -test.v (which prints
// skips at all). Other lines are ignored.
func ParseOutput(out []byte) (*Output, error) {
	o := &Output{Results: map[string][]Result{}, Failed: map[string]string{}, Skipped: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	var before []string // indented lines since the last line that was not
	var st *status      // the last FAIL or SKIP, while indented lines may follow it
	flush := func() {
		if st == nil {
			return
		}
		msg := st.after
		if len(msg) == 0 {
			msg = st.before
		}
		if st.fail {
			o.Failed[st.name] = strings.Join(msg, "\n")
		} else {
			o.Skipped[st.name] = strings.Join(msg, "\n")
		}
		st = nil
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			if st != nil {
				st.after = append(st.after, strings.TrimSpace(line))
			} else {
				before = append(before, strings.TrimSpace(line))
			}
			continue
		}
		flush()
		if m := statusLine.FindStringSubmatch(line); m != nil {
			st = &status{name: baseName(m[2]), fail: m[1] == "FAIL", before: before}
			before = nil
			continue
		}
		before = nil
		m := resultLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		r, err := parseResult(m[2], m[3])
		if err != nil {
			return nil, fmt.Errorf("benchmark output line %q: %w", line, err)
		}
		name := baseName(m[1])
		o.Results[name] = append(o.Results[name], r)
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading benchmark output: %w", err)
	}
	return o, nil
}

// parseResult reads the iterations and the value-unit pairs of a result line.
func parseResult(n, rest string) (Result, error) {
	iters, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return Result{}, fmt.Errorf("iterations %q: %w", n, err)
	}
	fields := strings.Fields(rest)
	if len(fields)%2 != 0 {
		return Result{}, fmt.Errorf("%d fields after the iterations, want value-unit pairs", len(fields))
	}
	r := Result{N: iters, Values: map[string]float64{}}
	for i := 0; i < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return Result{}, fmt.Errorf("value %q of %s: %w", fields[i], fields[i+1], err)
		}
		r.Values[fields[i+1]] = v
	}
	return r, nil
}

// baseName is a benchmark's name without the -GOMAXPROCS suffix. None of the module's
// benchmarks has a name that itself ends in a dash and digits.
func baseName(name string) string {
	return procsSuffix.ReplaceAllString(name, "")
}

// Values is every value of unit that the benchmark name reported, one per run, in order; or
// why there is none. A benchmark that failed in any run gives no values: the others' may be
// the fast ones.
func (o *Output) Values(name, unit string) ([]float64, error) {
	if msg, ok := o.Failed[name]; ok {
		return nil, fmt.Errorf("%s failed: %s", name, firstLine(msg)) // in one run of several, maybe
	}
	rs := o.Results[name]
	if len(rs) == 0 {
		for _, n := range parents(name) {
			if msg, ok := o.Failed[n]; ok {
				return nil, fmt.Errorf("%s failed: %s", n, firstLine(msg))
			}
		}
		for _, n := range append([]string{name}, parents(name)...) {
			if msg, ok := o.Skipped[n]; ok {
				return nil, fmt.Errorf("%s skipped: %s", n, firstLine(msg))
			}
		}
		return nil, fmt.Errorf("%s: %w", name, ErrNoBenchmark)
	}
	var vs []float64
	for _, r := range rs {
		v, ok := r.Values[unit]
		if !ok {
			return nil, fmt.Errorf("%s reported no %s: %w", name, unit, ErrNoMetric)
		}
		vs = append(vs, v)
	}
	return vs, nil
}

// parents are the names of the benchmarks above name, nearest first.
func parents(name string) []string {
	var out []string
	for i := strings.LastIndex(name, "/"); i > 0; i = strings.LastIndex(name, "/") {
		name = name[:i]
		out = append(out, name)
	}
	return out
}

// firstLine is the first line of s, or "no reason given" when s is empty.
func firstLine(s string) string {
	if s == "" {
		return "no reason given"
	}
	line, _, _ := strings.Cut(s, "\n")
	return line
}
