package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
)

// TestClaudeResume runs the real Claude Code twice on one session: 'claude -p' reads
// src/api/routes.ts (tasklog delivers the src/api rule with the Read's hook), then
// 'claude --continue -p' reads it again. Claude Code keeps hook text in its transcript but does
// not send it to the model again after a resume, so the resumed session must get the rule
// anew: the test checks, from the requests the fake model saved, that the resumed session's
// requests after the Read hold the rule once, and that 'replay audit --json' says the model
// held it at the last request.
func TestClaudeResume(t *testing.T) {
	a := newAgentRun(t, claudeDriver)
	build := &replayBuilder{dir: t.TempDir()}
	replay := build.binary(t)
	db := filepath.Join(a.tmp, "t.db")
	a.write(t, e2eRead, "export const routes = ['/users'];\n")
	for rel, content := range e2eRules("claude-code") {
		a.write(t, rel, content)
	}
	if out, code := runReplay(t, replay, a.home, "install", "claude-code", "--project", a.ws, "--db", db); code != 0 {
		t.Fatalf("replay install: exit %d\n%s", code, out)
	}
	t.Cleanup(func() { runReplay(t, replay, a.home, "serve", "--stop", "--db", db) })
	read := fakemodel.Call("Read", map[string]any{"file_path": filepath.Join(a.ws, e2eRead)})

	// The first session: the Read, then an answer.
	model, err := fakemodel.Start([]fakemodel.Step{read, fakemodel.Final("The routes list /users.")})
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
	resumed, err = fakemodel.Start([]fakemodel.Step{fakemodel.Final("unused"), read, fakemodel.Final("The routes are unchanged.")})
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
	runReplay(t, replay, a.home, "serve", "--stop", "--db", db)

	out, _ := runReplay(t, replay, a.home, "audit", "--json", "--db", db)
	var rep struct {
		Requests []struct {
			Prompt, Request int
			Rules           []struct {
				Rule string `json:"rule"`
				Held *bool  `json:"held"`
			} `json:"rules"`
		} `json:"requests"`
	}
	// Findings make audit exit 1, and then stderr (the task it picked) follows the JSON.
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&rep); err != nil || len(rep.Requests) == 0 {
		t.Fatalf("replay audit --json: %v\n%s", err, out)
	}
	end := rep.Requests[len(rep.Requests)-1]
	for _, r := range end.Rules {
		if r.Rule == "api" && (r.Held == nil || !*r.Held) {
			t.Errorf("audit says the model did not hold the api rule at prompt %d, request %d; the model's request holds it", end.Prompt, end.Request)
		}
	}
}
