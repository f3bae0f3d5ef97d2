package events

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// ErrHashMismatch is returned when a line of a JSON Lines log carries a hash or prev that does
// not match its content or its predecessor: the file was altered or lines were lost.
var ErrHashMismatch = errors.New("hash chain broken")

// MaxLineBytes bounds one line of a JSON Lines log.
const MaxLineBytes = 64 << 20

// jsonLine is the JSON form of an event: the authoring format. Field order is the export order.
type jsonLine struct {
	Task   string          `json:"task,omitempty"`
	Seq    uint64          `json:"seq,omitempty"`
	ID     string          `json:"id,omitempty"`
	Turn   int             `json:"turn,omitempty"`
	Time   string          `json:"time,omitempty"`
	Type   Type            `json:"type"`
	V      int             `json:"v,omitempty"`
	Origin *Origin         `json:"origin,omitempty"`
	Data   json.RawMessage `json:"data"`
	Prev   string          `json:"prev,omitempty"`
	Hash   string          `json:"hash,omitempty"`
}

// blobLine is the JSON form of a content-addressed blob in an export: the rule file contents a
// rules_snapshot references. Text is kept as text; other bytes as base64.
type blobLine struct {
	Blob    string  `json:"blob"`
	Content *string `json:"content,omitempty"`
	Base64  []byte  `json:"base64,omitempty"`
}

// Blob is a content-addressed blob carried by a JSON Lines log.
type Blob struct {
	// Sum is the lowercase hex SHA-256 of Content.
	Sum     string
	Content []byte
}

// MarshalBlobLine encodes a blob as one line of the export format (without the newline).
func MarshalBlobLine(sum string, content []byte) ([]byte, error) {
	l := blobLine{Blob: sum}
	if utf8.Valid(content) {
		s := string(content)
		l.Content = &s
	} else {
		l.Base64 = content
	}
	return marshalNoEscape(&l)
}

func parseBlobLine(raw []byte) (*Blob, error) {
	var bl blobLine
	if err := decodeStrict(raw, &bl); err != nil {
		return nil, fmt.Errorf("%w: blob line: %v", ErrInvalid, err)
	}
	content := bl.Base64
	if bl.Content != nil {
		content = []byte(*bl.Content)
	}
	sum := sha256.Sum256(content)
	if got := hex.EncodeToString(sum[:]); got != bl.Blob {
		return nil, fmt.Errorf("%w: blob %s: content hashes to %s", ErrHashMismatch, bl.Blob, got)
	}
	return &Blob{Sum: bl.Blob, Content: content}, nil
}

// End is the closing line of an export: the task, how many events it holds and the hash of
// the last one. An importer that meets it knows the file holds the whole log as exported, so a
// file cut short (at a line boundary or not) or missing its last events is detected.
type End struct {
	Task   uuid.UUID
	Events uint64
	Last   Hash
}

// endLine is the JSON form of End.
type endLine struct {
	End    string `json:"end"`
	Events uint64 `json:"events"`
	Last   string `json:"last"`
}

// MarshalEndLine encodes an export's closing line (without the newline).
func MarshalEndLine(e End) ([]byte, error) {
	return marshalNoEscape(&endLine{End: e.Task.String(), Events: e.Events, Last: e.Last.String()})
}

func parseEndLine(raw []byte) (*End, error) {
	var el endLine
	if err := decodeStrict(raw, &el); err != nil {
		return nil, fmt.Errorf("%w: closing line: %v", ErrInvalid, err)
	}
	task, err := uuid.Parse(el.End)
	if err != nil {
		return nil, fmt.Errorf("%w: closing line: task %q: %v", ErrInvalid, el.End, err)
	}
	last, err := ParseHash(el.Last)
	if err != nil {
		return nil, fmt.Errorf("%w: closing line: last: %v", ErrInvalid, err)
	}
	if el.Events == 0 {
		return nil, fmt.Errorf("%w: closing line: events must be 1 or more", ErrInvalid)
	}
	return &End{Task: task, Events: el.Events, Last: last}, nil
}

