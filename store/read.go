package store

import (
	"bytes"
	"context"
	"fmt"
	"iter"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
)

// chunkSize is how many events one read transaction copies out. Large enough that the
// transaction's cost vanishes per event, small enough that a long read never holds the
// transaction (and so never blocks the file's growth) for long.
const chunkSize = 512

// firstChunkBytes is a first guess at a full chunk's size; later chunks start at the most bytes
// one held yet and an eighth more (see Events).
const firstChunkBytes = chunkSize * 256

// firstChunkSize is how many events the first chunk of Events copies out: a caller that reads
// one event, or a few (the event at a seq, a log's first turn), copies and decompresses no more,
// and a stream reads on in chunks of chunkSize.
const firstChunkSize = 16

// chunkBytes ends a chunk early once its records take that many bytes: a record may decompress
// to as much as payloadcodec allows (256 MiB), and a chunk of such records, damaged or made so
// on purpose, would otherwise hold hundreds of them at once. A chunk holds at least one record.
// (A variable for the tests.)
var chunkBytes = 64 << 20

// Head is the end of a task's log.
type Head struct {
	// Seq is the last event's sequence number, which is also the number of events.
	Seq uint64
	// Hash is the last event's hash, the value the next event's Prev must have.
	Hash events.Hash
	// LastTurn is the last event's turn.
	LastTurn int
}

// TaskInfo describes one task of the database.
type TaskInfo struct {
	// Task is the task's id.
	Task uuid.UUID
	// Events is how many events its log holds.
	Events uint64
	// LastTurn is the turn of its last event.
	LastTurn int
}

// chunk is a run of stored events copied out of a read transaction into one buffer, in the form
// decodeRecord reads. Offsets, not slices, keep it free of pointers for the garbage collector.
type chunk struct {
	buf  []byte
	seqs []uint64
	ends []int
	// prev is the hash of the record before the first, the prev hash of a first record of
	// format 4.
	prev events.Hash
	// bad, when set, is the stored record that ends the chunk because it cannot be read.
	bad *recordError
	// more is whether the chunk ended at its limits (limit records, chunkBytes bytes) with
	// records left after it; a chunk that ends at the log's end or at bad has none.
	more bool
	// limit is the most records the chunk holds (at least 1).
	limit int
}

func (c *chunk) value(i int) []byte {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.buf[start:c.ends[i]:c.ends[i]]
}

// readChunk copies up to limit events of task, starting at seq from, out of one read
// transaction, into a buffer of sizeHint bytes to start with. It fails with ErrTaskNotFound when
// the task has no bucket.
func (db *DB) readChunk(task uuid.UUID, from uint64, sizeHint, limit int) (chunk, error) {
	c := chunk{buf: make([]byte, 0, sizeHint), seqs: make([]uint64, 0, limit), ends: make([]int, 0, limit), limit: limit}
	err := db.readChunkInto(&c, task, from)
	return c, err
}

// readChunkInto is readChunk into c's buffers, emptied first and grown as needed: a reader that
// keeps nothing of a chunk once it has moved on reuses one chunk for the whole log.
func (db *DB) readChunkInto(c *chunk, task uuid.UUID, from uint64) error {
	c.buf, c.seqs, c.ends, c.bad, c.more = c.buf[:0], c.seqs[:0], c.ends[:0], nil, false
	from = max(from, 1)
	return db.viewTask(task, func(tx *bolt.Tx) error {
		tb := taskBucket(tx, task)
		if tb == nil {
			return fmt.Errorf("task %s: %w", task, ErrTaskNotFound)
		}
		cur := tb.Cursor()
		// A record of format 4 leaves out its prev hash, the hash of the record before it: a
		// chunk starts on the record before its first.
		k, v := cur.Seek(uint64ToBytes(from - 1))
		var before []byte
		if from > 1 && k != nil && bytes.Equal(k, uint64ToBytes(from-1)) {
			before = v
			k, v = cur.Next()
		}
		var records recordReader // copies the records out
		records.start(from, before)
		c.prev = records.prev
		// Values point into the mmap, valid only until the transaction ends: copy them now.
		for ; k != nil; k, v = cur.Next() {
			if len(c.seqs) == c.limit || len(c.buf) >= chunkBytes {
				c.more = true
				break
			}
			if len(k) != 8 {
				return fmt.Errorf("task %s: %w: key %x is not a sequence number", task, ErrCorrupt, k)
			}
			seq := bytesToUint64(k)
			if seq < from {
				continue // key 0, which no event has
			}
			var err error
			if c.buf, err = records.next(c.buf, v); err != nil {
				// The records before it are good; the reader gets them, then the error.
				c.bad = &recordError{task: task, seq: seq, err: err}
				return nil
			}
			c.seqs = append(c.seqs, seq)
			c.ends = append(c.ends, len(c.buf))
		}
		return nil
	})
}

// recordError is a stored record that cannot be read (it does not decompress, or its
// predecessor is missing): it names the task and the event's sequence number.
type recordError struct {
	task uuid.UUID
	seq  uint64
	err  error
}

func (e *recordError) Error() string {
	return fmt.Sprintf("task %s: seq %d: %v: the stored record: %v", e.task, e.seq, ErrCorrupt, e.err)
}

