package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
)

// Appended is where an Append put its events.
type Appended struct {
	// First and Last are the sequence numbers of the first and last event of the batch.
	First, Last uint64
	// Events are the events as stored: Task, Seq, Prev and Hash set.
	Events []events.Event
	// Duplicate is set when every event was already stored by an earlier append and nothing
	// was written.
	Duplicate bool
}

// appendRequest is one Append waiting for the committer.
type appendRequest struct {
	ctx      context.Context
	task     uuid.UUID
	expected uint64
	evs      []events.Event
	// prepared, when set, holds the records' bodies of evs (see Prepare).
	prepared *Prepared
	// res is the answer, and answered is set with it, by the commit that answers the request.
	// Only leaders read answered, and the request's writer once woken.
	res      appendResult
	answered bool
	// wake, made only for a request that waits while another writer commits (see submit), has
	// room for one signal: the request was answered, or the commit was handed to its writer.
	// A writer that leads itself needs none: its own commit answers it.
	wake chan struct{}
}

// answer sets r's answer and wakes its writer if it waits.
func (r *appendRequest) answer(res appendResult) {
	r.res, r.answered = res, true
	if r.wake != nil {
		r.wake <- struct{}{}
	}
}

type appendResult struct {
	appended Appended
	err      error
}

// Append atomically adds evs to the end of task's log, provided its head is at expectedVersion
// (0 for a new task): the events get sequence numbers expectedVersion+1, +2, …, the task's id,
// and hashes chained to their predecessor. Either every event is stored, durably, or none is.
// Turn, Time, V, Data and Origin are the caller's; every event needs an ID and a Type. When the
// head has moved, the error is a *VersionConflictError (errors.Is ErrVersionConflict).
//
// Append is idempotent by event id, so a retry after a lost acknowledgement succeeds. The promise
// covers exactly this: if every event of the batch is already stored in this task, at consecutive
// positions in the batch's order, and each is byte-for-byte the event the caller would have
// stored (same ID, Turn, Type, V, Origin and Data, and Time as the same instant), Append writes
// nothing and returns the original positions and stored events with Duplicate set, whatever
// expectedVersion says. Seq, Prev and Hash of the given events are ignored, so resending the
// sealed events of an earlier Appended is a repeat too. Any
// other overlap with the task's stored ids is refused with ErrDuplicateID and nothing is
// written: a batch only partly stored, stored at other relative positions, or stored with
// different content. A batch that repeats an id within itself is refused likewise. Ids are
// unique per task: the same id in another task's log is not looked for.
//
// If ctx is done before the batch is committed, Append returns ctx.Err() and writes nothing.
// Once the commit has begun Append waits for its outcome, so an error never hides a write.
func (db *DB) Append(ctx context.Context, task uuid.UUID, expectedVersion uint64, evs ...events.Event) (Appended, error) {
	if db.readOnly {
		return Appended{}, ErrReadOnly
	}
	if err := CheckBatch(task, evs); err != nil {
		return Appended{}, err
	}
	return db.commitBatch(ctx, task, expectedVersion, evs, nil)
}

// commitBatch is Append of a checked batch, with its records' bodies from p when p is set (see
// AppendPrepared).
func (db *DB) commitBatch(ctx context.Context, task uuid.UUID, expectedVersion uint64, evs []events.Event, p *Prepared) (Appended, error) {
	if err := ctx.Err(); err != nil {
		return Appended{}, err
	}
	r := requests.Get().(*appendRequest)
	*r = appendRequest{
		ctx:      ctx,
		task:     task,
		expected: expectedVersion,
		// The caller keeps its slice (and p stays as it was made); the committer fills in a copy.
		evs:      append([]events.Event(nil), evs...),
		prepared: p,
	}
	res, err := db.submit(r)
	if r.wake == nil {
		// Committed on this goroutine by its own lead, or refused before it was queued: no
		// other writer holds r.
		*r = appendRequest{}
		requests.Put(r)
	}
	if err != nil {
		return Appended{}, err
	}
	return res.appended, res.err
}

// requests recycles the requests of writers that committed them themselves: most appends
// (a lone writer's) then allocate no request. A request that waited for another writer's
// commit was held by that writer too, and is left to the collector.
var requests = sync.Pool{New: func() any { return new(appendRequest) }}

// CheckBatch refuses what no state of the log could make valid, before it costs a transaction:
// a nil task, no events, an event CheckEvent refuses, an id twice in the batch
// (ErrDuplicateID). It is the check DB.Append makes first, for any Store to share.
func CheckBatch(task uuid.UUID, evs []events.Event) error {
	if task == uuid.Nil {
		return fmt.Errorf("append: %w: the task id is the nil UUID", ErrInvalidEvent)
	}
	if len(evs) == 0 {
		return fmt.Errorf("append to task %s: %w: no events", task, ErrInvalidEvent)
	}
	var seen map[ulid.ULID]int
	if len(evs) > 1 {
		seen = make(map[ulid.ULID]int, len(evs))
	}
	for i := range evs {
		ev := &evs[i]
		if err := CheckEvent(task, ev); err != nil {
			return fmt.Errorf("append to task %s: event #%d (%s): %w", task, i, ev.Type, err)
		}
		if seen == nil {
			continue
		}
		if j, dup := seen[ev.ID]; dup {
			return fmt.Errorf("append to task %s: events #%d and #%d: %w %s within one batch", task, j, i, ErrDuplicateID, ev.ID)
		}
		seen[ev.ID] = i
	}
	return nil
}

// CheckEvent refuses an event no log of task could hold, whatever else it holds: the nil task,
// no ID (ErrMissingID), no Type, another task's, a time the log cannot keep (ErrInvalidEvent).
// An importer checks its lines with it before it writes any.
func CheckEvent(task uuid.UUID, ev *events.Event) error {
	switch {
	case task == uuid.Nil:
		return fmt.Errorf("%w: the task id is the nil UUID", ErrInvalidEvent)
	case ev.ID == ulid.ULID{}:
		return fmt.Errorf("%w: its id is zero", ErrMissingID)
	case ev.Type == "":
		return fmt.Errorf("%w: no type", ErrInvalidEvent)
	case ev.Task != uuid.Nil && ev.Task != task:
		return fmt.Errorf("%w: it belongs to task %s", ErrInvalidEvent, ev.Task)
	case !events.KeepsTime(ev.Time):
		return fmt.Errorf("%w: its time %s is outside what a log keeps (1677 to 2262)", ErrInvalidEvent, ev.Time.Format(time.RFC3339))
	}
	return nil
}
