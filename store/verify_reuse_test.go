package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
)

// Verify reuses its buffers from event to event and chunk to chunk: a chain longer than one
// chunk, whose events differ in size and carry an origin or not, verifies, and an origin altered
// in the second chunk is still found.
func TestVerifyAcrossChunksWithOrigins(t *testing.T) {
	tests := []struct {
		name    string
		tamper  bool
		problem string
	}{
		{"sound", false, ""},
		{"origin record altered", true, "hash mismatch: stored "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t)
			task := uuid.New()
			n := chunkSize*2 + 17
			evs := make([]events.Event, n)
			for i := range evs {
				evs[i] = msg(t, 1+i/10, strings.Repeat("x", i%97)+fmt.Sprint(i))
				if i%3 == 0 {
					evs[i].Origin = &events.Origin{File: fmt.Sprintf("session-%d.jsonl", i%7), Record: i}
				}
			}
			mustAppend(t, db, task, 0, evs...)
			const target = chunkSize + 5 // seq of an event with an origin (index %3 == 0), in the second chunk
			if tt.tamper {
				rawUpdate(t, db, func(tx *bolt.Tx) error {
					tb := tx.Bucket(task[:])
					raw := canonicalAt(t, task, tb, target)
					var ev events.Event
					if err := ev.UnmarshalBinary(raw); err != nil {
						return err
					}
					// The stored hash is left as it was; the altered record is put back
					// uncompressed, which a reader takes as well.
					ev.Origin.Record++
					return tb.Put(uint64ToBytes(target), ev.AppendBinary(nil))
				})
				db = openAt(t, db.Path(), &Options{NoSync: true})
			}
			err := db.Verify(context.Background(), task)
			if tt.problem == "" {
				if err != nil {
					t.Fatalf("Verify = %v", err)
				}
				return
			}
			var ve *VerifyError
			if !errors.Is(err, ErrChainBroken) || !errors.As(err, &ve) || ve.Seq != target || !strings.Contains(ve.Problem, tt.problem) {
				t.Fatalf("Verify = %v, want seq %d: %s…", err, target, tt.problem)
			}
		})
	}
}

// An id index entry whose value is not a sequence number is reported at its event, as is an
// entry that was replaced by a nested bucket of the same name.
func TestVerifyFindsMalformedIndexEntries(t *testing.T) {
	tests := []struct {
		name    string
		tamper  func(ib *bolt.Bucket, id []byte) error
		problem string
	}{
		{"value of 3 bytes", func(ib *bolt.Bucket, id []byte) error { return ib.Put(id, []byte{1, 2, 3}) },
			"the id index holds 3 bytes for event"},
		{"nested bucket", func(ib *bolt.Bucket, id []byte) error {
			if err := ib.Delete(id); err != nil {
				return err
			}
			_, err := ib.CreateBucket(id)
			return err
		}, "the id index does not hold event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t)
			task := uuid.New()
			evs := msgs(t, 40, "event")
			mustAppend(t, db, task, 0, evs...)
			rawUpdate(t, db, func(tx *bolt.Tx) error { return tt.tamper(tx.Bucket(indexName(task)), evs[22].ID[:]) })
			db = openAt(t, db.Path(), &Options{NoSync: true})
			err := db.Verify(context.Background(), task)
			var ve *VerifyError
			if !errors.As(err, &ve) || ve.Seq != 23 || !strings.Contains(ve.Problem, tt.problem) {
				t.Fatalf("Verify = %v, want seq 23: %s…", err, tt.problem)
			}
		})
	}
}

