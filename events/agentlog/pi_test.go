package agentlog

import "testing"

const piHeader = `{"type":"session","id":"s1","timestamp":"2025-11-20T23:33:50.805Z","cwd":"/Users/me/proj","provider":"anthropic","modelId":"claude-sonnet-4-5","thinkingLevel":"off"}`

func TestPi(t *testing.T) {
	tests := []lineCase{
		{
			name: "header, settings, user text with @mentions, one turn per assistant message",
			lines: []string{
				piHeader,
				`{"type":"message","timestamp":"2025-11-20T23:34:00Z","message":{"role":"user","content":[{"type":"text","text":"read @packages/a/src/main.ts and @~/notes.md in full"}],"timestamp":1763681640000}}`,
				`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"@packages/a/src/main.ts"}}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse","timestamp":1763681641000}}`,
				`{"type":"message","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"x"}],"isError":false}}`,
				`{"type":"thinking_level_change","timestamp":"2025-11-21T00:07:48.839Z","thinkingLevel":"minimal"}`,
			},
			want: []string{
				`task_started {"roots":["/Users/me/proj"],"runtime":{"name":"pi"}}`,
				`settings_changed {"provider":"anthropic","model":"claude-sonnet-4-5"}`,
				`user_message {"text":"read @packages/a/src/main.ts and @~/notes.md in full"}`,
				`mention {"path":"packages/a/src/main.ts","resolved":"/Users/me/proj/packages/a/src/main.ts"}`,
				`mention {"path":"~/notes.md","resolved":"/Users/me/notes.md"}`,
				"TURN",
				`tool_call {"tool":"read","id":"c1","params":{"path":"@packages/a/src/main.ts"}}`,
			},
			skip: map[string]int{"thinking_level_change": 1, "message:toolResult": 1},
		},
		{
			name: "edits write only when the result is not an error; a response that errored ran nothing",
			lines: []string{
				piHeader,
				`{"type":"message","message":{"role":"user","content":"go"}}`,
				`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"e1","name":"edit","arguments":{"path":"src/a.ts","oldText":"a","newText":"b"}},{"type":"toolCall","id":"e2","name":"edit","arguments":{"path":"@src/b.ts","oldText":"a","newText":"b"}}],"stopReason":"toolUse"}}`,
				`{"type":"message","message":{"role":"toolResult","toolCallId":"e1","toolName":"edit","isError":true}}`,
				`{"type":"message","message":{"role":"toolResult","toolCallId":"e2","toolName":"edit","isError":false}}`,
				`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"w1","name":"write","arguments":{"path":"/Users/me/proj/c.ts","content":"x"}}],"stopReason":"error"}}`,
			},
			typ:  "file_write",
			want: []string{`file_write {"path":"/Users/me/proj/src/b.ts","op":"edit"}`},
		},
		{
			name: "a command the user ran with ! is a tool call",
			lines: []string{
				piHeader,
				`{"type":"message","message":{"role":"bashExecution","command":"ls","output":"a","exitCode":2,"cancelled":false}}`,
			},
			typ:  "tool_call",
			want: []string{`tool_call {"tool":"bash","params":{"command":"ls","user":true},"failed":true}`},
		},
		{
			name: "oh-my-pi title line, model as provider/id, files inlined from the command line",
			lines: []string{
				`{"type":"title","v":1,"title":"x","pad":"   "}`,
				piHeader,
				`{"type":"model_change","model":"openai/gpt-5.1-codex"}`,
				`{"type":"message","message":{"role":"user","content":"<file name=\"/Users/me/proj/spec.md\">\nspec\n</file>\nimplement the spec"}}`,
			},
			want: []string{
				`task_started {"roots":["/Users/me/proj"],"runtime":{"name":"pi"}}`,
				`settings_changed {"provider":"anthropic","model":"claude-sonnet-4-5"}`,
				`settings_changed {"provider":"openai","model":"gpt-5.1-codex"}`,
				`user_message {"text":"implement the spec"}`,
				`mention {"path":"/Users/me/proj/spec.md","resolved":"/Users/me/proj/spec.md"}`,
			},
			skip: map[string]int{"title": 1},
		},
	}
	runLineCases(t, Pi, tests)
}
