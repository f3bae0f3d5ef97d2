package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/store"
)

// The Cline corpus is the deterministic set of rule folders and candidate paths Cline's own
// per-request rule decision was timed on (its README gives Cline's figures and the rules both
// engines select). It lives outside the repository: $TASKLOG_BENCH/cline-corpus, else
// shared/bench/cline-corpus beside the checkout.

// clineCell is one cell of the corpus: a rules folder, a list of candidate paths and the rules
// Cline selects for them.
type clineCell struct {
	ws, paths string
	// included counts the rules that go into the prompt; activated, the conditional (paths:)
	// rules among them.
	included, activated int
}

var clineCells = []clineCell{
	{"ws50", "paths10.json", 41, 16},
	{"ws50", "paths100.json", 46, 21},
	{"ws1000", "paths10.json", 786, 286},
	{"ws1000", "paths100.json", 918, 418},
}

// clineCorpus returns the corpus folder or skips tb with one line saying what is missing.
func clineCorpus(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("TASKLOG_BENCH")
	if dir == "" {
		dir = besideCheckout("bench")
	}
	dir = filepath.Join(dir, "cline-corpus")
	if _, err := os.Stat(filepath.Join(dir, "ws50")); err != nil {
		tb.Skipf("Cline corpus not found at %s: set TASKLOG_BENCH to run this", dir)
	}
	return dir
}

// besideCheckout is <module root>/../shared/elem, or "" when no go.mod is above the working
// directory.
func besideCheckout(elem string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared", elem)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func readPaths(tb testing.TB, file string) []string {
	tb.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	var paths []string
	if err := json.Unmarshal(data, &paths); err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
	return paths
}

// clineSession opens a task over the cell's rules folder, watched or checked file by file,
// durable or not, whose context holds exactly the cell's candidate paths (as open tabs).
func clineSession(tb testing.TB, corpus string, c clineCell, watched, durable bool) *Session {
	tb.Helper()
	dir := filepath.Join(corpus, c.ws)
	root := DirRoot(dir)
	if !watched {
		root.Dir = ""
	}
	db, err := store.Open(filepath.Join(tb.TempDir(), "tasklog.db"), &store.Options{NoSync: !durable})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	s := newSession(tb, db, nil, Options{Roots: []Root{root}})
	tb.Cleanup(func() { s.Close() })
	paths := readPaths(tb, filepath.Join(corpus, c.paths))
	if _, err := s.Tabs(context.Background(), paths, paths[:1]); err != nil {
		tb.Fatal(err)
	}
	if got := len(s.Context().Paths); got != len(paths) {
		tb.Fatalf("%s: context has %d paths, want %d", c.paths, got, len(paths))
	}
	return s
}

// selected counts a decision's included rules and the conditional rules among them.
func selected(d *Decision) (included, activated int) {
	for _, r := range d.Rules.Results {
		if !r.Included {
			continue
		}
		included++
		if r.Reason == rules.ReasonMatched {
			activated++
		}
	}
	return included, activated
}

// TestClineCorpusSelection checks that tasklog selects on the Cline corpus exactly the rules
// Cline does, with the folder watched and checked file by file, and that every file of the
// 1,000-rule folder is read.
func TestClineCorpusSelection(t *testing.T) {
	corpus := clineCorpus(t)
	for _, c := range clineCells {
		for _, watched := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/%s/watched=%v", c.ws, c.paths, watched), func(t *testing.T) {
				s := clineSession(t, corpus, c, watched, false)
				d, err := s.Decide(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				files, _ := os.ReadDir(filepath.Join(corpus, c.ws, ".clinerules"))
				if got := len(d.Rules.Results); got != len(files) {
					t.Errorf("decided about %d rules, want one per file of the folder (%d)", got, len(files))
				}
				for _, diag := range d.Rules.Diagnostics {
					t.Errorf("unexpected diagnostic: %+v", diag)
				}
				inc, act := selected(d)
				if inc != c.included || act != c.activated {
					t.Errorf("included %d, activated %d conditional rules; Cline: %d, %d", inc, act, c.included, c.activated)
				}
			})
		}
	}
}

// BenchmarkClineCorpus makes tasklog's per-request decision on exactly the files and candidate
// paths Cline's was timed on: the rules folder watched (session.DirRoot) or checked file by
// file, appending the decision without fsync or durably. It checks the selection at every call
// and reports the median and 99th percentile, by the wall clock and in CPU time; compare them
// with Cline's figures in the corpus's README.
//
// The headline is "after-tool-call": between two real requests an agent always records
// something (a tool call, a prompt), so before every decision the loop records a read of one of
// the cell's paths (untimed) and times only the decision. The read adds evidence to a path the
// context holds: the decision builds the new context, finds the rules' outcomes unchanged (the
// paths are the same), makes again the matches of the path whose evidence changed and records
// the decision with the new evidence. "cached" decides again with nothing new since the last
// decision, which reuses the last evaluation: the cheapest decision there is, not the one users
// meet.
func BenchmarkClineCorpus(b *testing.B) {
	corpus := clineCorpus(b)
	for _, c := range clineCells {
		for _, mode := range []struct {
			name             string
			watched, durable bool
		}{{"watched", true, false}, {"checked", false, false}, {"watched-fsync", true, true}, {"checked-fsync", false, true}} {
			for _, kind := range []struct {
				name           string
				toolCall, into bool
			}{{"after-tool-call", true, false}, {"cached", false, false}, {"after-tool-call-into", true, true}} {
				if kind.into && mode.durable {
					continue // what DecideInto spares is memory, not the fsync's wait
				}
				b.Run(fmt.Sprintf("%s/%s/%s/%s", c.ws, c.paths, mode.name, kind.name), func(b *testing.B) {
					benchClineCell(b, corpus, c, mode.watched, mode.durable, kind.toolCall, kind.into)
				})
			}
		}
	}
}

// benchClineCell times the decisions of one cell; with toolCall, each after a recorded read;
// with into, each written into the decision before (DecideInto), as a runtime that builds one
// prompt at a time hands its last decision back.
func benchClineCell(b *testing.B, corpus string, c clineCell, watched, durable, toolCall, into bool) {
	s := clineSession(b, corpus, c, watched, durable)
	ctx := context.Background()
	paths := readPaths(b, filepath.Join(corpus, c.paths))
	var took latencies
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	record := func() {
		i++
		params, _ := json.Marshal(map[string]string{"path": paths[i%len(paths)]})
		if _, err := s.ToolCall(ctx, "read_file", fmt.Sprintf("call_%d", i), params); err != nil {
			b.Fatal(err)
		}
	}
	var last Decision
	decide := func() *Decision {
		if into {
			if err := s.DecideInto(ctx, &last); err != nil {
				b.Fatal(err)
			}
			return &last
		}
		d, err := s.Decide(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	for b.Loop() {
		if toolCall {
			b.StopTimer()
			record()
			b.StartTimer()
		}
		var d *Decision
		took.time(func() { d = decide() })
		if inc, act := selected(d); inc != c.included || act != c.activated {
			b.Fatalf("included %d, activated %d; Cline: %d, %d", inc, act, c.included, c.activated)
		}
	}
	b.StopTimer()
	took.report(b)
	reportDecideAllocs(b, allocRuns, func() {
		if toolCall {
			record()
		}
		decide()
	})
}
