package agentlog

import (
	"testing"

	"github.com/tasklog/tasklog/events"
)

func TestStripHookContext(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Add a route.", "Add a route."},
		{"<hook_context>rules</hook_context>\n\nAdd a route.", "Add a route."},
		{"<hook_context>a</hook_context>\n\n<hook_context>b</hook_context>\n\nAdd a route.", "Add a route."},
		{"<hook_context>never closed\n\nAdd a route.", "<hook_context>never closed\n\nAdd a route."},
		{"Add <hook_context>x</hook_context> here.", "Add <hook_context>x</hook_context> here."},
	}
	for _, tt := range tests {
		if got := stripHookContext(tt.in); got != tt.want {
			t.Errorf("stripHookContext(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestGeminiDetected: Gemini CLI's payloads are recognised whatever agent the hook was installed
// for, by its own event names or by its transcript; Claude Code's are not taken for them.
func TestGeminiDetected(t *testing.T) {
	tests := []struct {
		name    string
		hint    Agent
		payload string
		want    Agent
	}{
		{"SessionStart by its transcript", ClaudeCode, `{"session_id":"s","hook_event_name":"SessionStart","cwd":"/w",
			"transcript_path":"/home/dev/.gemini/tmp/w/chats/session-1.jsonl","source":"startup"}`, Gemini},
		{"AfterTool by its name", ClaudeCode, `{"session_id":"s","hook_event_name":"AfterTool","cwd":"/w","tool_name":"read_file","tool_input":{}}`, Gemini},
		{"SessionEnd by the hint", Gemini, `{"session_id":"s","hook_event_name":"SessionEnd","cwd":"/w"}`, Gemini},
		{"Claude's SessionStart", ClaudeCode, `{"session_id":"s","hook_event_name":"SessionStart","cwd":"/w",
			"transcript_path":"/home/dev/.claude/projects/-w/s.jsonl"}`, ClaudeCode},
		{"Claude's PreToolUse under the gemini hint", Gemini, `{"session_id":"s","hook_event_name":"PreToolUse","cwd":"/w",
			"tool_name":"Read","tool_input":{},"tool_use_id":"toolu_1","transcript_path":"/home/dev/.claude/projects/-w/s.jsonl"}`, Gemini},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHook(tt.hint, []byte(tt.payload))
			if err != nil {
				t.Fatal(err)
			}
			if h.Agent != tt.want {
				t.Errorf("agent %s, want %s", h.Agent, tt.want)
			}
		})
	}
}

// TestGeminiToolKey: without a call id, a call is keyed by its tool, input and the event's
// timestamp: the same payload twice records one call; the same call made again later, two.
func TestGeminiToolKey(t *testing.T) {
	payload := func(ts string) []byte {
		return []byte(`{"session_id":"s","hook_event_name":"AfterTool","cwd":"/w","timestamp":"` + ts + `",
			"tool_name":"read_file","tool_input":{"file_path":"/w/a.ts"},"tool_response":{"llmContent":"a","returnDisplay":""}}`)
	}
	id := func(p []byte) string {
		t.Helper()
		h, err := ParseHook(Gemini, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Records) != 1 {
			t.Fatalf("%d records, want the call alone", len(h.Records))
		}
		return h.Records[0].Payload.(*events.ToolCall).ID
	}
	first := id(payload("2026-12-03T12:20:09.572Z"))
	if again := id(payload("2026-12-03T12:20:09.572Z")); again != first {
		t.Errorf("the same payload twice: ids %s and %s", first, again)
	}
	if later := id(payload("2026-12-03T12:20:11.002Z")); later == first {
		t.Errorf("the same call made again later has the first call's id %s", first)
	}
}
