package e2e

// The real coding agents (Claude Code, Codex, Cline, Copilot CLI), installed from npm by .ci/install-agents,
// driven against the scripted fake model of internal/fakemodel. This file holds the harness: where
// the agents are, how each is configured and run, and the script each follows.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
)

// agentRunLimit bounds one agent run. The scripted task takes a few seconds of CPU, but a
// loaded two-core machine has been seen to stretch Cline's to a minute.
const agentRunLimit = 150 * time.Second

// e2eAgentsDir is where .ci/install-agents put the agents: $TASKLOG_AGENTS, else
// ~/.cache/tasklog-agents.
func e2eAgentsDir() string {
	if d := os.Getenv("TASKLOG_AGENTS"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "tasklog-agents")
}

// agentDriver knows how to configure and run one real agent against the fake model.
type agentDriver struct {
	// name is the agent's name for replay install and replay hook.
	name string
	// bin is the executable under node_modules/.bin; pkg its npm package.
	bin, pkg string
	// configure writes the agent's own configuration for a model server at url and returns the
	// environment variables it needs besides PATH and HOME.
	configure func(t *testing.T, a *agentRun) []string
	// args are the command-line arguments that run one prompt.
	args func(prompt string) []string
	// handHook configures command as the agent's hook for every event it has, by hand (the
	// harness self-test, before replay install exists).
	handHook func(t *testing.T, a *agentRun, command string)
	// script is the fake model's script: read routes.ts, write a file under src/api, edit it,
	// run a shell command, answer.
	script func(ws string) []fakemodel.Step
	// readStep is the index of the step that reads src/api/routes.ts.
	readStep int
	// callID is the id the agent reports for the fake model's call at step i; nil for an agent
	// whose hooks get no call id (the log's ids are then checked to be distinct, the calls by
	// their tools).
	callID func(i int) string
	// sessionID finds the agent's session id in its output ("" when absent).
	sessionID func(stdout string) string
	// promptHook is whether a hook sees the user's prompt (Cline's CLI runs none).
	promptHook bool
	// toolNames maps the model's tool names to the ones the agent's hooks report, where they
	// differ (Copilot CLI reports its view, create, edit and bash as Read, Write, Edit, Bash).
	toolNames map[string]string
	// memory is a file of the workspace the agent loads by itself and says so to its hooks
	// (Gemini CLI's GEMINI.md): the scenario writes it and looks for its instructions_loaded.
	memory string
	// reportsLoads is whether the agent's hooks report the instruction files it loads
	// itself: the scenario then gives it a root AGENTS.md, which the audit must show loaded.
	reportsLoads bool
}

// jsonLinesField is the first string value of key in JSON Lines output.
func jsonLinesField(key string) func(string) string {
	return func(out string) string {
		for _, line := range strings.Split(out, "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) != nil {
				continue
			}
			if v, ok := m[key].(string); ok && v != "" {
				return v
			}
		}
		return ""
	}
}

// fakeCallID is the fake model's call id of step i with prefix.
func fakeCallID(prefix string) func(int) string {
	return func(i int) string { return fmt.Sprintf("%s_fake_%d", prefix, i+1) }
}

// agentRun is one agent run's folders and fake model.
type agentRun struct {
	driver agentDriver
	bin    string // absolute path of the agent's executable
	ws     string // the workspace (the agent's working directory)
	home   string // an empty HOME
	tmp    string // scratch space of the test
	model  *fakemodel.Server
	env    []string
	stderr string // the agent's standard error of its last run
}

// newAgentRun finds the agent (skipping with one line when node or the package is missing),
// makes empty HOME and workspace folders, and starts the fake model with the agent's script.
func newAgentRun(t *testing.T, d agentDriver) *agentRun {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found on PATH: the real-agent tests need node and bash .ci/install-agents")
	}
	bin := filepath.Join(e2eAgentsDir(), "node_modules", ".bin", d.bin)
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s not installed in %s: run bash .ci/install-agents (or set TASKLOG_AGENTS)", d.pkg, e2eAgentsDir())
	}
	if got, want := installedVersion(d.pkg), pinnedVersion(t, d.pkg); got != want {
		t.Skipf("%s %s installed in %s, %s pinned: run bash .ci/install-agents", d.pkg, got, e2eAgentsDir(), want)
	}
	tmp := t.TempDir()
	a := &agentRun{driver: d, bin: bin, tmp: tmp, ws: filepath.Join(tmp, "ws"), home: filepath.Join(tmp, "home")}
	for _, dir := range []string{a.ws, a.home} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The agents resolve symlinks in their working directory; the test compares paths.
	ws, err := filepath.EvalSymlinks(a.ws)
	if err != nil {
		t.Fatal(err)
	}
	a.ws = ws
	model, err := fakemodel.Start(d.script(a.ws))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = model.Close() })
	a.model = model
	return a
}

