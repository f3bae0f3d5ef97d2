package events

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"time"

	"github.com/oklog/ulid/v2"
)

// Hash is a SHA-256 digest.
type Hash [sha256.Size]byte

// IsZero reports whether h is the zero hash (the Prev of a log's first event).
func (h Hash) IsZero() bool { return h == Hash{} }

// String is the lowercase hex form.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// MarshalText implements encoding.TextMarshaler.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (h *Hash) UnmarshalText(b []byte) error {
	p, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = p
	return nil
}

// ParseHash parses the hex form of a Hash.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 2*len(h) {
		return h, fmt.Errorf("hash %q: want %d hex digits", s, 2*len(h))
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, fmt.Errorf("hash %q: %w", s, err)
	}
	return h, nil
}

// The binary encoding of an event, which is both what the store keeps and what the hash is
// computed over (without the trailing hash). It is fixed: changing it breaks every chain.
//
//	format byte (1) | flags byte | task (16) | seq uvarint | id (16) | turn uvarint |
//	time varint (Unix ns, if flagTime) | type len+bytes | v uvarint |
//	origin file len+bytes, record uvarint (if flagOrigin) | prev (32) | data len+bytes | hash (32)
//
// The stores keep a record compressed behind the tag byte 0xFE (store/payloadcodec.Tag), or in
// the compact encoding (see AppendCompact) behind the tag bytes 0xFC and 0xFD, and tell the
// forms apart by the first byte: no format number may ever be 0xFC, 0xFD or 0xFE.
const (
	formatV1   = 1
	flagTime   = 1 << 0
	flagOrigin = 1 << 1
)

// AppendBinary appends the event's binary encoding, hash included, to b.
func (e *Event) AppendBinary(b []byte) []byte {
	b = e.appendUnhashed(b)
	return append(b, e.Hash[:]...)
}

// MarshalBinary implements encoding.BinaryMarshaler.
func (e Event) MarshalBinary() ([]byte, error) {
	return e.AppendBinary(make([]byte, 0, e.encodedSize())), nil
}

// ComputeHash is SHA-256 over the binary encoding of every field but Hash.
func (e *Event) ComputeHash() Hash {
	var buf [512]byte // most events fit: no allocation then
	if n := e.encodedSize(); n <= len(buf) {
		return sha256.Sum256(e.appendUnhashed(buf[:0]))
	}
	// A large event (a decision) is hashed as its fields, then its data where it lies, not
	// copied after them first: the same bytes in the same order.
	head := binary.AppendUvarint(e.appendHead(buf[:0]), uint64(len(e.Data)))
	h := sha256.New()
	h.Write(head)
	h.Write(e.Data)
	var sum Hash
	h.Sum(sum[:0])
	return sum
}

func (e *Event) encodedSize() int {
	n := 2 + 16 + 10 + 16 + 10 + 10 + 10 + len(e.Type) + 10 + 32 + 10 + len(e.Data) + 32
	if e.Origin != nil {
		n += 20 + len(e.Origin.File)
	}
	return n
}

func (e *Event) appendUnhashed(b []byte) []byte {
	b = binary.AppendUvarint(e.appendHead(b), uint64(len(e.Data)))
	return append(b, e.Data...)
}

// appendHead appends the encoding of every field before the data's length.
func (e *Event) appendHead(b []byte) []byte {
	flags := e.flags()
	b = append(b, formatV1, flags)
	b = append(b, e.Task[:]...)
	b = binary.AppendUvarint(b, e.Seq)
	b = append(b, e.ID[:]...)
	b = binary.AppendUvarint(b, uint64(e.Turn))
	b = e.appendMiddle(b, flags)
	return append(b, e.Prev[:]...)
}

func (e *Event) flags() byte {
	var flags byte
	if !e.Time.IsZero() {
		flags |= flagTime
	}
	if e.Origin != nil {
		flags |= flagOrigin
	}
	return flags
}

