package events

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// fastTypes are the types decodeFast reads; the others always go to encoding/json.
var fastTypes = []Type{TypeToolCall, TypeFileWrite, TypeUserMessage, TypeMention, TypeTabSnapshot,
	TypeSettingsChanged, TypeRuleToggled, TypeRuleTriggered, TypeDecision}

// checkFastAgrees fails when decodeFast accepts data that encoding/json reads otherwise or
// refuses. It returns whether decodeFast accepted.
func checkFastAgrees(t *testing.T, typ Type, data []byte) bool {
	t.Helper()
	var d Decoder
	fast, ok := decodeFast(typ, data, nil)
	reused, reusedOK := decodeFast(typ, data, &d)
	if ok != reusedOK {
		t.Fatalf("%s %q: read %v alone, %v with a Decoder", typ, data, ok, reusedOK)
	}
	if !ok {
		return false
	}
	slow := schemas[typ].new()
	if err := decodeStrict(data, slow); err != nil {
		t.Fatalf("%s %q: decodeFast accepted what encoding/json refuses: %v", typ, data, err)
	}
	if !reflect.DeepEqual(fast, slow) || !reflect.DeepEqual(reused, slow) {
		t.Fatalf("%s %q:\nfast %#v\nwith a Decoder %#v\njson %#v", typ, data, fast, reused, slow)
	}
	return true
}

func TestDecodeFastReadsWhatEncodingJSONReads(t *testing.T) {
	canonical := []Payload{
		&ToolCall{Tool: "read_file", ID: "toolu_01", Params: json.RawMessage(`{"path":"src/a.ts","n":[1,-2.5e+3,true,null,{"x":"é\u00e9\n"}]}`)},
		&ToolCall{Tool: "Bash", Params: json.RawMessage(`{"command":"cat a\tb"}`), Cwd: "/w/sub", Failed: true,
			Guesses: []Guess{{Path: "a/b.go", Confirmed: true, Why: "exists"}, {Path: "c.go", Why: "not_found"}}},
		&ToolCall{Tool: "x", Params: json.RawMessage(`{}`), Guesses: []Guess{}},
		&FileWrite{Path: "/w/\"quoted\" \\ name.go", Op: OpEdit},
		&UserMessage{Text: "fix <src/a.ts> & ünïcode \u2028 \x01"},
		&UserMessage{Text: "", Guesses: []Guess{{Path: "a", Why: "mention"}}},
		&Mention{Path: "/src/a.ts", Resolved: "/w/src/a.ts"},
		&TabSnapshot{Open: []string{"/w/a", "/w/b"}, Visible: []string{}},
		&SettingsChanged{Mode: "plan", Model: "m"},
		&RuleToggled{Rule: "cline:/w/.clinerules/a.md", Enabled: true},
		&RuleTriggered{Rule: "r", Name: "n", Source: "s", Match: "m"},
	}
	for _, p := range canonical {
		ev, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		if !checkFastAgrees(t, ev.Type, ev.Data) {
			t.Errorf("%s %s: the canonical encoding was not read by decodeFast", ev.Type, ev.Data)
		}
	}
	tests := []struct {
		typ  Type
		data string
		fast bool // whether decodeFast reads it (else encoding/json does)
	}{
		{TypeFileWrite, ` { "path" : "a" ,	"op":"edit" } ` + "\n", true},
		{TypeFileWrite, `{"path":"a\u0062","op":"edit"}`, true},
		{TypeFileWrite, "{\"path\":\"\xff\xfe\",\"op\":\"edit\"}", true}, // invalid UTF-8 becomes U+FFFD
		{TypeFileWrite, `{"path":"\ud800","op":"edit"}`, true},
		{TypeFileWrite, `{"Path":"a","op":"edit"}`, false}, // case-insensitive match
		{TypeFileWrite, `{"path":"a","path":"b","op":"edit"}`, false},
		{TypeFileWrite, `{"path":null,"op":"edit"}`, false},
		{TypeFileWrite, `{"path":"a","op":"edit"}]`, false}, // the decoder stops at the value
		{TypeFileWrite, `{"path":"a","op":"edit"}x`, false},
		{TypeFileWrite, `{"p\u0061th":"a","op":"edit"}`, false},
		{TypeFileWrite, `{"path":"a","op":"edit",}`, false},
		{TypeFileWrite, `{"path":"a","extra":1}`, false},
		{TypeFileWrite, `{"path":1,"op":"edit"}`, false},
		{TypeToolCall, `{"tool":"t","params":null}`, false},
		{TypeToolCall, `{"tool":"t","params":[1]}`, false},
		{TypeToolCall, `{"tool":"t","params":{"a":01}}`, false},
		{TypeToolCall, `{"tool":"t","params":{"a":1.}}`, false},
		{TypeToolCall, `{"tool":"t","params":{"a":"` + "\x1f" + `"}}`, false},
		{TypeToolCall, `{"tool":"t","params":{"a":"\x"}}`, false},
		{TypeToolCall, `{"tool":"t","params":{"a":[1,]}}`, false},
		{TypeToolCall, `{"tool":"t","params":{"a" : [ 1 , {"b" : -0.5E-2} ] }}`, true},
		{TypeToolCall, `{"tool":"t","params":{},"guesses":[{"path":"a","path":"b"}]}`, false},
		{TypeToolCall, `{"tool":"t","params":{},"guesses":[{"path":"a"}],"failed":false}`, true},
		{TypeToolCall, `{"tool":"t","params":{},"guesses":[null]}`, false},
		{TypeToolCall, `{"tool":"t","failed":"yes","params":{}}`, false},
		{TypeTabSnapshot, `{"open":["a",null]}`, false},
		{TypeTabSnapshot, `{}`, true},
		{TypeRuleToggled, `{"rule":"r","enabled":tru}`, false},
		{TypeUserMessage, `{"text":"a"`, false},
		{TypeUserMessage, ``, false},
	}
	for _, tt := range tests {
		if got := checkFastAgrees(t, tt.typ, []byte(tt.data)); got != tt.fast {
			t.Errorf("%s %q: decodeFast read it: %v, want %v", tt.typ, tt.data, got, tt.fast)
		}
	}
}

