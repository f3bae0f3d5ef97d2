package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session/serve"
)

const piPackage = "@mariozechner/pi-coding-agent"

// TestServePiExtension runs the real pi with testdata/pi/tasklog.ts, a TypeScript extension
// that speaks replay serve's protocol over its socket, against the fake model: the always rule
// reaches the model with the prompt, the rule scoped to src/api reaches it only after pi read
// src/api/routes.ts (appended to the read's result), once; the log holds the prompt, the tool
// call and the deliveries, and verify passes.
func TestServePiExtension(t *testing.T) {
	piBin := filepath.Join(e2eAgentsDir(), "node_modules", ".bin", "pi")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	if v, want := installedVersion(piPackage), pinnedVersion(t, piPackage); v != want {
		t.Skipf("pi %s is not installed in %s (found %q; run .ci/install-agents)", want, e2eAgentsDir(), v)
	}
	bin := replayBinary(t)
	dir := t.TempDir()
	ws, agentDir, home := filepath.Join(dir, "shop"), filepath.Join(dir, "pi-agent"), filepath.Join(dir, "home")
	for name, content := range map[string]string{
		".clinerules/api.md":     "---\npaths: [\"src/api/**\"]\n---\nAPI handlers return JSON errors with a code.\n",
		".clinerules/general.md": "Answer in short sentences.\n",
		"src/api/routes.ts":      "export const routes = []\n",
	} {
		e2eWriteFile(t, filepath.Join(ws, name), content, 0o644)
	}
	os.MkdirAll(home, 0o755)

	model, err := fakemodel.Start([]fakemodel.Step{
		fakemodel.Call("read", map[string]string{"path": "src/api/routes.ts"}),
		fakemodel.Final("The routes are empty."),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	models, _ := json.Marshal(map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": model.URL() + "/v1", "api": "openai-completions", "apiKey": "dummy",
		"models": []map[string]string{{"id": "fake-model"}}}}})
	e2eWriteFile(t, filepath.Join(agentDir, "models.json"), string(models), 0o644)

	db := filepath.Join(dir, "tasklog.db")
	srv := exec.Command(bin, "serve", "--db", db, "--idle", "2m")
	srv.Env = append(os.Environ(), "HOME="+home)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	sock := serve.SocketPath(db)
	if c, err := dialWhenUp(sock); err != nil {
		t.Fatalf("replay serve did not listen: %v", err)
	} else {
		c.Close()
	}

	ext, err := filepath.Abs(filepath.Join("testdata", "pi", "tasklog.ts"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), agentRunLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, piBin, "-p", "--mode", "json", "--provider", "fake", "--model", "fake-model",
		"--no-session", "-e", ext, "Look at the API routes.")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "HOME="+home, "PI_CODING_AGENT_DIR="+agentDir, "PI_OFFLINE=1", "TASKLOG_SOCKET="+sock)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pi: %v\nstderr: %s\nstdout: %.2000s", err, stderr.String(), out)
	}
	if strings.Contains(stderr.String(), "tasklog:") {
		t.Errorf("the extension reported errors:\n%s", stderr.String())
	}

	reqs := model.ModelRequests()
	if len(reqs) < 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	const scoped, always = "API handlers return JSON errors", "Answer in short sentences."
	if first := reqs[0].Text(); !strings.Contains(first, always) || strings.Contains(first, scoped) {
		t.Errorf("first request: want the always rule and not the scoped one:\n%.3000s", first)
	}
	if last := reqs[len(reqs)-1].Text(); strings.Count(last, scoped) != 1 || strings.Count(last, always) != 1 {
		t.Errorf("request after the read: want each rule once (scoped %d, always %d):\n%.3000s",
			strings.Count(last, scoped), strings.Count(last, always), last)
	}

	if out, err := exec.Command(bin, "serve", "--stop", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("serve --stop: %v\n%s", err, out)
	}
	evs := taskEvents(t, db)
	for typ, want := range map[events.Type]int{events.TypeUserMessage: 1, events.TypeToolCall: 1, events.TypeDelivery: 2} {
		if n := countType(evs, typ); n != want {
			t.Errorf("%d %s events, want %d", n, typ, want)
		}
	}
	if out, err := exec.Command(bin, "verify", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
}
