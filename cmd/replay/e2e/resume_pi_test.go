package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
)

// TestPiResume runs the real pi twice on one session ('pi -p', then 'pi -c -p') with tasklog's
// extension: the first run reads src/api/routes.ts, which delivers the src/api rule with the
// read's result; the continued run reads it again. pi keeps what the extension added in the
// session it continues: every request of the continued run holds each rule once, from the
// first run, and tasklog delivers nothing again. 'replay audit --json' must say the same.
func TestPiResume(t *testing.T) {
	t.Parallel() // a real agent: runs beside the others, at most -parallel at once
	read := fakemodel.Call("read", map[string]string{"path": "src/api/routes.ts"})
	r := newPiRun(t, "", read, fakemodel.Final("The routes are empty."))
	r.serve()
	if stderr := r.run(nil, "Look at the API routes."); strings.Contains(stderr, "tasklog:") {
		t.Errorf("first run: the extension reported errors:\n%s", stderr)
	}
	first := r.model.ModelRequests()
	if n := strings.Count(first[len(first)-1].Text(), piScoped); n != 1 {
		t.Fatalf("first run: the last request holds the scoped rule %d times, want once", n)
	}

	// The continued run's requests carry the first run's call: its script goes on from the
	// second step.
	resumed, err := fakemodel.Start([]fakemodel.Step{fakemodel.Final("unused"), read, fakemodel.Final("The routes are unchanged.")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resumed.Close() })
	r.model = resumed
	models, _ := json.Marshal(map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": resumed.URL() + "/v1", "api": "openai-completions", "apiKey": "dummy",
		"models": []map[string]string{{"id": "fake-model"}}}}})
	e2eWriteFile(t, filepath.Join(r.agentDir, "models.json"), string(models), 0o644)
	if stderr := r.run(nil, "-c", "Look at the routes again."); strings.Contains(stderr, "tasklog:") {
		t.Errorf("continued run: the extension reported errors:\n%s", stderr)
	}
	checkResumedOnce(t, resumed.ModelRequests(), "", piScoped, piAlways)
	r.stop()
	checkResumeAudit(t, r.bin, r.home, r.db, map[string]bool{"api": true, "general": true})
}
