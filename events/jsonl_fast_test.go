package events

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// checkLineFastAgrees fails when decodeLineFast accepts a line that encoding/json reads
// otherwise or refuses, and returns whether it accepted.
func checkLineFastAgrees(t *testing.T, raw []byte) bool {
	t.Helper()
	var fast jsonLine
	if !decodeLineFast(raw, &fast) {
		return false
	}
	var slow jsonLine
	if err := decodeStrict(raw, &slow); err != nil {
		t.Fatalf("%q: decodeLineFast accepted what encoding/json refuses: %v", raw, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q:\nfast %#v\njson %#v", raw, fast, slow)
	}
	return true
}

// exportLine is the export line of a sealed tool call, with an origin or not.
func exportLine(t *testing.T, origin *Origin) string {
	t.Helper()
	ev, err := New(&ToolCall{Tool: "Read", ID: "toolu_1", Params: []byte(`{"file_path":"/w/a \"b\".ts","n":[1,-2.5e+3,true,null]}`)})
	if err != nil {
		t.Fatal(err)
	}
	ev.Task, ev.Seq, ev.Turn, ev.Origin = uuid.MustParse("b16b16b1-0000-4000-8000-000000000001"), 7, 2, origin
	ev.Time = time.Date(2026, 12, 1, 0, 0, 0, 123, time.UTC)
	if ev.ID, err = ParseID("01KBB0000000000000000000AA"); err != nil {
		t.Fatal(err)
	}
	ev.Seal(Hash{1, 2, 3})
	line, err := MarshalJSONLine(ev)
	if err != nil {
		t.Fatal(err)
	}
	return string(line)
}

// The fast envelope reads every line an export writes, and reads exactly what encoding/json
// reads; anything else it leaves to encoding/json, which gives the error it always gave.
func TestDecodeLineFastReadsWhatEncodingJSONReads(t *testing.T) {
	plain := exportLine(t, nil)
	withOrigin := exportLine(t, &Origin{File: "a.jsonl", Record: 3})
	for _, line := range []string{plain, withOrigin} {
		if !checkLineFastAgrees(t, []byte(line)) {
			t.Errorf("%s: an export line was not read fast", line)
		}
		if _, err := ParseLine([]byte(line)); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
	tests := []struct {
		line string
		fast bool
	}{
		{`{"type":"user_message","data":{"text":"hi"}}`, true},
		{` { "turn" : 3 , "type":"user_message" } `, true},
		{`{"type":"user_message","data":{"text":"hi"},"seq":18446744073709551615}`, true},
		{`{"type":"user_message","origin":{}}`, true},
		{`{"type":"user_message","seq":18446744073709551616}`, false}, // too large: encoding/json says so
		{`{"type":"user_message","turn":-1}`, false},
		{`{"type":"user_message","turn":01}`, false},
		{`{"type":"user_message","turn":1.0}`, false},
		{`{"type":"user_message","turn":1e1}`, false},
		{`{"type":"user_message","turn":"1"}`, false},
		{`{"Type":"user_message"}`, false},
		{`{"type":"user_\u006dessage"}`, false},
		{`{"type":"user_message","extra":1}`, false},
		{`{"type":"user_message","type":"mention"}`, false},
		{`{"type":null}`, false},
		{`{"type":"user_message","origin":null}`, false},
		{`{"type":"user_message","origin":{"file":"a","extra":1}}`, false},
		{`{"type":"user_message","origin":{"File":"a"}}`, true}, // read as encoding/json reads an origin
		{`{"type":"user_message","data":{"text":"hi"}}x`, false},
		{`{"type":"user_message","data":{"text":"hi"},}`, false},
		{`{"type":"user_message","data":{"text":"hi",}}`, false},
		{`{"type":"user_message","data":{"text":"\x"}}`, false},
		{`{"type":"user_message","data":[01]}`, false},
		{`{"type":"user_message","data":tru}`, false},
		{`{"type":"user_message","data":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, false},
		{"{\"type\":\"user_message\",\"time\":\"caf\xc3\xa9\"}", false},
		{`[]`, false},
		{``, false},
	}
	for _, tt := range tests {
		if got := checkLineFastAgrees(t, []byte(tt.line)); got != tt.fast {
			t.Errorf("%.80s: read fast %v, want %v", tt.line, got, tt.fast)
		}
	}
}

// Whatever line decodeLineFast reads, it reads as encoding/json does.
func FuzzParseLineFast(f *testing.F) {
	f.Add([]byte(`{"type":"user_message","data":{"text":"hi"}}`))
	f.Add([]byte(`{"type":"tool_call","turn":2,"data":{"tool":"Read","params":{"a":[1,2]}}}`))
	f.Add([]byte(`{"type":"user_message","origin":{"file":"a","record":2}}`))
	f.Add([]byte(`{"type":"user_message","seq":1,"data":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast jsonLine
		if !decodeLineFast(raw, &fast) {
			return
		}
		var slow jsonLine
		if err := decodeStrict(raw, &slow); err != nil {
			t.Fatalf("%q: accepted fast, refused by encoding/json: %v", raw, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %#v\njson %#v", raw, fast, slow)
		}
	})
}
