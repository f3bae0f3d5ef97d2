package main

import (
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/session"
)

// TestMCPAuditWhyAndDeliveries asks the audit scenario's questions over MCP: explain lists the
// decision's deliveries as replay explain --json does, audit and why answer as their commands.
func TestMCPAuditWhyAndDeliveries(t *testing.T) {
	ws, db := auditScenario(t, "claude-code")
	cfg := mcpConfig{db: db, timeout: time.Second, agent: "claude-code", session: "a0d17000-5e55-4b7a-a76c-2bafc4c82781"}
	cfg.wf.workspace = ws
	cs := mcpConnect(t, cfg)

	var ex mcpExplainOut
	text := mcpCallTool(t, cs, "explain", map[string]any{"prompt": 1}, &ex)
	if len(ex.Deliveries) != 1 || ex.Deliveries[0].Hook != "PreToolUse" || ex.Deliveries[0].Channel != "tool" ||
		ex.Deliveries[0].Rules[0] != "db" || ex.Deliveries[0].Prompt != 1 || ex.Deliveries[0].Request != 3 {
		t.Errorf("explain prompt 1: deliveries %+v", ex.Deliveries)
	}
	if !strings.Contains(text, "delivered at seq 14 into prompt 1, request 3: claude-code via tool (PreToolUse hook, full), 233 bytes: db") {
		t.Errorf("explain prompt 1 text lacks its delivery:\n%s", text)
	}
	ex = mcpExplainOut{}
	mcpCallTool(t, cs, "explain", map[string]any{"prompt": 1, "rule": "style"}, &ex)
	if len(ex.Deliveries) != 1 || ex.Deliveries[0].Hook != "UserPromptSubmit" {
		t.Errorf("explain prompt 1, rule style: deliveries %+v, want the prompt's", ex.Deliveries)
	}

	var au mcpAuditOut
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
