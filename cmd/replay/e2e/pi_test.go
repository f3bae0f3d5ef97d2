package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/extension"
	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session/serve"
)

const piPackage = "@mariozechner/pi-coding-agent"

// Rule texts of the pi workspace.
const piScoped, piAlways = "API handlers return JSON errors", "Answer in short sentences."

// piRun is a workspace with a rule scoped to src/api and an always rule, a fake model, pi's
// settings pointing at it, and the replay binary: what each pi test starts from.
type piRun struct {
	t                      *testing.T
	pi, bin, ext           string
	ws, agentDir, home, db string
	model                  *fakemodel.Server
}

// newPiRun skips without node or the pinned pi; steps is the fake model's script.
func newPiRun(t *testing.T, db string, steps ...fakemodel.Step) *piRun {
	t.Helper()
	piBin := filepath.Join(e2eAgentsDir(), "node_modules", ".bin", "pi")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	if v, want := installedVersion(piPackage), pinnedVersion(t, piPackage); v != want {
		t.Skipf("pi %s is not installed in %s (found %q; run .ci/install-agents)", want, e2eAgentsDir(), v)
	}
	dir := t.TempDir()
	r := &piRun{t: t, pi: piBin, bin: testenv.ReplayBinary(t), ws: filepath.Join(dir, "shop"),
		agentDir: filepath.Join(dir, "pi-agent"), home: filepath.Join(dir, "home"), db: db}
	if r.db == "" {
		r.db = filepath.Join(dir, "tasklog.db")
	}
	for name, content := range map[string]string{
		".clinerules/api.md":     "---\npaths: [\"src/api/**\"]\n---\n" + piScoped + " with a code.\n",
		".clinerules/general.md": piAlways + "\n",
		"src/api/routes.ts":      "export const routes = []\n",
	} {
		e2eWriteFile(t, filepath.Join(r.ws, name), content, 0o644)
	}
	os.MkdirAll(r.home, 0o755)
	model, err := fakemodel.Start(steps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	r.model = model
	models, _ := json.Marshal(map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": model.URL() + "/v1", "api": "openai-completions", "apiKey": "dummy",
		"models": []map[string]string{{"id": "fake-model"}}}}})
	e2eWriteFile(t, filepath.Join(r.agentDir, "models.json"), string(models), 0o644)
	// The extension as install writes it, the socket client in place.
	r.ext = filepath.Join(t.TempDir(), "tasklog.ts")
	e2eWriteFile(t, r.ext, extension.Source("pi"), 0o644)
	return r
}

// serve starts replay serve for the run's database and waits until it answers.
func (r *piRun) serve() *exec.Cmd {
	r.t.Helper()
	srv := exec.Command(r.bin, "serve", "--db", r.db, "--idle", "2m")
	srv.Env = append(os.Environ(), "HOME="+r.home)
	if err := srv.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { srv.Process.Signal(syscall.SIGCONT); srv.Process.Kill(); srv.Wait() })
	c, err := testenv.DialWhenUp(serve.SocketPath(r.db))
	if err != nil {
		r.t.Fatalf("replay serve did not listen: %v", err)
	}
	c.Close()
	return srv
}

// run runs pi in the workspace with the extension (pi's own discovery of the installed one when
// ext is "", with no tasklog variables set) and returns its stderr; args go before the prompt
// (-c continues the last session).
func (r *piRun) run(env []string, args ...string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentRunLimit)
	defer cancel()
	flags := []string{"-p", "--mode", "json", "--provider", "fake", "--model", "fake-model"}
	vars := []string{"HOME=" + r.home, "PI_CODING_AGENT_DIR=" + r.agentDir, "PI_OFFLINE=1", "TASKLOG_SOCKET="}
	if r.ext != "" {
		flags = append(flags, "-e", r.ext)
		vars = append(vars, "TASKLOG_DB="+r.db)
	} else {
		vars = append(vars, "TASKLOG_DB=", "XDG_DATA_HOME="+filepath.Join(r.home, "no-data"))
	}
	cmd := exec.CommandContext(ctx, r.pi, append(flags, args...)...)
	cmd.Dir = r.ws
	cmd.Env = append(os.Environ(), append(vars, env...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("pi: %v\nstderr: %s\nstdout: %.2000s", err, stderr.String(), out)
	}
	return stderr.String()
}

