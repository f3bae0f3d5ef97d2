package session

import (
	"context"
	"strings"
	"testing"
)

const scriptStart = `{"type":"task_started","task":"7e7e7e7e-0000-4000-8000-000000000001","data":{"roots":["/ws"]}}` + "\n"

func TestRunScript(t *testing.T) {
	s, err := RunScript(context.Background(), openDB(t), strings.NewReader(scriptStart+
		`{"type":"user_message","data":{"text":"edit apps/web/a.ts"}}`+"\n"+
		`{"type":"turn","time":"2026-12-01T10:00:00Z"}`+"\n"+
		`{"type":"turn"}`+"\n"), "s.jsonl", ScriptOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Task().String() != "7e7e7e7e-0000-4000-8000-000000000001" || s.Turn() != 3 || s.Version() != 5 {
		t.Errorf("task %s, next turn %d, %d events; want the script's task, turn 3, 5 events", s.Task(), s.Turn(), s.Version())
	}
}

func TestRunScriptErrorsNameTheLine(t *testing.T) {
	tests := []struct{ name, line, want string }{
		{"unknown type", `{"type":"telepathy","data":{}}`, `s.jsonl:2: unknown event type "telepathy"`},
		{"typo on a turn line", `{"type":"turn","tme":"2026-12-01T10:00:00Z"}`, `s.jsonl:2: invalid event: json: unknown field "tme"`},
		{"bad turn time", `{"type":"turn","time":"yesterday"}`, `s.jsonl:2: turn time:`},
		{"turn time a log cannot keep", `{"type":"turn","time":"2300-01-01T00:00:00Z"}`,
			`s.jsonl:2: invalid event: turn time "2300-01-01T00:00:00Z" is outside what a log keeps (1677 to 2262)`},
		{"truncated line", `{"type":"user_message","data":{"text":"hi`, `s.jsonl:2: invalid event: unexpected EOF`},
		{"closing line of an export", `{"end":"7e7e7e7e-0000-4000-8000-000000000001","events":1,"last":"` + strings.Repeat("ab", 32) + `"}`,
			`s.jsonl:2: invalid event: a blob or closing line belongs to an export`},
		{"reserved type", `{"type":"decision","data":{"turn":1}}`, `s.jsonl:2: record decision: event type is written by the session itself`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RunScript(context.Background(), openDB(t), strings.NewReader(scriptStart+tt.line+"\n"), "s.jsonl", ScriptOptions{})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to start with %q", err, tt.want)
			}
		})
	}
}
