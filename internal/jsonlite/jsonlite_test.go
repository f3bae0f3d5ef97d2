package jsonlite

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// seeds are hook payloads and replies as the agents and the server write them, and the edge
// cases of the grammar.
var seeds = []string{
	`{"session_id":"s1","cwd":"/ws","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/ws/src/a.ts"},"tool_use_id":"toolu_1"}`,
	"{\n  \"hookName\": \"PreToolUse\",\n  \"taskId\": \"t\",\n  \"preToolUse\": {\"toolName\": \"read_file\", \"parameters\": {\"path\": \"a b.ts\"}}\n}\n",
	`{"id":2,"result":{"reply":"{\"hookSpecificOutput\":{\"additionalContext\":\"<tasklog-rules>\\n…\\u2028\"}}\n","task":"x"}}`,
	`{"id":1,"error":{"code":"bad_request","message":"no agent"}}`,
	`[1,-0,0.5,1e3,-1.5E-2,true,false,null,"",{},[]]`,
	`"\ud83d\ude00 \ud800 \udc00 \ud800\u0041 \u00e9 \/ \b\f\n\r\t"`,
	"\"invalid \xff utf-8 \xe2\x80\"",
	`{"a":1,"a":2}`, `1e999`, `01`, `1.`, `-`, `.5`, `[1,]`, `{"a" 1}`, `{,}`, `tru`, `nul`, `"\x"`,
	"\"ctl \x01\"", `"\u12"`, "  \t\r\n 7 \n", `{"a":[{"b":{"c":[null]}}]}`, `[`, `]`, ``, ` `,
	`{"":00`, `{"a":1 2}`, `[1 2]`, `{"a":1}}`, `[[1],[2]`, `{"a":{"b":1},"c":[true,{}]}`,
}

func FuzzAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000)))
	f.Add([]byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", data, got, want)
		}
		var want bytes.Buffer
		wantErr := json.Compact(&want, data)
		got, err := Compact([]byte("prefix"), data)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("Compact(%q): error %v, json.Compact's %v", data, err, wantErr)
		}
		if err == nil && string(got) != "prefix"+want.String() {
			t.Fatalf("Compact(%q) = %q, json.Compact %q", data, got, want.String())
		}
		if err != nil && string(got) != "prefix" {
			t.Fatalf("Compact(%q) failed and changed dst: %q", data, got)
		}
		var wantV any
		wantErr = json.Unmarshal(data, &wantV)
		v, err := Parse(data)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("Parse(%q): error %v, json.Unmarshal's %v", data, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(v, wantV) {
			t.Fatalf("Parse(%q) = %#v, json.Unmarshal %#v", data, v, wantV)
		}
		if s, ok := wantV.(string); ok {
			var back string
			if err := json.Unmarshal(Quote(nil, s), &back); err != nil || back != s {
				t.Fatalf("Quote(%q) = %s: reads back as %q, %v", s, Quote(nil, s), back, err)
			}
		}
	})
}

// Quote writes what json.Unmarshal reads back as the same string, for text that is valid UTF-8,
// and U+FFFD for each byte that is not.
func TestQuote(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain", "plain"},
		{"quote \" backslash \\ newline \n tab \t nul \x00 bell \x07", "quote \" backslash \\ newline \n tab \t nul \x00 bell \x07"},
		{"é 😀 \u2028", "é 😀 \u2028"},
		{"bad \xff byte", "bad \ufffd byte"},
		{"", ""},
	} {
		var got string
		q := Quote(nil, tt.in)
		if err := json.Unmarshal(q, &got); err != nil || got != tt.want {
			t.Errorf("Quote(%q) = %s, reads back as %q (%v); want %q", tt.in, q, got, err, tt.want)
		}
	}
}