// The id index is checked against a digest of the log: a problem it finds is still named at
// its event, and problems are reported in the order the log is read, the index's and the
// chain's alike, across chunks.
func TestVerifyIndexProblemsInLogOrder(t *testing.T) {
	const n = 3*chunkSize + 40
	type tamper func(t *testing.T, tx *bolt.Tx, task uuid.UUID, evs []events.Event)
	swapIDs := func(a, b int) tamper {
		return func(t *testing.T, tx *bolt.Tx, task uuid.UUID, evs []events.Event) {
			ib := tx.Bucket(indexName(task))
			if err := ib.Put(evs[a].ID[:], uint64ToBytes(uint64(b+1))); err != nil {
				t.Fatal(err)
			}
			if err := ib.Put(evs[b].ID[:], uint64ToBytes(uint64(a+1))); err != nil {
				t.Fatal(err)
			}
		}
	}
	flip := func(i int) tamper {
		return func(t *testing.T, tx *bolt.Tx, task uuid.UUID, evs []events.Event) {
			tb := tx.Bucket(task[:])
			raw := bytes.Clone(tb.Get(uint64ToBytes(uint64(i + 1))))
			raw[len(raw)/2] ^= 1
			if err := tb.Put(uint64ToBytes(uint64(i+1)), raw); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name    string
		tampers []tamper
		seq     uint64
		problem string
	}{
		{"two ids swap their seqs", []tamper{swapIDs(chunkSize+3, 2*chunkSize+7)}, chunkSize + 4, "to seq"},
		{"ids swapped in the last chunk", []tamper{swapIDs(n-2, n-1)}, n - 1, "to seq"},
		{"an index problem before a chain problem", []tamper{swapIDs(10, 11), flip(chunkSize + 20)}, 11, "to seq"},
		{"a chain problem before an index problem", []tamper{swapIDs(2*chunkSize+1, 2*chunkSize+2), flip(chunkSize + 20)},
			chunkSize + 21, ""},
		{"a chain problem in the chunk of an index problem", []tamper{swapIDs(chunkSize+30, chunkSize+31), flip(chunkSize + 20)},
			chunkSize + 21, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t)
			task := uuid.New()
			evs := msgs(t, n, "event")
			mustAppend(t, db, task, 0, evs...)
			if err := db.Verify(context.Background(), task); err != nil {
				t.Fatalf("before tampering: %v", err)
			}
			rawUpdate(t, db, func(tx *bolt.Tx) error {
				for _, f := range tt.tampers {
					f(t, tx, task, evs)
				}
				return nil
			})
			db = openAt(t, db.Path(), &Options{NoSync: true})
			err := db.Verify(context.Background(), task)
			var ve *VerifyError
			if !errors.As(err, &ve) || ve.Seq != tt.seq || !strings.Contains(ve.Problem, tt.problem) {
				t.Fatalf("Verify = %v, want seq %d: %s…", err, tt.seq, tt.problem)
			}
		})
	}
}

// The digest of a log's (id, seq) pairs does not depend on their order and tells sets apart
// that differ in one pair, in an id or in a seq.
func TestIDDigest(t *testing.T) {
	ids := [][]byte{bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 16), bytes.Repeat([]byte{3}, 16)}
	a := newIDDigest()
	for i, id := range ids {
		a.add(id, uint64(i+1))
	}
	same := newIDDigestLike(a)
	for i := len(ids) - 1; i >= 0; i-- {
		same.add(ids[i], uint64(i+1))
	}
	if !a.equal(same) {
		t.Error("the same pairs in another order digest differently")
	}
	for name, pairs := range map[string][]uint64{"seqs swapped": {2, 1, 3}, "a seq moved": {1, 2, 4}, "a pair lost": {1, 2}} {
		d := newIDDigestLike(a)
		for i, seq := range pairs {
			d.add(ids[i], seq)
		}
		if a.equal(d) {
			t.Errorf("%s: the digests are equal", name)
		}
	}
	other := newIDDigestLike(a)
	other.add(ids[0], 1)
	other.add(ids[1], 2)
	other.add(bytes.Repeat([]byte{4}, 16), 3)
	if a.equal(other) {
		t.Error("another id: the digests are equal")
	}
}
