package e2e

// Claude Code with tasklog's MCP server in its .mcp.json and tasklog's hooks installed, driven
// by the fake model: the model reads a file (the hooks deliver the rule scoped to it), calls
// rules_for, and reads an on-request rule through rule://. The test asserts from the requests the
// fake model received that the tool's answer and the rule's body reached the model.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session/mcp"
	"github.com/tasklog/tasklog/store"
)

// The markers of the MCP scenario's rules: text only those rules hold.
const (
	mcpScopedMarker  = "MCP-API-RULE-5D1E"
	mcpRequestMarker = "MCP-CHECKLIST-RULE-C47B"
)

// mcpE2ERules are a rule scoped to src/api/** (which the hooks deliver after the Read) and an
// on-request rule (which the hooks only list: its body reaches the model only through rule://).
// Both are in tool families Claude Code does not load itself.
var mcpE2ERules = map[string]string{
	".clinerules/api.md":          "---\npaths: [\"src/api/**\"]\n---\n" + mcpScopedMarker + ": handlers validate their input first.\n",
	".cursor/rules/checklist.mdc": "---\ndescription: The release checklist\nalwaysApply: false\n---\n" + mcpRequestMarker + ": bump the version, then tag.\n",
}

// The MCP tools as Claude Code names them to the model: mcp__<server>__<tool>.
const (
	mcpE2ERulesFor     = "mcp__tasklog__rules_for"
	mcpE2EReadResource = "ReadMcpResourceTool"
)

func TestMCPInClaudeCode(t *testing.T) {
	t.Parallel() // a real agent: runs beside the others, at most -parallel at once
	d := claudeDriver
	d.script = func(ws string) []fakemodel.Step {
		return []fakemodel.Step{
			fakemodel.Call("Read", map[string]any{"file_path": filepath.Join(ws, e2eRead)}),
			fakemodel.Call(mcpE2ERulesFor, map[string]any{"paths": []string{e2eRead}}),
			fakemodel.Call(mcpE2EReadResource, map[string]any{"server": "tasklog", "uri": "rule://checklist"}),
			fakemodel.Final("The rules are clear (fake model)."),
		}
	}
	// Claude Code 2.1.332 puts MCP tools behind its tool search, which the scripted model does
	// not call: the tools are offered to the model directly.
	configure := d.configure
	d.configure = func(t *testing.T, a *agentRun) []string {
		return append(configure(t, a), "ENABLE_TOOL_SEARCH=false")
	}
	a := newAgentRun(t, d)
	replay := testenv.ReplayBinary(t)
	db := filepath.Join(a.tmp, "tasklog.db")
	a.write(t, e2eRead, "export const routes = ['/users'];\n")
	for rel, body := range mcpE2ERules {
		a.write(t, rel, body)
	}
	mcpRunReplay(t, replay, a.home, "install", "claude-code", "--project", a.ws, "--db", db)
	// The project's MCP server. claude -p starts it without the approval an interactive
	// session asks for.
	a.write(t, ".mcp.json", mcpE2EConfig(t, replay, a.ws, db))

	// The hooks start a resident 'replay serve' for the database; stopping it finishes what it
	// accepted, so the log is complete when the test reads it, and no server outlives the test.
	stopServe := func() { mcpRunReplay(t, replay, a.home, "serve", "--stop", "--db", db) }
	t.Cleanup(stopServe)
	stdout := a.run(t, "Check which rules apply to the API routes, then read the release checklist.")
	stopServe()
	reqs := a.model.ModelRequests()
	if got := lastStep(reqs); got != 3 {
		t.Fatalf("the agent stopped at step %d of 3\nrequests:\n%s", got, a.describeRequests())
	}
	if first := firstRequestAtStep(reqs, 1); first == nil || !strings.Contains(strings.Join(first.Tools, ","), mcpE2ERulesFor) {
		t.Fatalf("the model was not offered %s\nrequests:\n%s", mcpE2ERulesFor, a.describeRequests())
	}

	// The rules_for answer reached the model as the tool's result: Claude Code gives the model
	// the structured result (the JSON of mcp.RulesForOut) rather than the short text.
	afterTool := firstRequestAtStep(reqs, 2)
	result := mcpToolResultText(afterTool)
	out, ok := mcpFindRulesFor(result)
	if !ok {
		t.Fatalf("no rules_for result among the tool results the model was given:\n%s", result)
	}
	if len(out.Apply) != 1 || out.Apply[0].URI != "rule://api" || len(out.Apply[0].Matched) != 1 ||
		out.Apply[0].Matched[0].Pattern != "src/api/**" || out.Apply[0].Matched[0].Path != e2eRead {
		t.Errorf("rules_for as the model got it applies %+v, want rule://api with src/api/** matching %s", out.Apply, e2eRead)
	}
	if len(out.OnRequest) != 1 || out.OnRequest[0].URI != "rule://checklist" || out.OnRequest[0].Description != "The release checklist" {
		t.Errorf("rules_for as the model got it lists on request %+v, want rule://checklist with its description", out.OnRequest)
	}
	// The on-request rule's body reached the model through the resource read, and only there.
	afterRead := firstRequestAtStep(reqs, 3)
	if body := mcpToolResultText(afterRead); !strings.Contains(body, mcpRequestMarker) {
		t.Errorf("the rule://checklist body did not reach the model as the read's result:\n%s", body)
	}
	if before := firstRequestAtStep(reqs, 2); before != nil && strings.Contains(before.Text(), mcpRequestMarker) {
		t.Errorf("the on-request rule's body reached the model before it was read through rule://")
	}

	// The same session: the hooks delivered the api rule into the task of Claude's session id,
	// and the MCP server, given that session id by Claude Code, answered for that task.
	session := mcpClaudeSession(stdout)
	if session == "" {
		t.Fatalf("no session_id in Claude Code's output")
	}
	task := agentlog.TaskID(agentlog.ClaudeCode, session)
	if !mcpDelivered(t, db, task, "api") {
		t.Errorf("the log of task %s (session %s) holds no delivery of the api rule", task, session)
	}
	if out.Task != task.String() {
		t.Errorf("rules_for answered for task %q, want the session's task %s", out.Task, task)
	}
}

