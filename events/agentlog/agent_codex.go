package agentlog

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tasklog/tasklog/events/agentlog/hookspec"
)

// Codex: hooks.json beside its config.toml, in Claude Code's shape (`timeout` in seconds); it
// reads a matcher for Pre/PostToolUse and SessionStart only, and cuts SessionEnd to 3 s. Its
// payloads are Claude Code's with a turn_id, a model, its own tools (apply_patch) and a string
// tool_response. MCP servers in config.toml ([mcp_servers.NAME] tables), in .codex/ or
// $CODEX_HOME. It loads AGENTS.md at the root and ~/.codex/AGENTS.md itself; AGENTS.md in
// subfolders is delivered.
var codexDialect = Register(&Dialect{
	Agent: Codex,
	Order: 20,
	Payload: hookspec.Spec{
		Precedence: 40,
		Clues: []hookspec.Clue{
			{Has: []string{"turn_id"}},
			{Key: "tool_name", Equals: "apply_patch"},
			{Key: "transcript_path", Contains: "/rollout-"},
			{Key: "model", NotHint: string(ClaudeCode)},
		},
		HintDecides: true,
		SessionEnds: []string{"SessionEnd"},
	},
	Parse:       parseClaudeHook,
	Reply:       additionalContextReply,
	LoadsItself: codexAgents,
	// 'codex exec resume' sends the history with the hook text again (TestCodexResume).
	ResumeKeepsHookText: func(string) bool { return true },
	Hooks: HookConfig{
		Shape:      HookGroups,
		Project:    ".codex/hooks.json",
		User:       ".codex/hooks.json",
		UserDirEnv: "CODEX_HOME",
		UserDir:    ".codex",
		Events: []HookEvent{
			{"SessionStart", true, hookTimeout},
			{"UserPromptSubmit", false, hookTimeout},
			{"PreToolUse", true, hookTimeout},
			{"PostToolUse", true, hookTimeout},
			{"PreCompact", false, hookTimeout},
			{"Stop", false, hookTimeout},
			{"SessionEnd", false, 3},
		},
	},
	MCP: MCPConfig{
		Format:     MCPTOML,
		Project:    ".codex/config.toml",
		User:       ".codex/config.toml",
		UserDirEnv: "CODEX_HOME",
		UserDir:    ".codex",
	},
	InstallNote: codexTrustNote,
})

// codexTrustNote says that Codex runs a project's hooks only in a project the user trusts,
// which install does not decide.
func codexTrustNote(dir string, getenv func(string) string) string {
	config := "~/.codex/config.toml"
	if home := getenv("CODEX_HOME"); home != "" {
		config = filepath.Join(home, "config.toml")
	}
	return fmt.Sprintf("note: Codex runs a project's hooks only once you trust the project: "+
		"trust_level = \"trusted\" under [projects.%s] in %s (replay does not write that)", TOMLString(dir), config)
}

// TOMLString is s as a TOML basic string: the Codex note names a project as its config.toml
// does, and the installer writes Codex's config.toml with it.
func TOMLString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
