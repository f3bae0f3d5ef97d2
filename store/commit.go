package store

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store/payloadcodec"
)

// Appends are committed by the writers themselves, one at a time: the writer that finds no
// commit running becomes the leader and commits what is queued, its own request first; writers
// that arrive meanwhile queue up, and the next commit takes all of them (up to MaxBatch) into
// one transaction and one fsync. That is where the throughput of many writers comes from, and
// a lone writer commits on its own goroutine without handing its request to another one (on a
// machine whose idle cores sleep, waking a committer goroutine cost more than the commit).
// Requests are staged in arrival order, so two appends to one task are never reordered.

// submit queues r and returns once it is answered, committing as the leader when no commit is
// running.
func (db *DB) submit(r *appendRequest) (appendResult, error) {
	db.cmu.Lock()
	if db.closed {
		db.cmu.Unlock()
		return appendResult{}, ErrClosed
	}
	if db.committing {
		r.wake = make(chan struct{}, 1)
		db.queue = append(db.queue, r)
		db.cmu.Unlock()
		if <-r.wake; r.answered {
			return r.res, nil
		}
		// The leader answered its own request and handed on: r is the oldest waiting.
	} else {
		db.queue = append(db.queue, r)
		db.committing = true
		db.cmu.Unlock()
	}
	// A leader commits until its own request is answered, on this goroutine.
	db.lead(r)
	return r.res, nil
}

// lead commits queued batches until its own request is answered, then hands leadership to the
// oldest waiting writer, or ends it when none is waiting.
func (db *DB) lead(own *appendRequest) {
	answered := false
	var batch []*appendRequest
	defer func() {
		// A panic outside bbolt's transaction (which update recovers) must not leave the
		// database committing forever: the batch is answered, leadership passes on, and the
		// panic goes on up the leader's own goroutine.
		if p := recover(); p != nil {
			for _, r := range batch {
				if !r.answered {
					r.answer(appendResult{err: fmt.Errorf("append to task %s: commit failed: %v", r.task, p)})
				}
			}
			db.handOff()
			panic(p)
		}
	}()
	for {
		if answered {
			batch = nil
			db.handOff()
			return
		}
		// The writers the last commit answered are runnable now but may not have run yet; let
		// them queue their next append so it joins this commit instead of waiting for the next
		// fsync. A commit that answered only its leader woke nobody: yielding then would only
		// wake an idle core to find nothing to run, which costs a lone writer more than its
		// commit's bookkeeping.
		if db.wokeOthers {
			runtime.Gosched()
		}
		db.cmu.Lock()
		if len(db.queue) == 0 {
			db.cmu.Unlock()
			batch = nil
			db.handOff()
			return
		}
		n := min(len(db.queue), db.maxBatch)
		batch = make([]*appendRequest, n)
		copy(batch, db.queue)
		db.queue = append(db.queue[:0], db.queue[n:]...)
		db.cmu.Unlock()
		answered = slices.Contains(batch, own)
		db.commit(batch)
	}
}

// handOff ends a leader's turn: the oldest waiting writer leads next, or, with none waiting,
// no commit runs any more.
func (db *DB) handOff() {
	db.cmu.Lock()
	if len(db.queue) == 0 {
		db.committing = false
		db.idle.Broadcast()
		db.cmu.Unlock()
		return
	}
	next := db.queue[0]
	db.cmu.Unlock()
	next.wake <- struct{}{}
}

