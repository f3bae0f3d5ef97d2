package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/hookconf"
	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
)

// TestAgentHookClientEndToEnd is TestAgentsEndToEnd's scenario for the real Codex with
// replay-hook installed beside replay, so that install's hooks run it: the first hook finds no
// server and runs replay hook, which starts one; the rest go through replay-hook. The rules
// reach the model, the hooks log no fault, and the log holds what happened.
func TestAgentHookClientEndToEnd(t *testing.T) {
	a := newAgentRun(t, codexDriver)
	replay, _ := testenv.Binaries(t)
	db := filepath.Join(a.tmp, "t.db")
	a.write(t, e2eRead, "export const routes = ['/users'];\n")
	for rel, content := range e2eRules(codexDriver.name) {
		a.write(t, rel, content)
	}
	if out, code := testenv.RunReplay(t, replay, a.home, "install", codexDriver.name, "--project", a.ws, "--db", db); code != 0 {
		t.Fatalf("replay install: exit %d\n%s", code, out)
	}
	hooks, err := os.ReadFile(filepath.Join(a.ws, ".codex", "hooks.json"))
	if err != nil || !strings.Contains(string(hooks), filepath.Join(filepath.Dir(replay), "replay-hook")+" codex") {
		t.Fatalf("hooks.json (%v) does not run replay-hook:\n%s", err, hooks)
	}
	stop := func() { testenv.RunReplay(t, replay, a.home, "serve", "--stop", "--db", db) }
	t.Cleanup(stop)
	agentOut := a.run(t, e2ePrompt)
	stop()
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(db), hookconf.LogName)); err == nil {
		t.Errorf("the hooks logged errors:\n%s", b)
	}
	checkModelSaw(t, a)
	checkLog(t, a, replay, db, agentOut)
}
