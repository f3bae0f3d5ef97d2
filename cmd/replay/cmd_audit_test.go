package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/session"
)

// auditScenario copies the workspace of testdata/audit/NAME into a temporary folder and runs
// the scenario's captured hook payloads (written for /home/dev/shop) through 'replay hook', in
// order, into a new database. It returns the workspace and the database.
func auditScenario(t *testing.T, name string) (ws, db string) {
	t.Helper()
	src := filepath.Join(testenv.RepoRoot(t), "testdata", "audit", name)
	dir := t.TempDir()
	ws, db = filepath.Join(dir, "shop"), filepath.Join(dir, "tasklog.db")
	if err := os.CopyFS(ws, os.DirFS(filepath.Join(src, "shop"))); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	payloads, _ := filepath.Glob(filepath.Join(src, "payloads", "*.json"))
	if len(payloads) == 0 {
		t.Fatalf("%s has no payloads", src)
	}
	for _, p := range payloads {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte("/home/dev/shop"), []byte(ws))
		if _, errOut, code := runHook(t, "claude-code", db, b); code != 0 || errOut != "" {
			t.Fatalf("%s: exit %d, stderr %q", filepath.Base(p), code, errOut)
		}
	}
	return ws, db
}

// runAudited runs replay in this process and returns its output with the workspace's path
// written as /home/dev/shop.
func runAudited(t *testing.T, ws string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return strings.ReplaceAll(out.String(), ws, "/home/dev/shop"), strings.ReplaceAll(errb.String(), ws, "/home/dev/shop"), code
}

// TestAuditJSON pins the documented shape of 'replay audit --json' with a golden file
// (rewritten by -update), and checks the contract's keys on every request and rule: a change
// of the shape must be a change of session.AuditVersion and of the docs.
func TestAuditJSON(t *testing.T) {
	ws, db := auditScenario(t, "claude-code")
	out, errOut, code := runAudited(t, ws, "audit", "--json", "--db", db)
	if code != exitFailed || !strings.HasPrefix(errOut, "replay audit: task ") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("audit --json: exit %d (want 1: there are findings), stderr %q (want only the line naming the task)", code, errOut)
	}
	golden := filepath.Join(testenv.RepoRoot(t), "testdata", "audit", "claude-code", "audit.golden.json")
	if *update {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("%s differs; rerun with -update and review the diff.\ngot:\n%s", golden, out)
	}

	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep["version"] != float64(session.AuditVersion) || rep["agent_loads"] != "reported" {
		t.Errorf("version %v, agent_loads %v", rep["version"], rep["agent_loads"])
	}
	reqs, _ := rep["requests"].([]any)
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for _, r := range reqs {
		r := r.(map[string]any)
		for _, k := range []string{"prompt", "request", "turn", "seq", "rules"} {
			if _, ok := r[k]; !ok {
				t.Errorf("a request lacks %q: %v", k, r)
			}
		}
		for _, e := range r["rules"].([]any) {
			e := e.(map[string]any)
			for _, k := range []string{"rule", "id", "decision", "reason", "agent_loaded", "delivered", "held", "findings"} {
				if _, ok := e[k]; !ok {
					t.Errorf("prompt %v, request %v: rule %v lacks %q", r["prompt"], r["request"], e["rule"], k)
				}
			}
		}
	}
	kinds := map[string]bool{}
	for _, f := range rep["findings"].([]any) {
		kinds[f.(map[string]any)["kind"].(string)] = true
	}
	for _, k := range audit.Kinds() {
		if k != audit.Duplicate && !kinds[string(k)] {
			t.Errorf("the scenario has no %s finding", k)
		}
	}
}
