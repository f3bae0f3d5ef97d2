package store

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store/payloadcodec"
)

// form names the form a stored record is in.
func form(v []byte) string {
	switch {
	case len(v) == 0:
		return "missing"
	case v[0] == tagLinkedZstd:
		return "format 4, compressed"
	case v[0] == tagLinkedRaw:
		return "format 4, uncompressed"
	case payloadcodec.IsCompressed(v):
		return "format 3"
	case v[0] == 1:
		return "format 2"
	}
	return "unknown"
}

// forms returns the form of each of task's records, by seq from 1.
func forms(t *testing.T, db *DB, task uuid.UUID) []string {
	t.Helper()
	var out []string
	err := db.view(func(tx *bolt.Tx) error {
		return taskBucket(tx, task).ForEach(func(_, v []byte) error {
			out = append(out, form(v))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// recordMix is events whose records take every form of format 4: a decision compresses, an
// event without time or data does not.
func recordMix(t *testing.T) []events.Event {
	t.Helper()
	evs := format2Events(t, 1)[:20]
	bare := msg(t, 2, "")
	bare.Time, bare.Data = time.Time{}, nil
	evs[6] = bare
	return evs
}

// Records of formats 2, 3 and 4 in one log read back as the events appended, from any sequence
// number (a read starting on a record of format 4 takes its prev hash from the record before,
// whatever that one's form), verify, give the head, and are repeats by id.
func TestRecordFormsInOneLog(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	evs := recordMix(t)
	var want [][]byte
	for i := 0; i < len(evs); i += 2 {
		// Two events in each form in turn: format 4, 2, 3, 4, 2, 3, ...
		db.noCompress, db.wholeRecords = i/2%3 == 1, i/2%3 == 2
		a := mustAppend(t, db, task, uint64(i), evs[i:i+2]...)
		for _, ev := range a.Events {
			want = append(want, ev.AppendBinary(nil))
		}
	}
	got := forms(t, db, task)
	for _, f := range []string{"format 2", "format 3", "format 4, compressed", "format 4, uncompressed"} {
		if !strings.Contains(strings.Join(got, ";"), f) {
			t.Fatalf("no record of %s in %v", f, got)
		}
	}
	for from := uint64(1); from <= uint64(len(evs)); from++ {
		read := collect(t, db, task, from)
		if len(read) != len(evs)-int(from)+1 {
			t.Fatalf("from %d: %d events", from, len(read))
		}
		for i, ev := range read {
			seq := int(from) + i
			if enc := ev.AppendBinary(nil); !bytes.Equal(enc, want[seq-1]) {
				t.Fatalf("from %d: seq %d (%s) reads back otherwise", from, seq, got[seq-1])
			}
		}
	}
	if err := db.Verify(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	// The head, with the last record in the form of format 4, then of format 2.
	for i, noCompress := range []bool{false, true} {
		db.noCompress = noCompress
		a := mustAppend(t, db, task, uint64(len(evs)+i), msg(t, 9+i, "last"))
		if h, err := db.Head(task); err != nil || h != (Head{Seq: a.Last, Hash: a.Events[0].Hash, LastTurn: 9 + i}) {
			t.Fatalf("Head = %+v, %v; want seq %d turn %d", h, err, a.Last, 9+i)
		}
	}
	for i := 0; i < len(evs); i += 2 {
		a, err := db.Append(context.Background(), task, 0, evs[i:i+2]...)
		if err != nil || !a.Duplicate || a.First != uint64(i+1) || !bytes.Equal(a.Events[1].AppendBinary(nil), want[i+1]) {
			t.Fatalf("repeat of the batch at %d (%s) = %+v, %v", i+1, got[i], a, err)
		}
	}
}

// A file of format 3 reads as it was written; opened for writing it becomes format 4 and takes
// records of format 4 after its compressed ones: a read starting on the first new record takes
// its prev hash from the last old one, and both kinds verify and are repeats by id.
func TestFormat3ReadableAndAppendable(t *testing.T) {
	path := copyFixture(t, "format3.db")
	if f := fileFormat(t, path); f != "3" {
		t.Fatalf("the fixture is format %q, want 3", f)
	}
	ro := openAt(t, path, &Options{ReadOnly: true})
	if ro.Format() != "3" {
		t.Errorf("Format() = %q read-only, want 3", ro.Format())
	}
	for ti, task := range format3Tasks {
		if err := ro.Verify(context.Background(), task); err != nil {
			t.Fatalf("task %d read-only: %v", ti, err)
		}
		if f := forms(t, ro, task); f[9] != "format 3" {
			t.Fatalf("task %d: the fixture's decision at seq 10 is of %s", ti, f[9])
		}
	}
	ro.Close()
	if f := fileFormat(t, path); f != "3" {
		t.Fatalf("a read-only open left the file format %q", f)
	}

	db := openAt(t, path, &Options{NoSync: true})
	if db.Format() != "4" {
		t.Errorf("Format() = %q after a writable open, want 4", db.Format())
	}
	for ti, task := range format3Tasks {
		old := format2Events(t, ti)
		if a, err := db.Append(context.Background(), task, 0, old[25:]...); err != nil || !a.Duplicate || a.First != 26 {
			t.Fatalf("task %d: repeat of an old batch = %+v, %v", ti, a, err)
		}
		next := format2Events(t, ti+2)
		a := mustAppend(t, db, task, 40, next[8:10]...) // a tool call, then a decision
		if err := db.Verify(context.Background(), task); err != nil {
			t.Fatalf("task %d after an append: %v", ti, err)
		}
		f := forms(t, db, task)
		if f[39] != "format 3" || f[40] != "format 4, compressed" || f[41] != "format 4, compressed" {
			t.Errorf("task %d: records 40 to 42 are of %v", ti, f[39:])
		}
		got := collect(t, db, task, 41)
		if len(got) != 2 || got[0].Prev != old[39].Hash && got[0].Hash != a.Events[0].Hash || !bytes.Equal(got[1].Data, next[9].Data) {
			t.Fatalf("task %d: read from seq 41: %+v", ti, got)
		}
		all := collect(t, db, task, 1)
		for i := range old {
			if all[i].ID != old[i].ID || !bytes.Equal(all[i].Data, old[i].Data) {
				t.Fatalf("task %d seq %d: read back %s %.40q", ti, i+1, all[i].ID, all[i].Data)
			}
		}
		if r, err := db.Append(context.Background(), task, 0, next[8:10]...); err != nil || !r.Duplicate || r.First != 41 || r.Events[0].Hash != a.Events[0].Hash {
			t.Fatalf("task %d: repeat of the new batch = %+v, %v", ti, r, err)
		}
	}
	if data, err := db.Blob(sumOf(format2Blob)); err != nil || !bytes.Equal(data, format2Blob) {
		t.Errorf("the old blob = %d bytes, %v", len(data), err)
	}
	if seq, data, err := db.Snapshot(format3Tasks[0], "context"); err != nil || seq != 40 || string(data) != "snapshot bytes" {
		t.Errorf("Snapshot = %d %q %v", seq, data, err)
	}
	db.Close()
	if f := fileFormat(t, path); f != "4" {
		t.Errorf("the file is format %q after a writable open, want 4", f)
	}
}

// A file of a format this version does not know, as a version that knows formats up to 3 sees a
// file of format 4, is refused with an error that says a newer tasklog wrote it.
func TestUnknownFormatRefused(t *testing.T) {
	db := openTest(t)
	mustAppend(t, db, uuid.New(), 0, msg(t, 1, "x"))
	rawUpdate(t, db, func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyFormat, []byte("5")) })
	for _, ro := range []bool{false, true} {
		_, err := Open(db.Path(), &Options{ReadOnly: ro})
		if !errors.Is(err, ErrNotDatabase) || !strings.Contains(err.Error(), `unknown format "5"; a newer tasklog wrote it`) {
			t.Errorf("read-only %v: %v", ro, err)
		}
	}
}

// The head is read from the hash and turn in front of a record of format 4, without its body:
// a body damaged beyond decompressing does not stop an append, and Verify still finds it.
func TestHeadReadsNoBody(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	evs := format2Events(t, 0)[:10]
	a := mustAppend(t, db, task, 0, evs...)
	rawUpdate(t, db, func(tx *bolt.Tx) error {
		tb := tx.Bucket(task[:])
		v := bytes.Clone(tb.Get(uint64ToBytes(10)))
		if v[0] != tagLinkedZstd {
			t.Fatalf("the decision at seq 10 is of %s", form(v))
		}
		_, _, at, _ := linkedHead(v)
		return tb.Put(uint64ToBytes(10), append(v[:at], "not a frame"...))
	})
	db = openAt(t, db.Path(), &Options{NoSync: true})
	h, err := db.Head(task)
	if err != nil || h != (Head{Seq: 10, Hash: a.Events[9].Hash, LastTurn: evs[9].Turn}) {
		t.Fatalf("Head = %+v, %v", h, err)
	}
	if tasks, err := db.Tasks(); err != nil || len(tasks) != 1 || tasks[0].LastTurn != evs[9].Turn {
		t.Fatalf("Tasks = %+v, %v", tasks, err)
	}
	b := mustAppend(t, db, task, 10, msg(t, 2, "after"))
	if b.Events[0].Prev != a.Events[9].Hash {
		t.Errorf("the append links to %s, want %s", b.Events[0].Prev, a.Events[9].Hash)
	}
	var ve *VerifyError
	if err := db.Verify(context.Background(), task); !errors.As(err, &ve) || ve.Seq != 10 {
		t.Errorf("Verify = %v, want a problem at seq 10", err)
	}
}

// A read that starts on a record of format 4 whose predecessor is gone cannot rebuild its prev
// hash: it is an error naming the record, not an event with a wrong link.
func TestReadWithoutPredecessor(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	mustAppend(t, db, task, 0, msgs(t, 8, "e")...)
	rawUpdate(t, db, func(tx *bolt.Tx) error { return tx.Bucket(task[:]).Delete(uint64ToBytes(5)) })
	db = openAt(t, db.Path(), &Options{NoSync: true})
	var got error
	n := 0
	for _, err := range db.Events(context.Background(), task, 6) {
		if err != nil {
			got = err
			break
		}
		n++
	}
	if n != 0 || !errors.Is(got, ErrCorrupt) || !errors.Is(got, errNoPrev) || !strings.Contains(got.Error(), "seq 6") {
		t.Errorf("read %d events, then %v; want an error at seq 6", n, got)
	}
	if got := collect(t, db, task, 7); len(got) != 2 || got[0].Seq != 7 {
		t.Errorf("read from seq 7: %d events", len(got))
	}
	var ve *VerifyError
	if err := db.Verify(context.Background(), task); !errors.As(err, &ve) || ve.Seq != 5 || !strings.Contains(ve.Problem, "missing") {
		t.Errorf("Verify = %v, want seq 5 missing", err)
	}
}
