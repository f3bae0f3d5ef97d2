package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store/payloadcodec"
)

// storedValue returns the bytes the file keeps for task's event seq.
func storedValue(t *testing.T, path string, task uuid.UUID, seq uint64) []byte {
	t.Helper()
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var v []byte
	b.View(func(tx *bolt.Tx) error {
		v = bytes.Clone(tx.Bucket(task[:]).Get(uint64ToBytes(seq)))
		return nil
	})
	return v
}

// encodings is every event of task as its canonical encoding.
func encodings(t *testing.T, db *DB, task uuid.UUID) [][]byte {
	t.Helper()
	var out [][]byte
	for _, ev := range collect(t, db, task, 1) {
		out = append(out, ev.AppendBinary(nil))
	}
	return out
}

// A file of format 2 reads as it was written; opened for writing it becomes format 4 and takes
// records of format 4 after its old ones, and both verify, are read, and are repeats by id.
func TestFormat2ReadableAndAppendable(t *testing.T) {
	path := copyFixture(t, "format2.db")
	if f := fileFormat(t, path); f != "2" {
		t.Fatalf("the fixture is format %q, want 2", f)
	}
	ro := openAt(t, path, &Options{ReadOnly: true})
	if ro.Format() != "2" {
		t.Errorf("Format() = %q read-only, want 2", ro.Format())
	}
	for ti, task := range format2Tasks {
		if err := ro.Verify(context.Background(), task); err != nil {
			t.Fatalf("task %d read-only: %v", ti, err)
		}
	}
	ro.Close()

	db := openAt(t, path, &Options{NoSync: true})
	if db.Format() != "4" {
		t.Errorf("Format() = %q after a writable open, want 4", db.Format())
	}
	for ti, task := range format2Tasks {
		old := format2Events(t, ti)
		got := collect(t, db, task, 1)
		if len(got) != len(old) {
			t.Fatalf("task %d: %d events, want %d", ti, len(got), len(old))
		}
		for i := range old {
			if got[i].ID != old[i].ID || !bytes.Equal(got[i].Data, old[i].Data) {
				t.Fatalf("task %d seq %d: read back %s %.40q", ti, i+1, got[i].ID, got[i].Data)
			}
		}
		if a, err := db.Append(context.Background(), task, 0, old[25:]...); err != nil || !a.Duplicate || a.First != 26 {
			t.Fatalf("task %d: repeat of an old batch = %+v, %v", ti, a, err)
		}
		mustAppend(t, db, task, 40, format2Events(t, ti+2)[9]) // a decision
		if err := db.Verify(context.Background(), task); err != nil {
			t.Fatalf("task %d after an append: %v", ti, err)
		}
	}
	if data, err := db.Blob(sumOf(format2Blob)); err != nil || !bytes.Equal(data, format2Blob) {
		t.Errorf("the old blob = %d bytes, %v", len(data), err)
	}
	db.Close()
	if f := fileFormat(t, path); f != "4" {
		t.Errorf("the file is format %q after a writable open, want 4", f)
	}
	if v := storedValue(t, path, format2Tasks[0], 10); v[0] != 1 {
		t.Errorf("an old record was rewritten")
	}
	if v := storedValue(t, path, format2Tasks[0], 41); v[0] != tagLinkedZstd {
		t.Errorf("the new decision is not stored compressed in the form of format 4 (%d bytes, tag %x)", len(v), v[0])
	}
}

