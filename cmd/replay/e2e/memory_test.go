package e2e

import (
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
)

// TestClaudeLoadsEveryMemoryFile runs the real Claude Code in a project with a CLAUDE.md at the
// root and another in .claude/: Claude Code puts both in the first request, so neither hides
// the other, and the audit says each applied, was loaded and was held, with no shadowed
// finding (under rules/2 the root's was "shadowed: its text never reaches the model").
func TestClaudeLoadsEveryMemoryFile(t *testing.T) {
	t.Parallel() // a real agent: runs beside the others, at most -parallel at once
	const root, dot = "ROOT-MEMORY-4F1C", "DOT-MEMORY-8A2E"
	rep := claudeMemoryAudit(t, map[string]string{
		"CLAUDE.md":         root + ": the project's memory at its root.\n",
		".claude/CLAUDE.md": dot + ": the project's memory in .claude.\n",
	}, root, dot)
	for _, r := range rep.Requests {
		seen := 0
		for _, rule := range r.Rules {
			if rule.Rule != "CLAUDE" {
				continue
			}
			seen++
			if rule.AgentLoaded == nil || !*rule.AgentLoaded || rule.Held == nil || !*rule.Held {
				t.Errorf("prompt %d, request %d: a CLAUDE.md not loaded or not held by the audit's account", r.Prompt, r.Request)
			}
		}
		if seen != 2 {
			t.Errorf("prompt %d, request %d: %d CLAUDE.md rows, want 2", r.Prompt, r.Request, seen)
		}
	}
	for _, f := range rep.Findings {
		if f.Rule == "CLAUDE" {
			t.Errorf("finding %s for a CLAUDE.md: %s", f.Kind, f.Evidence)
		}
	}
}

// TestClaudeLoadsItsLocalMemoryFile runs the real Claude Code in a project with a CLAUDE.local.md
// beside its CLAUDE.md: Claude Code puts it in the first request, and tasklog (rules/4) reads it
// as a memory file, which the audit finds applied, loaded and held.
func TestClaudeLoadsItsLocalMemoryFile(t *testing.T) {
	t.Parallel() // a real agent: runs beside the others, at most -parallel at once
	const local = "LOCAL-MEMORY-77AA"
	rep := claudeMemoryAudit(t, map[string]string{
		"CLAUDE.md":       "The project's memory.\n",
		"CLAUDE.local.md": local + ": my own sandbox is http://localhost:3001.\n",
	}, local)
	seen := 0
	for _, r := range rep.Requests {
		for _, rule := range r.Rules {
			if rule.Rule != "CLAUDE.local" {
				continue
			}
			seen++
			if rule.AgentLoaded == nil || !*rule.AgentLoaded || rule.Held == nil || !*rule.Held {
				t.Errorf("prompt %d, request %d: CLAUDE.local.md loaded %v, held %v by the audit's account", r.Prompt, r.Request, rule.AgentLoaded, rule.Held)
			}
		}
	}
	if seen == 0 {
		t.Errorf("the audit has no row for CLAUDE.local.md: %+v", rep.Requests)
	}
	for _, f := range rep.Findings {
		if f.Rule == "CLAUDE.local" {
			t.Errorf("finding %s for CLAUDE.local.md: %s", f.Kind, f.Evidence)
		}
	}
}

// claudeMemoryAudit runs the real Claude Code once ("Say ok.") in a project holding files,
// checks that its first request to the model holds every marker, and returns the audit of the
// task its hooks recorded.
func claudeMemoryAudit(t *testing.T, files map[string]string, markers ...string) auditJSON {
	t.Helper()
	a, replay, db := installedRun(t, claudeDriver)
	for name, body := range files {
		a.write(t, name, body)
	}
	model, err := fakemodel.Start([]fakemodel.Step{fakemodel.Final("ok")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	a.model = model
	a.run(t, "Say ok.")
	reqs := model.ModelRequests()
	for _, m := range markers {
		if len(reqs) == 0 || !strings.Contains(reqs[0].Text(), m) {
			t.Fatalf("Claude Code %s did not send %s in its first request\n%s", installedVersion(claudeDriver.pkg), m, a.describeRequests())
		}
	}
	testenv.RunReplay(t, replay, a.home, "serve", "--stop", "--db", db)
	return auditOf(t, replay, a.home, db)
}
