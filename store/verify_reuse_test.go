package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store/payloadcodec"
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
					raw, err := payloadcodec.Decode(nil, tb.Get(uint64ToBytes(target)))
					if err != nil {
						return err
					}
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
