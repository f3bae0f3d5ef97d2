package agentlog

import (
	"encoding/json"
	"strings"
	"testing"
)

// cx builds an envelope line.
func cx(typ string, payload string) string {
	return `{"timestamp":"2025-09-25T21:12:14.126Z","type":"` + typ + `","payload":` + payload + `}`
}

func cxUser(text string) (responseItem, eventMsg string) {
	t, _ := json.Marshal(text)
	return cx("response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":`+string(t)+`}]}`),
		cx("event_msg", `{"type":"user_message","message":`+string(t)+`,"kind":"plain"}`)
}

func cxCall(id, name string, args any) string {
	a, _ := json.Marshal(args)
	s, _ := json.Marshal(string(a))
	return cx("response_item", `{"type":"function_call","name":"`+name+`","arguments":`+string(s)+`,"call_id":"`+id+`"}`)
}

func cxOutput(id string, exit int) string {
	o, _ := json.Marshal(`{"output":"","metadata":{"exit_code":` + itoa(exit) + `,"duration_seconds":0.1}}`)
	return cx("response_item", `{"type":"function_call_output","call_id":"`+id+`","output":`+string(o)+`}`)
}

const cxMeta = `{"timestamp":"2025-09-25T21:12:14.126Z","type":"session_meta","payload":{"id":"x","timestamp":"2025-09-25T21:12:14.114Z","cwd":"/Users/j/repo","originator":"codex_vscode","cli_version":"0.40.0"}}`

func TestCodex(t *testing.T) {
	ri, em := cxUser("# Context from my IDE setup:\n\n## Active file: src/db.ts\n\n## Open tabs:\n- db.ts: src/db.ts\n- .env: apps/web/.env\n\n## My request for Codex:\nEvaluate @packages/services/src/createService.ts. Thanks")
	patch := "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** Add File: src/new.ts\n+z\n*** End Patch\nPATCH"
	tests := []lineCase{
		{
			name: "the user turn written twice is one message; the IDE preamble is a tab snapshot",
			lines: []string{
				cxMeta,
				cx("response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/Users/j/repo</cwd>\n</environment_context>"}]}`),
				ri, em,
				cx("turn_context", `{"cwd":"/Users/j/repo","approval_policy":"on-request","model":"gpt-5-codex"}`),
			},
			want: []string{
				`task_started {"roots":["/Users/j/repo"],"runtime":{"name":"codex","version":"0.40.0"}}`,
				`tab_snapshot {"open":["/Users/j/repo/src/db.ts","/Users/j/repo/apps/web/.env"],"visible":["/Users/j/repo/src/db.ts"]}`,
				`user_message {"text":"Evaluate @packages/services/src/createService.ts. Thanks"}`,
				`mention {"path":"packages/services/src/createService.ts","resolved":"/Users/j/repo/packages/services/src/createService.ts"}`,
				`settings_changed {"model":"gpt-5-codex"}`,
			},
			skip: map[string]int{"duplicate:response_item:message:user": 1, "response_item:message:user:environment_context": 1},
		},
		{
			name: "apply_patch inside a shell heredoc writes when it exits 0, against the turn's cwd",
			lines: []string{
				cxMeta,
				cx("turn_context", `{"cwd":"/Users/j/repo/pkg","model":"gpt-5-codex"}`),
				cx("response_item", `{"type":"reasoning","summary":[]}`),
				cxCall("c1", "shell", map[string]any{"command": []string{"bash", "-lc", patch}, "workdir": "."}),
				cxOutput("c1", 0),
				cxCall("c2", "shell", map[string]any{"command": []string{"bash", "-lc", strings.ReplaceAll(patch, "src/new.ts", "src/other.ts")}, "workdir": "sub"}),
				cxOutput("c2", 1),
			},
			typ: "file_write",
			want: []string{
				`file_write {"path":"/Users/j/repo/pkg/src/a.ts","op":"edit"}`,
				`file_write {"path":"/Users/j/repo/pkg/src/new.ts","op":"create"}`,
			},
		},
		{
			name: "custom apply_patch tool and a cwd change between turns",
			lines: []string{
				cxMeta,
				cx("response_item", `{"type":"custom_tool_call","name":"apply_patch","call_id":"p1","input":"*** Begin Patch\n*** Delete File: old.txt\n*** End Patch","status":"completed"}`),
				cx("response_item", `{"type":"custom_tool_call_output","call_id":"p1","output":"Success. Updated the following files:\nD old.txt"}`),
				cx("turn_context", `{"cwd":"/Users/j/other"}`),
				cx("response_item", `{"type":"custom_tool_call","name":"apply_patch","call_id":"p2","input":"*** Begin Patch\n*** Add File: /Users/j/repo/abs.txt\n*** Add File: rel.txt\n*** End Patch"}`),
				cx("response_item", `{"type":"custom_tool_call_output","call_id":"p2","output":"Success."}`),
			},
			want: []string{
				`task_started {"roots":["/Users/j/repo"],"runtime":{"name":"codex","version":"0.40.0"}}`,
				"TURN",
				`tool_call {"tool":"apply_patch","id":"p1","params":{"input":"*** Begin Patch\n*** Delete File: old.txt\n*** End Patch"}}`,
				`file_write {"path":"/Users/j/repo/old.txt","op":"delete"}`,
				"TURN",
				`tool_call {"tool":"apply_patch","id":"p2","params":{"input":"*** Begin Patch\n*** Add File: /Users/j/repo/abs.txt\n*** Add File: rel.txt\n*** End Patch"},"cwd":"/Users/j/other"}`,
				`file_write {"path":"/Users/j/repo/abs.txt","op":"create"}`,
				`file_write {"path":"/Users/j/other/rel.txt","op":"create"}`,
			},
			skip: map[string]int{"turn_context": 1},
		},
		{
			name: "legacy layout: bare header and bare response items, user messages from the items",
			lines: []string{
				`{"id":"x","timestamp":"2025-05-01T10:00:00Z","instructions":""}`,
				`{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/home/u/r</cwd>\n</environment_context>"}]}`,
				`{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}`,
				`{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}`,
				`{"type":"function_call_output","call_id":"c1","output":"a\nb"}`,
				`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}`,
			},
			want: []string{
				`task_started {"roots":["/home/u/r"],"runtime":{"name":"codex"}}`,
				`user_message {"text":"list files"}`,
				"TURN",
				`tool_call {"tool":"shell","id":"c1","params":{"command":["ls"]}}`,
				"TURN",
			},
		},
		{
			name: "unknown record types and event kinds are counted",
			lines: []string{
				cxMeta,
				cx("world_state", `{}`),
				cx("event_msg", `{"type":"token_count"}`),
				cx("compacted", `{"message":"summary"}`),
			},
			typ:  "task_started",
			want: []string{`task_started {"roots":["/Users/j/repo"],"runtime":{"name":"codex","version":"0.40.0"}}`},
			skip: map[string]int{"world_state": 1, "event_msg:token_count": 1, "compacted": 1},
		},
	}
	runLineCases(t, Codex, tests)
}

