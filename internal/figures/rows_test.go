package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// moduleRootForTest is the module root, two folders above this package.
var moduleRootForTest = filepath.Join("..", "..")

// TestRowsTiedToBenchmarks checks every row of the table against the repository: its package
// has the benchmark each part names, the run's -bench regexp selects the part's benchmark at
// every level, and the benchtimes are ones go test takes. A renamed benchmark fails here, not
// in the next measurement.
func TestRowsTiedToBenchmarks(t *testing.T) {
	funcs := map[string]map[string]bool{} // package → its benchmark functions
	sources := map[string]string{}        // package → its test files
	for _, r := range Rows {
		b := r.Bench
		if funcs[b.Pkg] == nil {
			funcs[b.Pkg], sources[b.Pkg] = benchmarkFuncs(t, filepath.Join(moduleRootForTest, b.Pkg))
		}
		for _, bt := range []string{b.Benchtime, b.Quick} {
			if !validBenchtime(bt) {
				t.Errorf("%s: -benchtime %q: want a duration or Nx", r.What, bt)
			}
		}
		if len(r.Parts) == 0 {
			t.Errorf("%s: no figure", r.What)
		}
		for _, p := range r.Parts {
			top, _, _ := strings.Cut(p.Name, "/")
			if !funcs[b.Pkg][top] {
				t.Errorf("%s: %s has no func %s", r.What, b.Pkg, top)
			}
			if !selects(b.Regexp, p.Name) {
				t.Errorf("%s: -bench %q does not select %s", r.What, b.Regexp, p.Name)
			}
			switch u := p.Metric.Unit; {
			case u == "":
				t.Errorf("%s: %s: no unit", r.What, p.Name)
			case !goTestUnits[u] && !reports(sources[b.Pkg], u):
				t.Errorf("%s: %s: no benchmark of %s reports %q", r.What, p.Name, b.Pkg, u)
			}
		}
	}
}

// TestRowsSelectAndReject checks the matcher the test above relies on.
func TestRowsSelectAndReject(t *testing.T) {
	for _, tc := range []struct {
		re, name string
		want     bool
	}{
		{"^BenchmarkRead$", "BenchmarkRead/envelopes", true},
		{"^BenchmarkRead$", "BenchmarkReadAll", false},
		{"^BenchmarkGroupCommit$/^writers=(8|64)$", "BenchmarkGroupCommit/writers=8", true},
		{"^BenchmarkGroupCommit$/^writers=(8|64)$", "BenchmarkGroupCommit/writers=1", false},
		{"^BenchmarkEvaluate", "BenchmarkEvaluate50x100/paths=new", true},
	} {
		if got := selects(tc.re, tc.name); got != tc.want {
			t.Errorf("selects(%q, %q) = %v, want %v", tc.re, tc.name, got, tc.want)
		}
	}
}

// TestPerformancePageHasMarkers checks that the page the table is written to can take it.
func TestPerformancePageHasMarkers(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(moduleRootForTest, "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReplaceTable(page, "table"); err != nil {
		t.Fatalf("docs/performance.md: %v", err)
	}
}

var benchFunc = regexp.MustCompile(`(?m)^func (Benchmark\w*)\(b \*testing\.B\)`)

// benchmarkFuncs are the names of the benchmark functions in the test files of dir.
func benchmarkFuncs(t *testing.T, dir string) (map[string]bool, string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in %s (%v)", dir, err)
	}
	out := map[string]bool{}
	var all strings.Builder
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(src)
		for _, m := range benchFunc.FindAllStringSubmatch(string(src), -1) {
			out[m[1]] = true
		}
	}
	return out, all.String()
}

// reports is whether src, a package's test files, names the metric unit: as one string, or
// as two joined at a dash ("hello-" and "p50-ms", "off" and "p50-ms").
func reports(src, unit string) bool {
	if strings.Contains(src, `"`+unit+`"`) {
		return true
	}
	for i := range len(unit) {
		if unit[i] != '-' {
			continue
		}
		// The dash at the end of the first string, at the start of the last, or in neither
		// (mode+"-"+"p50-ms").
		first := strings.Contains(src, `"`+unit[:i]+`"`) || strings.Contains(src, `"`+unit[:i+1]+`"`)
		last := strings.Contains(src, `"`+unit[i:]+`"`) || strings.Contains(src, `"`+unit[i+1:]+`"`)
		if first && last {
			return true
		}
	}
	return false
}

// goTestUnits are the metrics go test reports itself (with -benchmem).
var goTestUnits = map[string]bool{"ns/op": true, "B/op": true, "allocs/op": true, "MB/s": true}

// selects is whether go test's -bench re runs the benchmark name: each slash-separated
// element of re must match the name's element at the same level.
func selects(re, name string) bool {
	levels := strings.Split(re, "/")
	elems := strings.Split(name, "/")
	for i, l := range levels {
		if i >= len(elems) {
			break
		}
		if !regexp.MustCompile(l).MatchString(elems[i]) {
			return false
		}
	}
	return true
}

func validBenchtime(s string) bool {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		return regexp.MustCompile(`^[1-9]\d*$`).MatchString(n)
	}
	_, err := time.ParseDuration(s)
	return err == nil
}