// The same events written compressed and uncompressed read back byte for byte the same, with
// the same hashes, and the compressed file's records take less room.
func TestCompressedReadsAsUncompressed(t *testing.T) {
	dir := t.TempDir()
	plain := openAt(t, filepath.Join(dir, "plain.db"), &Options{NoSync: true})
	plain.noCompress = true
	packed := openAt(t, filepath.Join(dir, "packed.db"), &Options{NoSync: true})
	task := uuid.New()
	evs := append(format2Events(t, 0), msgs(t, 30, "short")...)
	for _, db := range []*DB{plain, packed} {
		mustAppend(t, db, task, 0, evs[:20]...)
		mustAppend(t, db, task, 20, evs[20:]...)
		if _, err := db.PutBlob(format2Blob); err != nil {
			t.Fatal(err)
		}
	}
	want, got := encodings(t, plain, task), encodings(t, packed, task)
	if len(got) != len(want) {
		t.Fatalf("%d events read back, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("seq %d reads back otherwise from the compressed file", i+1)
		}
	}
	if err := packed.Verify(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	if data, err := packed.Blob(sumOf(format2Blob)); err != nil || !bytes.Equal(data, format2Blob) {
		t.Errorf("Blob = %d bytes, %v", len(data), err)
	}
	plain.Close()
	packed.Close()
	pv, cv := storedValue(t, plain.Path(), task, 10), storedValue(t, packed.Path(), task, 10)
	if len(cv)*4 > len(pv) {
		t.Errorf("the decision takes %d bytes compressed, %d uncompressed", len(cv), len(pv))
	}
}

// A compressed record damaged on disk ends a read with an error naming the task and the seq,
// and Verify reports a VerifyError there; nothing panics and the records before it are read.
func TestDamagedCompressedRecord(t *testing.T) {
	db := openAt(t, filepath.Join(t.TempDir(), "tasks.db"), &Options{NoSync: true})
	task := uuid.New()
	evs := format2Events(t, 0)[:20]
	mustAppend(t, db, task, 0, evs...)
	rawUpdate(t, db, func(tx *bolt.Tx) error {
		tb := tx.Bucket(task[:])
		v := bytes.Clone(tb.Get(uint64ToBytes(10)))
		if v[0] != tagLinkedZstd {
			t.Fatal("the decision at seq 10 is not compressed")
		}
		return tb.Put(uint64ToBytes(10), v[:len(v)/2])
	})
	db = openAt(t, db.Path(), &Options{NoSync: true})
	n := 0
	var readErr error
	for _, err := range db.Events(context.Background(), task, 1) {
		if err != nil {
			readErr = err
			break
		}
		n++
	}
	if n != 9 || !errors.Is(readErr, ErrCorrupt) || !strings.Contains(readErr.Error(), "task "+task.String()+": seq 10") {
		t.Errorf("read %d events, then %v; want 9, then ErrCorrupt naming the task and seq 10", n, readErr)
	}
	var ve *VerifyError
	if err := db.Verify(context.Background(), task); !errors.As(err, &ve) || ve.Seq != 10 || !strings.Contains(ve.Problem, "does not decompress") {
		t.Errorf("Verify = %v, want a VerifyError at seq 10", err)
	}
	if _, err := db.Head(task); err != nil {
		t.Errorf("Head = %v; the last record is sound", err)
	}
}

// A record compressed with a dictionary this version lacks is an error that says so.
func TestRecordOfUnknownDictionary(t *testing.T) {
	db := openAt(t, filepath.Join(t.TempDir(), "tasks.db"), &Options{NoSync: true})
	task := uuid.New()
	mustAppend(t, db, task, 0, format2Events(t, 0)[:10]...)
	// The frame of the last small record of the first ten (a large one, the decision at seq
	// 10, is compressed without a dictionary) is made to name a dictionary no version has yet,
	// as a newer version would write it.
	var seq uint64
	rawUpdate(t, db, func(tx *bolt.Tx) error {
		tb := tx.Bucket(task[:])
		frameAt := func(s uint64) []byte {
			v := bytes.Clone(tb.Get(uint64ToBytes(s)))
			_, _, at, err := linkedHead(v)
			if err != nil || v[0] != tagLinkedZstd {
				t.Fatalf("the record at seq %d is not compressed (%x, %v)", s, v[0], err)
			}
			return v[at:]
		}
		if fhd := frameAt(10)[0]; fhd&3 != 0 {
			t.Fatalf("the decision at seq 10 names a dictionary (frame header %x)", fhd)
		}
		for s := uint64(9); s >= 1; s-- {
			v := bytes.Clone(tb.Get(uint64ToBytes(s)))
			_, _, at, _ := linkedHead(v)
			// Dictionary id 1 becomes 200 in the frame header: single segment, one byte of id.
			if f := frameAt(s); f[0]&3 != 1 || f[1] != 1 {
				continue
			}
			seq, v[at+1] = s, 200
			return tb.Put(uint64ToBytes(s), v)
		}
		t.Fatal("no record of seqs 1 to 9 is compressed with dictionary 1, named in one byte")
		return nil
	})
	db = openAt(t, db.Path(), &Options{NoSync: true})
	var readErr error
	for _, err := range db.Events(context.Background(), task, 1) {
		if err != nil {
			readErr = err
		}
	}
	if !errors.Is(readErr, payloadcodec.ErrUnknownDictionary) || !strings.Contains(readErr.Error(), "dictionary 200") || !strings.Contains(readErr.Error(), fmt.Sprintf(": seq %d:", seq)) {
		t.Errorf("reading a record of dictionary 200 at seq %d: %v", seq, readErr)
	}
}

// A compressed blob whose bytes are damaged is ErrCorrupt, not a panic or other content.
func TestDamagedCompressedBlob(t *testing.T) {
	db := openAt(t, filepath.Join(t.TempDir(), "tasks.db"), &Options{NoSync: true})
	sum, err := db.PutBlob(format2Blob)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ParseBlobSum(sum)
	rawUpdate(t, db, func(tx *bolt.Tx) error {
		bb := tx.Bucket(bucketBlobs)
		v := bytes.Clone(bb.Get(key))
		if !payloadcodec.IsCompressed(v) || len(v) >= len(format2Blob) {
			t.Fatalf("the blob is kept in %d bytes for %d", len(v), len(format2Blob))
		}
		v[len(v)-3] ^= 0x55
		return bb.Put(key, v)
	})
	db = openAt(t, db.Path(), &Options{NoSync: true})
	if _, err := db.Blob(sum); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), sum) {
		t.Errorf("Blob of damaged content = %v, want ErrCorrupt naming the blob", err)
	}
}

func sumOf(b []byte) string { return events.Hash(sha256.Sum256(b)).String() }

// Past 1 MiB the file grows about 1 MiB ahead of its last page (2 MiB at most here), not bbolt's 16 MiB.
func TestFileGrowsLittleAheadOfItsPages(t *testing.T) {
	db := openAt(t, filepath.Join(t.TempDir(), "tasks.db"), &Options{NoSync: true})
	db.noCompress = true
	// Commits skip their fsync, but the file grows as a durable store's does.
	db.bolt.NoGrowSync = false
	task := uuid.New()
	noise := make([]byte, 256<<10)
	for i := range 40 {
		rand.Read(noise)
		mustAppend(t, db, task, uint64(i), msg(t, 1, hex.EncodeToString(noise)))
	}
	var pages int64 // up to the last page used
	db.bolt.View(func(tx *bolt.Tx) error { pages = tx.Size(); return nil })
	_, size := diskInUse(t, db)
	if pages < 18<<20 {
		t.Fatalf("only %d bytes of pages: the test did not pass 16 MiB", pages)
	}
	if size-pages > 2<<20 {
		t.Errorf("the file is %d bytes for %d of pages: it grew %d ahead", size, pages, size-pages)
	}
}
