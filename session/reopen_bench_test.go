package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/store"
)

// buildLongSession writes a task of about n events to a new database in dir: a task_started,
// a first decision over the fifty-rule workspace, then tool calls appended through the
// session in batches of 10,000 without fsync, so that a million events take seconds. The
// session writes its projection snapshots as it would for any append.
func buildLongSession(b *testing.B, dir string, n int, root Root) (path string, task uuid.UUID) {
	b.Helper()
	ctx := context.Background()
	path = filepath.Join(dir, "long.db")
	db, err := store.Open(path, &store.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s, err := Open(ctx, db, uuid.Nil, Options{Roots: []Root{root}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Decide(ctx); err != nil {
		b.Fatal(err)
	}
	appendReads(b, s, n, 10_000, nil)
	// The first durable commit would otherwise write the whole build to disk.
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	return path, s.Task()
}

// BenchmarkReopenDecide is the first decision after opening a long task, as a hook process
// makes it: open the database, open the task's session (resuming from its projection
// snapshot), record one tool call and decide; durably, as the command line does, and without
// fsync to show the engine's work apart from the disk's. Each phase's median is reported. The
// task grows by two events per iteration. The million-event task is skipped with -short.
func BenchmarkReopenDecide(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			if n > 100_000 && testing.Short() {
				b.Skip("builds a million-event task; skipped with -short")
			}
			root := Root{Path: "/ws", FS: fiftyRules(b)}
			path, task := buildLongSession(b, b.TempDir(), n, root)
			for _, noSync := range []bool{false, true} {
				name := "durable"
				if noSync {
					name = "nosync"
				}
				b.Run(name, func(b *testing.B) { reopenDecide(b, path, task, root, noSync) })
			}
		})
	}
}

func reopenDecide(b *testing.B, path string, task uuid.UUID, root Root, noSync bool) {
	ctx := context.Background()
	phases := []string{"open-db", "open-task", "record", "decide", "close", "total"}
	took := make([][]time.Duration, len(phases))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		var marks [6]time.Time
		marks[0] = time.Now()
		db, err := store.Open(path, &store.Options{NoSync: noSync})
		if err != nil {
			b.Fatal(err)
		}
		marks[1] = time.Now()
		s, err := Open(ctx, db, task, Options{Roots: []Root{root}})
		if err != nil {
			b.Fatal(err)
		}
		marks[2] = time.Now()
		params := json.RawMessage(fmt.Sprintf(`{"path":"packages/pkg%02d/src/new%d.ts"}`, i%50, i))
		if _, err := s.ToolCall(ctx, "read_file", "", params); err != nil {
			b.Fatal(err)
		}
		marks[3] = time.Now()
		if _, err := s.Decide(ctx); err != nil {
			b.Fatal(err)
		}
		marks[4] = time.Now()
		s.Close()
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		marks[5] = time.Now()
		for p := range 5 {
			took[p] = append(took[p], marks[p+1].Sub(marks[p]))
		}
		took[5] = append(took[5], marks[5].Sub(marks[0]))
	}
	b.StopTimer()
	for p, name := range phases {
		slices.Sort(took[p])
		b.ReportMetric(float64(took[p][len(took[p])/2].Microseconds()), name+"-p50-µs")
	}
}
