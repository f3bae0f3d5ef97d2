package e2e

// Copilot CLI's driver, kept apart from the others': it is driven through install's
// .github/hooks file, in a trusted folder, against the fake model's Chat Completions API.

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/fakemodel"
)

// copilotCLIDriver runs GitHub Copilot CLI in prompt mode with BYOK against the fake model.
// Copilot CLI hands no tool call id to its hooks: the log keys each call by its tool and
// arguments (agentlog's "h" ids), which the test expects instead of the model's ids.
var copilotCLIDriver = agentDriver{
	name: "copilot-cli", bin: "copilot", pkg: "@github/copilot",
	sessionID: jsonLinesField("sessionId"), promptHook: true,
	toolNames: map[string]string{"view": "Read", "create": "Write", "edit": "Edit", "bash": "Bash"},
	configure: func(t *testing.T, a *agentRun) []string {
		return []string{
			"COPILOT_HOME=" + filepath.Join(a.home, ".copilot"),
			"XDG_CACHE_HOME=" + filepath.Join(a.home, ".cache"),
			"COPILOT_PROVIDER_BASE_URL=" + a.model.URL() + "/v1",
			"COPILOT_PROVIDER_TYPE=openai",
			"COPILOT_PROVIDER_API_KEY=dummy",
			"COPILOT_MODEL=fake-model",
			"COPILOT_OFFLINE=true",
		}
	},
	args: func(prompt string) []string {
		return []string{"-p", prompt, "--allow-all", "--trust-folder", "--no-ask-user", "--no-auto-update",
			"--disable-client-telemetry", "--output-format", "json"}
	},
	handHook: func(t *testing.T, a *agentRun, command string) {
		e2eWriteFile(t, filepath.Join(a.ws, ".github", "hooks", "hand.json"), copilotHooksJSON(t, command,
			"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"), 0o644)
	},
	script: func(ws string) []fakemodel.Step {
		abs := func(rel string) string { return filepath.Join(ws, rel) }
		return []fakemodel.Step{
			fakemodel.Call("view", map[string]any{"path": abs(e2eRead)}),
			fakemodel.Call("create", map[string]any{"path": abs(e2eWrite), "file_text": "export const health = 'ok';\n"}),
			fakemodel.Call("edit", map[string]any{"path": abs(e2eWrite), "old_str": "'ok'", "new_str": "'healthy'"}),
			fakemodel.Call("bash", map[string]any{"command": "ls src/api", "description": "list the api folder"}),
			fakemodel.Final("Added a health check (fake model)."),
		}
	},
}

// copilotHooksJSON is Copilot CLI's hooks file (VS Code's shape, which it reads too) running
// command for events, named in PascalCase so that the payloads name their event.
func copilotHooksJSON(t *testing.T, command string, events ...string) string {
	t.Helper()
	hooks := map[string]any{}
	for _, ev := range events {
		hooks[ev] = []any{map[string]any{"type": "command", "command": command, "timeout": 10}}
	}
	b, err := json.MarshalIndent(map[string]any{"version": 1, "hooks": hooks}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
