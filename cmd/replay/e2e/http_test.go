package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
)

// TestQwenHTTPHooks runs the scenario of TestAgentsEndToEnd in the real Qwen Code with its hooks
// as HTTP posts to 'replay serve --http' (replay install qwen --http): no process starts for a
// hook, and the model and the log must show the same as with the command hooks.
func TestQwenHTTPHooks(t *testing.T) {
	t.Parallel() // a real agent: runs beside the others, at most -parallel at once
	a := newAgentRun(t, qwenDriver)
	replay := testenv.ReplayBinary(t)
	db := filepath.Join(a.tmp, "t.db")
	a.write(t, e2eRead, "export const routes = ['/users'];\n")
	for rel, content := range e2eRules("qwen") {
		a.write(t, rel, content)
	}
	a.write(t, "AGENTS.md", ownMarker+": the agent loads this file by itself.\n")

	if out, code := testenv.RunReplay(t, replay, a.home, "install", "qwen", "--project", a.ws, "--db", db, "--http"); code == 0 ||
		!strings.Contains(out, "no 'replay serve --http' is running") {
		t.Errorf("install --http with no server: exit %d, want a failure naming the missing server:\n%s", code, out)
	}
	startHTTPServer(t, replay, a.home, db)
	out, code := testenv.RunReplay(t, replay, a.home, "install", "qwen", "--project", a.ws, "--db", db, "--http")
	if code != 0 {
		t.Fatalf("replay install qwen --http: exit %d\n%s", code, out)
	}
	t.Logf("replay install qwen --http:\n%s", out)
	if types := qwenHookTypes(t, a.ws); len(types) != 1 || types["http"] == 0 {
		t.Fatalf("the hooks' types: %v, want http only", types)
	}

	agentOut := a.run(t, e2ePrompt)
	if out, code := testenv.RunReplay(t, replay, a.home, "serve", "--stop", "--db", db); code != 0 {
		t.Errorf("replay serve --stop: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(db), "tasklog-hook.log")); err == nil {
		t.Errorf("the hooks logged errors:\n%s", b)
	}
	checkModelSaw(t, a)
	checkLog(t, a, replay, db, agentOut)
	checkOwnLoads(t, a, replay, db)

	// Back to the command hook: install without --http replaces the HTTP entries.
	out, code = testenv.RunReplay(t, replay, a.home, "install", "qwen", "--project", a.ws, "--db", db)
	if types := qwenHookTypes(t, a.ws); code != 0 || len(types) != 1 || types["command"] == 0 {
		t.Errorf("install without --http: exit %d, hook types %v, want command only\n%s", code, types, out)
	}
}

// qwenHookTypes counts the hooks of the workspace's .qwen/settings.json by type.
func qwenHookTypes(t *testing.T, ws string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, ".qwen", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type string }
		}
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf(".qwen/settings.json: %v\n%s", err, b)
	}
	types := map[string]int{}
	for _, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				types[h.Type]++
			}
		}
	}
	return types
}

// startHTTPServer starts 'replay serve --http 127.0.0.1:0' for db and waits until it wrote its
// address; it is stopped when the test ends.
func startHTTPServer(t *testing.T, replay, home, db string) {
	t.Helper()
	cmd := exec.Command(replay, "serve", "--http", "127.0.0.1:0", "--db", db)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		testenv.RunReplay(t, replay, home, "serve", "--stop", "--db", db)
		select {
		case <-exited:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-exited
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		// The server writes its address to DB.http (docs/server.md).
		if b, err := os.ReadFile(db + ".http"); err == nil && strings.HasPrefix(string(b), "http://127.0.0.1:") {
			return
		}
		select {
		case err := <-exited:
			t.Fatalf("replay serve --http exited: %v\n%s", err, stderr.String())
		case <-ctx.Done():
			t.Fatalf("replay serve --http wrote no address within a minute\n%s", stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
