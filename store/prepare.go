package store

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
)

// Prepared is a batch of events whose records are encoded ahead of DB.AppendPrepared. A record
// of format 4 keeps the event's compact encoding, mostly compressed, behind the hash and the
// turn; that body does not depend on where the event lands, so Prepare makes it on the caller's
// goroutine, outside the commit, and the commit only puts it behind the hash it seals. A writer
// that has the next batch prepared while the last one commits (an import) leaves the commit the
// log's own work.
//
// A Prepared keeps copies of the events and their origins, but not of their Data, which it
// reads again when it is appended: they must not change before AppendPrepared is called.
// AppendPrepared refuses a batch whose Data changed (ErrInvalidEvent) and writes nothing of it.
// A Prepared is never changed by AppendPrepared, so it may be appended again (a retry).
type Prepared struct {
	task uuid.UUID
	evs  []events.Event
	// sums are the events' Data as Prepare read them, hashed with seed.
	seed maphash.Seed
	sums []uint64
	// bodies holds the records' bodies, one after the other; body[i] says where the i-th
	// event's is.
	bodies []byte
	body   []preparedBody
}

// preparedBody is where a record's body is in a Prepared's bodies, and whether it is a
// compressed frame or the compact encoding as it is.
type preparedBody struct {
	from, to   int
	compressed bool
}

// Prepare encodes evs for DB.AppendPrepared to task: the same checks as Append's first ones
// (CheckBatch), then each event's record body, compressed where that is shorter. The events'
// Seq, Prev and Hash are ignored, as by Append.
func Prepare(task uuid.UUID, evs []events.Event) (*Prepared, error) {
	if err := CheckBatch(task, evs); err != nil {
		return nil, err
	}
	p := &Prepared{task: task, evs: slices.Clone(evs), seed: maphash.MakeSeed(),
		sums: make([]uint64, len(evs)), body: make([]preparedBody, len(evs))}
	size := 0
	for i := range evs {
		size += len(evs[i].Data)
	}
	// Most bodies compress to a third or less; a batch that does not grows the array.
	p.bodies = make([]byte, 0, size/3+64*len(evs))
	var compact []byte
	for i := range p.evs {
		ev := &p.evs[i]
		// The body holds the origin as it is now; the commit seals it again.
		if ev.Origin != nil {
			o := *ev.Origin
			ev.Origin = &o
		}
		p.sums[i] = maphash.Bytes(p.seed, ev.Data)
		compact = ev.AppendCompact(compact[:0])
		start := len(p.bodies)
		var compressed bool
		p.bodies, compressed = appendBody(p.bodies, compact)
		p.body[i] = preparedBody{start, len(p.bodies), compressed}
	}
	return p, nil
}

// recordBody returns the body of the i-th event's record and whether it is compressed.
func (p *Prepared) recordBody(i int) ([]byte, bool) {
	b := p.body[i]
	return p.bodies[b.from:b.to], b.compressed
}

// unchanged refuses a batch one of whose events' Data is not what Prepare read.
func (p *Prepared) unchanged() error {
	for i := range p.evs {
		if maphash.Bytes(p.seed, p.evs[i].Data) != p.sums[i] {
			return fmt.Errorf("append to task %s: event #%d (%s): %w: its data changed after Prepare", p.task, i, p.evs[i].ID, ErrInvalidEvent)
		}
	}
	return nil
}

// AppendPrepared is Append of the events p was made from, to p's task: the same promise,
// idempotency and errors, and the same records, byte for byte. A file that keeps records of an
// older form encodes them at the commit, as Append does. A nil or zero Prepared, which Prepare
// never returns, is refused as Append refuses an empty batch (ErrInvalidEvent); any other
// passed Prepare's checks, and its copies of the events cannot have changed since.
func (db *DB) AppendPrepared(ctx context.Context, expectedVersion uint64, p *Prepared) (Appended, error) {
	if db.readOnly {
		return Appended{}, ErrReadOnly
	}
	if p == nil || len(p.evs) == 0 {
		return Appended{}, fmt.Errorf("append: %w: no prepared batch", ErrInvalidEvent)
	}
	if err := p.unchanged(); err != nil {
		return Appended{}, err
	}
	return db.commitBatch(ctx, p.task, expectedVersion, p.evs, p)
}
