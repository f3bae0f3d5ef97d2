package agentlog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ui builds a ui_messages.json array from rows.
func ui(rows ...string) string { return "[" + strings.Join(rows, ",\n") + "]" }

// say and ask build ui rows; text is the row's text as it reads (encoded here).
func say(ts int, kind, text string, extra ...string) string {
	return row(ts, "say", kind, text, extra...)
}

func ask(ts int, kind, text string, extra ...string) string {
	return row(ts, "ask", kind, text, extra...)
}

func row(ts int, typ, kind, text string, extra ...string) string {
	t, _ := json.Marshal(text)
	return `{"ts":` + itoa(ts) + `,"type":"` + typ + `","` + typ + `":"` + kind + `","text":` + string(t) + strings.Join(extra, "") + `}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// request is an api_req_started row whose request has the given head and environment details.
func request(ts int, head, cwd string, visible, open []string) string {
	env := "<environment_details>\n# Visual Studio Code Visible Files\n" + lines(visible, "(No visible files)") +
		"\n\n# Visual Studio Code Open Tabs\n" + lines(open, "(No open tabs)") +
		"\n\n# Current Time\n1/22/2026\n\n# Current Working Directory (" + cwd + ") Files\na.ts\n\n# Current Mode\nACT MODE\n</environment_details>"
	body, _ := json.Marshal(map[string]any{"request": head + "\n\n" + env, "tokensIn": 1})
	return say(ts, "api_req_started", string(body))
}

func lines(ps []string, none string) string {
	if len(ps) == 0 {
		return none
	}
	return strings.Join(ps, "\n")
}

func tool(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestCline(t *testing.T) {
	const cwd = "/w/app"
	tests := []struct {
		name     string
		ui, api  string
		meta     string
		typ      string
		want     []string
		skip     map[string]int
		warnings int
	}{
		{
			name: "readFile's content holds a path, not file content, and is no write",
			ui: ui(
				say(1, "text", "read a.ts"),
				request(2, "<task>\nread a.ts\n</task>", cwd, nil, nil),
				say(3, "tool", tool(map[string]any{"tool": "readFile", "path": "a.ts", "content": "/w/app/a.ts"})),
				request(4, "[read_file for 'a.ts'] Result:\nexport {}", cwd, nil, nil),
			),
			want: []string{
				`task_started {"roots":["/w/app"],"runtime":{"name":"cline"}}`,
				`user_message {"text":"read a.ts"}`,
				`tab_snapshot {"open":[],"visible":[]}`,
				"TURN",
				`tool_call {"tool":"read_file","params":{"content":"/w/app/a.ts","path":"a.ts","tool":"readFile"}}`,
				"TURN",
			},
		},
		{
			name: "an approved ask and its say twin are one call",
			ui: ui(
				say(1, "text", "make b"),
				request(2, "<task>\nmake b\n</task>", cwd, nil, nil),
				ask(3, "tool", tool(map[string]any{"tool": "newFileCreated", "path": "b.ts", "content": "x"})),
				say(4, "tool", tool(map[string]any{"tool": "newFileCreated", "path": "b.ts", "content": "x"})),
				request(5, "[write_to_file for 'b.ts'] Result:\nThe content was successfully saved to b.ts.", cwd, nil, nil),
			),
			typ:  "file_write",
			want: []string{`file_write {"path":"/w/app/b.ts","op":"create"}`},
			skip: map[string]int{"duplicate:say:tool": 1},
		},
		{
			name: "a partial row replaced by a later row with the same ts is dropped; a lone partial row counts",
			ui: ui(
				say(1, "text", "go"),
				request(2, "<task>\ngo\n</task>", cwd, nil, nil),
				say(3, "tool", tool(map[string]any{"tool": "editedExistingFile", "path": "c.ts"}), `,"partial":true`),
				say(3, "tool", tool(map[string]any{"tool": "editedExistingFile", "path": "c.ts", "content": "------- SEARCH\na\n=======\nb\n+++++++ REPLACE"}), `,"partial":false`),
				request(4, "[replace_in_file for 'c.ts'] Result:\nThe content was successfully saved to c.ts.", cwd, nil, nil),
				say(5, "tool", tool(map[string]any{"tool": "newFileCreated", "path": "d.ts", "content": "y"}), `,"partial":true`),
			),
			typ: "tool_call",
			want: []string{
				`tool_call {"tool":"replace_in_file","params":{"content":"------- SEARCH\na\n=======\nb\n+++++++ REPLACE","path":"c.ts","tool":"editedExistingFile"}}`,
				`tool_call {"tool":"write_to_file","params":{"content":"y","path":"d.ts","tool":"newFileCreated"}}`,
			},
			skip: map[string]int{"superseded:say:tool": 1},
		},
		{
			name: "a denied write and an interrupted one are failed calls with no file_write",
			ui: ui(
				say(1, "text", "go"),
				request(2, "<task>\ngo\n</task>", cwd, nil, nil),
				ask(3, "tool", tool(map[string]any{"tool": "editedExistingFile", "path": "e.ts", "content": "z"})),
				say(4, "user_feedback", "no, not that file"),
				request(5, "[write_to_file for 'e.ts'] Result:\nThe user denied this operation. The user provided the following feedback:\n<feedback>\nno, not that file\n</feedback>", cwd, nil, nil),
				say(6, "tool", tool(map[string]any{"tool": "newFileCreated", "path": "f.ts", "content": "z"})),
				ask(7, "resume_task", ""),
				request(8, "[TASK RESUMPTION] This task was interrupted 10 minutes ago. The current working directory is now '/w/app'.", cwd, nil, nil),
			),
			want: []string{
				`task_started {"roots":["/w/app"],"runtime":{"name":"cline"}}`,
				`user_message {"text":"go"}`,
				`tab_snapshot {"open":[],"visible":[]}`,
				"TURN",
				`user_message {"text":"no, not that file"}`,
				`tool_call {"tool":"write_to_file","params":{"content":"z","path":"e.ts","tool":"editedExistingFile"},"failed":true}`,
				"TURN",
				`tool_call {"tool":"write_to_file","params":{"content":"z","path":"f.ts","tool":"newFileCreated"},"failed":true}`,
				"TURN",
			},
			skip: map[string]int{"ask:resume_task": 1},
		},
		{
			name: "mentions come from the typed text; expansion of non-human text and TypeScript aliases are not mentions",
			ui: ui(
				say(1, "text", "fix @/src/a.ts, see @\"/docs/Plan A.md\" and @problems"),
				request(2, "<task>\nfix 'src/a.ts' (see below for file content), see 'docs/Plan A.md' (see below for file content)\n\n<file_content path=\"src/a.ts\">\nimport db from '@/lib/db'\n</file_content>\n<file_content path=\"docs/Plan A.md\">\nplan\n</file_content>\n</task>", cwd, nil, nil),
				say(3, "user_feedback", "also @/lib/b.ts"),
				request(4, "[attempt_completion] Result: Done\n<feedback>\nalso 'lib/b.ts' (see below for file content)\n<file_content path=\"lib/b.ts\">\nx\n</file_content>\n<file_content path=\"lib/firebase-admin'`\">\nError fetching content: no such file\n</file_content>\n</feedback>", cwd, nil, nil),
			),
			typ: "mention",
			want: []string{
				`mention {"path":"/src/a.ts","resolved":"/w/app/src/a.ts"}`,
				`mention {"path":"/docs/Plan A.md","resolved":"/w/app/docs/Plan A.md"}`,
				`mention {"path":"/lib/b.ts","resolved":"/w/app/lib/b.ts"}`,
			},
		},
		{
			name: "a resumed task moves to another workspace; Windows drives in either case and backslashes",
			ui: ui(
				say(1, "text", "start"),
				request(2, "<task>\nstart\n</task>", "e:/dev/server", []string{"src/main.ts"}, []string{"src/main.ts", "README.md"}),
				say(3, "tool", tool(map[string]any{"tool": "newFileCreated", "path": "src/new.ts", "content": "x"})),
				ask(4, "resume_task", ""),
				request(5, "[TASK RESUMPTION] This task was interrupted. The current working directory is now 'c:/Users/70912/Documents/Cline/MCP'.", "c:/Users/70912/Documents/Cline/MCP", []string{"tool\\index.ts"}, []string{"tool\\index.ts"}),
				say(6, "tool", tool(map[string]any{"tool": "editedExistingFile", "path": "C:/Users/70912/Documents/Cline/MCP/tool/index.ts", "content": "y"})),
				request(7, "[write_to_file for 'C:/Users/70912/Documents/Cline/MCP/tool/index.ts'] Result:\nThe content was successfully saved.", "c:/Users/70912/Documents/Cline/MCP", []string{"tool\\index.ts"}, []string{"tool\\index.ts"}),
				say(8, "tool", tool(map[string]any{"tool": "readFile", "path": "../mcp-vscode-server/x.ts", "content": "c:\\Users\\70912\\Documents\\Cline\\mcp-vscode-server\\x.ts"})),
			),
			want: []string{
				`task_started {"roots":["E:/dev/server"],"runtime":{"name":"cline"},"os":"windows"}`,
				`user_message {"text":"start"}`,
				`tab_snapshot {"open":["E:/dev/server/src/main.ts","E:/dev/server/README.md"],"visible":["E:/dev/server/src/main.ts"]}`,
				"TURN",
				`tool_call {"tool":"write_to_file","params":{"content":"x","path":"src/new.ts","tool":"newFileCreated"},"failed":true}`,
				`tab_snapshot {"open":["C:/Users/70912/Documents/Cline/MCP/tool/index.ts"],"visible":["C:/Users/70912/Documents/Cline/MCP/tool/index.ts"]}`,
				"TURN",
				`tool_call {"tool":"write_to_file","params":{"content":"y","path":"C:/Users/70912/Documents/Cline/MCP/tool/index.ts","tool":"editedExistingFile"},"cwd":"C:/Users/70912/Documents/Cline/MCP"}`,
				`file_write {"path":"C:/Users/70912/Documents/Cline/MCP/tool/index.ts","op":"edit"}`,
				"TURN",
				`tool_call {"tool":"read_file","params":{"content":"c:\\Users\\70912\\Documents\\Cline\\mcp-vscode-server\\x.ts","path":"../mcp-vscode-server/x.ts","tool":"readFile"},"cwd":"C:/Users/70912/Documents/Cline/MCP"}`,
			},
		},
		{
			name: "ids and real parameters from the api history; parallel uses after the first were not executed",
			ui: ui(
				say(1, "text", "read", `,"conversationHistoryIndex":-1`),
				request(2, "<task>\nread\n</task>", cwd, nil, nil),
				say(3, "tool", tool(map[string]any{"tool": "readFile", "path": "a.ts", "content": "/w/app/a.ts"}), `,"conversationHistoryIndex":0`),
				request(4, "[read_file for 'a.ts'] Result:\nx\n\nTool [read_file] was not executed because a tool has already been used in this message.", cwd, nil, nil),
				say(4, "tool", tool(map[string]any{"tool": "newFileCreated", "path": "b.ts", "content": "x"}), `,"conversationHistoryIndex":2`),
				request(5, "[write_to_file for '/w/app/b.ts'] Result:\nThe content was successfully saved to /w/app/b.ts.", cwd, nil, nil),
			),
			api: `[{"role":"user","content":[{"type":"text","text":"<task>read</task>"}]},
				{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a.ts"}},{"type":"tool_use","id":"toolu_2","name":"read_file","input":{"path":"b.ts"}}]},
				{"role":"user","content":[{"type":"text","text":"[read_file for 'a.ts'] Result:\nx"},{"type":"text","text":"Tool [read_file] was not executed because a tool has already been used in this message."}]},
				{"role":"assistant","content":[{"type":"tool_use","id":"toolu_3","name":"write_to_file","input":{"absolutePath":"/w/app/b.ts","content":"x"}}]}]`,
			meta: `{"environment_history":[{"ts":1,"os_name":"win32","cline_version":"3.51.0"}]}`,
			want: []string{
				`task_started {"roots":["/w/app"],"runtime":{"name":"cline","version":"3.51.0"},"os":"windows"}`,
				`user_message {"text":"read"}`,
				`tab_snapshot {"open":[],"visible":[]}`,
				"TURN",
				`tool_call {"tool":"read_file","id":"toolu_1","params":{"path":"a.ts"}}`,
				"TURN",
				`tool_call {"tool":"write_to_file","id":"toolu_3","params":{"absolutePath":"/w/app/b.ts","content":"x"}}`,
				`file_write {"path":"/w/app/b.ts","op":"create"}`,
				"TURN",
			},
			skip: map[string]int{"api:tool_use_not_executed": 1},
		},
		{
			name: "unknown kinds are counted; mode and model changes are settings",
			ui: ui(
				say(1, "text", "hi", `,"modelInfo":{"providerId":"anthropic","modelId":"claude-opus-4-5","mode":"plan"}`),
				say(2, "error_retry", "retrying", `,"modelInfo":{"providerId":"anthropic","modelId":"claude-opus-4-5","mode":"plan"}`),
				ask(3, "auto_approval_max_req_reached", ""),
				say(4, "api_req_retried", "", `,"modelInfo":{"providerId":"anthropic","modelId":"claude-opus-4-5","mode":"act"}`),
			),
			typ:      "settings_changed",
			want:     []string{`settings_changed {"mode":"plan","provider":"anthropic","model":"claude-opus-4-5"}`, `settings_changed {"mode":"act"}`},
			skip:     map[string]int{"say:error_retry": 1, "ask:auto_approval_max_req_reached": 1},
			warnings: 1, // no working directory
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rep := runCline(t, tt.ui, tt.api, tt.meta)
			if tt.typ != "" {
				got = only(got, tt.typ)
			}
			equal(t, "items", got, tt.want)
			for k, n := range tt.skip {
				if c := count(rep, k); c != n {
					t.Errorf("skipped %s = %d, want %d (report %v)", k, c, n, rep.Skipped)
				}
			}
			if len(rep.Warnings) != tt.warnings {
				t.Errorf("warnings = %q, want %d", rep.Warnings, tt.warnings)
			}
		})
	}
}

