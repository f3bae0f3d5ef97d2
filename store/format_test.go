package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
)

// testdata/format1.db was written by the store before task logs had id indexes: two tasks of 30
// events each (appended as 20 then 10), a blob and a snapshot. format1Events rebuilds the
// events it holds.
var format1Tasks = []uuid.UUID{
	uuid.MustParse("11111111-1111-4111-8111-111111111111"),
	uuid.MustParse("22222222-2222-4222-8222-222222222222"),
}

func format1Events(t *testing.T, taskIndex int) []events.Event {
	t.Helper()
	evs := make([]events.Event, 30)
	for i := range evs {
		ev, err := events.New(&events.UserMessage{Text: "old format event " + string(rune('a'+i%26))})
		if err != nil {
			t.Fatal(err)
		}
		ev.Time = time.Date(2025, 3, 1, 12, 0, i, 0, time.UTC)
		ev.ID = ulid.MustNew(ulid.Timestamp(ev.Time), fixedEntropy{byte(taskIndex), byte(i)})
		ev.Turn = 1 + i/10
		evs[i] = ev
	}
	return evs
}

// fixedEntropy makes the fixture's ids reproducible.
type fixedEntropy [2]byte

func (f fixedEntropy) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = f[i%2]
	}
	return len(p), nil
}

// copyFixture copies a file of testdata into a temporary directory.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func fileFormat(t *testing.T, path string) string {
	t.Helper()
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var f string
	b.View(func(tx *bolt.Tx) error { f = string(tx.Bucket(bucketMeta).Get(keyFormat)); return nil })
	return f
}

// Opening a format 1 file for writing indexes its tasks in place: afterwards it is format 2,
// idempotency by id holds for the events written before, and every log verifies with its index.
func TestOpenUpgradesFormat1(t *testing.T) {
	path := copyFixture(t, "format1.db")
	if f := fileFormat(t, path); f != "1" {
		t.Fatalf("the fixture is format %q, want 1", f)
	}
	// Each task's 30 events take five transactions.
	defer func(n int) { upgradeChunk = n }(upgradeChunk)
	upgradeChunk = 7
	db := openAt(t, path, &Options{NoSync: true})
	for ti, task := range format1Tasks {
		old := format1Events(t, ti)
		if err := db.Verify(context.Background(), task); err != nil {
			t.Fatalf("task %d: %v", ti, err)
		}
		h, err := db.Head(task)
		if err != nil || h.Seq != 30 {
			t.Fatalf("task %d: Head = %+v, %v", ti, h, err)
		}
		// A retry of the second append of the old code is a repeat, at its old positions.
		a, err := db.Append(context.Background(), task, 0, old[20:]...)
		if err != nil || !a.Duplicate || a.First != 21 || a.Last != 30 {
			t.Fatalf("task %d: repeat of an old batch = %d..%d duplicate %v, %v", ti, a.First, a.Last, a.Duplicate, err)
		}
		if _, err := db.Append(context.Background(), task, 30, old[5], msg(t, 4, "new")); !errors.Is(err, ErrDuplicateID) {
			t.Errorf("task %d: a batch half old = %v, want ErrDuplicateID", ti, err)
		}
		mustAppend(t, db, task, 30, msg(t, 4, "written in format 2"))
		if err := db.Verify(context.Background(), task); err != nil {
			t.Errorf("task %d after an append: %v", ti, err)
		}
	}
	if seq, data, err := db.Snapshot(format1Tasks[0], "context"); err != nil || seq != 30 || string(data) != "snapshot bytes" {
		t.Errorf("Snapshot = %d %q %v", seq, data, err)
	}
	if sums, err := db.PutBlobs([][]byte{[]byte("a rule file's contents")}); err != nil {
		t.Error(err)
	} else if ok, err := db.HasBlob(sums[0]); !ok || err != nil {
		t.Errorf("the old blob is gone: %v %v", ok, err)
	}
	db.Close()
	if f := fileFormat(t, path); f != "4" {
		t.Errorf("after a writable open the file is format %q, want 4", f)
	}
}

// Opened read-only, a format 1 file is read as it is: nothing is written, logs verify without
// an index.
func TestReadOnlyReadsFormat1(t *testing.T) {
	path := copyFixture(t, "format1.db")
	db := openAt(t, path, &Options{ReadOnly: true})
	for ti, task := range format1Tasks {
		if err := db.Verify(context.Background(), task); err != nil {
			t.Errorf("task %d: %v", ti, err)
		}
		if got := collect(t, db, task, 1); len(got) != 30 || got[29].ID != format1Events(t, ti)[29].ID {
			t.Errorf("task %d: %d events read", ti, len(got))
		}
	}
	db.Close()
	if f := fileFormat(t, path); f != "1" {
		t.Errorf("a read-only open changed the format to %q", f)
	}
}

// An upgrade cut short leaves indexes behind and the file at format 1; the next writable open
// builds them again from the logs.
func TestUpgradeCutShortStartsAgain(t *testing.T) {
	path := copyFixture(t, "format1.db")
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		ib, err := tx.CreateBucket(indexName(format1Tasks[0]))
		if err != nil {
			return err
		}
		// Half an index, with one entry wrong.
		wrong := format1Events(t, 0)[3].ID
		return ib.Put(wrong[:], uint64ToBytes(9))
	})
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	db := openAt(t, path, &Options{NoSync: true})
	for ti, task := range format1Tasks {
		if err := db.Verify(context.Background(), task); err != nil {
			t.Errorf("task %d: %v", ti, err)
		}
	}
	if a, err := db.Append(context.Background(), format1Tasks[0], 30, format1Events(t, 0)[3]); err != nil || !a.Duplicate || a.First != 4 {
		t.Errorf("repeat of seq 4 = %+v, %v", a, err)
	}
}