// commit writes batch in one transaction. A request refused by validation is answered with its
// error and writes nothing, without affecting the others. If bbolt itself fails, no request of
// the batch is known to be stored, so each is retried in a transaction of its own and gets its
// own true answer.
func (db *DB) commit(batch []*appendRequest) {
	db.commits.Add(1)
	// A panic in a commit of one request is reported with that request's task (see viewTask).
	task := uuid.Nil
	if len(batch) == 1 {
		task = batch[0].task
	}
	w := &writer{hook: db.stageHook, arena: db.arena[:0], enc: db.enc[:0], raw: db.noCompress, whole: db.wholeRecords}
	db.arena, db.enc = nil, nil // w's until the transaction is over
	err := db.updateTask(task, func(tx *bolt.Tx) error {
		w.tx = tx
		for _, r := range batch {
			var err error
			r.res.appended, r.res.err, err = w.stage(r)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if cap(w.arena) <= maxKeptArena {
		db.arena = w.arena[:0]
	}
	if cap(w.enc) <= maxKeptArena {
		db.enc = w.enc[:0]
	}
	if err != nil && len(batch) > 1 {
		for _, r := range batch {
			db.commit([]*appendRequest{r})
		}
		db.wokeOthers = true
		return
	}
	if err == nil && db.committedHook != nil {
		db.committedHook()
	}
	db.wokeOthers = len(batch) > 1
	for _, r := range batch {
		if err != nil {
			r.res = appendResult{err: fmt.Errorf("append to task %s: %w", r.task, err)}
		}
		r.answer(r.res)
	}
}

// maxKeptArena bounds the arena a DB keeps from one commit for the next: a commit of a huge
// batch does not hold its memory after.
const maxKeptArena = 1 << 20

// writer stages appends into one write transaction.
type writer struct {
	tx *bolt.Tx
	// staged is the state of every task this transaction touches, as it will be if it commits.
	staged map[uuid.UUID]*stagedTask
	// first is the first task staged, firstID its id (nil before one is: no task's id is nil),
	// kept out of staged and in the writer: most transactions touch one task.
	first   stagedTask
	firstID uuid.UUID
	// arena holds the keys and values of the transaction: bbolt keeps references to them, not
	// copies, until the commit. Slices taken from it stay valid when it grows.
	arena []byte
	// hook, when set, runs after each event is put; tests use it to make bbolt "fail".
	hook func(r *appendRequest, i int) error
	// raw stores records uncompressed, as format 2 did (tests only).
	raw bool
	// whole stores records whole, compressed where that is shorter, as format 3 did (tests
	// only).
	whole bool
	// enc is the encoding of the event being staged, before it is compressed.
	enc []byte
}

// stagedTask is a task's head as this transaction leaves it, and its buckets (nil while the
// task has no events).
type stagedTask struct {
	head uint64
	hash events.Hash
	log  *bolt.Bucket
	ids  *bolt.Bucket
	// order is how the transaction's ids go into ids.
	order idOrder
}

// task returns the staged state of a task, reading its head from the log on first use.
func (w *writer) task(id uuid.UUID) (*stagedTask, error) {
	if w.firstID == id {
		return &w.first, nil
	}
	if st := w.staged[id]; st != nil {
		return st, nil
	}
	tb := w.tx.Bucket(id[:])
	h, err := readHead(tb, id)
	if err != nil {
		return nil, err
	}
	staged := stagedTask{head: h.seq, hash: h.hash, log: tb, ids: w.tx.Bucket(indexName(id))}
	if staged.head > 0 && staged.ids == nil {
		return nil, fmt.Errorf("%w: the task has %d events and no id index", ErrCorrupt, staged.head)
	}
	if w.firstID == uuid.Nil {
		w.first, w.firstID = staged, id
		return &w.first, nil
	}
	st := new(stagedTask)
	*st = staged
	if w.staged == nil {
		w.staged = make(map[uuid.UUID]*stagedTask)
	}
	w.staged[id] = st
	return st, nil
}

// stage validates r against the transaction's current state, which includes the requests staged
// before it, and writes it if valid. A refusal is returned as refused and leaves the transaction
// untouched; a storage error leaves it unusable.
func (w *writer) stage(r *appendRequest) (a Appended, refused, storage error) {
	if err := r.ctx.Err(); err != nil {
		return Appended{}, err, nil
	}
	st, err := w.task(r.task)
	if err != nil {
		return Appended{}, fmt.Errorf("append to task %s: %w", r.task, err), nil
	}
	if a, err, found := w.duplicate(st, r); found {
		return a, err, nil
	}
	if st.head != r.expected {
		return Appended{}, &VersionConflictError{Task: r.task, Expected: r.expected, Actual: st.head}, nil
	}
	if st.log == nil {
		if st.log, err = w.tx.CreateBucket(r.task[:]); err != nil {
			return Appended{}, nil, err
		}
		if st.ids, err = w.tx.CreateBucket(indexName(r.task)); err != nil {
			return Appended{}, nil, err
		}
	}
	// Sequence keys only ever grow: the log's pages can be packed full.
	st.log.FillPercent = 1.0
	prev := st.hash
	for i := range r.evs {
		ev := &r.evs[i]
		ev.Task = r.task
		ev.Seq = st.head + 1 + uint64(i)
		ev.Seal(prev)
		prev = ev.Hash

		start := len(w.arena)
		w.arena = appendSeqKey(w.arena, ev.Seq)
		w.arena = append(w.arena, ev.ID[:]...)
		switch {
		case w.raw:
			w.arena = ev.AppendBinary(w.arena)
		case w.whole:
			w.enc = ev.AppendBinary(w.enc[:0])
			w.arena = payloadcodec.Encode(w.arena, w.enc)
		case r.prepared != nil:
			body, compressed := r.prepared.recordBody(i)
			w.arena = appendPreparedRecord(w.arena, ev, body, compressed)
		default:
			w.arena, w.enc = appendRecord(w.arena, ev, w.enc)
		}
		seqKey, id, val := w.arena[start:start+8], w.arena[start+8:start+24], w.arena[start+24:]
		if err := st.log.Put(seqKey, val); err != nil {
			return Appended{}, nil, err
		}
		st.order.put(st.ids, ev.ID)
		if err := st.ids.Put(id, seqKey); err != nil {
			return Appended{}, nil, err
		}
		if w.hook != nil {
			if err := w.hook(r, i); err != nil {
				return Appended{}, nil, err
			}
		}
	}
	first := st.head + 1
	st.head, st.hash = st.head+uint64(len(r.evs)), prev
	return Appended{First: first, Last: st.head, Events: r.evs}, nil, nil
}

// lastIDMin is the fewest events of a request whose ids are first compared with the id
// index's last (see duplicate).
const lastIDMin = 16

// duplicate looks the batch's ids up in the task. found is false when none is stored; otherwise
// the request is answered here, as a repeat (Duplicate) or as ErrDuplicateID.
func (w *writer) duplicate(st *stagedTask, r *appendRequest) (a Appended, err error, found bool) {
	var first uint64
	missing := 0
	// An id after the index's last is not in it: ids that grow with time make a large batch of
	// new events one look at the index's end rather than a look-up per event. A hook's few
	// events, whose ids are hashed, are looked up as they are.
	var last ulid.ULID // zero: every id is looked up
	if st.ids != nil && len(r.evs) >= lastIDMin {
		last = st.order.last(st.ids)
	}
	for i := range r.evs {
		ev := &r.evs[i]
		if last != (ulid.ULID{}) && bytes.Compare(ev.ID[:], last[:]) > 0 {
			missing++
			continue
		}
		seq, ok, err := lookupID(st.ids, ev.ID)
		if err != nil {
			return Appended{}, fmt.Errorf("append to task %s: %w", r.task, err), true
		}
		if !ok {
			missing++
			continue
		}
		found = true
		switch {
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
	tb := st.log
	if tb == nil {
		return Appended{}, fmt.Errorf("append to task %s: %w: seq %d is missing", r.task, ErrCorrupt, first), true
	}
	stored := make([]events.Event, len(r.evs))
	var records recordReader
	records.start(first, tb.Get(uint64ToBytes(first-1)))
	prev := records.prev
	for i := range r.evs {
		seq := first + uint64(i)
		stv := tb.Get(uint64ToBytes(seq))
		if stv == nil {
			return Appended{}, fmt.Errorf("append to task %s: %w: seq %d is missing", r.task, ErrCorrupt, seq), true
		}
		// The answer outlives the transaction, so it must not point into the mmap: the record
		// is copied into a buffer of its own.
		raw, err := records.next(nil, stv)
		if err != nil {
			return Appended{}, fmt.Errorf("append to task %s: seq %d: %w: %w", r.task, seq, ErrCorrupt, err), true
		}
		if err := decodeRecord(&stored[i], raw, r.task, seq, prev); err != nil {
			return Appended{}, fmt.Errorf("append to task %s: seq %d: %w: %w", r.task, seq, ErrCorrupt, err), true
		}
		prev = stored[i].Hash
		// Same position, same link: the encodings are equal exactly when the caller's content is.
		want := r.evs[i]
		want.Task, want.Seq, want.Prev, want.Hash = r.task, seq, stored[i].Prev, stored[i].Hash
		if !bytes.Equal(want.AppendBinary(nil), stored[i].AppendBinary(nil)) {
			return Appended{}, fmt.Errorf("append to task %s: %w: event %s is stored at seq %d with different content",
				r.task, ErrDuplicateID, want.ID, seq), true
		}
	}
	return Appended{First: first, Last: first + uint64(len(r.evs)) - 1, Events: stored, Duplicate: true}, nil, true
}