func TestClineMalformed(t *testing.T) {
	for name, text := range map[string]string{
		"not an array":    `{"ts":1}`,
		"torn element":    `[{"ts":1,"type":"say","say":"text","text":"hi"},{"ts":`,
		"empty array":     `[]`,
		"not JSON at all": `hello`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := importCline(clineFixture(text, "", ""), Options{}, func(Item) error { return nil })
			if err == nil || !strings.Contains(err.Error(), "ui_messages.json") {
				t.Errorf("err = %v, want an error naming the file", err)
			}
		})
	}
}

// TestClineAPIOnly: a task folder holding only api_conversation_history.json imports from what
// was sent to the model: the human's wrapped text, the expanded mention, the cwd and tabs of the
// environment details, one turn per assistant message, the first tool_use as the call, and a
// write only for the call whose result did not fail.
func TestClineAPIOnly(t *testing.T) {
	env := `<environment_details>\n# Visual Studio Code Visible Files\nsrc/app.ts\n\n# Visual Studio Code Open Tabs\nsrc/app.ts\n\n# Current Working Directory (/home/dev/shop) Files\nsrc/\n</environment_details>`
	api := `[
 {"role":"user","content":[{"type":"text","text":"<task>\nFix the total in 'src/cart.ts' (see below for file content)\n\n<file_content path=\"src/cart.ts\">\nexport const total = 1\n</file_content>\n</task>"},{"type":"text","text":"` + env + `"}]},
 {"role":"assistant","content":[{"type":"text","text":"Editing."},{"type":"tool_use","id":"t1","name":"replace_in_file","input":{"path":"src/cart.ts","diff":"x"}},{"type":"tool_use","id":"t2","name":"read_file","input":{"path":"src/b.ts"}}]},
 {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"The user denied this operation."},{"type":"text","text":"<feedback>\ntry src/other.ts instead\n</feedback>"}]},
 {"role":"assistant","content":[{"type":"tool_use","id":"t3","name":"write_to_file","input":{"path":"src/other.ts","content":"y"}}]},
 {"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":[{"type":"text","text":"The content was successfully saved to src/other.ts."}]}]},
 {"role":"assistant","content":[{"type":"text","text":"Done."}]}
]`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "api_conversation_history.json"), []byte(api), 0o644); err != nil {
		t.Fatal(err)
	}
	if a, err := Detect(dir); err != nil || a != Cline {
		t.Fatalf("Detect = %q, %v; want cline", a, err)
	}
	var got []string
	rep, err := Import(Cline, dir, Options{}, collect(&got))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "items", got, []string{
		`task_started {"roots":["/home/dev/shop"],"runtime":{"name":"cline"}}`,
		`user_message {"text":"Fix the total in 'src/cart.ts' (see below for file content)"}`,
		`mention {"path":"src/cart.ts","resolved":"/home/dev/shop/src/cart.ts"}`,
		`tab_snapshot {"open":["/home/dev/shop/src/app.ts"],"visible":["/home/dev/shop/src/app.ts"]}`,
		"TURN",
		`tool_call {"tool":"replace_in_file","id":"t1","params":{"diff":"x","path":"src/cart.ts"},"failed":true}`,
		`user_message {"text":"try src/other.ts instead"}`,
		"TURN",
		`tool_call {"tool":"write_to_file","id":"t3","params":{"content":"y","path":"src/other.ts"}}`,
		`file_write {"path":"/home/dev/shop/src/other.ts","op":"create"}`,
		"TURN",
	})
	if n := count(rep, "api:tool_use_not_executed"); n != 1 {
		t.Errorf("not executed = %d, want 1 (report %+v)", n, rep.Skipped)
	}
	if !strings.HasSuffix(rep.Files[0], "api_conversation_history.json") {
		t.Errorf("report files %v, want the api history first", rep.Files)
	}
}
