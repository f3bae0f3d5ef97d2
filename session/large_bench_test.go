package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/store"
)

// manyRulesDir writes a workspace whose .clinerules folder holds n rule files of the shapes
// real rule files use (a sixth without a condition, the rest scoped by one or two globs), last
// edited an hour ago, and returns it with 100 candidate paths of which many match.
func manyRulesDir(b testing.TB, n int) (dir string, paths []string) {
	b.Helper()
	dir = b.TempDir()
	rulesDir := filepath.Join(dir, ".clinerules")
	if err := os.Mkdir(rulesDir, 0o755); err != nil {
		b.Fatal(err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	for i := range n {
		var fm string
		switch i % 6 {
		case 0:
			fm = fmt.Sprintf("paths: [\"src/mod%d/**\"]", i)
		case 1:
			fm = fmt.Sprintf("paths: [\"**/*.ext%d\", \"**/*.x%d\"]", i%50, i)
		case 2:
			fm = fmt.Sprintf("paths: [\"packages/p%d/src/**/*.ts\"]", i)
		case 3:
			fm = fmt.Sprintf("paths: [\"apps/a%d/**/*.{ts,tsx}\", \"apps/a%d/*.json\"]", i, i)
		case 4:
			fm = fmt.Sprintf("paths: [\"**/dir%d/**\"]", i)
		case 5:
			fm = fmt.Sprintf("description: rule %d", i)
		}
		name := filepath.Join(rulesDir, fmt.Sprintf("r%05d.md", i))
		if err := os.WriteFile(name, []byte("---\n"+fm+"\n---\nRule body "+fmt.Sprint(i)+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(name, hourAgo, hourAgo); err != nil {
			b.Fatal(err)
		}
	}
	for _, p := range []string{rulesDir, dir} {
		if err := os.Chtimes(p, hourAgo, hourAgo); err != nil {
			b.Fatal(err)
		}
	}
	for j := range 100 {
		var p string
		switch j % 5 {
		case 0:
			p = fmt.Sprintf("src/mod%d/file%d.ts", j*6, j)
		case 1:
			p = fmt.Sprintf("packages/p%d/src/deep/x/file%d.ts", j*6+2, j)
		case 2:
			p = fmt.Sprintf("apps/a%d/src/components/C%d.tsx", j*6+3, j)
		case 3:
			p = fmt.Sprintf("docs/guide/page%d.ext%d", j, j%50)
		case 4:
			p = fmt.Sprintf("lib/dir%d/x%d.go", j*6+4, j)
		}
		paths = append(paths, p)
	}
	return dir, paths
}

// manyRulesSession opens a task over dir, watched or checked file by file, whose context holds
// paths (as open tabs).
func manyRulesSession(b testing.TB, db store.Store, dir string, paths []string, watched bool) *Session {
	b.Helper()
	root := DirRoot(dir)
	if !watched {
		root.Dir = ""
	}
	s := newSession(b, db, nil, Options{Roots: []Root{root}})
	b.Cleanup(func() { s.Close() })
	if _, err := s.Tabs(context.Background(), paths, paths[:1]); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkDecideManyRules is a decision over a rules folder of 5,000 or 10,000 files and 100
// candidate paths, the folder watched or checked file by file, after a tool call (a read of one
// of the candidate paths) as between two real requests; only the decision is timed, without
// fsync.
func BenchmarkDecideManyRules(b *testing.B) {
	for _, n := range []int{5000, 10000} {
		dir, paths := manyRulesDir(b, n)
		for _, mode := range []string{"watched", "checked"} {
			b.Run(fmt.Sprintf("rules=%d/%s", n, mode), func(b *testing.B) {
				s := manyRulesSession(b, openDB(b), dir, paths, mode == "watched")
				ctx := context.Background()
				if _, err := s.Decide(ctx); err != nil {
					b.Fatal(err)
				}
				var took latencies
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					b.StopTimer()
					i++
					params, _ := json.Marshal(map[string]string{"path": paths[i%len(paths)]})
					if _, err := s.ToolCall(ctx, "read_file", fmt.Sprintf("call_%d", i), params); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					took.time(func() {
						if _, err := s.Decide(ctx); err != nil {
							b.Fatal(err)
						}
					})
				}
				took.report(b)
			})
		}
	}
}

// BenchmarkFirstDecideManyRules is the first decision of a new session over a rules folder of
// 5,000 or 10,000 files, as a process that has just started makes it: every file is read and
// parsed, the snapshot written. Each iteration is a new task in a new database, without fsync;
// only the decision is timed.
func BenchmarkFirstDecideManyRules(b *testing.B) {
	for _, n := range []int{5000, 10000} {
		dir, paths := manyRulesDir(b, n)
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			ctx := context.Background()
			var took latencies
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				db, err := store.Open(filepath.Join(b.TempDir(), "tasklog.db"), &store.Options{NoSync: true})
				if err != nil {
					b.Fatal(err)
				}
				root := DirRoot(dir)
				root.Dir = ""
				s, err := Open(ctx, db, uuid.New(), Options{Roots: []Root{root}})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Tabs(ctx, paths, paths[:1]); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				took.time(func() {
					d, err := s.Decide(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if len(d.Rules.Results) != n {
						b.Fatalf("decided about %d rules, want %d", len(d.Rules.Results), n)
					}
				})
				b.StopTimer()
				s.Close()
				db.Close()
				b.StartTimer()
			}
			took.report(b)
		})
	}
}
