package store

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/store/internal/mix"
)

// A compacted copy holds the same tasks, records, blobs and snapshots in fewer pages, verifies,
// and takes appends that continue its chains.
func TestCompactTo(t *testing.T) {
	dir := t.TempDir()
	src := openAt(t, filepath.Join(dir, "tasks.db"), &Options{NoSync: true})
	hooks, session := uuid.New(), uuid.New()
	for i := 0; i < 4000; i += 2 { // a hook's events, a commit or two each, with hashed ids
		batch := msgs(t, 2, "read")
		for j := range batch {
			sum := sha256.Sum256(fmt.Appendf(nil, "toolu_%d", i+j))
			batch[j].ID = ulid.ULID(sum[:16])
		}
		mustAppend(t, src, hooks, uint64(i), batch...)
	}
	for i := range 50 {
		mustAppend(t, src, session, uint64(i), msgs(t, 1, "prompt")...)
	}
	sums, err := src.PutBlobs([][]byte{[]byte("Every change comes with a test.\n")})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.PutSnapshot(session, "context", 50, []byte(`{"paths":["a.go"]}`)); err != nil {
		t.Fatal(err)
	}

	// The hook task's index as earlier versions wrote it: its pages packed full.
	src = indexPackedFull(t, src, hooks)

	copyPath := filepath.Join(dir, "copy.db")
	if err := src.CompactTo(copyPath); err != nil {
		t.Fatal(err)
	}
	cp := openAt(t, copyPath, &Options{NoSync: true})
	before, _ := diskInUse(t, src)
	after, _ := diskInUse(t, cp)
	t.Logf("%d bytes of pages in use compacted into %d", before, after)
	if after >= before/2 {
		t.Errorf("the copy's pages in use take %d bytes, the source's %d", after, before)
	}
	wantTasks, _ := src.Tasks()
	gotTasks, err := cp.Tasks()
	if err != nil || !slices.Equal(gotTasks, wantTasks) {
		t.Fatalf("the copy's tasks: %v (%v), want %v", gotTasks, err, wantTasks)
	}
	for _, task := range []uuid.UUID{hooks, session} {
		if err := cp.Verify(t.Context(), task); err != nil {
			t.Errorf("task %s of the copy: %v", task, err)
		}
		want, got := collect(t, src, task, 1), collect(t, cp, task, 1)
		if len(got) != len(want) {
			t.Fatalf("task %s: the copy holds %d events, the source %d", task, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].AppendBinary(nil), want[i].AppendBinary(nil)) {
				t.Fatalf("task %s seq %d differs in the copy", task, i+1)
			}
		}
	}
	if b, err := cp.Blob(sums[0]); err != nil || string(b) != "Every change comes with a test.\n" {
		t.Errorf("the copy's blob: %q, %v", b, err)
	}
	if seq, data, err := cp.Snapshot(session, "context"); err != nil || seq != 50 || string(data) != `{"paths":["a.go"]}` {
		t.Errorf("the copy's snapshot: %d %q %v", seq, data, err)
	}
	if err := src.SameContents(cp); err != nil {
		t.Errorf("the copy's contents: %v", err)
	}
	// The same data in under half the pages.
	was, is := pageUse(t, src), pageUse(t, cp)
	if is.Pages*2 > was.Pages || is.InUse > was.InUse || is.InUse*10 < was.InUse*9 {
		t.Errorf("page use: the source %+v, the copy %+v; want the copy's data as large in under half the pages", was, is)
	}
	// The copy goes on as the source would: the next append chains to the last event, and
	// an id already in the task is still found.
	next := mustAppend(t, cp, hooks, 4000, msgs(t, 1, "after")...)
	if next.Events[0].Prev != collect(t, src, hooks, 4000)[0].Hash {
		t.Error("the copy's next event does not chain to the last one copied")
	}
	if err := src.SameContents(cp); err == nil {
		t.Error("SameContents finds no difference once the copy holds one more event")
	}
	first := collect(t, src, hooks, 1)[0]
	if res, err := cp.Append(t.Context(), hooks, 4001, first); err != nil || !res.Duplicate || res.First != 1 {
		t.Errorf("appending again the event at seq 1: %+v, %v; want it found at seq 1", res, err)
	}
}