// pinnedVersion is the version of pkg that testdata/agents/package.json pins.
func pinnedVersion(t *testing.T, pkg string) string {
	t.Helper()
	var m struct{ Dependencies map[string]string }
	b, err := os.ReadFile(filepath.Join("testdata", "agents", "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil || m.Dependencies[pkg] == "" {
		t.Fatalf("testdata/agents/package.json pins no version of %s: %v", pkg, err)
	}
	return m.Dependencies[pkg]
}

// installedVersion is the version of pkg in the agents folder ("" when unknown).
func installedVersion(pkg string) string {
	var m struct{ Version string }
	b, err := os.ReadFile(filepath.Join(e2eAgentsDir(), "node_modules", filepath.FromSlash(pkg), "package.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return ""
	}
	return m.Version
}

// write creates a file of the workspace (parents included).
func (a *agentRun) write(t *testing.T, rel, content string) {
	t.Helper()
	e2eWriteFile(t, filepath.Join(a.ws, rel), content, 0o644)
}

func e2eWriteFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// run configures the agent and runs prompt in the workspace with a clean environment, stdin
// from /dev/null and a time limit. It fails the test when the agent fails, showing its output.
func (a *agentRun) run(t *testing.T, prompt string, extraEnv ...string) (stdout string) {
	t.Helper()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + a.home,
		"TMPDIR=" + a.scratch(t), // the agents' own temporary files go with the test's
		"LANG=C.UTF-8",
		"NO_COLOR=1",
		// A 'replay serve' that tasklog's hooks start exits a minute after its last hook.
		"TASKLOG_SERVE_IDLE=60s",
	}
	env = append(env, a.driver.configure(t, a)...)
	env = append(env, extraEnv...)
	a.env = env
	ctx, cancel := context.WithTimeout(context.Background(), agentRunLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.bin, a.driver.args(prompt)...)
	cmd.Dir = a.ws
	cmd.Env = env
	cmd.Stdin = nil // /dev/null
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	cpu := time.Duration(0)
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	a.stderr = errb.String()
	t.Logf("%s ran in %s (%s of CPU); the fake model received:\n%s", a.driver.name,
		time.Since(start).Round(time.Millisecond), cpu.Round(time.Millisecond), a.describeRequests())
	if err != nil {
		t.Fatalf("%s %s: %v (limit %s)\nstdout:\n%s\nstderr:\n%s\nfake model requests:\n%s",
			a.driver.bin, strings.Join(a.driver.args(prompt), " "), err, agentRunLimit,
			e2eTail(out.String(), 4000), e2eTail(errb.String(), 4000), a.describeRequests())
	}
	return out.String()
}

// scratch is the run's temporary folder, removed with the test's.
func (a *agentRun) scratch(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(a.tmp, "tmp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// describeRequests is a short account of what the fake model received, for failure messages.
func (a *agentRun) describeRequests() string {
	var b strings.Builder
	reqs := a.model.Requests()
	for _, r := range reqs {
		fmt.Fprintf(&b, "  #%d +%s %s %s api=%s stream=%v step=%d parts=%d tools=%s\n",
			r.Seq, r.Received.Sub(reqs[0].Received).Round(time.Millisecond), r.Method, r.Path, r.API,
			r.Stream, r.Step, len(r.Parts), strings.Join(r.Tools, ","))
	}
	return b.String()
}

func e2eTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// lastStep is the highest script step the fake model answered (-1 when none).
func lastStep(reqs []fakemodel.Request) int {
	last := -1
	for _, r := range reqs {
		last = max(last, r.Step)
	}
	return last
}

// firstRequestAtStep is the first model request answered with step i: the first request that
// carries the results of the steps before it.
func firstRequestAtStep(reqs []fakemodel.Request, i int) *fakemodel.Request {
	for k := range reqs {
		if reqs[k].Step == i {
			return &reqs[k]
		}
	}
	return nil
}

// loggedTool is the name under which the agent's hooks report the model's tool.
func (d agentDriver) loggedTool(tool string) string {
	if n, ok := d.toolNames[tool]; ok {
		return n
	}
	return tool
}

// installedRun is a run of d's agent in a workspace holding src/api/routes.ts and the scenario's
// rules, with tasklog installed for the project into the database db (a fresh replay binary,
// replay); the server the hooks start is stopped when the test ends.
func installedRun(t *testing.T, d agentDriver) (a *agentRun, replay, db string) {
	t.Helper()
	a = newAgentRun(t, d)
	replay = testenv.ReplayBinary(t)
	db = filepath.Join(a.tmp, "t.db")
	a.write(t, e2eRead, "export const routes = ['/users'];\n")
	for rel, content := range e2eRules(d.name) {
		a.write(t, rel, content)
	}
	if out, code := testenv.RunReplay(t, replay, a.home, "install", d.name, "--project", a.ws, "--db", db); code != 0 {
		t.Fatalf("replay install: exit %d\n%s", code, out)
	}
	t.Cleanup(func() { testenv.RunReplay(t, replay, a.home, "serve", "--stop", "--db", db) })
	return a, replay, db
}
