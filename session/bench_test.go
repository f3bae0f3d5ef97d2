package session

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/tasklog/tasklog/store"
)

// fiftyRules is a workspace folder of 50 Cline rules, 10 universal and 40 scoped to one area
// each, last edited an hour ago.
func fiftyRules(b testing.TB) fs.FS { return os.DirFS(fiftyRulesDir(b)) }

func fiftyRulesDir(b testing.TB) string {
	dir := b.TempDir()
	rules := filepath.Join(dir, ".clinerules")
	if err := os.Mkdir(rules, 0o755); err != nil {
		b.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(rules, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 10 {
		write(fmt.Sprintf("general-%02d.md", i), fmt.Sprintf("General rule %d.\n", i))
	}
	for i := range 40 {
		write(fmt.Sprintf("area-%02d.md", i), fmt.Sprintf(
			"---\npaths:\n  - \"packages/pkg%02d/**\"\n  - \"**/*.area%02d.ts\"\n---\nRules for area %d.\n", i, i, i))
	}
	hourAgo := time.Now().Add(-time.Hour)
	for _, p := range []string{rules, dir} {
		if err := os.Chtimes(p, hourAgo, hourAgo); err != nil {
			b.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(rules)
	for _, e := range entries {
		if err := os.Chtimes(filepath.Join(rules, e.Name()), hourAgo, hourAgo); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// fiftyRulesInMemory is the same workspace as an in-memory file system with modification
// times, as a runtime that holds the workspace's files itself would pass.
func fiftyRulesInMemory(b testing.TB) fs.FS {
	disk := fiftyRules(b)
	mem := fstest.MapFS{}
	err := fs.WalkDir(disk, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f := &fstest.MapFile{Mode: info.Mode(), ModTime: info.ModTime()}
		if !d.IsDir() {
			if f.Data, err = fs.ReadFile(disk, p); err != nil {
				return err
			}
		}
		mem[p] = f
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return mem
}

// benchRoot is the fifty-rule workspace as a folder checked file by file, a folder watched
// for changes, or an in-memory file system.
func benchRoot(b testing.TB, kind string) Root {
	switch kind {
	case "watched":
		dir := fiftyRulesDir(b)
		return Root{Path: "/ws", FS: os.DirFS(dir), Dir: dir}
	case "memory":
		return Root{Path: "/ws", FS: fiftyRulesInMemory(b)}
	}
	return Root{Path: "/ws", FS: fiftyRules(b)}
}

// benchSession has a task of n events whose context holds 100 paths.
func benchSession(b testing.TB, n int, root Root) *Session {
	ctx := context.Background()
	s := newSession(b, openDB(b), nil, Options{Roots: []Root{root}})
	for i := 0; s.Version() < uint64(n); i++ {
		params := json.RawMessage(fmt.Sprintf(`{"path":"packages/pkg%02d/src/file%d.ts"}`, i%50, i%100))
		if _, err := s.ToolCall(ctx, "read_file", "", params); err != nil {
			b.Fatal(err)
		}
		if i%100 == 99 {
			if _, err := s.Decide(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	open := make([]string, 100)
	for i := range open {
		open[i] = fmt.Sprintf("packages/pkg%02d/src/tab%d.ts", i%50, i)
	}
	if _, err := s.Tabs(ctx, open, open[:1]); err != nil {
		b.Fatal(err)
	}
	if got := len(s.Context().Paths); got != 100 {
		b.Fatalf("context has %d paths, want 100", got)
	}
	return s
}

// BenchmarkDecide measures a decision (read rules, snapshot check, evaluate, append) with 50
// rules and 100 context paths, on a short and a long task; appends do not fsync, so the figure
// is the engine's own cost.
func BenchmarkDecide(b *testing.B) {
	for _, bc := range []struct {
		n     int
		rules string
	}{{100, "folder"}, {100_000, "folder"}, {100, "watched"}, {100_000, "watched"}, {100, "memory"}, {100_000, "memory"}} {
		b.Run(fmt.Sprintf("events=%d/rules=%s", bc.n, bc.rules), func(b *testing.B) {
			s := benchSession(b, bc.n, benchRoot(b, bc.rules))
			benchDecideAgain(b, func() error { _, err := s.Decide(context.Background()); return err })
		})
	}
}

// BenchmarkDecideInto is BenchmarkDecide's cached decision on a 100-event task, given the last
// decision back (DecideInto): what a runtime that builds one prompt at a time allocates.
func BenchmarkDecideInto(b *testing.B) {
	for _, kind := range []string{"folder", "watched"} {
		b.Run("rules="+kind, func(b *testing.B) {
			s := benchSession(b, 100, benchRoot(b, kind))
			var d Decision
			benchDecideAgain(b, func() error { return s.DecideInto(context.Background(), &d) })
		})
	}
}

// benchDecideAgain times decide, a decision with nothing new since the last, and reports its
// percentiles and what it allocates (bbolt's part and tasklog's).
func benchDecideAgain(b *testing.B, decide func() error) {
	var took latencies
	b.ReportAllocs()
	b.ResetTimer()
	run := func() {
		if err := decide(); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		took.time(run)
	}
	b.StopTimer()
	took.report(b)
	reportDecideAllocs(b, allocRuns, run)
}

// BenchmarkDecideAfterToolCall is a turn as it happens: the model read one more file (a path
// the task has not seen, which pushes the oldest out of the 100) and the next prompt is built.
// Only Decide is timed.
func BenchmarkDecideAfterToolCall(b *testing.B) { benchAfterToolCall(b, false) }

// BenchmarkDecideIntoAfterToolCall is BenchmarkDecideAfterToolCall with the last decision given
// back (DecideInto).
func BenchmarkDecideIntoAfterToolCall(b *testing.B) { benchAfterToolCall(b, true) }

func benchAfterToolCall(b *testing.B, into bool) {
	for _, kind := range []string{"folder", "watched"} {
		b.Run("rules="+kind, func(b *testing.B) {
			s := benchSession(b, 100, benchRoot(b, kind))
			ctx := context.Background()
			var took latencies
			b.ReportAllocs()
			i := 0
			record := func() {
				i++
				params := json.RawMessage(fmt.Sprintf(`{"path":"packages/pkg%02d/src/new%d.ts"}`, i%50, i))
				if _, err := s.ToolCall(ctx, "read_file", "", params); err != nil {
					b.Fatal(err)
				}
			}
			var d Decision
			decide := func() {
				var err error
				if into {
					err = s.DecideInto(ctx, &d)
				} else {
					_, err = s.Decide(ctx)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				b.StopTimer()
				record()
				b.StartTimer()
				took.time(decide)
			}
			b.StopTimer()
			took.report(b)
			reportDecideAllocs(b, allocRuns, func() { record(); decide() })
		})
	}
}

// latencies are the wall-clock and the process CPU times of a benchmark's timed calls.
type latencies struct {
	wall, cpu []time.Duration
	noCPU     bool
}

// time runs f, timing it by the wall clock and by the CPU time the process used meanwhile
// (every thread: the garbage collector's work counts, waiting for a core does not).
func (l *latencies) time(f func()) {
	cpu0, ok0 := processCPU()
	start := time.Now()
	f()
	l.wall = append(l.wall, time.Since(start))
	cpu1, ok1 := processCPU()
	if l.noCPU = l.noCPU || !ok0 || !ok1; !l.noCPU {
		l.cpu = append(l.cpu, cpu1-cpu0)
	}
}

// report adds the median and the 99th percentile of the calls' wall-clock times, and of their
// CPU times (cpu-p50-µs, cpu-p99-µs) where the system measures them: on a loaded machine the
// wall clock's tail is mostly waiting for a core, the CPU time's is the work, garbage
// collection included.
func (l *latencies) report(b *testing.B) {
	reportPercentiles(b, l.wall)
	if !l.noCPU && len(l.cpu) > 0 {
		slices.Sort(l.cpu)
		at := func(q float64) float64 { return float64(l.cpu[int(q*float64(len(l.cpu)-1))].Microseconds()) }
		b.ReportMetric(at(0.5), "cpu-p50-µs")
		b.ReportMetric(at(0.99), "cpu-p99-µs")
	}
}

// reportPercentiles adds the median and the 99th percentile of the timed calls: the mean of a
// benchmark moves with every garbage collection and every slow wake-up of a core.
func reportPercentiles(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	at := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Microseconds()) }
	b.ReportMetric(at(0.5), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkRecord measures recording one tool call without fsync.
func BenchmarkRecord(b *testing.B) {
	s := newSession(b, openDB(b), fiftyRules(b), Options{})
	ctx := context.Background()
	params := json.RawMessage(`{"path":"packages/pkg01/src/a.ts"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ToolCall(ctx, "read_file", "", params); err != nil {
			b.Fatal(err)
		}
	}
}

// longTask records a task of 100k events with 1,000 decisions.
func longTask(b *testing.B) (store.Store, *Session) {
	ctx := context.Background()
	db := openDB(b)
	s := newSession(b, db, fiftyRules(b), Options{})
	for i := 0; s.Version() < 100_000; i++ {
		params := json.RawMessage(fmt.Sprintf(`{"path":"packages/pkg%02d/src/file%d.ts"}`, i%50, i%100))
		if _, err := s.ToolCall(ctx, "read_file", "", params); err != nil {
			b.Fatal(err)
		}
		if i%98 == 97 {
			if _, err := s.Decide(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	return db, s
}

// BenchmarkVerify checks the hash chain of a 100k-event task with 1,000 decisions and recomputes
// every decision, as 'replay verify' does.
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	db, s := longTask(b)
	events := s.Version()
	b.ResetTimer()
	for b.Loop() {
		rep, err := Verify(ctx, db, s.Task())
		if err != nil || !rep.OK() {
			b.Fatal(err, rep.Changes)
		}
		if rep.Decisions < 1000 {
			b.Fatalf("%d decisions, want at least 1,000", rep.Decisions)
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkExplain explains one rule at the last turn of the same task, as 'replay explain'
// does: a read of the whole log, decoding only the decision asked for.
func BenchmarkExplain(b *testing.B) {
	ctx := context.Background()
	db, s := longTask(b)
	last := s.Turn() - 1
	b.ResetTimer()
	for b.Loop() {
		if _, err := Explain(ctx, db, s.Task(), last, "general-00"); err != nil {
			b.Fatal(err)
		}
	}
}
