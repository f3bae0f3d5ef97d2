package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
)

// canonicalAt returns the canonical encoding of the record task's log tb holds at seq, rebuilt
// with the hash of the record before it.
func canonicalAt(t testing.TB, task uuid.UUID, tb *bolt.Bucket, seq uint64) []byte {
	t.Helper()
	var r recordReader
	r.start(seq, tb.Get(uint64ToBytes(seq-1)))
	prev := r.prev
	raw, err := r.next(nil, tb.Get(uint64ToBytes(seq)))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.Event
	if err := decodeRecord(&ev, raw, task, seq, prev); err != nil {
		t.Fatal(err)
	}
	return ev.AppendBinary(nil)
}

func TestVerifyFindsTampering(t *testing.T) {
	// Records are read as their canonical bytes and put back so, as a tamperer would: a reader
	// takes a record of format 2 beside the others.
	var task uuid.UUID
	get := func(tb *bolt.Bucket, seq uint64) []byte { return canonicalAt(t, task, tb, seq) }
	decode := func(raw []byte) events.Event {
		var ev events.Event
		if err := ev.UnmarshalBinary(raw); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	otherTask := uuid.New()
	tests := []struct {
		name    string
		tamper  func(task uuid.UUID, tx *bolt.Tx) error
		seq     uint64
		problem string
	}{
		{"byte flipped in the payload", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			raw := get(tb, 17)
			i := bytes.Index(raw, []byte("event 16"))
			raw[i] = 'E'
			return tb.Put(uint64ToBytes(17), raw)
		}, 17, "hash mismatch: stored "},
		{"event deleted", func(task uuid.UUID, tx *bolt.Tx) error {
			return tx.Bucket(task[:]).Delete(uint64ToBytes(5))
		}, 5, "missing: the next stored event is seq 6"},
		{"first event deleted", func(task uuid.UUID, tx *bolt.Tx) error {
			return tx.Bucket(task[:]).Delete(uint64ToBytes(1))
		}, 1, "missing"},
		{"pair swapped", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			a, b := get(tb, 8), get(tb, 9)
			if err := tb.Put(uint64ToBytes(8), b); err != nil {
				return err
			}
			return tb.Put(uint64ToBytes(9), a)
		}, 8, "says it is seq 9"},
		{"event rewritten and resealed", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			ev := decode(get(tb, 10))
			ev.Data = []byte(`{"text":"forged"}`)
			ev.Seal(ev.Prev)
			return tb.Put(uint64ToBytes(10), ev.AppendBinary(nil))
		}, 11, "or seq 10 was replaced"},
		{"event rewritten and resealed before a record of format 2", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			if err := tb.Put(uint64ToBytes(11), get(tb, 11)); err != nil {
				return err
			}
			ev := decode(get(tb, 10))
			ev.Data = []byte(`{"text":"forged"}`)
			ev.Seal(ev.Prev)
			return tb.Put(uint64ToBytes(10), ev.AppendBinary(nil))
		}, 11, "prev link"},
		{"event from another task", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			ev := decode(get(tb, 12))
			ev.Task = otherTask
			ev.Seal(ev.Prev)
			return tb.Put(uint64ToBytes(12), ev.AppendBinary(nil))
		}, 12, "belongs to task " + otherTask.String()},
		// Records of format 4, tampered with as they are stored.
		{"stored hash damaged", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			v := bytes.Clone(tb.Get(uint64ToBytes(15)))
			v[1+7] ^= 0x10
			return tb.Put(uint64ToBytes(15), v)
		}, 15, "hash mismatch: stored "},
		{"last stored hash damaged", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			v := bytes.Clone(tb.Get(uint64ToBytes(30)))
			v[32] ^= 0x01
			return tb.Put(uint64ToBytes(30), v)
		}, 30, "hash mismatch: stored "},
		{"stored turn changed", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			v := bytes.Clone(tb.Get(uint64ToBytes(4)))
			v[linkedHeader]++
			return tb.Put(uint64ToBytes(4), v)
		}, 4, "hash mismatch: stored "},
		{"byte flipped in an uncompressed record of format 4", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			ev := decode(get(tb, 17))
			v := append([]byte{tagLinkedRaw}, ev.Hash[:]...)
			v = binary.AppendUvarint(v, uint64(ev.Turn))
			v = ev.AppendCompact(v)
			v[bytes.Index(v, []byte("event 16"))] = 'E'
			return tb.Put(uint64ToBytes(17), v)
		}, 17, "hash mismatch: stored "},
		{"pair of format 4 swapped", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			a, b := bytes.Clone(tb.Get(uint64ToBytes(8))), bytes.Clone(tb.Get(uint64ToBytes(9)))
			if err := tb.Put(uint64ToBytes(8), b); err != nil {
				return err
			}
			return tb.Put(uint64ToBytes(9), a)
		}, 8, "hash mismatch: stored "},
		{"record of format 4 moved back", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			if err := tb.Put(uint64ToBytes(21), bytes.Clone(tb.Get(uint64ToBytes(22)))); err != nil {
				return err
			}
			return tb.Delete(uint64ToBytes(22))
		}, 21, "hash mismatch: stored "},
		{"record of format 4 from another task", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			ev := decode(get(tb, 12))
			ev.Task = otherTask
			ev.Seal(ev.Prev)
			v, _ := appendRecord(nil, &ev, nil)
			return tb.Put(uint64ToBytes(12), v)
		}, 12, "hash mismatch: stored "},
		{"id index entry deleted", func(task uuid.UUID, tx *bolt.Tx) error {
			ev := decode(get(tx.Bucket(task[:]), 7))
			return tx.Bucket(indexName(task)).Delete(ev.ID[:])
		}, 7, "the id index does not hold event"},
		{"id index entry moved", func(task uuid.UUID, tx *bolt.Tx) error {
			ev := decode(get(tx.Bucket(task[:]), 7))
			return tx.Bucket(indexName(task)).Put(ev.ID[:], uint64ToBytes(3))
		}, 7, "to seq 3"},
		{"id index entry added", func(task uuid.UUID, tx *bolt.Tx) error {
			id := msg(t, 1, "never appended").ID
			return tx.Bucket(indexName(task)).Put(id[:], uint64ToBytes(31))
		}, 30, "indexed at seq 31, is not in the log"},
		{"id index deleted", func(task uuid.UUID, tx *bolt.Tx) error {
			return tx.DeleteBucket(indexName(task))
		}, 1, "no id index"},
		{"record cut short", func(task uuid.UUID, tx *bolt.Tx) error {
			tb := tx.Bucket(task[:])
			raw := get(tb, 20)
			return tb.Put(uint64ToBytes(20), raw[:len(raw)-5])
		}, 20, "do not decode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t)
			task = uuid.New()
			evs := make([]events.Event, 30)
			for i := range evs {
				evs[i] = msg(t, 1, "event "+string(rune('0'+i/10))+string(rune('0'+i%10)))
			}
			mustAppend(t, db, task, 0, evs...)
			if err := db.Verify(context.Background(), task); err != nil {
				t.Fatalf("before tampering: %v", err)
			}
			rawUpdate(t, db, func(tx *bolt.Tx) error { return tt.tamper(task, tx) })
			db = openAt(t, db.Path(), &Options{NoSync: true})
			err := db.Verify(context.Background(), task)
			var ve *VerifyError
			if !errors.Is(err, ErrChainBroken) || !errors.As(err, &ve) {
				t.Fatalf("Verify = %v, want a VerifyError", err)
			}
			if ve.Task != task || ve.Seq != tt.seq || !strings.Contains(ve.Problem, tt.problem) {
				t.Errorf("Verify = %v\nwant seq %d: %s…", err, tt.seq, tt.problem)
			}
			if !strings.HasPrefix(err.Error(), "task "+task.String()+": seq ") {
				t.Errorf("message %q does not lead with task and seq", err)
			}
			t.Log(err)
			// VerifyEvents finds the same problem, having handed on each event once, in order,
			// and none at or after a problem of the chain (the id index is checked at the end:
			// the log's events are sound when only the index is wrong).
			inIndex := strings.Contains(ve.Problem, "id index")
			var handed []uint64
			eerr := db.VerifyEvents(context.Background(), task, func(ev events.Event) error {
				handed = append(handed, ev.Seq)
				return nil
			})
			if eerr == nil || eerr.Error() != err.Error() {
				t.Errorf("VerifyEvents = %v\nVerify       = %v", eerr, err)
			}
			for i, seq := range handed {
				if seq != uint64(i+1) || seq >= tt.seq && !inIndex {
					t.Fatalf("VerifyEvents handed on seqs %v; want 1 to %d at most", handed, tt.seq-1)
				}
			}
			if !inIndex && uint64(len(handed))+1 < tt.seq {
				t.Fatalf("VerifyEvents handed on seqs %v; want every one before the problem at %d", handed, tt.seq)
			}
		})
	}
}