// An event's time is kept as nanoseconds since 1970 in 64 bits: from minTime to maxTime.
var (
	minTime = time.Unix(0, math.MinInt64).UTC()
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

// KeepsTime reports whether an event's encoding keeps t (the zero time, an event without one,
// included): times from 1677-09-21 to 2262-04-11. Another time would come back as another.
func KeepsTime(t time.Time) bool {
	return t.IsZero() || !t.Before(minTime) && !t.After(maxTime)
}

// appendMiddle appends the fields between the turn and the prev hash, which the binary and the
// compact encodings share.
func (e *Event) appendMiddle(b []byte, flags byte) []byte {
	if flags&flagTime != 0 {
		b = binary.AppendVarint(b, e.Time.UnixNano())
	}
	b = appendString(b, string(e.Type))
	b = binary.AppendUvarint(b, uint64(e.V))
	if e.Origin != nil {
		b = appendString(b, e.Origin.File)
		b = binary.AppendUvarint(b, uint64(e.Origin.Record))
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// UnmarshalBinary decodes an event encoded by MarshalBinary. Data aliases b, so the caller must
// not reuse b afterwards; the payload itself is not decoded (see Payload).
func (e *Event) UnmarshalBinary(b []byte) error {
	r := reader{b: b}
	format, flags := r.byte(), r.byte()
	if r.err == nil && format != formatV1 {
		return fmt.Errorf("%w: unknown format %d", ErrCorrupt, format)
	}
	var ev Event
	r.copy(ev.Task[:])
	ev.Seq = r.uvarint()
	r.copy(ev.ID[:])
	ev.Turn = int(r.uvarint())
	r.middle(&ev, flags)
	r.copy(ev.Prev[:])
	ev.Data = r.bytes()
	r.copy(ev.Hash[:])
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(r.b))
	}
	*e = ev
	return nil
}

// internType avoids an allocation per decoded event for the known types; a switch, which
// compares the bytes without hashing them, is faster than a map here.
func internType(b []byte) Type {
	switch string(b) {
	case string(TypeToolCall):
		return TypeToolCall
	case string(TypeDecision):
		return TypeDecision
	case string(TypeFileWrite):
		return TypeFileWrite
	case string(TypeUserMessage):
		return TypeUserMessage
	case string(TypeMention):
		return TypeMention
	case string(TypeTabSnapshot):
		return TypeTabSnapshot
	case string(TypeTaskStarted):
		return TypeTaskStarted
	case string(TypeSettingsChanged):
		return TypeSettingsChanged
	case string(TypeRuleToggled):
		return TypeRuleToggled
	case string(TypeRulesSnapshot):
		return TypeRulesSnapshot
	case string(TypeRuleTriggered):
		return TypeRuleTriggered
	case string(TypeDelivery):
		return TypeDelivery
	case string(TypeInstructionsLoaded):
		return TypeInstructionsLoaded
	case string(TypeCompaction):
		return TypeCompaction
	case string(TypeAgentStopped):
		return TypeAgentStopped
	}
	return Type(b)
}

// middle decodes the fields between the turn and the prev hash, which the binary and the
// compact encodings share.
func (r *reader) middle(ev *Event, flags byte) {
	if flags&flagTime != 0 {
		ev.Time = time.Unix(0, r.varint()).UTC()
	}
	ev.Type = internType(r.bytes())
	ev.V = int(r.uvarint())
	if flags&flagOrigin != 0 {
		ev.Origin = &Origin{File: string(r.bytes())}
		ev.Origin.Record = int(r.uvarint())
	}
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated", ErrCorrupt)
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) copy(dst []byte) {
	if len(r.b) < len(dst) {
		r.fail()
		return
	}
	copy(dst, r.b)
	r.b = r.b[len(dst):]
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || uint64(len(r.b)) < n {
		r.fail()
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// ParseID parses an event id.
func ParseID(s string) (ulid.ULID, error) { return ulid.ParseStrict(s) }
