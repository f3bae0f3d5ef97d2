package store

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
)

// maxIndexedIDs bounds the event ids the index holds (about 50 bytes each). Past it, the tasks
// appended to least recently are dropped and reloaded from the log when next appended to.
const maxIndexedIDs = 1 << 20

// index is the committer's memory of the tasks it appends to: each task's head and the ids of
// its events, loaded from the log the first time a task is appended to. It makes idempotency by
// id cost no write: a persistent id index would add a bucket, and so pages, to every commit.
// The file is locked against other writers, so the log cannot change behind it. Only the
// committer goroutine uses it, so it needs no lock.
type index struct {
	tasks   map[uuid.UUID]*taskIndex
	entries int
	// limit is maxIndexedIDs except in tests.
	limit int
	clock uint64
}

// taskIndex is what the index knows of one task.
type taskIndex struct {
	id   uuid.UUID
	head uint64
	hash events.Hash
	ids  map[ulid.ULID]uint64
	used uint64
}

// task returns the task's committed state, reading the task's log if it is not indexed yet.
func (x *index) task(tx *bolt.Tx, id uuid.UUID) (*taskIndex, error) {
	x.clock++
	if ti := x.tasks[id]; ti != nil {
		ti.used = x.clock
		return ti, nil
	}
	ti := &taskIndex{id: id, used: x.clock}
	if tb := tx.Bucket(id[:]); tb != nil {
		cur := tb.Cursor()
		if k, _ := cur.Last(); k != nil {
			ti.ids = make(map[ulid.ULID]uint64, bytesToUint64(k))
		}
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			var ev events.Event
			if err := ev.UnmarshalBinary(v); err != nil {
				return nil, fmt.Errorf("seq %d: %w: %w", bytesToUint64(k), ErrCorrupt, err)
			}
			ti.head, ti.hash = bytesToUint64(k), ev.Hash
			ti.ids[ev.ID] = ti.head
		}
	}
	if x.tasks == nil {
		x.tasks = make(map[uuid.UUID]*taskIndex)
	}
	x.tasks[id] = ti
	x.entries += len(ti.ids)
	return ti, nil
}

// add records a commit's new head and ids for a task.
func (x *index) add(ti *taskIndex, head uint64, hash events.Hash, ids map[ulid.ULID]uint64) {
	ti.head, ti.hash = head, hash
	if ti.ids == nil {
		ti.ids = ids
	} else {
		for id, seq := range ids {
			ti.ids[id] = seq
		}
	}
	x.entries += len(ids)
}

// trim drops the least recently used tasks while the index holds too many ids; the tasks of the
// last commit are the most recent and go last.
func (x *index) trim() {
	if x.entries <= x.limit {
		return
	}
	lru := make([]*taskIndex, 0, len(x.tasks))
	for _, ti := range x.tasks {
		lru = append(lru, ti)
	}
	slices.SortFunc(lru, func(a, b *taskIndex) int { return cmp.Compare(a.used, b.used) })
	for _, ti := range lru[:len(lru)-1] {
		if x.entries <= x.limit*3/4 {
			break
		}
		delete(x.tasks, ti.id)
		x.entries -= len(ti.ids)
	}
}
