package store

import (
	"bytes"
	"fmt"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store/payloadcodec"
)

// Each task's log has an id index beside it: a top-level bucket named by the task's 16 id bytes
// and the byte 'i', mapping every event id (16 bytes) to the event's sequence number (8 bytes,
// big-endian). Append writes it in the same transaction as the events, so idempotency by id is a
// lookup, whatever the task's length, and opening a task reads nothing but its last event. It
// costs about 40 bytes per event on disk (about 60 for a hook's hashed ids: see idOrder) and one
// more page per commit.

// indexSuffix ends the name of a task's id index bucket.
const indexSuffix = 'i'

// upgradeChunk is how many events one transaction of the format upgrade indexes: bbolt keeps a
// transaction's writes in memory until it commits. A variable so that tests can make a small
// file take several.
var upgradeChunk = 1 << 16

// indexName is the name of task's id index bucket.
func indexName(task uuid.UUID) []byte {
	return append(append(make([]byte, 0, 17), task[:]...), indexSuffix)
}

// isIndexBucket tells an id index bucket by its name.
func isIndexBucket(name []byte) bool { return len(name) == 17 && name[16] == indexSuffix }

// headState is a task's head as a transaction sees it.
type headState struct {
	seq  uint64
	hash events.Hash
}

// readHead reads the head of a task's bucket from its last event: one walk down the tree.
func readHead(tb *bolt.Bucket, task uuid.UUID) (headState, error) {
	if tb == nil {
		return headState{}, nil
	}
	h, err := headOf(tb, task)
	if err != nil {
		if k, _ := tb.Cursor().Last(); k == nil {
			return headState{}, nil
		}
		return headState{}, err
	}
	return headState{seq: h.Seq, hash: h.Hash}, nil
}

// upgrade brings a format 1 file to format 2: it indexes every task's event ids, a chunk of
// events per transaction, and marks the file as format 2 in the last one. An upgrade cut short
// leaves the file at format 1, and the next writable open starts it again.
func (db *DB) upgrade() error {
	var tasks []uuid.UUID
	err := db.view(func(tx *bolt.Tx) error {
		cur := tx.Cursor()
		for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
			if isTaskBucket(k) {
				tasks = append(tasks, uuid.UUID(k))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("upgrade to format 2: %w", err)
	}
	for _, task := range tasks {
		if err := db.indexTask(task); err != nil {
			return fmt.Errorf("upgrade to format 2: task %s: %w", task, err)
		}
	}
	err = db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyFormat, formatV2)
	})
	if err != nil {
		return fmt.Errorf("upgrade to format 2: %w", err)
	}
	return nil
}

// indexTask builds task's id index from its log, replacing any left by an upgrade cut short.
func (db *DB) indexTask(task uuid.UUID) error {
	name := indexName(task)
	err := db.updateTask(task, func(tx *bolt.Tx) error {
		if tx.Bucket(name) != nil {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		_, err := tx.CreateBucket(name)
		return err
	})
	if err != nil {
		return err
	}
	for from, done := uint64(1), false; !done; {
		err := db.updateTask(task, func(tx *bolt.Tx) error {
			tb, ib := tx.Bucket(task[:]), tx.Bucket(name)
			var order idOrder
			cur := tb.Cursor()
			n := 0
			k, v := cur.Seek(uint64ToBytes(from))
			for ; k != nil && n < upgradeChunk; k, v = cur.Next() {
				seq := bytesToUint64(k)
				raw, err := payloadcodec.Decode(nil, v)
				if err != nil {
					return fmt.Errorf("seq %d: %w: %w", seq, ErrCorrupt, err)
				}
				var ev events.Event
				if err := ev.UnmarshalBinary(raw); err != nil {
					return fmt.Errorf("seq %d: %w: %w", seq, ErrCorrupt, err)
				}
				if prev := ib.Get(ev.ID[:]); prev != nil {
					return fmt.Errorf("seq %d: %w: event id %s is stored at seq %d too", seq, ErrCorrupt, ev.ID, bytesToUint64(prev))
				}
				// bbolt keeps the slices until the commit, and k points into the mapping, which
				// the commit may move: each put gets copies.
				order.put(ib, ev.ID)
				if err := ib.Put(bytes.Clone(ev.ID[:]), bytes.Clone(k)); err != nil {
					return err
				}
				from = seq + 1
				n++
			}
			done = k == nil
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// lookupID returns the sequence number the id index holds for id, if it holds one.
func lookupID(ib *bolt.Bucket, id ulid.ULID) (seq uint64, ok bool, err error) {
	if ib == nil {
		return 0, false, nil
	}
	v := ib.Get(id[:])
	switch {
	case v == nil:
		return 0, false, nil
	case len(v) != 8:
		return 0, false, fmt.Errorf("%w: the id index holds %d bytes for event %s", ErrCorrupt, len(v), id)
	}
	return bytesToUint64(v), true, nil
}

// HasEvents reports whether the task's log holds any event with one of the ids: a lookup in
// its id index, without writing. A task not in the log holds none.
func (db *DB) HasEvents(task uuid.UUID, ids ...ulid.ULID) (bool, error) {
	found := false
	err := db.viewTask(task, func(tx *bolt.Tx) error {
		ib := tx.Bucket(indexName(task))
		for _, id := range ids {
			_, ok, err := lookupID(ib, id)
			if err != nil {
				return err
			}
			if ok {
				found = true
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("task %s: look up event ids: %w", task, err)
	}
	return found, nil
}

// idOrder chooses, for one transaction, how full the pages of a task's id index are packed
// when the commit writes them, and keeps the index's last id for it. Ids that grow with time,
// such as the ULIDs a session makes, go after the index's last id: the pages they fill are not
// written again, so they are packed full. The ids of a hook's events are hashes of their keys,
// spread over the whole key space: in pages packed full, every id put into a full page splits
// off a page holding one or two ids, and such an index grows to 7 times its entries' bytes
// (13% of its pages in use) and makes each commit write more pages. So once an id of the
// transaction goes before the index's last, its pages are split as bbolt splits pages by
// default, at half a page.
type idOrder struct {
	max       ulid.ULID // the index's last id, once known
	known     bool
	scattered bool
}

// last is the index b's last id as the transaction has left it so far: one look at the index's
// end per transaction, then the largest id put since. Zero for an empty index, which no
// event's id is.
func (o *idOrder) last(b *bolt.Bucket) ulid.ULID {
	if !o.known {
		if k, _ := b.Cursor().Last(); k != nil {
			copy(o.max[:], k)
		}
		o.known = true
	}
	return o.max
}

// put notes that id goes into the index b next and sets b's fill accordingly.
func (o *idOrder) put(b *bolt.Bucket, id ulid.ULID) {
	if last := o.last(b); bytes.Compare(id[:], last[:]) > 0 {
		o.max = id
	} else {
		o.scattered = true
	}
	if o.scattered {
		b.FillPercent = bolt.DefaultFillPercent
	} else {
		b.FillPercent = 1.0
	}
}
