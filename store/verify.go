package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
)

// Verify walks task's log from the first event and checks it is the chain that was written:
// no gap in the sequence, every event stored under its own sequence and task, its encoding
// sound, its hash the hash of its content, and its Prev the hash of its predecessor. It checks
// the task's id index against the log too: every event's id maps to its sequence and the index
// holds nothing else (a file of format 1 opened read-only has no index to check). The first
// problem is returned as a *VerifyError (errors.Is ErrChainBroken); nil means the log is sound.
// A log cut short after its last surviving event is a sound chain: to detect that, compare the
// head with one recorded elsewhere. An unknown task is ErrTaskNotFound; a done ctx stops the walk
// with ctx.Err(). The check of each event's chain is ChainVerifier's, which any Store shares.
func (db *DB) Verify(ctx context.Context, task uuid.UUID) error {
	return db.verify(ctx, task, nil)
}

// VerifyEvents is Verify that also hands each event to each once its link in the chain is
// checked, in order, as one read of the log serves both: a replay that must see the log the
// chain check passes (session.Verify) reads it once instead of twice. The events are the
// caller's to keep. An error of each stops the walk and is returned as it is. An error of the
// check comes after the events before the problem were handed out; the id index is checked
// after the last event.
func (db *DB) VerifyEvents(ctx context.Context, task uuid.UUID, each func(events.Event) error) error {
	return db.verify(ctx, task, each)
}

// verify is Verify, handing each checked event to each when it is set.
func (db *DB) verify(ctx context.Context, task uuid.UUID, each func(events.Event) error) error {
	// One chunk, and the verifier's one encoding buffer, serve the whole log: nothing of an event
	// is kept once it is checked, so a verify allocates per chunk read, not per event. Events
	// handed to each are kept, so then each chunk gets a buffer of its own.
	c := chunk{buf: make([]byte, 0, firstChunkBytes), seqs: make([]uint64, 0, chunkSize), ends: make([]int, 0, chunkSize), limit: chunkSize}
	chain := NewChainVerifier(task)
	broken := func(seq uint64, format string, args ...any) error {
		return &VerifyError{Task: task, Seq: seq, Problem: fmt.Sprintf(format, args...)}
	}
	// The id index is checked against a digest of the log's (id, seq) pairs, taken on the way,
	// in one walk of the index in its own order at the end; only when they differ is each id
	// looked up (idProblem), to name the first event the index gets wrong.
	digest := newIDDigest()
	// problem is err, the first problem of the chunk from seq first on, unless the id index
	// already gets an event of the chunks before it wrong: that is reported first, as when each
	// chunk's ids were looked up right after its chain was checked.
	problem := func(first uint64, err error) error {
		if first > 1 {
			if ierr := db.idProblem(ctx, task, first-1); ierr != nil {
				return ierr
			}
		}
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		first := chain.Next()
		if each != nil && len(c.buf) > 0 {
			c = chunk{buf: make([]byte, 0, cap(c.buf)), seqs: c.seqs, ends: c.ends, limit: c.limit}
		}
		if err := db.readChunkInto(&c, task, first); err != nil {
			return problem(first, err)
		}
		for i, seq := range c.seqs {
			// What only the file can tell: an event missing under its key, or bytes that do not
			// decode. The rest is the chain's check, the same for every store.
			if next := chain.Next(); seq != next {
				return problem(first, broken(next, "missing: the next stored event is seq %d; events were deleted", seq))
			}
			// A record of format 4 takes its prev hash from the one before it, checked already.
			var ev events.Event
			if err := decodeRecord(&ev, c.value(i), task, seq, chain.Prev()); err != nil {
				return problem(first, broken(seq, "the stored bytes do not decode (%v): the record is damaged", err))
			}
			if err := chain.Check(&ev); err != nil {
				if seq > 1 && isLinked(c.value(i)) {
					// A record of format 4 takes its seq, task and prev hash from where it is
					// stored, so only its hash can fail; its prev hash is the hash of the record
					// before as that is stored now, so a record before it replaced and resealed
					// shows here too.
					var ve *VerifyError
					if errors.As(err, &ve) {
						ve.Problem += fmt.Sprintf(", or seq %d was replaced (this record's prev hash is the hash seq %d has now)", seq-1, seq-1)
					}
				}
				return problem(first, err)
			}
			digest.add(ev.ID[:], seq)
			if each != nil {
				if err := each(ev); err != nil {
					return err
				}
			}
		}
		if c.bad != nil {
			if next := chain.Next(); c.bad.seq != next {
				return broken(next, "missing: the next stored event is seq %d; events were deleted", c.bad.seq)
			}
			return broken(c.bad.seq, "the stored record does not decompress (%v): the record is damaged", c.bad.err)
		}
		if !c.more {
			if chain.Next() == 1 {
				return fmt.Errorf("task %s: %w", task, ErrTaskNotFound)
			}
			return db.verifyIndex(ctx, task, chain.Next()-1, digest)
		}
	}
}

