package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
)

// TestClaudeResume runs the real Claude Code twice on one session: 'claude -p' reads
// src/api/routes.ts and writes src/jobs/nightly.ts, then 'claude --continue -p' reads
// routes.ts again. The workspace holds rules tasklog delivers (.clinerules, .cursor/rules), a
// .claude/rules rule Claude Code loads itself on the Read, and one for src/jobs, where the agent
// only writes (Claude Code 2.1.332 loads it on the Write; 2.1.197 did not). Claude Code 2.1.332
// sends the hook text of the session it continues again (2.1.197 did not), so tasklog must not
// deliver anew after the resume: the request after the second Read holds the src/api rule once.
// The resume's SessionStart records the version it read in the transcript, and no compaction.
// And 'replay audit --json' must agree with the requests the fake model saved
// (checkAuditAgainstModel).
func TestClaudeResume(t *testing.T) {
	t.Parallel() // a real agent: runs beside the others, at most -parallel at once
	a := newAgentRun(t, claudeDriver)
	replay := testenv.ReplayBinary(t)
	db := filepath.Join(a.tmp, "t.db")
	a.write(t, e2eRead, "export const routes = ['/users'];\n")
	for rel, content := range e2eRules("claude-code") {
		a.write(t, rel, content)
	}
	// Claude Code's own rules: one it loads itself when a file it reads matches, one for a folder
	// the agent only writes into; and a Cursor rule, which Claude Code never loads.
	a.write(t, ".claude/rules/routes.md", "---\npaths: [\"src/api/**\"]\n---\nROUTES-RULE-5B1E: routes are listed in one file.\n")
	a.write(t, ".claude/rules/jobs.md", "---\npaths: [\"src/jobs/**\"]\n---\nJOBS-RULE-C7D2: jobs are idempotent.\n")
	a.write(t, ".cursor/rules/style.mdc", "---\nalwaysApply: true\n---\nSTYLE-RULE-0A9F: two spaces, no tabs.\n")
	if out, code := testenv.RunReplay(t, replay, a.home, "install", "claude-code", "--project", a.ws, "--db", db); code != 0 {
		t.Fatalf("replay install: exit %d\n%s", code, out)
	}
	t.Cleanup(func() { testenv.RunReplay(t, replay, a.home, "serve", "--stop", "--db", db) })
	read := fakemodel.Call("Read", map[string]any{"file_path": filepath.Join(a.ws, e2eRead)})
	write := fakemodel.Call("Write", map[string]any{"file_path": filepath.Join(a.ws, "src/jobs/nightly.ts"), "content": "export const nightly = 1;\n"})

	// The first session: the Read, then an answer.
	model, err := fakemodel.Start([]fakemodel.Step{read, write, fakemodel.Final("The routes list /users.")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	a.model = model
	a.run(t, "Look at the API routes.")
	first := a.model.ModelRequests()
	var resumed *fakemodel.Server
	if n := strings.Count(first[len(first)-1].Text(), scopedMarker); n != 1 {
		t.Fatalf("first session: the last request holds the scoped rule %d times, want once\n%s", n, a.describeRequests())
	}

	// The resumed session: its requests carry the first session's tool call, so the script goes on
	// from the second step: the Read again, then an answer.
	resumed, err = fakemodel.Start([]fakemodel.Step{fakemodel.Final("unused"), fakemodel.Final("unused"), read, fakemodel.Final("The routes are unchanged.")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resumed.Close() })
	a.model = resumed
	cont := claudeDriver
	cont.args = func(prompt string) []string { return append([]string{"--continue"}, claudeDriver.args(prompt)...) }
	a.driver = cont
	a.run(t, "Look at the routes again.")
	reqs := resumed.ModelRequests()
	if len(reqs) < 2 {
		t.Fatalf("the resumed session made %d requests, want 2\n%s", len(reqs), a.describeRequests())
	}
	last := reqs[len(reqs)-1]
	if n := strings.Count(last.Text(), scopedMarker); n != 1 {
		t.Errorf("resumed session: the request after the Read holds the scoped rule %d times, want once (parts %d)", n, len(last.Parts))
	}
	testenv.RunReplay(t, replay, a.home, "serve", "--stop", "--db", db)

	var versions []string
	evs := testenv.TaskEvents(t, db)
	for _, ev := range evs {
		if ev.Type != events.TypeSettingsChanged {
			continue
		}
		if p, err := ev.Payload(); err == nil && p.(*events.SettingsChanged).AgentVersion != "" {
			versions = append(versions, p.(*events.SettingsChanged).AgentVersion)
		}
	}
	if want := claudeInstalledVersion(t); !slices.Contains(versions, want) {
		t.Errorf("the agent versions recorded: %q, want %s (the installed Claude Code)", versions, want)
	}
	if n := testenv.CountType(evs, events.TypeCompaction); n != 0 {
		t.Errorf("%d compactions recorded; Claude Code's resume keeps the hook text, want none", n)
	}

	checkAuditAgainstModel(t, auditOf(t, replay, a.home, db), first, reqs)
}

// auditOf reads 'replay audit --json' of the only task in db.
func auditOf(t *testing.T, replay, home, db string) auditJSON {
	t.Helper()
	out, _ := testenv.RunReplay(t, replay, home, "audit", "--json", "--db", db)
	var rep auditJSON
	// Findings make audit exit 1, and then stderr (the task it picked) follows the JSON.
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&rep); err != nil || len(rep.Requests) == 0 {
		t.Fatalf("replay audit --json: %v\n%s", err, out)
	}
	return rep
}

// auditJSON is what the test reads of 'replay audit --json'.
type auditJSON struct {
	Requests []struct {
		Prompt, Request int
		Rules           []struct {
			Rule        string `json:"rule"`
			AgentLoaded *bool  `json:"agent_loaded"`
			Delivered   bool   `json:"delivered"`
			Held        *bool  `json:"held"`
		} `json:"rules"`
	} `json:"requests"`
	Findings []struct {
		Kind     string `json:"kind"`
		Rule     string `json:"rule"`
		Evidence string `json:"evidence"`
	} `json:"findings"`
}

// checkAuditAgainstModel holds the audit to what the model was sent (reqs, both sessions in
// order). tasklog decides at every prompt and tool hook, before the tool runs, so its requests
// are not the model's one for one; what must agree is: two prompts; the src/jobs rule, which
// tasklog left to Claude Code and Claude Code loaded on the Write, loaded by the agent in
// prompt 1, never missed, and in every request from the one after the Write on, once; the Cursor rule, which tasklog delivered, held at every decision and
// in every request, the resumed session's included; the routes rule, which Claude Code loaded
// itself on the Read, loaded by the end of the first session and in its last request.
func checkAuditAgainstModel(t *testing.T, rep auditJSON, first, resumed []fakemodel.Request) {
	t.Helper()
	all := append(append([]fakemodel.Request(nil), first...), resumed...)
	prompts := map[int]bool{}
	loadedRoutes, loadedJobs := false, false
	for _, r := range rep.Requests {
		prompts[r.Prompt] = true
		for _, rule := range r.Rules {
			held := rule.Held != nil && *rule.Held
			switch {
			case rule.Rule == "jobs" && r.Prompt == 1 && rule.AgentLoaded != nil && *rule.AgentLoaded:
				loadedJobs = true
			case rule.Rule == "jobs" && r.Prompt == 2 && !held:
				t.Errorf("prompt 2, request %d: the audit says the model did not hold the jobs rule", r.Request)
			case rule.Rule == "style" && !held:
				t.Errorf("prompt %d, request %d: the audit says the model did not hold the Cursor rule", r.Prompt, r.Request)
			case rule.Rule == "routes" && r.Prompt == 1 && rule.AgentLoaded != nil && *rule.AgentLoaded:
				loadedRoutes = true
			}
		}
	}
	if len(prompts) != 2 || !prompts[1] || !prompts[2] {
		t.Errorf("the audit's prompts: %v, want 1 and 2", prompts)
	}
	if !loadedJobs {
		t.Errorf("the audit does not say Claude Code loaded the jobs rule in prompt 1")
	}
	for _, f := range rep.Findings {
		if f.Kind == "missed_by_agent" && f.Rule == "jobs" {
			t.Errorf("a missed_by_agent finding for the jobs rule, which Claude Code loaded on the Write: %s", f.Evidence)
		}
	}
	for i, r := range all {
		// The first session's requests 1 and 2 come before the Write's result.
		if n, want := strings.Count(r.Text(), "JOBS-RULE-C7D2"), min(1, max(0, i-1)); n != want {
			t.Errorf("model request %d holds the jobs rule %d times, want %d", i+1, n, want)
		}
		if !strings.Contains(r.Text(), "STYLE-RULE-0A9F") {
			t.Errorf("model request %d lacks the Cursor rule, which the audit calls held", i+1)
		}
	}
	if !loadedRoutes || !strings.Contains(first[len(first)-1].Text(), "ROUTES-RULE-5B1E") {
		t.Errorf("the routes rule: loaded by Claude Code per the audit %v; in the first session's last request %v; want both",
			loadedRoutes, strings.Contains(first[len(first)-1].Text(), "ROUTES-RULE-5B1E"))
	}
}

// claudeInstalledVersion is the version of the Claude Code .ci/install-agents installed, from its
// package.json.
func claudeInstalledVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e2eAgentsDir(), "node_modules", "@anthropic-ai", "claude-code", "package.json"))
	var pkg struct{ Version string }
	if err != nil || json.Unmarshal(b, &pkg) != nil || pkg.Version == "" {
		t.Fatalf("the installed Claude Code's package.json: %v\n%s", err, b)
	}
	return pkg.Version
}
