package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store/payloadcodec"
)

// A record of format 4 keeps only what cannot be found elsewhere. Its task is its bucket's name,
// its sequence number its key and its prev hash the hash of the record before it; its own hash
// and its turn sit in front, where a head is read without decompressing anything:
//
//	tag (1) | hash (32) | turn uvarint | body
//
// The body is the event's compact encoding (events.Event.AppendCompact), as a zstd frame behind
// tagLinkedZstd (see payloadcodec.Compress) or as it is behind tagLinkedRaw. Records of the
// older forms, an encoding as it is (first byte 1) or compressed behind payloadcodec.Tag, are
// read beside them: a file written by older versions keeps its records.
//
// The hash beside a record is not trusted: a read rebuilds the event's binary encoding from the
// body, the bucket, the key, the turn, the prev hash and that hash, and Verify checks the hash
// over those bytes as over any record's. A damaged hash, a damaged body and a record moved to
// another key or task all fail that check.
const (
	// tagLinkedRaw marks a record of format 4 whose body is kept as it is.
	tagLinkedRaw = 0xFC
	// tagLinkedZstd marks a record of format 4 whose body is compressed.
	tagLinkedZstd = 0xFD
	// linkedHeader is the length of a linked record's tag and hash.
	linkedHeader = 1 + len(events.Hash{})
)

// errNoPrev is a record of format 4 whose predecessor cannot be read, so its prev hash is unknown.
var errNoPrev = errors.New("the record before it is missing or unreadable, so its link to it cannot be rebuilt")

// isLinked reports whether a stored record is in the form of format 4.
func isLinked(stored []byte) bool {
	return len(stored) > 0 && (stored[0] == tagLinkedRaw || stored[0] == tagLinkedZstd)
}

// appendRecord appends ev's record in the form of format 4 to dst; ev must be sealed. scratch
// is a buffer for its compact encoding, returned for reuse.
func appendRecord(dst []byte, ev *events.Event, scratch []byte) (out, scratchOut []byte) {
	scratch = ev.AppendCompact(scratch[:0])
	start := len(dst)
	dst, compressed := appendBody(appendLinkedHead(dst, tagLinkedRaw, ev), scratch)
	if compressed {
		dst[start] = tagLinkedZstd
	}
	return dst, scratch
}

// appendBody appends the body of a record of format 4 to dst: the compact encoding compact,
// compressed when that is shorter. It reports whether it is.
func appendBody(dst, compact []byte) ([]byte, bool) {
	dst, ok := payloadcodec.Compress(dst, compact)
	if !ok {
		dst = append(dst, compact...)
	}
	return dst, ok
}

// appendPreparedRecord appends ev's record to dst as appendRecord does, with the body Prepare
// made of ev's compact encoding; ev must be sealed.
func appendPreparedRecord(dst []byte, ev *events.Event, body []byte, compressed bool) []byte {
	tag := byte(tagLinkedRaw)
	if compressed {
		tag = tagLinkedZstd
	}
	return append(appendLinkedHead(dst, tag, ev), body...)
}

// appendLinkedHead appends what a record of format 4 keeps in front of its body.
func appendLinkedHead(dst []byte, tag byte, ev *events.Event) []byte {
	dst = append(dst, tag)
	dst = append(dst, ev.Hash[:]...)
	return binary.AppendUvarint(dst, uint64(ev.Turn))
}

// linkedHead returns the hash and turn a record of format 4 keeps in front of its body, and
// where its body starts.
func linkedHead(stored []byte) (hash events.Hash, turn int, body int, err error) {
	if len(stored) < linkedHeader+1 {
		return hash, 0, 0, fmt.Errorf("%w: the record is %d bytes, too short to hold a hash and a turn", ErrCorrupt, len(stored))
	}
	copy(hash[:], stored[1:linkedHeader])
	t, n := binary.Uvarint(stored[linkedHeader:])
	if n <= 0 {
		return hash, 0, 0, fmt.Errorf("%w: the record's turn does not decode", ErrCorrupt)
	}
	return hash, int(t), linkedHeader + n, nil
}

