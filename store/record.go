package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

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
	dst = append(dst, tagLinkedRaw)
	dst = append(dst, ev.Hash[:]...)
	dst = binary.AppendUvarint(dst, uint64(ev.Turn))
	dst, ok := payloadcodec.Compress(dst, scratch)
	if ok {
		dst[start] = tagLinkedZstd
	} else {
		dst = append(dst, scratch...)
	}
	return dst, scratch
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

// recordReader rebuilds events' binary encodings from stored records of any form, in log order:
// it carries each record's hash to the next as its prev hash.
type recordReader struct {
	task uuid.UUID
	// prev is the hash of the record read last; prevOK says whether there is one.
	prev   events.Hash
	prevOK bool
}

// bodies holds buffers for decompressed compact encodings, which are copied into the encoding
// rebuilt right away: a reader of a chunk at a time does not grow one of its own per chunk.
var bodies = sync.Pool{New: func() any { return new([]byte) }}

// start positions r before the record at seq: prev is the stored record at seq-1, or nil when
// seq is 1 or that record is missing.
func (r *recordReader) start(seq uint64, prev []byte) {
	r.prev, r.prevOK = events.Hash{}, seq <= 1
	if seq > 1 && prev != nil {
		h, err := recordHash(prev)
		r.prev, r.prevOK = h, err == nil
	}
}

// next appends the binary encoding of the record stored under seq to dst and makes its hash the
// prev of the record after it. A record that does not decompress, or one of format 4 whose
// predecessor was not read, is an error, and the reader cannot go on.
func (r *recordReader) next(dst, stored []byte, seq uint64) ([]byte, error) {
	start := len(dst)
	var err error
	switch {
	case isLinked(stored):
		dst, err = r.expand(dst, stored, seq)
	default:
		dst, err = payloadcodec.Decode(dst, stored)
	}
	if err != nil {
		r.prevOK = false
		return dst[:start], err
	}
	// The encoding just written ends with the event's hash; one that is too short to is left to
	// the decoder to report, and breaks the chain.
	if enc := dst[start:]; len(enc) >= len(r.prev) {
		copy(r.prev[:], enc[len(enc)-len(r.prev):])
		r.prevOK = true
	} else {
		r.prevOK = false
	}
	return dst, nil
}

func (r *recordReader) expand(dst, stored []byte, seq uint64) ([]byte, error) {
	if !r.prevOK {
		return dst, errNoPrev
	}
	hash, turn, at, err := linkedHead(stored)
	if err != nil {
		return dst, err
	}
	link := events.Link{Task: r.task, Seq: seq, Turn: turn, Prev: r.prev, Hash: hash}
	if stored[0] == tagLinkedRaw {
		return events.ExpandCompact(dst, stored[at:], link)
	}
	buf := bodies.Get().(*[]byte)
	defer bodies.Put(buf)
	if *buf, err = payloadcodec.Decompress((*buf)[:0], stored[at:]); err != nil {
		return dst, err
	}
	return events.ExpandCompact(dst, *buf, link)
}