// stop stops the database's server and returns the events of its one task; verify must pass.
func (r *piRun) stop() []events.Event {
	r.t.Helper()
	if out, err := exec.Command(r.bin, "serve", "--stop", "--db", r.db).CombinedOutput(); err != nil {
		r.t.Fatalf("serve --stop: %v\n%s", err, out)
	}
	if out, err := exec.Command(r.bin, "verify", "--db", r.db).CombinedOutput(); err != nil {
		r.t.Fatalf("verify: %v\n%s", err, out)
	}
	return testenv.TaskEvents(r.t, r.db)
}

// TestServePiExtension runs the real pi with its extension (internal/extension), a TypeScript extension
// that speaks replay serve's protocol over its socket, against the fake model: the always rule
// reaches the model with the prompt, the rule scoped to src/api reaches it only after pi read
// src/api/routes.ts (appended to the read's result), once; the log holds the prompt, the tool
// call and the deliveries, and verify passes.
func TestServePiExtension(t *testing.T) {
	r := newPiRun(t, "",
		fakemodel.Call("read", map[string]string{"path": "src/api/routes.ts"}),
		fakemodel.Final("The routes are empty."))
	r.serve()
	if stderr := r.run([]string{"TASKLOG_SOCKET=" + serve.SocketPath(r.db)}, "--no-session", "Look at the API routes."); strings.Contains(stderr, "tasklog:") {
		t.Errorf("the extension reported errors:\n%s", stderr)
	}
	reqs := r.model.ModelRequests()
	if len(reqs) < 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	if first := reqs[0].Text(); !strings.Contains(first, piAlways) || strings.Contains(first, piScoped) {
		t.Errorf("first request: want the always rule and not the scoped one:\n%.3000s", first)
	}
	if last := reqs[len(reqs)-1].Text(); strings.Count(last, piScoped) != 1 || strings.Count(last, piAlways) != 1 {
		t.Errorf("request after the read: want each rule once (scoped %d, always %d):\n%.3000s",
			strings.Count(last, piScoped), strings.Count(last, piAlways), last)
	}
	evs := r.stop()
	wantOneReadTwoDeliveries(t, evs)
}

// TestServePiContinue runs pi twice on one session (pi -p, then pi -c -p): the second process's
// prompt and stop are new events, not taken for the first's (the extension keys them by the
// session entry the prompt follows, not by a counter that restarts with each process).
func TestServePiContinue(t *testing.T) {
	r := newPiRun(t, "",
		fakemodel.Call("read", map[string]string{"path": "src/api/routes.ts"}),
		fakemodel.Final("The routes are empty."))
	r.serve()
	if stderr := r.run(nil, "Look at the API routes."); strings.Contains(stderr, "tasklog:") {
		t.Errorf("first run: the extension reported errors:\n%s", stderr)
	}
	if stderr := r.run(nil, "-c", "And the handlers?"); strings.Contains(stderr, "tasklog:") {
		t.Errorf("continued run: the extension reported errors:\n%s", stderr)
	}
	evs := r.stop()
	var prompts []string
	for _, ev := range evs {
		if ev.Type == events.TypeUserMessage {
			p, _ := ev.Payload()
			prompts = append(prompts, p.(*events.UserMessage).Text)
		}
	}
	if len(prompts) != 2 || prompts[0] != "Look at the API routes." || prompts[1] != "And the handlers?" {
		t.Errorf("prompts recorded %q, want both runs' prompts in order", prompts)
	}
	if n := testenv.CountType(evs, events.TypeAgentStopped); n < 2 {
		t.Errorf("%d agent_stopped events, want one per run's end at least", n)
	}
}