// recordHead returns the hash and the turn of a stored record of any form. Only a compressed
// record of format 3 is decompressed; the others are read in place.
func recordHead(stored []byte) (events.Hash, int, error) {
	if isLinked(stored) {
		h, turn, _, err := linkedHead(stored)
		return h, turn, err
	}
	raw := stored
	if payloadcodec.IsCompressed(stored) {
		var err error
		if raw, err = payloadcodec.Decode(nil, stored); err != nil {
			return events.Hash{}, 0, err
		}
	}
	var ev events.Event
	if err := ev.UnmarshalBinary(raw); err != nil {
		return events.Hash{}, 0, err
	}
	return ev.Hash, ev.Turn, nil
}

// recordHash returns the hash a stored record of any form says its event has: what the next
// record's prev must be.
func recordHash(stored []byte) (events.Hash, error) {
	var h events.Hash
	switch {
	case isLinked(stored):
		if len(stored) < linkedHeader {
			return h, fmt.Errorf("%w: the record is %d bytes, too short to hold a hash", ErrCorrupt, len(stored))
		}
		copy(h[:], stored[1:linkedHeader])
		return h, nil
	case payloadcodec.IsCompressed(stored):
		raw, err := payloadcodec.Decode(nil, stored)
		if err != nil {
			return h, err
		}
		stored = raw
	}
	// An encoding ends with its hash.
	if len(stored) < len(h) {
		return h, fmt.Errorf("%w: the record is %d bytes, too short to hold a hash", ErrCorrupt, len(stored))
	}
	copy(h[:], stored[len(stored)-len(h):])
	return h, nil
}

// recordReader copies stored records of any form out of a transaction, in log order, into the
// form they are decoded from (see decodeRecord): a canonical encoding, or a record of format 4
// with its body decompressed (behind tagLinkedRaw). It carries each record's hash to the next,
// to know whether the prev hash of a record of format 4 can be had.
type recordReader struct {
	// prev is the hash of the record read last; prevOK says whether there is one.
	prev   events.Hash
	prevOK bool
}

// start positions r before the record at seq: prev is the stored record at seq-1, or nil when
// seq is 1 or that record is missing.
func (r *recordReader) start(seq uint64, prev []byte) {
	r.prev, r.prevOK = events.Hash{}, seq <= 1
	if seq > 1 && prev != nil {
		h, err := recordHash(prev)
		r.prev, r.prevOK = h, err == nil
	}
}

// next appends the next stored record to dst in the form decodeRecord reads and makes its hash
// the prev of the record after it. A record that does not decompress, or one of format 4 whose
// predecessor was not read, is an error, and the reader cannot go on.
func (r *recordReader) next(dst, stored []byte) ([]byte, error) {
	start := len(dst)
	var err error
	switch {
	case isLinked(stored):
		dst, err = r.linked(dst, stored)
	default:
		dst, err = payloadcodec.Decode(dst, stored)
	}
	if err != nil {
		r.prevOK = false
		return dst[:start], err
	}
	h, err := recordHash(dst[start:])
	r.prev, r.prevOK = h, err == nil
	return dst, nil
}

// linked appends a record of format 4 with its body decompressed.
func (r *recordReader) linked(dst, stored []byte) ([]byte, error) {
	if !r.prevOK {
		return dst, errNoPrev
	}
	_, _, at, err := linkedHead(stored)
	if err != nil {
		return dst, err
	}
	if stored[0] == tagLinkedRaw {
		return append(dst, stored...), nil
	}
	start := len(dst)
	dst = append(dst, stored[:at]...)
	dst[start] = tagLinkedRaw
	return payloadcodec.Decompress(dst, stored[at:])
}

// decodeRecord decodes a record as recordReader.next copies it out: the event stored in task's
// log under seq, whose predecessor's hash is prev. Data aliases raw.
func decodeRecord(ev *events.Event, raw []byte, task uuid.UUID, seq uint64, prev events.Hash) error {
	if !isLinked(raw) {
		return ev.UnmarshalBinary(raw)
	}
	hash, turn, at, err := linkedHead(raw)
	if err != nil {
		return err
	}
	return ev.UnmarshalCompact(raw[at:], events.Link{Task: task, Seq: seq, Turn: turn, Prev: prev, Hash: hash})
}