// TestCodexRejectedAndExecEvents: a patch the user rejected writes nothing; the exec and patch
// events of newer builds make tool calls when no response item holds the call, and settle calls
// by exit code or success.
func TestCodexRejectedAndExecEvents(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** End Patch"
	rejected, _ := json.Marshal(`{"output":"patch rejected by user","metadata":{"exit_code":0,"duration_seconds":0}}`)
	tests := []lineCase{
		{
			name: "a patch the user rejected is a failed call and no file write",
			lines: []string{
				cxMeta,
				cx("response_item", `{"type":"custom_tool_call","name":"apply_patch","input":`+quote(patch)+`,"call_id":"p1","status":"completed"}`),
				cx("response_item", `{"type":"custom_tool_call_output","call_id":"p1","output":`+string(rejected)+`}`),
			},
			want: []string{
				`task_started {"roots":["/Users/j/repo"],"runtime":{"name":"codex","version":"0.40.0"}}`,
				"TURN",
				`tool_call {"tool":"apply_patch","id":"p1","params":{"input":` + quote(patch) + `},"failed":true}`,
			},
		},
		{
			name: "exec_command_begin without a response item is the tool call; its end settles it",
			lines: []string{
				cxMeta,
				cx("event_msg", `{"type":"exec_command_begin","call_id":"e1","command":["bash","-lc","ls src"],"cwd":"/Users/j/repo/src"}`),
				cx("event_msg", `{"type":"exec_command_end","call_id":"e1","stdout":"","stderr":"boom","exit_code":2}`),
				cx("event_msg", `{"type":"patch_apply_begin","call_id":"e2","auto_approved":true,"changes":{"/Users/j/repo/b.ts":{"add":{"content":"x"}},"/Users/j/repo/a.ts":{"update":{"unified_diff":""}}}}`),
				cx("event_msg", `{"type":"patch_apply_end","call_id":"e2","stdout":"ok","stderr":"","success":true}`),
			},
			want: []string{
				`task_started {"roots":["/Users/j/repo"],"runtime":{"name":"codex","version":"0.40.0"}}`,
				"TURN",
				`tool_call {"tool":"exec_command","id":"e1","params":{"command":["bash","-lc","ls src"],"workdir":"/Users/j/repo/src"},"cwd":"/Users/j/repo/src","failed":true}`,
				`tool_call {"tool":"apply_patch","id":"e2","params":{"changes":["/Users/j/repo/a.ts","/Users/j/repo/b.ts"]}}`,
				`file_write {"path":"/Users/j/repo/a.ts","op":"edit"}`,
				`file_write {"path":"/Users/j/repo/b.ts","op":"create"}`,
			},
		},
		{
			name: "an exec_command function call is settled by its end event and its output adds nothing",
			lines: []string{
				cxMeta,
				cxCall("f1", "exec_command", map[string]any{"cmd": "apply_patch <<'EOF'\n" + patch + "\nEOF", "workdir": "/Users/j/repo"}),
				cx("event_msg", `{"type":"exec_command_begin","call_id":"f1","command":["bash","-lc","apply_patch"],"cwd":"/Users/j/repo"}`),
				cx("event_msg", `{"type":"exec_command_end","call_id":"f1","stdout":"","stderr":"patch rejected by user","exit_code":0}`),
				cxOutput("f1", 0),
			},
			typ:  "file_write",
			want: nil,
			skip: map[string]int{"response_item:function_call_output": 1},
		},
	}
	runLineCases(t, Codex, tests)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
