package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

var testTask = uuid.MustParse("6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e")

// sealed builds a chained sequence of events the way the store would.
func sealed(t testing.TB, payloads ...Payload) []Event {
	t.Helper()
	ids := NewIDSource(rand.New(rand.NewSource(1)))
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var prev Hash
	var out []Event
	for i, p := range payloads {
		e, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		e.Task, e.Seq, e.Turn, e.Time = testTask, uint64(i+1), 1, at.Add(time.Duration(i)*time.Millisecond)
		if e.ID, err = ids.New(e.Time); err != nil {
			t.Fatal(err)
		}
		e.Seal(prev)
		prev = e.Hash
		out = append(out, e)
	}
	return out
}

func sampleLog(t testing.TB) []Event {
	return sealed(t,
		&TaskStarted{Roots: []string{"/ws"}, Runtime: Runtime{Name: "cline", Version: "3.51.0"}, Config: json.RawMessage(`{"tool_turns": 2, "max_paths": 50}`)},
		&UserMessage{Text: "Add a <Button> under apps/web & test it"},
		&Mention{Path: "/apps/web/src/App.tsx", Resolved: "apps/web/src/App.tsx"},
		&ToolCall{Tool: "write_to_file", ID: "toolu_1", Params: json.RawMessage(`{"path":"apps/web/a.tsx","content":"x","n":12345678901234567890}`)},
		&TabSnapshot{Open: []string{"a.ts"}},
		&FileWrite{Path: "apps/web/a.tsx", Op: OpCreate},
		&SettingsChanged{Mode: "plan"},
		&RuleToggled{Rule: "cline:.clinerules/a.md", Enabled: false},
	)
}

func TestBinaryRoundTrip(t *testing.T) {
	for _, e := range sampleLog(t) {
		for _, origin := range []*Origin{nil, {File: "ui_messages.json", Record: 7}} {
			e.Origin = origin
			e.Seal(e.Prev)
			b, _ := e.MarshalBinary()
			var got Event
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			b2, _ := got.MarshalBinary()
			if !bytes.Equal(b, b2) {
				t.Errorf("%s: re-encoding differs", e)
			}
			if got.ComputeHash() != e.Hash || got.Hash != e.Hash {
				t.Errorf("%s: hash not preserved", e)
			}
			if !got.Time.Equal(e.Time) || got.Time.Location() != time.UTC {
				t.Errorf("%s: time %v, want %v in UTC", e, got.Time, e.Time)
			}
		}
	}
}

func TestZeroTimeStaysZero(t *testing.T) {
	e := sampleLog(t)[1]
	e.Time = time.Time{}
	e.Seal(Hash{})
	b, _ := e.MarshalBinary()
	var got Event
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !got.Time.IsZero() {
		t.Errorf("time = %v, want zero", got.Time)
	}
}

func TestHashCoversEveryField(t *testing.T) {
	base := sampleLog(t)[3]
	h := base.ComputeHash()
	mutations := map[string]func(*Event){
		"task":   func(e *Event) { e.Task[0] ^= 1 },
		"seq":    func(e *Event) { e.Seq++ },
		"id":     func(e *Event) { e.ID[15] ^= 1 },
		"turn":   func(e *Event) { e.Turn++ },
		"time":   func(e *Event) { e.Time = e.Time.Add(time.Nanosecond) },
		"type":   func(e *Event) { e.Type = TypeFileWrite },
		"v":      func(e *Event) { e.V++ },
		"origin": func(e *Event) { e.Origin = &Origin{File: "x", Record: 0} },
		"prev":   func(e *Event) { e.Prev[0] ^= 1 },
		"data":   func(e *Event) { e.Data = append(append([]byte(nil), e.Data...), ' ') },
	}
	for name, mutate := range mutations {
		e := base
		mutate(&e)
		if e.ComputeHash() == h {
			t.Errorf("changing %s does not change the hash", name)
		}
	}
}