// TestDecodeFastDeepNesting: params nested deeper than maxFastDepth go to encoding/json.
func TestDecodeFastDeepNesting(t *testing.T) {
	deep := func(n int) []byte {
		b := []byte(`{"tool":"t","params":`)
		for range n {
			b = append(b, `{"a":`...)
		}
		b = append(b, '1')
		for range n {
			b = append(b, '}')
		}
		return append(b, '}')
	}
	if !checkFastAgrees(t, TypeToolCall, deep(maxFastDepth)) {
		t.Errorf("nesting of %d was not read", maxFastDepth)
	}
	if checkFastAgrees(t, TypeToolCall, deep(maxFastDepth+2)) {
		t.Errorf("nesting of %d was read", maxFastDepth+2)
	}
}

func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{
		`{"tool":"read_file","id":"x","params":{"path":"a","n":[1,2.5e3,null,true,false,{}]},"cwd":"c","failed":true,"guesses":[{"path":"a","confirmed":true,"why":"exists"}]}`,
		`{"path":"a","op":"edit"}`, `{"text":"a\u00e9\n","guesses":[]}`, `{"open":["a"],"visible":[]}`,
		`{"mode":"act","provider":"p","model":"m"}`, `{"rule":"r","enabled":false}`,
		`{"rule":"r","name":"n","source":"s","match":"m"}`, `{"path":"/a","resolved":"/w/a"}`,
		`{"tool":"t","params":{"a":-0.0e-0}} `, `{"Tool":"t"}`, "{\"text\":\"\xff\"}",
		`{"turn":2,"snapshot":3,"base":1,"engine":"e","mode":"act","context":[{"path":"a.ts","root":"/w","sources":[{"kind":"tool_call","seq":4,"turn":2,"detail":"Read"}]}],` +
			`"gone":[{"path":"b.ts"}],"dropped":[{"name":"cap","n":1}],"included":[{"id":"r","name":"r","category":"scoped","reason":"matched",` +
			`"matched":[{"condition":"paths","pattern":"**/*.ts","path":"a.ts","root":"/w"}]}],"excluded":[],"removed":["q"],"diagnostics":[{"line":3,"message":"m"}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		for _, typ := range fastTypes {
			checkFastAgrees(t, typ, []byte(data))
		}
		s := fastScanner{b: []byte(data)}
		if s.value(0) && s.end() && !json.Valid([]byte(data)) {
			t.Fatalf("the scanner accepts %q, which json.Valid refuses", data)
		}
	})
}

// TestDecoderReusesAndCopies: a Decoder gives what Event.Payload gives, event after event, with
// tool names interned; Event.Payload's payload shares no bytes with the event.
func TestDecoderReusesAndCopies(t *testing.T) {
	var d Decoder
	payloads := []Payload{
		&ToolCall{Tool: "read_file", Params: json.RawMessage(`{"path":"a.ts"}`)},
		&FileWrite{Path: "a.ts", Op: OpCreate},
		&ToolCall{Tool: "read_file", ID: "2", Params: json.RawMessage(`{"path":"b.ts"}`), Failed: true},
		&ToolCall{Tool: "Read", Params: json.RawMessage(`{"file_path":"/w/c.ts"}`)},
		&ToolCall{Tool: "read_file", Params: json.RawMessage(`{"path":"d.ts"}`)},
		&Decision{Turn: 1, Engine: "e", Context: []ContextPath{}, Included: []RuleOutcome{}, Excluded: []RuleOutcome{}},
	}
	var tools []string
	for _, p := range payloads {
		ev, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ev.Payload()
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Payload(ev)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: Decoder gave %#v, %v; want %#v", ev.Type, got, err, want)
		}
		if tc, ok := got.(*ToolCall); ok {
			tools = append(tools, tc.Tool)
		}
		if tc, ok := want.(*ToolCall); ok {
			data := append([]byte(nil), ev.Data...)
			clear(ev.Data)
			if string(tc.Params) != string(p.(*ToolCall).Params) {
				t.Fatalf("Event.Payload's params alias the event's data: %q after clearing it", tc.Params)
			}
			copy(ev.Data, data)
		}
	}
	if unsafe.StringData(tools[0]) != unsafe.StringData(tools[3]) {
		t.Errorf("the tool name read_file was not interned")
	}
	bad := Event{Type: TypeToolCall, V: 1, Data: []byte(`{"tool":"","params":{}}`)}
	_, want := bad.Payload()
	if _, err := d.Payload(bad); err == nil || err.Error() != want.Error() {
		t.Errorf("Decoder error %v, want %v", err, want)
	}
}

// TestHotReadsAllocateOnlyWhatTheyKeep: the reads every fold, verify and replay makes of each
// event allocate only what the caller keeps. A scanner or a string moved to the heap costs every
// event an allocation: a reader passed as a function value (as decisions and guesses use) moves
// the scanner, a variable handed to encoding/json on a slow path moves it on the fast path too.
func TestHotReadsAllocateOnlyWhatTheyKeep(t *testing.T) {
	event := func(p Payload) Event {
		ev, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	var d Decoder
	toolCall := event(&ToolCall{Tool: "Read", Params: json.RawMessage(`{"file_path":"/w/a.go"}`)})
	tabs := event(&TabSnapshot{Open: []string{"/w/a.go", "/w/b.go"}})
	decision := event(&Decision{Turn: 1, Snapshot: 1, Engine: "rules/4"})
	for _, c := range []struct {
		name string
		read func() error
		want float64
	}{
		// The tool name interned, the params pointing into the event's data: nothing.
		{"a tool call into a Decoder", func() error { _, err := d.Payload(toolCall); return err }, 0},
		// The two strings and the array, grown to one and then two.
		{"a tab snapshot of two paths into a Decoder", func() error { _, err := d.Payload(tabs); return err }, 4},
		// The engine's name.
		{"a decision's head", func() error { _, err := Head(decision); return err }, 1},
	} {
		if err := c.read(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n := testing.AllocsPerRun(20, func() { _ = c.read() }); n != c.want {
			t.Errorf("%s allocates %v times, want %v", c.name, n, c.want)
		}
	}
}

// TestAppendDataIsNewsData: AppendData appends exactly the bytes New gives, and NewInto makes New's
// event in the buffer it is given; both fail as New does.
func TestAppendDataIsNewsData(t *testing.T) {
	for _, p := range []Payload{
		&Decision{Turn: 3, Snapshot: 2, Engine: "e", Context: []ContextPath{{Path: "a.ts", Root: "/w"}},
			Included: []RuleOutcome{{ID: "r", Name: "r", Reason: "always"}}, Excluded: []RuleOutcome{}},
		&ToolCall{Tool: "t", Params: json.RawMessage(`{"b":1, "a":"<x>"}`)},
		&FileWrite{Path: "a", Op: OpEdit},
	} {
		ev, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendData([]byte("prefix"), p)
		if err != nil || string(got) != "prefix"+string(ev.Data) {
			t.Errorf("%s: AppendData gave %q, %v; want prefix%q", ev.Type, got, err, ev.Data)
		}
		buf := []byte(strings.Repeat("x", 4096))
		into, err := NewInto(buf, p)
		if err != nil || !reflect.DeepEqual(into, ev) {
			t.Errorf("%s: NewInto gave %+v, %v; want New's %+v", ev.Type, into, err, ev)
		}
		if &into.Data[0] != &buf[0] {
			t.Errorf("%s: NewInto did not write into the buffer it was given", ev.Type)
		}
	}
	bad := &FileWrite{Path: "a", Op: "rename"}
	_, want := New(bad)
	if _, err := AppendData(nil, bad); err == nil || err.Error() != want.Error() {
		t.Errorf("AppendData error %v, want %v", err, want)
	}
	if _, err := NewInto(nil, bad); err == nil || err.Error() != want.Error() {
		t.Errorf("NewInto error %v, want %v", err, want)
	}
}

// TestInternTypeKnowsEveryType: decoding an envelope allocates no type name for a known type.
func TestInternTypeKnowsEveryType(t *testing.T) {
	for _, typ := range Types() {
		b := []byte(typ)
		if got := internType(b); got != typ {
			t.Errorf("internType(%q) = %q", b, got)
		}
		if n := testing.AllocsPerRun(10, func() { _ = internType(b) }); n != 0 {
			t.Errorf("internType(%q) allocates %v times", b, n)
		}
	}
	if got := internType([]byte("future_type")); got != "future_type" {
		t.Errorf("an unknown type reads as %q", got)
	}
}
