package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
)

// helperEnv names the env var that turns the test binary into a helper process.
const helperEnv = "TASKLOG_STORE_HELPER"

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		os.Exit(runHelper(role, os.Getenv("TASKLOG_STORE_DB")))
	}
	code := m.Run()
	if readFixture.dir != "" {
		os.RemoveAll(readFixture.dir)
	}
	if longDir != "" {
		os.RemoveAll(longDir)
	}
	os.Exit(code)
}

// openTest opens a fresh database in a temporary directory. It is not about durability, so it
// skips fsync.
func openTest(t testing.TB) *DB {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "tasks.db"), &Options{NoSync: true})
}

func openAt(t testing.TB, path string, opts *Options) *DB {
	t.Helper()
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var testIDs = events.NewIDSource(nil)

// msg builds a user_message event with a fresh id.
func msg(t testing.TB, turn int, text string) events.Event {
	t.Helper()
	ev, err := events.New(&events.UserMessage{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if ev.ID, err = testIDs.New(now); err != nil {
		t.Fatal(err)
	}
	ev.Turn, ev.Time = turn, now
	return ev
}

func msgs(t testing.TB, n int, prefix string) []events.Event {
	out := make([]events.Event, n)
	for i := range out {
		out[i] = msg(t, 1+i/10, fmt.Sprintf("%s %d", prefix, i))
	}
	return out
}

func mustAppend(t testing.TB, db *DB, task uuid.UUID, expected uint64, evs ...events.Event) Appended {
	t.Helper()
	a, err := db.Append(context.Background(), task, expected, evs...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func collect(t testing.TB, db *DB, task uuid.UUID, from uint64) []events.Event {
	t.Helper()
	var out []events.Event
	for ev, err := range db.Events(context.Background(), task, from) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// rawUpdate closes db and edits its file behind the store's back, as a tamperer would.
func rawUpdate(t testing.TB, db *DB, fn func(tx *bolt.Tx) error) {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := bolt.Open(db.Path(), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes data to a new file name in dir and returns its path.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