func (e *recordError) Unwrap() []error { return []error{ErrCorrupt, e.err} }

func taskBucket(tx *bolt.Tx, task uuid.UUID) *bolt.Bucket {
	return tx.Bucket(task[:])
}

// Events streams task's events in order, starting at sequence fromSeq (0 and 1 both mean the
// beginning). Only envelopes are decoded; Event.Data is a copy the caller may keep (it shares a
// buffer with the rest of its chunk, so keeping one event keeps that buffer alive). The log is
// read in chunks, each copied out of its own read transaction, so no transaction is open while
// the loop body runs: the body may append to the same task or take its time. The stream ends
// where it finds the log's end, so events appended after it began may or may not be streamed.
// A done ctx ends it with ctx.Err(). A value that does not decode or a gap ends the stream with
// an error naming task and seq (errors.Is ErrCorrupt), and so does a record of file format 3 or
// older stored under another key or task than its own. A record of format 4 holds no task id or
// sequence number: it is read as the event of the place it is stored in, and one moved or copied
// there from elsewhere is found by Verify, which recomputes every hash (the moved record's no
// longer matches). Events does not hash what it reads.
// An unknown task yields ErrTaskNotFound.
func (db *DB) Events(ctx context.Context, task uuid.UUID, fromSeq uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		next := max(fromSeq, 1)
		hint, limit := firstChunkBytes/(chunkSize/firstChunkSize), firstChunkSize
		for {
			if err := ctx.Err(); err != nil {
				yield(events.Event{}, err)
				return
			}
			c, err := db.readChunk(task, next, hint, limit)
			if err != nil {
				yield(events.Event{}, err)
				return
			}
			// Events are kept by callers, so each chunk gets a buffer of its own: after the
			// first, of the most bytes a chunk held yet and an eighth more (not the capacity a
			// buffer grew to, which would carry each growth's overshoot to every chunk after it).
			if limit != chunkSize {
				hint, limit = firstChunkBytes, chunkSize
			}
			hint = max(hint, len(c.buf)+len(c.buf)/8)
			prev := c.prev
			for i, seq := range c.seqs {
				ev, err := decodeAt(task, seq, c.value(i), prev)
				if err == nil && seq != next {
					err = fmt.Errorf("task %s: seq %d: %w: missing, the next stored event is seq %d", task, next, ErrCorrupt, seq)
				}
				if err != nil {
					yield(events.Event{}, err)
					return
				}
				if !yield(ev, nil) {
					return
				}
				next, prev = seq+1, ev.Hash
			}
			if c.bad != nil {
				yield(events.Event{}, c.bad)
				return
			}
			if !c.more {
				return
			}
		}
	}
}

// decodeAt decodes the record read from under seq, whose predecessor's hash is prev, and checks
// it is the event that belongs there.
func decodeAt(task uuid.UUID, seq uint64, raw []byte, prev events.Hash) (events.Event, error) {
	var ev events.Event
	if err := decodeRecord(&ev, raw, task, seq, prev); err != nil {
		return events.Event{}, fmt.Errorf("task %s: seq %d: %w: %w", task, seq, ErrCorrupt, err)
	}
	if ev.Seq != seq || ev.Task != task {
		return events.Event{}, fmt.Errorf("task %s: seq %d: %w: the stored event says it is task %s seq %d",
			task, seq, ErrCorrupt, ev.Task, ev.Seq)
	}
	return ev, nil
}

// Head returns the end of task's log, or ErrTaskNotFound.
func (db *DB) Head(task uuid.UUID) (Head, error) {
	var h Head
	err := db.viewTask(task, func(tx *bolt.Tx) error {
		var err error
		h, err = headOf(taskBucket(tx, task), task)
		return err
	})
	return h, err
}

// headOf reads the end of a task's log from its last record: a record of format 4 keeps the
// hash and the turn in front, where they are read without decompressing anything.
func headOf(tb *bolt.Bucket, task uuid.UUID) (Head, error) {
	if tb == nil {
		return Head{}, fmt.Errorf("task %s: %w", task, ErrTaskNotFound)
	}
	k, v := tb.Cursor().Last()
	if k == nil {
		return Head{}, fmt.Errorf("task %s: %w", task, ErrTaskNotFound)
	}
	hash, turn, err := recordHead(v)
	if err != nil {
		return Head{}, &recordError{task: task, seq: bytesToUint64(k), err: err}
	}
	return Head{Seq: bytesToUint64(k), Hash: hash, LastTurn: turn}, nil
}

// Tasks lists every task with at least one event, sorted by task id.
func (db *DB) Tasks() ([]TaskInfo, error) {
	var out []TaskInfo
	err := db.view(func(tx *bolt.Tx) error {
		// bbolt keeps keys in byte order, which for UUIDs is their string order too.
		cur := tx.Cursor()
		for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
			if !isTaskBucket(k) {
				continue
			}
			task := uuid.UUID(k)
			h, err := headOf(tx.Bucket(k), task)
			if err != nil {
				return err
			}
			out = append(out, TaskInfo{Task: task, Events: h.Seq, LastTurn: h.LastTurn})
		}
		return nil
	})
	return out, err
}