func TestUnmarshalRejectsEveryTruncation(t *testing.T) {
	e := sampleLog(t)[3]
	e.Origin = &Origin{File: "f", Record: 3}
	b, _ := e.MarshalBinary()
	for n := 0; n < len(b); n++ {
		var got Event
		if err := got.UnmarshalBinary(b[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("prefix of %d/%d bytes: err = %v, want ErrCorrupt", n, len(b), err)
		}
	}
	var got Event
	if err := got.UnmarshalBinary(append(b, 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("trailing byte: err = %v, want ErrCorrupt", err)
	}
	bad := append([]byte{9}, b[1:]...)
	if err := got.UnmarshalBinary(bad); !errors.Is(err, ErrCorrupt) {
		t.Errorf("unknown format: err = %v, want ErrCorrupt", err)
	}
}

func TestPayloadDecoding(t *testing.T) {
	mention := func(v int, data string) Event {
		return Event{Seq: 4, Type: TypeMention, V: v, Data: []byte(data)}
	}
	tests := []struct {
		name    string
		ev      Event
		want    Payload
		wantErr error
		inErr   string
	}{
		{"current", mention(2, `{"path":"/a.ts","resolved":"a.ts"}`), &Mention{Path: "/a.ts", Resolved: "a.ts"}, nil, ""},
		{"v1 upgraded", mention(1, `{"path":"src/a.ts"}`), &Mention{Path: "src/a.ts", Resolved: "src/a.ts"}, nil, ""},
		{"newer version", mention(3, `{"path":"a"}`), nil, ErrNewerVersion, "seq 4 (mention)"},
		{"version zero", mention(0, `{"path":"a"}`), nil, ErrInvalid, "seq 4"},
		{"unknown type", Event{Seq: 9, Type: "telepathy", V: 1, Data: []byte(`{}`)}, nil, ErrUnknownType, `seq 9 (telepathy)`},
		{"unknown field", mention(2, `{"path":"a","colour":"red"}`), nil, ErrInvalid, "colour"},
		{"invalid payload", mention(2, `{"path":""}`), nil, ErrInvalid, "path is empty"},
		{"bad v1 upgrade", mention(1, `{"path":"a","x":1}`), nil, nil, "upgrade mention v1 to v2"},
		{"not json", Event{Seq: 2, Type: TypeUserMessage, V: 1, Data: []byte(`{"text":`)}, nil, ErrInvalid, "seq 2 (user_message)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ev.Payload()
			if tt.want != nil {
				if err != nil {
					t.Fatal(err)
				}
				if g, w := mustJSON(t, got), mustJSON(t, tt.want); g != w {
					t.Fatalf("got %s, want %s", g, w)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %v, want an error", got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.inErr) {
				t.Errorf("err = %q, want it to mention %q", err, tt.inErr)
			}
		})
	}
}

func TestNewIsCanonical(t *testing.T) {
	a, err := New(&ToolCall{Tool: "Edit", Params: json.RawMessage(`{ "b": 1, "a": "<x>" }`)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(&ToolCall{Tool: "Edit", Params: json.RawMessage(`{"a":"<x>","b":1}`)})
	if !bytes.Equal(a.Data, b.Data) {
		t.Errorf("equal payloads encode differently: %s vs %s", a.Data, b.Data)
	}
	if want := `{"tool":"Edit","params":{"a":"<x>","b":1}}`; string(a.Data) != want {
		t.Errorf("data = %s, want %s", a.Data, want)
	}
	for _, p := range []Payload{
		&ToolCall{Tool: "x", Params: json.RawMessage(`[1]`)},
		&ToolCall{Params: json.RawMessage(`{}`)},
		&FileWrite{Path: "a", Op: "rename"},
		&SettingsChanged{Mode: "yolo"},
		&TaskStarted{Roots: []string{""}},
		&Decision{},
	} {
		if _, err := New(p); !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%T %+v) err = %v, want ErrInvalid", p, p, err)
		}
	}
}

func TestIDSourceIsMonotonic(t *testing.T) {
	ids := NewIDSource(nil)
	at := time.Now()
	prev, _ := ids.New(at)
	for range 10000 {
		id, err := ids.New(at)
		if err != nil {
			t.Fatal(err)
		}
		if id.Compare(prev) <= 0 {
			t.Fatalf("id %s not after %s", id, prev)
		}
		prev = id
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDecisionHead(t *testing.T) {
	ev, err := New(&Decision{Turn: 3, Snapshot: 7, Engine: "rules/1", Included: []RuleOutcome{{ID: "a", Name: "a", Reason: "always"}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := Head(ev)
	if err != nil || h.Turn != 3 || h.Snapshot != 7 || h.Base != 0 || h.Engine != "rules/1" {
		t.Errorf("Head = %+v, %v", h, err)
	}
	delta, err := New(&Decision{Turn: 4, Snapshot: 7, Base: 12, Engine: "rules/1"})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := Head(delta); err != nil || h != (DecisionHead{Turn: 4, Snapshot: 7, Base: 12, Engine: "rules/1"}) {
		t.Errorf("Head of a delta = %+v, %v", h, err)
	}
	// Keys out of the canonical order (a hand-written import keeps its bytes): read whole.
	odd := Event{Type: TypeDecision, V: 2, Data: []byte(`{"turn":2,"snapshot":5,"engine":"e","base":3,"context":[],"included":[],"excluded":[]}`)}
	if h, err := Head(odd); err != nil || h != (DecisionHead{Turn: 2, Snapshot: 5, Base: 3, Engine: "e"}) {
		t.Errorf("Head of a decision with its keys in another order = %+v, %v", h, err)
	}
	for _, tt := range []struct {
		data string
		want DecisionHead
	}{
		{`{"turn":12,"snapshot":0,"base":7,"engine":"e"}`, DecisionHead{Turn: 12, Base: 7, Engine: "e"}},
		{`{"turn":3,"snapshot":99,"engine":"e","context":[]}`, DecisionHead{Turn: 3, Snapshot: 99, Engine: "e"}},
		{`{"snapshot":5,"turn":2,"engine":"e"}`, DecisionHead{Turn: 2, Snapshot: 5, Engine: "e"}},
		{`{"turn":3,"snapshot":9,"engine":"r\u0075les/1"}`, DecisionHead{Turn: 3, Snapshot: 9, Engine: "rules/1"}},
		{`{"turn":2,"snapshot":5,"base":3.0}`, DecisionHead{}},
	} {
		h, err := Head(Event{Type: TypeDecision, V: 2, Data: []byte(tt.data)})
		if tt.want == (DecisionHead{}) {
			if err == nil {
				t.Errorf("Head(%s) = %+v, want an error", tt.data, h)
			}
			continue
		}
		if err != nil || h != tt.want {
			t.Errorf("Head(%s) = %+v, %v, want %+v", tt.data, h, err, tt.want)
		}
	}
	v1 := Event{Type: TypeDecision, V: 1, Data: []byte(`{"turn":2,"snapshot":5,"engine":"rules/1","context":[],"included":[],"excluded":[]}`)}
	if h, err := Head(v1); err != nil || h != (DecisionHead{Turn: 2, Snapshot: 5, Engine: "rules/1"}) {
		t.Errorf("Head of a v1 decision = %+v, %v", h, err)
	}
	for _, bad := range []Event{
		{Type: TypeDecision, V: 1, Data: []byte(`{"turn":0}`)},
		{Type: TypeDecision, V: 1, Data: []byte(`{"turn":`)},
		{Type: TypeDecision, V: 3, Data: []byte(`{"turn":1}`)},
		{Type: TypeUserMessage, V: 1, Data: []byte(`{"text":""}`)},
	} {
		if _, err := Head(bad); err == nil {
			t.Errorf("Head(%s %s) accepted", bad.Type, bad.Data)
		}
	}
}

// ComputeHash is SHA-256 over the encoding without the hash, whether the event fits the stack
// buffer or its data is hashed where it lies.
func TestComputeHashOfEverySize(t *testing.T) {
	for _, n := range []int{0, 1, 300, 400, 420, 440, 460, 511, 512, 513, 4096, 45000} {
		for _, origin := range []*Origin{nil, {File: strings.Repeat("f", 600), Record: 3}} {
			e := Event{Task: uuid.New(), Seq: 300, Turn: 2, Type: TypeToolCall, V: 1, Origin: origin,
				Time: time.Unix(1, 2), Data: []byte(strings.Repeat("x", n)), Prev: Hash{9}}
			if got, want := e.ComputeHash(), Hash(sha256.Sum256(e.appendUnhashed(nil))); got != want {
				t.Errorf("%d bytes of data, origin %v: ComputeHash %s, want %s", n, origin != nil, got, want)
			}
		}
	}
}
