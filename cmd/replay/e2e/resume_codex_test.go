package e2e

import (
	"strings"
	"testing"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
)

// TestCodexResume runs the real Codex twice on one session: 'codex exec' reads
// src/api/routes.ts with a shell command, whose PreToolUse hook delivers the src/api rule, then
// 'codex exec resume --last' reads it again. Codex keeps hook text in the history it sends the
// model after a resume: every request of the resumed session holds the rule once, from the
// first session, and tasklog delivers nothing again. 'replay audit --json' must say the same:
// the rule held at every request of the second prompt, delivered only in the first.
func TestCodexResume(t *testing.T) {
	t.Parallel() // a real agent: runs beside the others, at most -parallel at once
	a, replay, db := installedRun(t, codexDriver)
	read := fakemodel.Call("exec_command", map[string]any{"cmd": "cat " + e2eRead})

	model, err := fakemodel.Start([]fakemodel.Step{read, fakemodel.Final("The routes list /users.")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	a.model = model
	a.run(t, "Look at the API routes.")
	first := model.ModelRequests()
	if n := strings.Count(first[len(first)-1].Text(), scopedMarker); n != 1 {
		t.Fatalf("first session: the last request holds the scoped rule %d times, want once\n%s", n, a.describeRequests())
	}

	// The resumed session's requests carry the first session's call: its script goes on from
	// the second step.
	resumed, err := fakemodel.Start([]fakemodel.Step{fakemodel.Final("unused"), read, fakemodel.Final("The routes are unchanged.")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resumed.Close() })
	a.model = resumed
	cont := codexDriver
	cont.args = func(prompt string) []string {
		return []string{"exec", "resume", "--last", "--skip-git-repo-check", "--json", "--dangerously-bypass-hook-trust", prompt}
	}
	a.driver = cont
	a.run(t, "Look at the routes again.")
	checkResumedOnce(t, resumed.ModelRequests(), a.describeRequests(), scopedMarker, alwaysMarker)
	testenv.RunReplay(t, replay, a.home, "serve", "--stop", "--db", db)
	checkResumeAudit(t, replay, a.home, db, map[string]bool{"api": true, "general": true})
}

// checkResumedOnce holds the model requests of a resumed (or continued) session to a resume
// that kept the first run's hook text: at least two requests, each holding the first prompt and
// each marker exactly once (kept from the first run, not delivered again). more is added to the
// failure of too few requests.
func checkResumedOnce(t *testing.T, reqs []fakemodel.Request, more string, markers ...string) {
	t.Helper()
	if len(reqs) < 2 {
		t.Fatalf("the resumed session made %d requests, want 2\n%s", len(reqs), more)
	}
	for i, r := range reqs {
		if !strings.Contains(r.Text(), "Look at the API routes.") {
			t.Errorf("resumed request %d lacks the first prompt: not a resumed session", i+1)
		}
		for _, m := range markers {
			if n := strings.Count(r.Text(), m); n != 1 {
				t.Errorf("resumed request %d holds %q %d times, want once (kept from the first run, not delivered again):\n%.3000s", i+1, m, n, r.Text())
			}
		}
	}
}

// checkResumeAudit holds 'replay audit --json' of a two-prompt task to a resume that kept the
// hook text: each rule of held is held at every request of prompt 2 and delivered in none.
func checkResumeAudit(t *testing.T, replay, home, db string, held map[string]bool) {
	t.Helper()
	rep := auditOf(t, replay, home, db)
	second := 0
	for _, r := range rep.Requests {
		if r.Prompt != 2 {
			continue
		}
		second++
		for _, rule := range r.Rules {
			if !held[rule.Rule] {
				continue
			}
			if rule.Held == nil || !*rule.Held || rule.Delivered {
				t.Errorf("prompt 2, request %d, %s: held %s, delivered %v; want held, not delivered again (the model has it from prompt 1)",
					r.Request, rule.Rule, audit.YesNo(rule.Held), rule.Delivered)
			}
		}
	}
	if second == 0 {
		t.Errorf("the audit has no request of prompt 2: %+v", rep.Requests)
	}
}