// MarshalJSONLine encodes a stored event as one line of the export format (without the
// newline). The encoding is lossless: decoding it gives back the same event, hash included. Its
// data is written as the event holds it, byte for byte (the hash covers those bytes): data that
// is not one JSON value, or that holds a newline, is an error.
func MarshalJSONLine(e Event) ([]byte, error) {
	if !json.Valid(e.Data) || bytes.IndexByte(e.Data, '\n') >= 0 {
		return nil, fmt.Errorf("export %s: its data is not one JSON value on one line", e)
	}
	// The data goes where the placeholder 0 is: encoding/json would write it compacted.
	l := jsonLine{Task: e.Task.String(), Seq: e.Seq, ID: e.ID.String(), Turn: e.Turn, Type: e.Type,
		V: e.V, Origin: e.Origin, Data: json.RawMessage("0"), Hash: e.Hash.String()}
	if !e.Time.IsZero() {
		l.Time = e.Time.UTC().Format(time.RFC3339Nano)
	}
	if !e.Prev.IsZero() {
		l.Prev = e.Prev.String()
	}
	line, err := marshalNoEscape(&l)
	if err != nil {
		return nil, err
	}
	// No string of the line holds an unescaped quote, so the first "data":0 is the key's.
	at := bytes.Index(line, []byte(`"data":0`)) + len(`"data":`)
	return slices.Concat(line[:at], e.Data, line[at+1:]), nil
}

// Line is one decoded line of a JSON Lines log. Fields the line omitted are zero in Event and
// false in the Has flags; the caller (an importer) assigns them.
type Line struct {
	// Event is the line's event. Its Data is canonical, or, on a line that carries a hash, the
	// line's data as it is (the hash covers those bytes); ParseLine has checked it against its
	// schema, ReparseLine has not.
	Event Event
	// No is the 1-based line number in the file.
	No int
	// HasTask, HasSeq, HasID, HasTurn, HasTime and HasHash tell which envelope fields the line set.
	HasTask, HasSeq, HasID, HasTurn, HasTime, HasHash bool
	// Blob is set, and Event is zero, for a blob line.
	Blob *Blob
	// End is set, and Event is zero, for an export's closing line.
	End *End
	// Sig is set, and Event is zero, for the signature line of a signed export, which follows
	// its closing line.
	Sig *Signature
}

// LineReader reads a JSON Lines log, one event per line. Blank lines are skipped. Every error
// names the file and line.
type LineReader struct {
	name string
	sc   *bufio.Scanner
	no   int
}

// NewLineReader reads r; name is used in error messages.
func NewLineReader(r io.Reader, name string) *LineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	return &LineReader{name: name, sc: sc}
}

// Next returns the next line, or io.EOF after the last one.
func (lr *LineReader) Next() (Line, error) {
	raw, no, err := lr.Raw()
	if err != nil {
		return Line{}, err
	}
	return lr.Parse(raw, no)
}

// Parse is ParseLine of the line numbered no that Raw returned, its error naming the file and
// the line as Next's does. It reads nothing else of lr: lines may be parsed on other goroutines
// than the one reading them, and the Line shares no memory with raw.
func (lr *LineReader) Parse(raw []byte, no int) (Line, error) {
	l, err := ParseLine(raw)
	if err != nil {
		return Line{}, fmt.Errorf("%s:%d: %w", lr.name, no, err)
	}
	l.No = no
	return l, nil
}

// Reparse is ReparseLine of the line numbered no that Raw returned, as Parse is ParseLine's.
func (lr *LineReader) Reparse(raw []byte, no int) (Line, error) {
	l, err := ReparseLine(raw)
	if err != nil {
		return Line{}, fmt.Errorf("%s:%d: %w", lr.name, no, err)
	}
	l.No = no
	return l, nil
}

