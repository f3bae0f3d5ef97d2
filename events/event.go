// Package events defines tasklog's event envelope, the typed payloads a task's log holds, their
// canonical encoding, the hash chain that links a log together, and the upgrade of payloads
// written by older versions of the schema.
//
// An Event is immutable once it is in a log: the store assigns its sequence number and chains
// its hash to its predecessor, and nothing ever rewrites it. Payloads are kept as canonical JSON
// bytes and decoded only when asked (Event.Payload), so reading a log is cheap.
package events

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
)

// Type names the kind of an event.
type Type string

// The event types tasklog knows.
const (
	TypeTaskStarted     Type = "task_started"
	TypeUserMessage     Type = "user_message"
	TypeMention         Type = "mention"
	TypeToolCall        Type = "tool_call"
	TypeTabSnapshot     Type = "tab_snapshot"
	TypeFileWrite       Type = "file_write"
	TypeSettingsChanged Type = "settings_changed"
	TypeRuleToggled     Type = "rule_toggled"
	TypeRulesSnapshot   Type = "rules_snapshot"
	TypeDecision        Type = "decision"
	TypeRuleTriggered   Type = "rule_triggered"
)

// Sentinel errors callers test with errors.Is.
var (
	// ErrUnknownType is returned for an event type this code does not know.
	ErrUnknownType = errors.New("unknown event type")
	// ErrNewerVersion is returned for a payload written by a newer schema than this code knows.
	ErrNewerVersion = errors.New("event schema version is newer than this tasklog understands")
	// ErrCorrupt is returned for bytes that are not a well-formed encoded event.
	ErrCorrupt = errors.New("corrupt event encoding")
	// ErrInvalid is returned for a payload that breaks the schema (unknown field, wrong type,
	// missing required value).
	ErrInvalid = errors.New("invalid event")
)

// Event is the envelope of one entry in a task's log.
type Event struct {
	// Task is the id of the task the event belongs to.
	Task uuid.UUID
	// Seq is the event's position in its task's log: 1, 2, 3 … without gaps. Assigned by the
	// store.
	Seq uint64
	// ID is globally unique and sortable; re-appending an event with the same ID is a no-op.
	ID ulid.ULID
	// Turn is the prompt the event leads up to: events recorded before the first decision and
	// that decision are turn 1, everything after it up to and including the second decision is
	// turn 2, and so on.
	Turn int
	// Time is when the runtime recorded the event, in UTC. It is data, never re-read from a clock.
	Time time.Time
	// Type names the payload's schema.
	Type Type
	// V is the schema version the payload was written with.
	V int
	// Origin says where an imported event came from; nil for events a runtime recorded itself.
	Origin *Origin
	// Data is the payload as canonical JSON.
	Data []byte
	// Prev is the hash of the previous event in the task's log; zero for the first event.
	Prev Hash
	// Hash is SHA-256 over the canonical binary encoding of every field above.
	Hash Hash
}

// Origin points an imported event back at the record it was made from, so an auditor can open
// the original.
type Origin struct {
	// File is the path of the imported file, as given to the importer.
	File string `json:"file"`
	// Record is the zero-based index of the record in that file (array element or line).
	Record int `json:"record"`
}

// String gives a short human description of the event's position, for error messages.
func (e Event) String() string {
	return fmt.Sprintf("seq %d (%s)", e.Seq, e.Type)
}

// Payload decodes the event's data into its typed payload, upgrading data written by an older
// schema version. Errors name the event's sequence and type.
func (e Event) Payload() (Payload, error) { return e.payload(nil) }

// payload is Payload, decoding into d's memory when d is not nil (see Decoder).
func (e Event) payload(d *Decoder) (Payload, error) {
	s, ok := schemaOf(e.Type)
	if !ok {
		return nil, fmt.Errorf("event %s: %w %q", e, ErrUnknownType, e.Type)
	}
	data, err := s.upgrade(e.Type, e.V, e.Data)
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", e, err)
	}
	p, fast := decodeFast(e.Type, data, d)
	if !fast {
		p = s.new()
		if err := decodeStrict(data, p); err != nil {
			return nil, fmt.Errorf("event %s: payload: %w: %v", e, ErrInvalid, err)
		}
	}
	if err := validateDecoded(p, fast); err != nil {
		return nil, fmt.Errorf("event %s: %w: %v", e, ErrInvalid, err)
	}
	return p, nil
}

// New builds an event of the payload's type at the current schema version, with the payload
// encoded canonically. The caller sets Task, ID, Turn and Time; the store sets Seq, Prev and Hash.
func New(p Payload) (Event, error) {
	if err := p.validate(); err != nil {
		return Event{}, fmt.Errorf("%s: %w: %v", p.EventType(), ErrInvalid, err)
	}
	data, err := canonicalJSON(p)
	if err != nil {
		return Event{}, fmt.Errorf("%s: encode payload: %w", p.EventType(), err)
	}
	t := p.EventType()
	return Event{Type: t, V: schemas[t].current, Data: data}, nil
}

// NewInto is New with the payload encoded into buf's array (from its start, grown when it is too
// small): the event's Data is buf's memory, for a caller that makes one such event after
// another and knows nothing reads the last one's Data any more (a Store keeps none once its
// Append returns).
func NewInto(buf []byte, p Payload) (Event, error) {
	data, err := AppendData(buf[:0], p)
	if err != nil {
		return Event{}, err
	}
	t := p.EventType()
	return Event{Type: t, V: schemas[t].current, Data: data}, nil
}

// AppendData appends to b the payload's canonical bytes, those New would give it as the event's
// Data, after the same validation: a caller comparing payloads byte for byte reuses b.
func AppendData(b []byte, p Payload) ([]byte, error) {
	if err := p.validate(); err != nil {
		return b, fmt.Errorf("%s: %w: %v", p.EventType(), ErrInvalid, err)
	}
	if d, ok := p.(*Decision); ok {
		return d.appendJSON(b), nil
	}
	data, err := canonicalJSON(p)
	if err != nil {
		return b, fmt.Errorf("%s: encode payload: %w", p.EventType(), err)
	}
	return append(b, data...), nil
}

// Seal links the event to its predecessor: it sets Prev and computes Hash.
func (e *Event) Seal(prev Hash) {
	e.Prev = prev
	e.Hash = e.ComputeHash()
}
