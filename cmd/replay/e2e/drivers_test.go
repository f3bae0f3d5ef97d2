package e2e

// How each real agent is configured, run and scripted (see ../shared/agents/README.md).

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
)

// The files the scripted model touches, relative to the workspace.
const (
	e2eRead  = "src/api/routes.ts"
	e2eWrite = "src/api/health.ts"
)

// claudeDriver runs Claude Code in print mode against the Anthropic Messages API. From 2.1.332
// on it asks for node 22, which .ci/install-agents installs beside it: its folder goes first on
// PATH.
var claudeDriver = agentDriver{
	name: "claude-code", bin: "claude", pkg: "@anthropic-ai/claude-code",
	callID: fakeCallID("toolu"), sessionID: jsonLinesField("session_id"), promptHook: true,
	configure: func(t *testing.T, a *agentRun) []string {
		return []string{
			"PATH=" + filepath.Dir(a.bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
			"ANTHROPIC_BASE_URL=" + a.model.URL(),
			"ANTHROPIC_API_KEY=dummy",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_TELEMETRY=1",
			"DISABLE_ERROR_REPORTING=1",
			"DISABLE_AUTOUPDATER=1",
			"IS_SANDBOX=1", // bypassPermissions is refused to root otherwise
		}
	},
	args: func(prompt string) []string {
		return []string{"-p", prompt, "--permission-mode", "bypassPermissions",
			"--output-format", "stream-json", "--verbose"}
	},
	handHook: func(t *testing.T, a *agentRun, command string) {
		e2eWriteFile(t, filepath.Join(a.ws, ".claude", "settings.json"), claudeHooksJSON(t, command,
			"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"), 0o644)
	},
	script: func(ws string) []fakemodel.Step {
		abs := func(rel string) string { return filepath.Join(ws, rel) }
		return []fakemodel.Step{
			fakemodel.Call("Read", map[string]any{"file_path": abs(e2eRead)}),
			fakemodel.Call("Write", map[string]any{"file_path": abs(e2eWrite), "content": "export const health = 'ok';\n"}),
			fakemodel.Call("Edit", map[string]any{"file_path": abs(e2eWrite), "old_string": "'ok'", "new_string": "'healthy'"}),
			fakemodel.Call("Bash", map[string]any{"command": "ls src/api", "description": "list the api folder"}),
			fakemodel.Final("Added a health check (fake model)."),
		}
	},
}

// codexDriver runs codex exec against the OpenAI Responses API; apply_patch is a freeform tool.
var codexDriver = agentDriver{
	name: "codex", bin: "codex", pkg: "@openai/codex",
	callID: fakeCallID("call"), sessionID: jsonLinesField("thread_id"), promptHook: true,
	configure: func(t *testing.T, a *agentRun) []string {
		codexHome := filepath.Join(a.home, ".codex")
		e2eWriteFile(t, filepath.Join(codexHome, "config.toml"), fmt.Sprintf(`model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

# The workspace is trusted: Codex loads an untrusted project's .codex layer disabled.
[projects."%s"]
trust_level = "trusted"
`, a.model.URL(), a.ws), 0o644)
		return []string{"CODEX_HOME=" + codexHome, "FAKE_API_KEY=dummy"}
	},
	args: func(prompt string) []string {
		return []string{"exec", "--skip-git-repo-check", "--json", "--dangerously-bypass-hook-trust", prompt}
	},
	handHook: func(t *testing.T, a *agentRun, command string) {
		e2eWriteFile(t, filepath.Join(a.ws, ".codex", "hooks.json"), claudeHooksJSON(t, command,
			"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"), 0o644)
	},
	script: func(ws string) []fakemodel.Step {
		return []fakemodel.Step{
			fakemodel.Call("exec_command", map[string]any{"cmd": "cat " + e2eRead}),
			fakemodel.FreeformCall("apply_patch", "*** Begin Patch\n*** Add File: "+e2eWrite+"\n+export const health = 'ok';\n*** End Patch\n"),
			fakemodel.FreeformCall("apply_patch", "*** Begin Patch\n*** Update File: "+e2eWrite+"\n@@\n-export const health = 'ok';\n+export const health = 'healthy';\n*** End Patch\n"),
			fakemodel.Call("exec_command", map[string]any{"cmd": "ls src/api"}),
			fakemodel.Final("Added a health check (fake model)."),
		}
	},
}

// clineDriver runs the Cline CLI against an OpenAI-compatible Chat Completions provider.
var clineDriver = agentDriver{
	name: "cline", bin: "cline", pkg: "cline",
	callID: fakeCallID("call"), sessionID: jsonLinesField("taskId"),
	configure: func(t *testing.T, a *agentRun) []string {
		env := []string{"CLINE_DIR=" + filepath.Join(a.home, ".cline"), "CLINE_SESSION_BACKEND_MODE=local"}
		clineAuth(t, a, env)
		return env
	},
	args: func(prompt string) []string { return []string{"--json", prompt} },
	handHook: func(t *testing.T, a *agentRun, command string) {
		for _, ev := range []string{"TaskStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "TaskComplete"} {
			e2eWriteFile(t, filepath.Join(a.ws, ".clinerules", "hooks", ev), "#!/bin/sh\nexec "+command+"\n", 0o755)
		}
	},
	script: func(ws string) []fakemodel.Step {
		abs := func(rel string) string { return filepath.Join(ws, rel) }
		return []fakemodel.Step{
			fakemodel.Call("read_files", map[string]any{"files": []any{map[string]any{"path": abs(e2eRead)}}}),
			fakemodel.Call("editor", map[string]any{"path": abs(e2eWrite), "new_text": "export const health = 'ok';\n"}),
			fakemodel.Call("editor", map[string]any{"path": abs(e2eWrite), "old_text": "'ok'", "new_text": "'healthy'"}),
			fakemodel.Call("run_commands", map[string]any{"commands": []string{"ls src/api"}}),
			fakemodel.Final("Added a health check (fake model)."),
		}
	},
}

// geminiDriver runs Gemini CLI in prompt mode against Gemini's REST API. The API-key auth is
// chosen in the user's settings (with the variables alone it picks another, which it then
// refuses); GEMINI_CLI_TRUST_WORKSPACE lets the project's hooks run. Its hooks get no call id.
var geminiDriver = agentDriver{
	name: "gemini", bin: "gemini", pkg: "@google/gemini-cli",
	sessionID: jsonLinesField("session_id"), promptHook: true, memory: "GEMINI.md",
	configure: func(t *testing.T, a *agentRun) []string {
		e2eWriteFile(t, filepath.Join(a.home, ".gemini", "settings.json"), `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "telemetry": {"enabled": false}
}
`, 0o644)
		return []string{
			"GEMINI_CLI_HOME=" + a.home,
			"GEMINI_API_KEY=dummy",
			"GOOGLE_GEMINI_BASE_URL=" + a.model.URL(),
			"GEMINI_CLI_TRUST_WORKSPACE=true",
		}
	},
	args: func(prompt string) []string {
		// -m: the "auto" model would first send a routing request of its own.
		return []string{"-p", prompt, "--yolo", "-m", "gemini-2.5-flash", "--output-format", "stream-json"}
	},
	handHook: func(t *testing.T, a *agentRun, command string) {
		hooks := map[string]any{}
		for _, ev := range []string{"SessionStart", "BeforeAgent", "BeforeModel", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"} {
			hooks[ev] = []any{map[string]any{"matcher": "*", "hooks": []any{
				map[string]any{"type": "command", "command": command, "timeout": 10000}}}}
		}
		b, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		e2eWriteFile(t, filepath.Join(a.ws, ".gemini", "settings.json"), string(b), 0o644)
	},
	script: func(ws string) []fakemodel.Step {
		abs := func(rel string) string { return filepath.Join(ws, rel) }
		return []fakemodel.Step{
			fakemodel.Call("read_file", map[string]any{"file_path": abs(e2eRead)}),
			fakemodel.Call("write_file", map[string]any{"file_path": abs(e2eWrite), "content": "export const health = 'ok';\n"}),
			fakemodel.Call("replace", map[string]any{"file_path": abs(e2eWrite), "instruction": "say healthy",
				"old_string": "'ok'", "new_string": "'healthy'"}),
			fakemodel.Call("run_shell_command", map[string]any{"command": "ls src/api", "description": "list the api folder"}),
			fakemodel.Final("Added a health check (fake model)."),
		}
	},
}

// qwenDriver runs Qwen Code in prompt mode against the OpenAI Chat Completions API. It needs
// node 22, which .ci/install-agents installs beside it: its folder goes first on PATH.
var qwenDriver = agentDriver{
	name: "qwen", bin: "qwen", pkg: "@qwen-code/qwen-code",
	callID: fakeCallID("call"), sessionID: jsonLinesField("session_id"), promptHook: true, reportsLoads: true,
	configure: func(t *testing.T, a *agentRun) []string {
		// No update check, usage statistics or telemetry: nothing leaves the machine.
		e2eWriteFile(t, filepath.Join(a.home, ".qwen", "settings.json"), `{
  "general": {"enableAutoUpdate": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
`, 0o644)
		return []string{
			"PATH=" + filepath.Dir(a.bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
			"OPENAI_BASE_URL=" + a.model.URL() + "/v1",
			"OPENAI_API_KEY=dummy",
			"OPENAI_MODEL=fake-model",
			"QWEN_CODE_SUPPRESS_YOLO_WARNING=1",
		}
	},
	args: func(prompt string) []string {
		return []string{"--auth-type", "openai", "--approval-mode", "yolo", "--output-format", "stream-json", prompt}
	},
	handHook: func(t *testing.T, a *agentRun, command string) {
		// Not InstructionsLoaded: Qwen Code runs it for several files at once, and the hand
		// hook's log takes one payload at a time.
		e2eWriteFile(t, filepath.Join(a.ws, ".qwen", "settings.json"), claudeHooksJSON(t, command,
			"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"), 0o644)
	},
	script: func(ws string) []fakemodel.Step {
		abs := func(rel string) string { return filepath.Join(ws, rel) }
		return []fakemodel.Step{
			fakemodel.Call("read_file", map[string]any{"file_path": abs(e2eRead)}),
			fakemodel.Call("write_file", map[string]any{"file_path": abs(e2eWrite), "content": "export const health = 'ok';\n"}),
			fakemodel.Call("edit", map[string]any{"file_path": abs(e2eWrite), "old_string": "'ok'", "new_string": "'healthy'"}),
			fakemodel.Call("run_shell_command", map[string]any{"command": "ls src/api", "description": "list the api folder"}),
			fakemodel.Final("Added a health check (fake model)."),
		}
	},
}

// allDrivers are the agents the end-to-end tests drive, in order.
var allDrivers = []agentDriver{claudeDriver, codexDriver, clineDriver, geminiDriver, qwenDriver, copilotCLIDriver, opencodeDriver}

// clineAuth points Cline at the fake model: cline stores the base URL with its port, so each run
// authenticates anew into its own CLINE_DIR.
func clineAuth(t *testing.T, a *agentRun, env []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.bin, "auth", "-p", "openai-compatible", "-k", "dummy",
		"-b", a.model.URL()+"/v1", "-m", "fake-model")
	cmd.Dir = a.ws
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + a.home, "NO_COLOR=1"}, env...)
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cline auth: %v\n%s", err, e2eTail(string(out), 4000))
	}
}

// claudeHooksJSON is Claude's (and Codex's) hooks configuration running command for events.
func claudeHooksJSON(t *testing.T, command string, events ...string) string {
	t.Helper()
	hooks := map[string]any{}
	for _, ev := range events {
		hooks[ev] = []any{map[string]any{"matcher": "*", "hooks": []any{
			map[string]any{"type": "command", "command": command, "timeout": 10}}}}
	}
	b, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// e2eQuote quotes s for a POSIX shell.
func e2eQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
