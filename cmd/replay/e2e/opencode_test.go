package e2e

// opencode's driver, kept apart from the others': it has no command hooks, so tasklog reaches
// it through the plugin 'replay install opencode' writes into .opencode/plugin, and the harness's
// hand hook through a plugin that runs the hook command.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/session/serve"
)

// opencodeDriver runs opencode's 'run' against the fake model's Chat Completions API, through
// a provider of its own (the AI SDK's OpenAI-compatible one, which opencode ships) in the
// user's opencode.json. Its tool calls keep the model's call ids.
var opencodeDriver = agentDriver{
	name: "opencode", bin: "opencode", pkg: "opencode-ai",
	callID: fakeCallID("call"), sessionID: jsonLinesField("sessionID"), promptHook: true,
	configure: func(t *testing.T, a *agentRun) []string {
		conf, err := json.MarshalIndent(map[string]any{
			"$schema":     "https://opencode.ai/config.json",
			"model":       "fake/fake-model",
			"small_model": "fake/fake-model",
			"autoupdate":  false,
			"share":       "disabled",
			"provider": map[string]any{"fake": map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "Fake model",
				"options": map[string]any{"baseURL": a.model.URL() + "/v1", "apiKey": "dummy"},
				"models":  map[string]any{"fake-model": map[string]any{"name": "Fake model", "tool_call": true}},
			}},
		}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		e2eWriteFile(t, filepath.Join(a.home, ".config", "opencode", "opencode.json"), string(conf), 0o644)
		return []string{
			"XDG_CONFIG_HOME=" + filepath.Join(a.home, ".config"),
			"XDG_DATA_HOME=" + filepath.Join(a.home, ".local", "share"),
			"XDG_CACHE_HOME=" + filepath.Join(a.home, ".cache"),
			"XDG_STATE_HOME=" + filepath.Join(a.home, ".local", "state"),
			"OPENCODE_DISABLE_MODELS_FETCH=1",
			"OPENCODE_DISABLE_AUTOUPDATE=1",
		}
	},
	args: func(prompt string) []string {
		// The prompt as words: opencode's run joins its arguments with spaces, quoting each that
		// holds one.
		return append([]string{"run", "--format", "json", "-m", "fake/fake-model"}, strings.Fields(prompt)...)
	},
	handHook: func(t *testing.T, a *agentRun, command string) {
		e2eWriteFile(t, filepath.Join(a.ws, ".opencode", "plugin", "hand.ts"), opencodeHandPlugin(t, command), 0o644)
	},
	script: func(ws string) []fakemodel.Step {
		abs := func(rel string) string { return filepath.Join(ws, rel) }
		return []fakemodel.Step{
			fakemodel.Call("read", map[string]any{"filePath": abs(e2eRead)}),
			fakemodel.Call("write", map[string]any{"filePath": abs(e2eWrite), "content": "export const health = 'ok';\n"}),
			fakemodel.Call("edit", map[string]any{"filePath": abs(e2eWrite), "oldString": "'ok'", "newString": "'healthy'"}),
			fakemodel.Call("bash", map[string]any{"command": "ls src/api", "description": "list the api folder"}),
			fakemodel.Final("Added a health check (fake model)."),
		}
	},
}

// opencodeHandPlugin is a plugin that runs command with a Claude Code-like payload on each
// prompt and tool call, and appends a PostToolUse reply's additionalContext to the tool's output.
func opencodeHandPlugin(t *testing.T, command string) string {
	t.Helper()
	q, err := json.Marshal(command)
	if err != nil {
		t.Fatal(err)
	}
	return `import { execSync } from "node:child_process";
const run = (payload: any): any => {
	try {
		return JSON.parse(execSync(` + string(q) + `, { input: JSON.stringify(payload), shell: "/bin/sh" }).toString() || "{}");
	} catch {
		return {};
	}
};
export const Hand = async () => ({
	"chat.message": async (input: any, output: any) => {
		run({ hook_event_name: "UserPromptSubmit", session_id: input.sessionID, parts: output.parts });
	},
	"tool.execute.before": async (input: any, output: any) => {
		run({ hook_event_name: "PreToolUse", session_id: input.sessionID, tool_name: input.tool, tool_use_id: input.callID, tool_input: output.args });
	},
	"tool.execute.after": async (input: any, output: any) => {
		const r = run({ hook_event_name: "PostToolUse", session_id: input.sessionID, tool_name: input.tool, tool_use_id: input.callID, tool_input: input.args });
		const text = r?.hookSpecificOutput?.additionalContext;
		if (text) output.output += "\n\n" + text;
	},
});
`
}

