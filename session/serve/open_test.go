package serve

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasklog/tasklog/store"
)

// TestOptionsOpen: Options.Open opens the store instead of the file at the path given to
// Listen (which only places the socket), Name is what hello reports, and a store kept open runs
// Opened again per OpenedAgain: never (zero), or at each request past the period.
func TestOptionsOpen(t *testing.T) {
	tests := []struct {
		name       string
		again      time.Duration
		wantOpened int64
	}{
		{"opened once", 0, 1},
		{"opened again at each request", time.Nanosecond, 3},
		{"period not over", time.Hour, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			real := filepath.Join(dir, "elsewhere.db")
			var opens, opened atomic.Int64
			s, _ := start(t, Options{Hold: -1, Name: "nats://example:4222/S", OpenedAgain: tt.again,
				Open: func(ctx context.Context, wait time.Duration) (store.Store, error) {
					opens.Add(1)
					return store.Open(real, &store.Options{NoSync: true, Timeout: wait})
				},
				Opened: func(context.Context, store.Store) error { opened.Add(1); return nil },
			})
			c := dial(t, s)
			if c.Server.DB != "nats://example:4222/S" {
				t.Errorf("hello names %q, want the Name", c.Server.DB)
			}
			ws := t.TempDir()
			task := openTask(t, c, "pi", ws)
			for range 2 {
				if _, err := c.Record(context.Background(), task, piReadRoutes); err != nil {
					t.Fatal(err)
				}
			}
			if n := opens.Load(); n != 1 {
				t.Errorf("Open ran %d times, want 1 (the store is kept open)", n)
			}
			if n := opened.Load(); n != tt.wantOpened {
				t.Errorf("Opened ran %d times, want %d", n, tt.wantOpened)
			}
			s.Shutdown()
			<-s.Done()
			db, err := store.Open(real, &store.Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("the store Open opened: %v", err)
			}
			defer db.Close()
			if tasks, err := db.Tasks(); err != nil || len(tasks) != 1 {
				t.Fatalf("%d tasks in the store Open opened (%v), want 1", len(tasks), err)
			}
		})
	}
}