// VerifyEvents hands on every event of a sound log as Events reads it, the caller's to keep
// (each chunk has a buffer of its own), and an error of the caller stops it.
func TestVerifyEventsHandsOnTheLog(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	task := uuid.New()
	// More events than one chunk reads, so that a chunk's buffer reused would change the
	// events handed on before it.
	evs := make([]events.Event, 2*chunkSize+100)
	for i := range evs {
		evs[i] = msg(t, 1, fmt.Sprintf("event %04d", i))
	}
	mustAppend(t, db, task, 0, evs...)
	var handed []events.Event
	if err := db.VerifyEvents(ctx, task, func(ev events.Event) error {
		handed = append(handed, ev)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var read []events.Event
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		read = append(read, ev)
	}
	if len(handed) != len(read) {
		t.Fatalf("VerifyEvents handed on %d events, Events read %d", len(handed), len(read))
	}
	for i := range read {
		a, err := handed[i].MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		b, err := read[i].MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("seq %d: VerifyEvents handed on another event than Events reads", read[i].Seq)
		}
	}
	stop := errors.New("enough")
	n := 0
	if err := db.VerifyEvents(ctx, task, func(events.Event) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	}); err != stop || n != 3 {
		t.Fatalf("VerifyEvents whose caller stops at the third event = %v after %d events", err, n)
	}
}

