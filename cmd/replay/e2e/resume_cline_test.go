package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
)

// TestClineResume runs the real Cline CLI twice on one session ('cline --json PROMPT', then
// 'cline --json --id TASK PROMPT'): the first run reads src/api/routes.ts, whose tool hook
// delivers the src/api rule and the always rule; the resumed run reads it again. What the
// resumed run's requests hold of the hook text, the audit must say it held. Cline 3.0.65
// resumes only in its terminal UI ('cline --id' drops the prompt and refuses --json): the test
// then checks the first run and skips, saying so.
func TestClineResume(t *testing.T) {
	t.Parallel() // a real agent: runs beside the others, at most -parallel at once
	a, replay, db := installedRun(t, clineDriver)
	read := fakemodel.Call("read_files", map[string]any{"files": []any{map[string]any{"path": filepath.Join(a.ws, e2eRead)}}})

	model, err := fakemodel.Start([]fakemodel.Step{read, fakemodel.Final("The routes list /users.")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	a.model = model
	out := a.run(t, "Look at the API routes.")
	task := clineDriver.sessionID(out)
	if task == "" {
		t.Fatalf("no taskId in cline's output:\n%s", e2eTail(out, 2000))
	}
	first := model.ModelRequests()
	if n := strings.Count(first[len(first)-1].Text(), scopedMarker); n != 1 {
		t.Fatalf("first session: the last request holds the scoped rule %d times, want once\n%s", n, a.describeRequests())
	}

	resumed, err := fakemodel.Start([]fakemodel.Step{fakemodel.Final("unused"), read, fakemodel.Final("The routes are unchanged.")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resumed.Close() })
	a.model = resumed
	cont := clineDriver
	cont.args = func(prompt string) []string { return []string{"--json", "--id", task, prompt} }
	a.driver = cont
	// Cline's CLI resumes a session only in its terminal UI: with --id it drops the prompt and
	// refuses --json. Until it resumes one non-interactively, there is nothing to check.
	probe := exec.Command(a.bin, cont.args("Look at the routes again.")...)
	probe.Dir, probe.Env = a.ws, append(a.env[:len(a.env):len(a.env)], clineDriver.configure(t, a)...)
	if b, _ := probe.CombinedOutput(); strings.Contains(string(b), "JSON output mode requires a prompt argument") {
		t.Skipf("cline %s resumes a session (--id) only in its terminal UI: %s", installedVersion(clineDriver.pkg), strings.TrimSpace(string(b)))
	}
	a.run(t, "Look at the routes again.")
	checkResumedOnce(t, resumed.ModelRequests(), a.describeRequests(), scopedMarker, alwaysMarker)
	testenv.RunReplay(t, replay, a.home, "serve", "--stop", "--db", db)
	checkResumeAudit(t, replay, a.home, db, map[string]bool{"api": true, "general": true})
}