// mcpClaudeSession is the session_id of Claude Code's stream-json output.
func mcpClaudeSession(stdout string) string {
	for _, line := range strings.Split(stdout, "\n") {
		var m struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.SessionID != "" {
			return m.SessionID
		}
	}
	return ""
}

// mcpE2EConfig is the .mcp.json that runs replay mcp for the workspace and database.
func mcpE2EConfig(t *testing.T, replay, ws, db string) string {
	t.Helper()
	b, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"tasklog": map[string]any{"command": replay, "args": []string{"mcp", "--workspace", ws, "--db", db}},
	}}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// mcpToolResultText is the text of the tool results a request gave the model.
func mcpToolResultText(r *fakemodel.Request) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range r.Parts {
		if p.Kind == "tool_result" {
			b.WriteString(p.Text + "\n")
		}
	}
	return b.String()
}

// mcpFindRulesFor finds a rules_for result in the text of tool results: its JSON, or failing
// that, nothing.
func mcpFindRulesFor(text string) (mcp.RulesForOut, bool) {
	for i := strings.Index(text, "{"); i >= 0; {
		var out mcp.RulesForOut
		if json.NewDecoder(strings.NewReader(text[i:])).Decode(&out) == nil && out.Paths != nil {
			return out, true
		}
		j := strings.Index(text[i+1:], "{")
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return mcp.RulesForOut{}, false
}

// mcpDelivered reports whether the task's log records a delivery of the rule named name.
func mcpDelivered(t *testing.T, path string, task [16]byte, name string) bool {
	t.Helper()
	db, err := store.Open(path, &store.Options{ReadOnly: true, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for ev, err := range db.Events(context.Background(), task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != events.TypeDelivery {
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.(*events.Delivery).Rules {
			if r.Name == name {
				return true
			}
		}
	}
	return false
}

// mcpRunReplay runs the built replay with HOME set to home, failing the test on a non-zero exit.
func mcpRunReplay(t *testing.T, replay, home string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, replay, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("replay %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
