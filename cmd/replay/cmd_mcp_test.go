package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/session/mcp"
	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/location"
)

// TestMCPAuditWhyAndDeliveries asks the audit scenario's questions over MCP: explain lists the
// decision's deliveries as replay explain --json does, audit and why answer as their commands.
func TestMCPAuditWhyAndDeliveries(t *testing.T) {
	ws, db := auditScenario(t, "claude-code")
	cfg := mcpFileConfig(db)
	cfg.Session = "a0d17000-5e55-4b7a-a76c-2bafc4c82781"
	cfg.Folders.Workspace = ws
	cs := mcpConnect(t, cfg)

	var ex mcp.ExplainOut
	text := mcpCallTool(t, cs, "explain", map[string]any{"prompt": 1}, &ex)
	if len(ex.Deliveries) != 1 || ex.Deliveries[0].Hook != "PreToolUse" || ex.Deliveries[0].Channel != "tool" ||
		ex.Deliveries[0].Rules[0] != "db" || ex.Deliveries[0].Prompt != 1 || ex.Deliveries[0].Request != 3 {
		t.Errorf("explain prompt 1: deliveries %+v", ex.Deliveries)
	}
	if !strings.Contains(text, "delivered at seq 14 into prompt 1, request 3: claude-code via tool (PreToolUse hook, full), 233 bytes: db") {
		t.Errorf("explain prompt 1 text lacks its delivery:\n%s", text)
	}
	ex = mcp.ExplainOut{}
	mcpCallTool(t, cs, "explain", map[string]any{"prompt": 1, "rule": "style"}, &ex)
	if len(ex.Deliveries) != 1 || ex.Deliveries[0].Hook != "UserPromptSubmit" {
		t.Errorf("explain prompt 1, rule style: deliveries %+v, want the prompt's", ex.Deliveries)
	}

	var au mcp.AuditOut
	text = mcpCallTool(t, cs, "audit", map[string]any{"prompt": 1, "request": 2}, &au)
	if au.Requests != 3 || au.Request == nil || au.Request.Request != 2 || au.AgentLoads != "reported" || au.Workspace.Source != "live" {
		t.Fatalf("audit: %+v", au)
	}
	found := map[audit.Kind]bool{}
	for _, f := range au.Findings {
		found[f.Kind] = true
	}
	if len(au.Findings) != 8 || !found[audit.MissedByAgent] || !found[audit.Broken] || !found[audit.NeverApplicable] {
		t.Errorf("audit findings: %+v", au.Findings)
	}
	if !strings.Contains(text, "- .claude/rules/api.md: applies (matched); agent loaded no; delivered no; held no") {
		t.Errorf("audit text:\n%s", text)
	}

	var w session.WhyAnswer
	text = mcpCallTool(t, cs, "why", map[string]any{"rule": "api"}, &w)
	if w.Turn != 3 || w.Entry.AgentLoaded == nil || *w.Entry.AgentLoaded ||
		!strings.Contains(text, "tasklog did not deliver it: claude-code loads claude rules by itself") {
		t.Errorf("why api: turn %d, %+v\n%s", w.Turn, w.Entry, text)
	}
	if text, isErr := mcpCallToolRaw(t, cs, "why", map[string]any{"rule": "nope"}, nil); !isErr ||
		!strings.Contains(text, `decided about no rule "nope"`) || !strings.Contains(text, "api") {
		t.Errorf("why nope: %q", text)
	}
}

// mcpFileConfig is an MCP server over the database file db, as 'replay mcp --db db' serves it.
func mcpFileConfig(db string) mcp.Config {
	loc := location.File(db)
	return mcp.Config{Store: db, Agent: "claude-code", ListTasks: tasksCommand,
		Open: func() (store.Store, error) {
			return openMCP(loc, location.Options{Wait: time.Second, ReadOnly: true, MustExist: true})
		}}
}

// mcpConnect serves cfg in process and connects the SDK's client to it in memory.
func mcpConnect(t testing.TB, cfg mcp.Config) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	srv, release := mcp.New(cfg)
	t.Cleanup(release)
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// mcpCallTool calls a tool and decodes its structured result into out; it returns the text.
func mcpCallTool(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	text, isErr := mcpCallToolRaw(t, cs, name, args, out)
	if isErr {
		t.Fatalf("%s(%v): tool error: %s", name, args, text)
	}
	return text
}

// mcpCallToolRaw calls a tool and reports its text and whether it is a tool error.
func mcpCallToolRaw(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any, out any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
	}
	return text.String(), res.IsError
}

// The monorepo session's task, recorded by mcpFixture.
const mcpTask = "0b3c7f2a-1d4e-4f5a-9b6c-7d8e9f0a1b2c"

// mcpFixture records the monorepo session into a database against a copy of its workspace
// mapped to its recorded root /ws.
func mcpFixture(t testing.TB) (ws, db string) {
	t.Helper()
	dir := t.TempDir()
	ws = filepath.Join(dir, "ws")
	if err := os.CopyFS(ws, os.DirFS(filepath.Join("..", "..", "testdata", "workspaces", "monorepo", "ws"))); err != nil {
		t.Fatal(err)
	}
	db = filepath.Join(dir, "tasklog.db")
	script := filepath.Join("..", "..", "testdata", "sessions", "monorepo.jsonl")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"record", script, "--root", "/ws=" + ws, "--db", db}, &stdout, &stderr); code != 0 {
		t.Fatalf("record %s: exit %d: %s", script, code, stderr.String())
	}
	return ws, db
}
