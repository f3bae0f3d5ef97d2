package store

import (
	"bytes"
	"fmt"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
)

// commitLoop is the one goroutine that writes appends. It takes whatever requests are waiting,
// up to MaxBatch, into one transaction and one fsync. A lone writer is committed at once; under
// load the requests that arrive during one fsync share the next, which is where the throughput
// of many writers comes from. Requests are staged in arrival order, so two appends to one task
// are never reordered.
func (db *DB) commitLoop() {
	defer close(db.done)
	batch := make([]*appendRequest, 0, db.maxBatch)
	for r := range db.reqs {
		batch = append(batch[:0], r)
	fill:
		for len(batch) < db.maxBatch {
			select {
			case r, ok := <-db.reqs:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			default:
				break fill
			}
		}
		db.commit(batch)
		clear(batch)
	}
}

// commit writes batch in one transaction. A request refused by validation is answered with its
// error and writes nothing, without affecting the others. If bbolt itself fails, no request of
// the batch is known to be stored, so each is retried in a transaction of its own and gets its
// own true answer.
func (db *DB) commit(batch []*appendRequest) {
	results := make([]appendResult, len(batch))
	err := db.update(func(tx *bolt.Tx) error {
		w := newWriter(tx)
		w.hook = db.stageHook
		for i, r := range batch {
			var err error
			results[i].appended, results[i].err, err = w.stage(r)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && len(batch) > 1 {
		for _, r := range batch {
			db.commit([]*appendRequest{r})
		}
		return
	}
	for i, r := range batch {
		if err != nil {
			results[i] = appendResult{err: fmt.Errorf("append to task %s: %w", r.task, err)}
		}
		r.result <- results[i]
	}
}

// writer stages appends into one write transaction.
type writer struct {
	tasks, ids *bolt.Bucket
	// arena holds the keys and values of the transaction: bbolt keeps references to them, not
	// copies, until the commit. Slices taken from it stay valid when it grows.
	arena []byte
	// hook, when set, runs after each event is put; tests use it to make bbolt "fail".
	hook func(r *appendRequest, i int) error
}

func newWriter(tx *bolt.Tx) *writer {
	return &writer{tasks: tx.Bucket(bucketTasks), ids: tx.Bucket(bucketIDs)}
}

// stage validates r against the transaction's current state, which includes the requests staged
// before it, and writes it if valid. A refusal is returned as refused and leaves the transaction
// untouched; a storage error leaves it unusable.
func (w *writer) stage(r *appendRequest) (a Appended, refused, storage error) {
	if err := r.ctx.Err(); err != nil {
		return Appended{}, err, nil
	}
	if a, err, found := w.duplicate(r); found {
		return a, err, nil
	}
	tb := w.tasks.Bucket(r.task[:])
	head, prev, err := lastEvent(tb, r.task)
	if err != nil {
		return Appended{}, fmt.Errorf("append to task %s: %w", r.task, err), nil
	}
	if head != r.expected {
		return Appended{}, &VersionConflictError{Task: r.task, Expected: r.expected, Actual: head}, nil
	}
	if tb == nil {
		if tb, err = w.tasks.CreateBucket(r.task[:]); err != nil {
			return Appended{}, nil, err
		}
	}
	// Sequence keys only ever grow, so pages can be packed full.
	tb.FillPercent = 1.0
	for i := range r.evs {
		ev := &r.evs[i]
		ev.Task = r.task
		ev.Seq = head + 1 + uint64(i)
		ev.Seal(prev)
		prev = ev.Hash

		start := len(w.arena)
		w.arena = binaryAppendUint64(w.arena, ev.Seq)
		w.arena = ev.AppendBinary(w.arena)
		key, val := w.arena[start:start+8], w.arena[start+8:]
		if err := tb.Put(key, val); err != nil {
			return Appended{}, nil, err
		}
		start = len(w.arena)
		w.arena = append(w.arena, r.task[:]...)
		w.arena = append(w.arena, key...)
		if err := w.ids.Put(ev.ID[:], w.arena[start:]); err != nil {
			return Appended{}, nil, err
		}
		if w.hook != nil {
			if err := w.hook(r, i); err != nil {
				return Appended{}, nil, err
			}
		}
	}
	return Appended{First: head + 1, Last: head + uint64(len(r.evs)), Events: r.evs}, nil, nil
}

// duplicate looks the batch's ids up. found is false when none is stored; otherwise the request
// is answered here, as a repeat (Duplicate) or as ErrDuplicateID.
func (w *writer) duplicate(r *appendRequest) (a Appended, err error, found bool) {
	var first uint64
	missing := 0
	for i := range r.evs {
		ev := &r.evs[i]
		loc := w.ids.Get(ev.ID[:])
		if loc == nil {
			missing++
			continue
		}
		task, seq := uuid.UUID(loc[:16]), bytesToUint64(loc[16:24])
		found = true
		switch {
		case task != r.task:
			return Appended{}, fmt.Errorf("append to task %s: %w: event %s is stored in task %s at seq %d",
				r.task, ErrDuplicateID, ev.ID, task, seq), true
		case i == 0:
			first = seq
		case seq != first+uint64(i):
			return Appended{}, fmt.Errorf("append to task %s: %w: event %s (#%d of the batch) is stored at seq %d, not next to the batch's other events",
				r.task, ErrDuplicateID, ev.ID, i, seq), true
		}
	}
	if !found {
		return Appended{}, nil, false
	}
	if missing > 0 {
		return Appended{}, fmt.Errorf("append to task %s: %w: %d of the batch's %d events are already stored and %d are not; a batch is idempotent only as a whole",
			r.task, ErrDuplicateID, len(r.evs)-missing, len(r.evs), missing), true
	}
	tb := w.tasks.Bucket(r.task[:])
	stored := make([]events.Event, len(r.evs))
	for i := range r.evs {
		seq := first + uint64(i)
		var raw []byte
		if tb != nil {
			raw = tb.Get(uint64ToBytes(seq))
		}
		if raw == nil {
			return Appended{}, fmt.Errorf("append to task %s: %w: the id index points at seq %d, which is missing", r.task, ErrCorrupt, seq), true
		}
		// The answer outlives the transaction, so it must not point into the mmap.
		raw = bytes.Clone(raw)
		if err := stored[i].UnmarshalBinary(raw); err != nil {
			return Appended{}, fmt.Errorf("append to task %s: seq %d: %w: %w", r.task, seq, ErrCorrupt, err), true
		}
		// Same position, same link: the encodings are equal exactly when the caller's content is.
		want := r.evs[i]
		want.Task, want.Seq, want.Prev, want.Hash = r.task, seq, stored[i].Prev, stored[i].Hash
		if !bytes.Equal(want.AppendBinary(nil), raw) {
			return Appended{}, fmt.Errorf("append to task %s: %w: event %s is stored at seq %d with different content",
				r.task, ErrDuplicateID, want.ID, seq), true
		}
	}
	return Appended{First: first, Last: first + uint64(len(r.evs)) - 1, Events: stored, Duplicate: true}, nil, true
}

// lastEvent is the head of a task's log: its sequence number and hash, zero for no task.
func lastEvent(tb *bolt.Bucket, task uuid.UUID) (uint64, events.Hash, error) {
	if tb == nil {
		return 0, events.Hash{}, nil
	}
	k, v := tb.Cursor().Last()
	if k == nil {
		return 0, events.Hash{}, nil
	}
	var ev events.Event
	if err := ev.UnmarshalBinary(v); err != nil {
		return 0, events.Hash{}, fmt.Errorf("task %s: seq %d: %w: %w", task, bytesToUint64(k), ErrCorrupt, err)
	}
	return bytesToUint64(k), ev.Hash, nil
}