// TestOpencodeHungServer runs opencode with tasklog's plugin while the database's server is
// stopped (SIGSTOP: it accepts connections and never answers): opencode finishes its task, the
// first event waits out the plugin's budget, and the events after it skip the server instead of
// waiting again.
func TestOpencodeHungServer(t *testing.T) {
	t.Parallel() // a real agent: runs beside the others, at most -parallel at once
	a := newAgentRun(t, opencodeDriver)
	replay := testenv.ReplayBinary(t)
	db := filepath.Join(a.tmp, "t.db")
	a.write(t, e2eRead, "export const routes = ['/users'];\n")
	if out, code := testenv.RunReplay(t, replay, a.home, "install", "opencode", "--project", a.ws, "--db", db); code != 0 {
		t.Fatalf("replay install opencode: exit %d\n%s", code, out)
	}
	srv := exec.Command(replay, "serve", "--db", db, "--idle", "2m")
	srv.Env = append(os.Environ(), "HOME="+a.home)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Signal(syscall.SIGCONT); srv.Process.Kill(); srv.Wait() })
	c, err := testenv.DialWhenUp(serve.SocketPath(db))
	if err != nil {
		t.Fatalf("replay serve did not listen: %v", err)
	}
	c.Close()
	if err := srv.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	a.run(t, e2ePrompt, "TASKLOG_OPENCODE_BUDGET_MS=1000")
	waited, skipped := strings.Count(a.stderr, "no answer from replay serve"), strings.Count(a.stderr, "skipping it for now")
	if waited < 1 || skipped < 3 {
		t.Errorf("want one wait for the hung server and the later events skipping it; %d waits, %d skips:\n%s", waited, skipped, a.stderr)
	}
	if got, want := lastStep(a.model.ModelRequests()), len(opencodeDriver.script(a.ws))-1; got != want {
		t.Errorf("opencode stopped at step %d of %d with the server hung", got, want)
	}
}

// TestOpencodeResume runs the real opencode twice on one session ('opencode run', then
// 'opencode run -c') with tasklog's plugin: the first run reads src/api/routes.ts, which
// delivers the src/api rule with the read's output, and the always rule goes with the prompt;
// the continued run reads it again. opencode keeps both in the session it continues: every
// request of the continued run holds each rule once, from the first run, and tasklog delivers
// nothing again. 'replay audit --json' must say the same.
func TestOpencodeResume(t *testing.T) {
	t.Parallel() // a real agent: runs beside the others, at most -parallel at once
	read := func(ws string) fakemodel.Step {
		return fakemodel.Call("read", map[string]any{"filePath": filepath.Join(ws, e2eRead)})
	}
	d := opencodeDriver
	d.script = func(ws string) []fakemodel.Step {
		return []fakemodel.Step{read(ws), fakemodel.Final("The routes are empty.")}
	}
	a := newAgentRun(t, d)
	replay := testenv.ReplayBinary(t)
	db := filepath.Join(a.tmp, "t.db")
	a.write(t, e2eRead, "export const routes = ['/users'];\n")
	for rel, content := range e2eRules("opencode") {
		a.write(t, rel, content)
	}
	if out, code := testenv.RunReplay(t, replay, a.home, "install", "opencode", "--project", a.ws, "--db", db); code != 0 {
		t.Fatalf("replay install opencode: exit %d\n%s", code, out)
	}
	t.Cleanup(func() { testenv.RunReplay(t, replay, a.home, "serve", "--stop", "--db", db) })
	a.run(t, "Look at the API routes.")
	first := a.model.ModelRequests()
	for _, m := range []string{scopedMarker, alwaysMarker} {
		if n := strings.Count(first[len(first)-1].Text(), m); n != 1 {
			t.Fatalf("first run: the last request holds %s %d times, want once", m, n)
		}
	}

	// The continued run's requests carry the first run's call: its script goes on from the
	// second step.
	resumed, err := fakemodel.Start([]fakemodel.Step{fakemodel.Final("unused"), read(a.ws), fakemodel.Final("The routes are unchanged.")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resumed.Close() })
	a.model = resumed
	a.driver.args = func(prompt string) []string {
		return append([]string{"run", "-c", "--format", "json", "-m", "fake/fake-model"}, strings.Fields(prompt)...)
	}
	a.run(t, "Look at the routes again.")
	checkResumedOnce(t, resumed.ModelRequests(), "", scopedMarker, alwaysMarker)
	if out, code := testenv.RunReplay(t, replay, a.home, "serve", "--stop", "--db", db); code != 0 {
		t.Fatalf("replay serve --stop: exit %d\n%s", code, out)
	}
	checkResumeAudit(t, replay, a.home, db, map[string]bool{"api": true, "general": true})
}