// Compacting into a file that holds something refuses and leaves it as it was.
func TestCompactToRefusesAFileInUse(t *testing.T) {
	dir := t.TempDir()
	src := openAt(t, filepath.Join(dir, "tasks.db"), &Options{NoSync: true})
	mustAppend(t, src, uuid.New(), 0, msgs(t, 3, "src")...)
	otherPath := filepath.Join(dir, "other.db")
	other := openAt(t, otherPath, &Options{NoSync: true})
	kept := uuid.New()
	mustAppend(t, other, kept, 0, msgs(t, 2, "other")...)
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	err := src.CompactTo(otherPath)
	if !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("compact into a database in use: %v, want ErrNotEmpty", err)
	}
	reopened := openAt(t, otherPath, &Options{NoSync: true})
	tasks, _ := reopened.Tasks()
	if len(tasks) != 1 || tasks[0].Task != kept || tasks[0].Events != 2 {
		t.Errorf("the database compacted into now holds %v", tasks)
	}
}

// indexPackedFull closes db, writes task's id index again as it was written before a commit
// split the pages of hashed ids at half (each page packed full, an event's id or two a
// commit, in the order of the log), and opens db again.
func indexPackedFull(t testing.TB, db *DB, task uuid.UUID) *DB {
	t.Helper()
	path := db.Path()
	var ids, seqs [][]byte
	rawUpdate(t, db, func(tx *bolt.Tx) error {
		name := indexName(task)
		err := tx.Bucket(name).ForEach(func(k, v []byte) error {
			ids, seqs = append(ids, bytes.Clone(k)), append(seqs, bytes.Clone(v))
			return nil
		})
		if err != nil {
			return err
		}
		if err := tx.DeleteBucket(name); err != nil {
			return err
		}
		_, err = tx.CreateBucket(name)
		return err
	})
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(seqs[a], seqs[b]) })
	b, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(order); i += 2 {
		err := b.Update(func(tx *bolt.Tx) error {
			ib := tx.Bucket(indexName(task))
			ib.FillPercent = 1.0
			for _, j := range order[i:min(i+2, len(order))] {
				if err := ib.Put(ids[j], seqs[j]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return openAt(t, path, &Options{NoSync: true})
}

// A page of the source that bbolt cannot read fails the copy with ErrCorrupt, as a read does,
// rather than panic.
func TestCompactToDamagedPage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tasks.db")
	fixture, err := os.ReadFile(filepath.Join("testdata", "format2.db"))
	if err != nil {
		t.Fatal(err)
	}
	// Page 12's flags say no page type bbolt knows.
	copy(fixture[12*4096+8:], []byte{0x55, 0x55})
	if err := os.WriteFile(path, fixture, 0o600); err != nil {
		t.Fatal(err)
	}
	src := openAt(t, path, &Options{ReadOnly: true})
	err = src.CompactTo(filepath.Join(dir, "copy.db"))
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("compact a file with a damaged page: %v, want ErrCorrupt", err)
	}
	t.Log(err)
}

func pageUse(t testing.TB, db *DB) PageUse {
	t.Helper()
	u, err := db.PageUse()
	if err != nil {
		t.Fatal(err)
	}
	if u.InUse <= 0 || u.InUse > u.Pages || u.Pages > u.File {
		t.Fatalf("page use %+v: want 0 < in use <= pages <= file", u)
	}
	return u
}

// BenchmarkCompactTo copies a file of the realistic mix with a hook's ids (100,000 events
// appended one to three at a time, as hooks append), whose id index was packed full as before
// hooks' ids split its pages at half, and reports the source's and the copy's file sizes and
// pages in use.
func BenchmarkCompactTo(b *testing.B) {
	evs, _ := mix.Realistic(b, 100_000)
	dir := b.TempDir()
	src := openAt(b, filepath.Join(dir, "tasks.db"), &Options{NoSync: true})
	src = indexPackedFull(b, src, appendHookSized(b, src, evs))
	var copied PageUse
	for b.Loop() {
		path := filepath.Join(b.TempDir(), "copy.db")
		if err := src.CompactTo(path); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cp := openAt(b, path, &Options{ReadOnly: true})
		copied = pageUse(b, cp)
		cp.Close()
		b.StartTimer()
	}
	was := pageUse(b, src)
	b.ReportMetric(float64(was.File)/(1<<20), "source-MB")
	b.ReportMetric(float64(was.InUse)/(1<<20), "source-inuse-MB")
	b.ReportMetric(float64(copied.File)/(1<<20), "copy-MB")
	b.ReportMetric(float64(copied.InUse)/(1<<20), "copy-inuse-MB")
}
