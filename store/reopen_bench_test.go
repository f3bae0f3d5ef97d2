package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
)

// longTask is a database holding one task of n events, built once per test binary run.
type longTask struct {
	once sync.Once
	path string
	task uuid.UUID
	err  error
}

var (
	longTasksMu sync.Mutex
	longTasks   = map[int]*longTask{}
	longDir     string
)

// buildLongTask returns a database file holding one task of n events. It is built without fsync
// in batches of 10,000 events: a million take seconds, not minutes.
func buildLongTask(b *testing.B, n int) *longTask {
	longTasksMu.Lock()
	lt := longTasks[n]
	if lt == nil {
		lt = &longTask{}
		longTasks[n] = lt
	}
	if longDir == "" {
		var err error
		if longDir, err = os.MkdirTemp("", "tasklog-long-"); err != nil {
			longTasksMu.Unlock()
			b.Fatal(err)
		}
	}
	longTasksMu.Unlock()
	lt.once.Do(func() {
		lt.path, lt.task = filepath.Join(longDir, fmt.Sprintf("long-%d.db", n)), uuid.New()
		db, err := Open(lt.path, &Options{NoSync: true})
		if err != nil {
			lt.err = err
			return
		}
		defer db.Close()
		const batchSize = 10_000
		batch := make([]events.Event, 0, batchSize)
		for i := range n {
			if batch = append(batch, mixedEvent(b, i)); len(batch) == batchSize || i == n-1 {
				if _, lt.err = db.Append(context.Background(), lt.task, uint64(i+1-len(batch)), batch...); lt.err != nil {
					return
				}
				batch = batch[:0]
			}
		}
		// The first durable commit would otherwise write the whole build to disk.
		lt.err = syncFile(lt.path)
	})
	if lt.err != nil {
		b.Fatal(lt.err)
	}
	return lt
}

// BenchmarkReopenAppend is what a hook process does on every call: open the database, read the
// task's head and append one event, then close; durably, and without fsync to show the work
// apart from the disk's. Its cost must not grow with the task's length. The million-event task
// is skipped with -short.
func BenchmarkReopenAppend(b *testing.B) {
	for _, c := range []struct {
		n      int
		noSync bool
	}{{10_000, false}, {100_000, false}, {1_000_000, false}, {10_000, true}, {100_000, true}, {1_000_000, true}} {
		n := c.n
		name := fmt.Sprintf("events=%d/durable", n)
		if c.noSync {
			name = fmt.Sprintf("events=%d/nosync", n)
		}
		b.Run(name, func(b *testing.B) {
			if n > 100_000 && testing.Short() {
				b.Skip("builds a million-event task; skipped with -short")
			}
			lt := buildLongTask(b, n)
			took := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				db, err := Open(lt.path, &Options{NoSync: c.noSync})
				if err != nil {
					b.Fatal(err)
				}
				h, err := db.Head(lt.task)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := db.Append(context.Background(), lt.task, h.Seq, benchEvent(b, n+i)); err != nil {
					b.Fatal(err)
				}
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			b.ReportMetric(float64(median(took).Microseconds()), "p50-µs")
		})
	}
}

// syncFile flushes a file written without fsync to disk.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