func TestVerifyUnknownTask(t *testing.T) {
	db := openTest(t)
	if err := db.Verify(context.Background(), uuid.New()); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("Verify = %v, want ErrTaskNotFound", err)
	}
}

// A hash mismatch names both hashes in full, so a person can compare them with a copy kept
// elsewhere.
func TestVerifyShowsBothHashesInFull(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	mustAppend(t, db, task, 0, msg(t, 1, "before"), msg(t, 1, "the event to alter"), msg(t, 1, "after"))
	var altered events.Event
	rawUpdate(t, db, func(tx *bolt.Tx) error {
		tb := tx.Bucket(task[:])
		raw := canonicalAt(t, task, tb, 2)
		raw[bytes.Index(raw, []byte("alter"))] = 'A'
		if err := altered.UnmarshalBinary(raw); err != nil {
			return err
		}
		return tb.Put(uint64ToBytes(2), raw)
	})
	db = openAt(t, db.Path(), &Options{NoSync: true})
	err := db.Verify(context.Background(), task)
	want := "hash mismatch: stored " + altered.Hash.String() + ", computed " + altered.ComputeHash().String()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Verify = %v\nwant it to contain %q", err, want)
	}
	if len(altered.Hash.String()) != 64 {
		t.Errorf("a hash prints as %q, not 64 hex digits", altered.Hash)
	}
}
