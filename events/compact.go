package events

import (
	"fmt"

	"github.com/google/uuid"
)

// The compact encoding of an event is its binary encoding without the fields a store can keep
// or find elsewhere: the task id (a store keeps a task's events together), the sequence number
// (a record's key), the turn, the prev hash (the hash of the record before) and the event's own
// hash (kept beside the record, so that a log's head is read without decoding it). The data's
// length is left out too: the data runs to the end.
//
//	format byte (1) | flags byte | id (16) | time varint (if flagTime) | type len+bytes |
//	v uvarint | origin file len+bytes, record uvarint (if flagOrigin) | data
//
// UnmarshalCompact decodes an event from its compact encoding and a Link; the event's
// AppendBinary then gives back its binary encoding byte for byte, so the hash is computed and
// checked over the same bytes whichever form a store keeps.

// Link is what an event's compact encoding leaves out: where the event sits in its log, its
// turn, and the hashes that chain it.
type Link struct {
	// Task is the id of the task whose log holds the event.
	Task uuid.UUID
	// Seq is the event's sequence number.
	Seq uint64
	// Turn is the event's turn.
	Turn int
	// Prev is the hash of the event before it (zero for a log's first event).
	Prev Hash
	// Hash is the event's own hash, as it was stored.
	Hash Hash
}

// AppendCompact appends the event's compact encoding to b.
func (e *Event) AppendCompact(b []byte) []byte {
	flags := e.flags()
	b = append(b, formatV1, flags)
	b = append(b, e.ID[:]...)
	b = e.appendMiddle(b, flags)
	return append(b, e.Data...)
}

// UnmarshalCompact decodes an event from its compact encoding and l: the event whose binary
// encoding is the compact one with l's fields put back. Data aliases compact. A compact
// encoding that does not parse is ErrCorrupt.
func (e *Event) UnmarshalCompact(compact []byte, l Link) error {
	r := reader{b: compact}
	format, flags := r.byte(), r.byte()
	if r.err == nil && format != formatV1 {
		return fmt.Errorf("%w: unknown format %d", ErrCorrupt, format)
	}
	ev := Event{Task: l.Task, Seq: l.Seq, Turn: l.Turn, Prev: l.Prev, Hash: l.Hash}
	r.copy(ev.ID[:])
	r.middle(&ev, flags)
	if r.err != nil {
		return r.err
	}
	ev.Data = r.b[:len(r.b):len(r.b)]
	*e = ev
	return nil
}
