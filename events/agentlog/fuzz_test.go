package agentlog

import (
	"bytes"
	"strings"
	"testing"
)

// checkItems is the property every import keeps, whatever the input: each event decodes under
// its schema and points back at a record of the file.
func checkItems(t *testing.T) func(Item) error {
	return func(it Item) error {
		if it.Turn {
			return nil
		}
		if it.Event == nil || it.Event.Origin == nil || it.Event.Origin.Record < 0 {
			t.Fatalf("event without an origin: %+v", it.Event)
		}
		if _, err := it.Event.Payload(); err != nil {
			t.Fatalf("emitted an invalid event: %v", err)
		}
		return nil
	}
}

func fuzzJSONL(f *testing.F, agent Agent, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(""))
	f.Add([]byte("{}\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = importJSONL(agent, "fuzz.jsonl", bytes.NewReader(data), Options{MaxInline: 16}, checkItems(t))
	})
}

func FuzzClaudeCode(f *testing.F) {
	fuzzJSONL(f, ClaudeCode, strings.Join([]string{
		ccUser("/r", `"fix @src/a.ts"`, `,"permissionMode":"plan"`),
		ccAssistant("/r", "m1", `{"type":"tool_use","id":"w","name":"Write","input":{"file_path":"b.ts","content":"package b"}}`),
		ccResult("/r", "w", false, `{"type":"update"}`),
		ccUser(`c:\\p`, `[{"type":"text","text":"<ide_opened_file>The user opened the file c:\\p\\a.ts in the IDE.</ide_opened_file>hi"}]`),
		`{"type":"attachment","attachment":{"type":"file","filename":"/r/x","displayPath":"x"}}`,
	}, "\n"))
}

func FuzzPi(f *testing.F) {
	fuzzJSONL(f, Pi, strings.Join([]string{
		piHeader,
		`{"type":"message","message":{"role":"user","content":"read @a/b.ts <file name=\"/x\">y</file>"}}`,
		`{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"e","name":"edit","arguments":{"path":"~/a"}}]}}`,
		`{"type":"message","message":{"role":"toolResult","toolCallId":"e","isError":false}}`,
		`{"type":"model_change","model":"a/b"}`,
		`{"type":"message","message":{"role":"bashExecution","command":"ls","exitCode":1}}`,
	}, "\n"))
}

func FuzzCodex(f *testing.F) {
	ri, em := cxUser("# Context from my IDE setup:\n## Active file: a\n## Open tabs:\n- a: a\n## My request for Codex:\n@x/y.ts go")
	fuzzJSONL(f, Codex, strings.Join([]string{
		cxMeta, ri, em,
		cx("turn_context", `{"cwd":"/o","model":"m"}`),
		cxCall("c", "shell", map[string]any{"command": []string{"bash", "-lc", "apply_patch <<'P'\n*** Add File: n\n*** Update File: u\nP"}, "workdir": "w"}),
		cxOutput("c", 0),
		cx("response_item", `{"type":"custom_tool_call","name":"apply_patch","call_id":"p","input":"*** Delete File: d"}`),
	}, "\n"), `{"id":"x","timestamp":"2025-01-01T00:00:00Z"}`+"\n"+`{"type":"function_call","name":"shell","arguments":"{","call_id":"c"}`)
}

func FuzzCline(f *testing.F) {
	f.Add([]byte(ui(
		say(1, "text", "fix @/src/a.ts", `,"files":["c:\\x\\y.ts"],"modelInfo":{"mode":"plan"}`),
		request(2, "<task>\n<file_content path=\"src/a.ts\">x</file_content></task>", "c:/w", []string{"a"}, []string{"b"}),
		ask(3, "tool", tool(map[string]any{"tool": "editedExistingFile", "path": "a"}), `,"conversationHistoryIndex":0`),
		say(3, "tool", tool(map[string]any{"tool": "editedExistingFile", "path": "a"}), `,"partial":true`),
		ask(4, "command", "ls"),
		request(5, "[write_to_file for 'a'] Result:\nok", "c:/w", nil, nil),
	)), []byte(`[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"write_to_file","input":{"absolutePath":"/w/a"}}]}]`))
	f.Add([]byte(`[]`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, uiData, apiData []byte) {
		src := clineFixture(string(uiData), string(apiData), `{"environment_history":[{"os_name":"win32"}]}`)
		_, _ = importCline(src, Options{MaxInline: 16}, checkItems(t))
	})
}