// Raw returns the next non-blank line undecoded, with its 1-based number, or io.EOF. The bytes
// are valid until the next call.
func (lr *LineReader) Raw() ([]byte, int, error) {
	for lr.sc.Scan() {
		lr.no++
		if raw := bytes.TrimSpace(lr.sc.Bytes()); len(raw) > 0 {
			return raw, lr.no, nil
		}
	}
	if err := lr.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, lr.no + 1, fmt.Errorf("%s:%d: line longer than %d bytes", lr.name, lr.no+1, MaxLineBytes)
		}
		return nil, lr.no, fmt.Errorf("%s: %w", lr.name, err)
	}
	return nil, lr.no, io.EOF
}

// ParseLine decodes one line of the authoring or export format: an event, a blob, an
// export's closing line or its signature line. A turn below 1 is refused, and so is what JSON readers read otherwise
// or encoding/json would change silently: a key given twice in an object, a string that is not
// valid Unicode, "data": null. Unknown envelope fields,
// unknown event types, unknown payload fields and payloads that break their schema are errors.
// A line that carries a hash keeps its data bytes verbatim, so the hash can be checked; other
// lines get canonical data.
func ParseLine(raw []byte) (Line, error) {
	if err := checkStrict(raw); err != nil {
		return Line{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if bytes.HasPrefix(raw, []byte(`{"blob":`)) {
		b, err := parseBlobLine(raw)
		return Line{Blob: b}, err
	}
	if bytes.HasPrefix(raw, []byte(`{"end":`)) {
		e, err := parseEndLine(raw)
		return Line{End: e}, err
	}
	if bytes.HasPrefix(raw, []byte(`{"sig":`)) {
		s, err := parseSignatureLine(raw)
		return Line{Sig: s}, err
	}
	var jl jsonLine
	if !decodeLineFast(raw, &jl) {
		jl = jsonLine{}
		if err := decodeStrict(raw, &jl); err != nil {
			return Line{}, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
	}
	l, s, err := lineEnvelope(&jl)
	if err != nil {
		return Line{}, err
	}
	e := &l.Event
	if e.Data, err = lineData(s, e.Type, e.V, jl.Data, l.HasHash); err != nil {
		return Line{}, err
	}
	if l.HasHash {
		if !l.placed() {
			return Line{}, fmt.Errorf("%w: a line with a hash must also carry task, id, seq and turn", ErrInvalid)
		}
		if got := e.ComputeHash(); got != e.Hash {
			return Line{}, fmt.Errorf("%w: seq %d: hash %s does not match the line's content (computed %s): the line was altered",
				ErrHashMismatch, e.Seq, e.Hash, got)
		}
	}
	return l, nil
}

// ReparseLine is ParseLine of a line that ParseLine accepted before, byte for byte: it returns
// the same Line without checking again what depends on the line's bytes alone. An event line
// that carries a hash (an export's) has its envelope read and its data kept verbatim, without
// the strict reading of the whole line, the payload's schema and the hash; any other line is
// parsed by ParseLine. Given a line ParseLine would refuse, it may accept it: a caller uses it
// only where it knows the bytes are those ParseLine accepted (an import's second read of
// lines whose sum it took in the first).
func ReparseLine(raw []byte) (Line, error) {
	var jl jsonLine
	if !decodeLineFast(raw, &jl) || jl.Hash == "" {
		return ParseLine(raw)
	}
	l, _, err := lineEnvelope(&jl)
	if err != nil || !l.placed() {
		return ParseLine(raw)
	}
	l.Event.Data = append([]byte(nil), jl.Data...)
	return l, nil
}

// placed reports whether the line says where its event stands (task, id, seq and turn), as a
// line with a hash must: the hash covers them.
func (l *Line) placed() bool { return l.HasTask && l.HasID && l.HasSeq && l.HasTurn }

// lineEnvelope makes the Line of an event line's envelope, and returns its type's schema; its
// Data is left to the caller, from jl.Data, which it sets to {} when the line has none.
func lineEnvelope(jl *jsonLine) (Line, *schema, error) {
	if jl.Type == "" {
		return Line{}, nil, fmt.Errorf("%w: missing \"type\"", ErrInvalid)
	}
	s, ok := schemas[jl.Type]
	if !ok {
		return Line{}, nil, fmt.Errorf("%w %q", ErrUnknownType, jl.Type)
	}
	if jl.Turn < 0 {
		return Line{}, nil, fmt.Errorf("%w: turn %d: turns count from 1", ErrInvalid, jl.Turn)
	}
	l := Line{HasSeq: jl.Seq != 0, HasTurn: jl.Turn != 0, HasHash: jl.Hash != ""}
	e := &l.Event
	e.Type, e.Seq, e.Turn, e.Origin = jl.Type, jl.Seq, jl.Turn, jl.Origin
	e.V = jl.V
	if e.V == 0 {
		e.V = s.current
	}
	var err error
	if jl.Task != "" {
		if e.Task, err = uuid.Parse(jl.Task); err != nil {
			return Line{}, nil, fmt.Errorf("%w: task %q: %v", ErrInvalid, jl.Task, err)
		}
		l.HasTask = true
	}
	if jl.ID != "" {
		if e.ID, err = ParseID(jl.ID); err != nil {
			return Line{}, nil, fmt.Errorf("%w: id %q: %v", ErrInvalid, jl.ID, err)
		}
		l.HasID = true
	}
	if jl.Time != "" {
		if e.Time, err = time.Parse(time.RFC3339Nano, jl.Time); err != nil {
			return Line{}, nil, fmt.Errorf("%w: time %q: %v", ErrInvalid, jl.Time, err)
		}
		if !KeepsTime(e.Time) {
			return Line{}, nil, fmt.Errorf("%w: time %q is outside what a log keeps (%s to %s)", ErrInvalid, jl.Time,
				minTime.Format(time.RFC3339), maxTime.Format(time.RFC3339))
		}
		e.Time = e.Time.UTC()
		l.HasTime = true
	}
	if jl.Prev != "" {
		if e.Prev, err = ParseHash(jl.Prev); err != nil {
			return Line{}, nil, fmt.Errorf("%w: prev: %v", ErrInvalid, err)
		}
	}
	if l.HasHash {
		if e.Hash, err = ParseHash(jl.Hash); err != nil {
			return Line{}, nil, fmt.Errorf("%w: hash: %v", ErrInvalid, err)
		}
	}
	switch {
	case len(jl.Data) == 0:
		jl.Data = json.RawMessage("{}")
	case string(jl.Data) == "null":
		return Line{}, nil, fmt.Errorf("%w: \"data\" is null: give the payload as an object ({} for none), or leave \"data\" out", ErrInvalid)
	}
	return l, s, nil
}

// lineData checks a line's payload against its schema and returns the bytes to store.
func lineData(s *schema, t Type, v int, data []byte, verbatim bool) ([]byte, error) {
	up, err := s.upgrade(t, v, data)
	if err != nil {
		return nil, err
	}
	if verbatim && t == TypeDecision && checkDecisionFast(up) {
		// Kept as it is, a decision is only checked, not built: most of an export's bytes.
		return append([]byte(nil), data...), nil
	}
	p, fast := decodeFast(t, up, nil)
	if !fast {
		p = s.new()
		if err := decodeStrict(up, p); err != nil {
			return nil, fmt.Errorf("%w: %s data: %v", ErrInvalid, t, err)
		}
	}
	if err := validateDecoded(p, fast); err != nil {
		return nil, fmt.Errorf("%w: %s data: %v", ErrInvalid, t, err)
	}
	if rs, ok := p.(*RulesSnapshot); ok {
		if err := rs.checkBlobSums(); err != nil {
			return nil, fmt.Errorf("%w: %s data: %v", ErrInvalid, t, err)
		}
	}
	switch {
	case verbatim:
		return append([]byte(nil), data...), nil
	case v == s.current:
		return canonicalJSON(p)
	default:
		return Canonicalize(data)
	}
}