// verifyIndex checks that the id index maps every event id of the log, the events 1 to head
// whose pairs logged holds, to its sequence number and holds nothing else.
func (db *DB) verifyIndex(ctx context.Context, task uuid.UUID, head uint64, logged *idDigest) error {
	if db.format == string(formatV1) {
		return nil
	}
	indexed := newIDDigestLike(logged)
	whole := false
	err := db.viewTask(task, func(tx *bolt.Tx) error {
		ib := tx.Bucket(indexName(task))
		if ib == nil {
			return nil
		}
		whole = true
		cur := ib.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			if len(k) != 16 || len(v) != 8 {
				whole = false // a malformed entry: looked up below, which names it
				return nil
			}
			indexed.add(k, bytesToUint64(v))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if whole && indexed.equal(logged) {
		return nil
	}
	if err := db.idProblem(ctx, task, head); err != nil {
		return err
	}
	return db.verifyIndexSize(task, head)
}

// idProblem looks up the id of every event from 1 to last in the id index, a chunk at a time,
// and returns the first that it does not map to the event's sequence number.
func (db *DB) idProblem(ctx context.Context, task uuid.UUID, last uint64) error {
	c := chunk{buf: make([]byte, 0, firstChunkBytes), seqs: make([]uint64, 0, chunkSize), ends: make([]int, 0, chunkSize), limit: chunkSize}
	ids := make([]ulid.ULID, 0, chunkSize)
	for from := uint64(1); from <= last; from += uint64(len(ids)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := db.readChunkInto(&c, task, from); err != nil {
			return err
		}
		ids = ids[:0]
		for i, seq := range c.seqs {
			// Only the id is wanted: the prev hash does not matter.
			var ev events.Event
			if seq > last || seq != from+uint64(i) || decodeRecord(&ev, c.value(i), task, seq, events.Hash{}) != nil {
				break // the chain check reports it
			}
			ids = append(ids, ev.ID)
		}
		if len(ids) > 0 {
			if err := db.verifyIDs(task, from, ids); err != nil {
				return err
			}
		}
		if len(ids) < len(c.seqs) || !c.more {
			return nil
		}
	}
	return nil
}

// verifyIDs checks that the id index maps ids, the events stored from seq first on, to their
// sequence numbers.
func (db *DB) verifyIDs(task uuid.UUID, first uint64, ids []ulid.ULID) error {
	if db.format == string(formatV1) {
		return nil
	}
	return db.viewTask(task, func(tx *bolt.Tx) error {
		ib := tx.Bucket(indexName(task))
		if ib == nil {
			return &VerifyError{Task: task, Seq: first, Problem: "the task has no id index: it was written by other code or the index was deleted"}
		}
		// One cursor for the chunk: a Get per id would allocate a cursor and its stack each time.
		cur := ib.Cursor()
		for i, id := range ids {
			seq := first + uint64(i)
			got, ok, err := seekID(cur, id)
			switch {
			case err != nil:
				return &VerifyError{Task: task, Seq: seq, Problem: err.Error()}
			case !ok:
				return &VerifyError{Task: task, Seq: seq, Problem: fmt.Sprintf("the id index does not hold event %s", id)}
			case got != seq:
				return &VerifyError{Task: task, Seq: seq, Problem: fmt.Sprintf("the id index maps event %s to seq %d", id, got)}
			}
		}
		return nil
	})
}

// verifyIndexSize checks that the id index holds exactly as many ids as the log has events.
func (db *DB) verifyIndexSize(task uuid.UUID, head uint64) error {
	if db.format == string(formatV1) {
		return nil
	}
	return db.viewTask(task, func(tx *bolt.Tx) error {
		ib := tx.Bucket(indexName(task))
		if ib == nil {
			return &VerifyError{Task: task, Seq: 1, Problem: "the task has no id index"}
		}
		n := uint64(0)
		cur := ib.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			if n++; n <= head {
				continue
			}
			problem := fmt.Sprintf("the id index holds more ids than the log's %d events: event %x is not in the log", head, k)
			if len(k) == 16 && len(v) == 8 {
				problem = fmt.Sprintf("the id index holds more ids than the log's %d events: event %s, indexed at seq %d, is not in the log",
					head, ulid.ULID(k), bytesToUint64(v))
			}
			return &VerifyError{Task: task, Seq: head, Problem: problem}
		}
		return nil
	})
}

// seekID is lookupID through a cursor the caller reuses: the sequence number the id index
// holds for id, if it holds one.
func seekID(cur *bolt.Cursor, id ulid.ULID) (seq uint64, ok bool, err error) {
	k, v := cur.Seek(id[:])
	switch {
	case !bytes.Equal(k, id[:]) || v == nil: // absent, or a nested bucket, which Get does not return either
		return 0, false, nil
	case len(v) != 8:
		return 0, false, fmt.Errorf("%w: the id index holds %d bytes for event %s", ErrCorrupt, len(v), id)
	}
	return bytesToUint64(v), true, nil
}

// idDigest is a digest of a set of (event id, sequence number) pairs that does not depend on
// their order: the sums, modulo 2^64, of two keyed hashes of each pair, and their count. Its
// keys are random, chosen anew for each verify, so an index written beforehand cannot be made to
// match a log whose pairs it does not hold, except by both 64-bit sums colliding by chance.
type idDigest struct {
	seeds [2]maphash.Seed
	sums  [2]uint64
	n     uint64
}

func newIDDigest() *idDigest {
	return &idDigest{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
}

// newIDDigestLike is an empty digest with d's keys, to compare with d.
func newIDDigestLike(d *idDigest) *idDigest { return &idDigest{seeds: d.seeds} }

// add adds the pair of a 16-byte id and a sequence number.
func (d *idDigest) add(id []byte, seq uint64) {
	var b [24]byte
	copy(b[:16], id)
	binary.BigEndian.PutUint64(b[16:], seq)
	d.sums[0] += maphash.Bytes(d.seeds[0], b[:])
	d.sums[1] += maphash.Bytes(d.seeds[1], b[:])
	d.n++
}

// equal reports whether d and o digest the same pairs; o must have d's keys.
func (d *idDigest) equal(o *idDigest) bool { return d.n == o.n && d.sums == o.sums }