// TestServePiHungServer runs pi while its server is stopped (SIGSTOP: it accepts connections
// and never answers): pi finishes, the first event waits out the extension's budget, and the
// events after it skip the server instead of waiting again.
func TestServePiHungServer(t *testing.T) {
	r := newPiRun(t, "",
		fakemodel.Call("read", map[string]string{"path": "src/api/routes.ts"}),
		fakemodel.Final("The routes are empty."))
	srv := r.serve()
	if err := srv.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stderr := r.run([]string{"TASKLOG_PI_BUDGET_MS=1000"}, "--no-session", "Look at the API routes.")
	waited, skipped := strings.Count(stderr, "no answer from replay serve"), strings.Count(stderr, "skipping it for now")
	if waited < 1 || skipped < 3 {
		t.Errorf("want one wait for the hung server and the later events skipping it; %d waits, %d skips:\n%s", waited, skipped, stderr)
	}
	if len(r.model.ModelRequests()) < 2 {
		t.Errorf("pi did not go on past the hung server")
	}
}

// TestServePiStartsServer runs pi with no server: the extension starts replay serve for the
// database ($TASKLOG_REPLAY names the binary), whose path is long enough that its socket is in
// the private folder under a hash of the path, which the extension computes as the server does.
func TestServePiStartsServer(t *testing.T) {
	deep := filepath.Join(t.TempDir(), strings.Repeat("a-folder-with-a-long-name-", 4))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(deep, "tasklog.db")
	if len(db)+len(".sock") <= 100 || !strings.HasPrefix(serve.SocketPath(db), os.TempDir()) {
		t.Fatalf("the database path %s does not make a hashed socket path", db)
	}
	r := newPiRun(t, db,
		fakemodel.Call("read", map[string]string{"path": "src/api/routes.ts"}),
		fakemodel.Final("The routes are empty."))
	t.Cleanup(func() { exec.Command(r.bin, "serve", "--stop", "--db", db).Run() })
	if stderr := r.run([]string{"TASKLOG_REPLAY=" + r.bin}, "--no-session", "Look at the API routes."); strings.Contains(stderr, "tasklog:") {
		t.Errorf("the extension reported errors:\n%s", stderr)
	}
	evs := r.stop()
	wantOneReadTwoDeliveries(t, evs)
}

// TestServePiInstalled runs pi on a project where 'replay install pi' put the extension: pi loads
// it by itself, it finds the replay binary and the database in its tasklog.json (no tasklog
// variable is set), starts the server, and the session is recorded.
func TestServePiInstalled(t *testing.T) {
	r := newPiRun(t, "",
		fakemodel.Call("read", map[string]string{"path": "src/api/routes.ts"}),
		fakemodel.Final("The routes are empty."))
	r.ext = ""
	if out, err := exec.Command(r.bin, "install", "pi", "--project", r.ws, "--db", r.db).CombinedOutput(); err != nil {
		t.Fatalf("install pi: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command(r.bin, "serve", "--stop", "--db", r.db).Run() })
	if stderr := r.run(nil, "--no-session", "Look at the API routes."); strings.Contains(stderr, "tasklog:") {
		t.Errorf("the extension reported errors:\n%s", stderr)
	}
	if last := r.model.ModelRequests(); len(last) < 2 || strings.Count(last[len(last)-1].Text(), piScoped) != 1 {
		t.Errorf("the scoped rule did not reach the model once after the read")
	}
	evs := r.stop()
	wantOneReadTwoDeliveries(t, evs)
}

// wantOneReadTwoDeliveries checks the log of a pi run that read one file: the prompt, the read
// and the two rules' deliveries, once each.
func wantOneReadTwoDeliveries(t *testing.T, evs []events.Event) {
	t.Helper()
	for typ, want := range map[events.Type]int{events.TypeUserMessage: 1, events.TypeToolCall: 1, events.TypeDelivery: 2} {
		if n := testenv.CountType(evs, typ); n != want {
			t.Errorf("%d %s events, want %d", n, typ, want)
		}
	}
}
