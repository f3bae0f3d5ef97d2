package agentlog

import (
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog/hookspec"
)

// CopilotCLI is GitHub Copilot's command-line agent (@github/copilot).
const CopilotCLI Agent = "copilot-cli"

// Copilot CLI: hooks in .github/hooks/*.json, {"version": 1, "hooks": {"Event": [{"type":
// "command", "command", "timeout"}]}} (its own "bash" and "timeoutSec" too), run in prompt mode
// only in a trusted folder. Events named in PascalCase (SessionStart, UserPromptSubmit,
// PreToolUse, PostToolUse, Stop, SessionEnd) get Claude Code's snake_case payloads, with an ISO
// timestamp, Claude Code's tool names (Read, Write, Edit, Bash) over Copilot's arguments ("path",
// "file_text", "old_str", "new_str"), a tool_result {result_type, text_result_for_llm}, and no
// tool call id: a call is keyed by its tool and arguments. A top-level additionalContext reaches
// the model from SessionStart, UserPromptSubmit, PreToolUse and PostToolUse. It loads AGENTS.md,
// CLAUDE.md, .github/copilot-instructions.md, .github/instructions/** and .claude/rules/**
// itself; not .clinerules or .cursor/rules. The same folder is VS Code's: each program runs the
// other's file too, and the payloads tell them apart.
var copilotCLIDialect = Register(&Dialect{
	Agent: CopilotCLI,
	Order: 52,
	Payload: hookspec.Spec{
		Precedence: 32,
		Clues: []hookspec.Clue{
			// Claude Code and Codex give every payload a transcript_path; Copilot CLI a
			// timestamp, and a transcript only to Stop, in its session-state folder.
			{Has: []string{"hook_event_name", "session_id", "timestamp"}, Lacks: []string{"transcript_path", "turn_id", "model"}},
			{Key: "transcript_path", Contains: "/session-state/"},
		},
		HintDecides: true,
		SessionEnds: []string{"SessionEnd"},
	},
	Parse: parseClaudeHook,
	Reply: func(_ *Hook, text string) []byte { return replyJSON(map[string]any{"additionalContext": text}) },
	LoadsItself: func(source events.RuleSource, path string) bool {
		return source == events.RuleSourceClaude || source == events.RuleSourceCopilot || rootAgents(source, path)
	},
	Hooks: HookConfig{
		Shape:   HookTypedList,
		Project: ".github/hooks/tasklog-copilot-cli.json",
		NoUser:  "Copilot CLI's user hooks are not installed by replay: install per project (--project)",
		Version: 1,
		Events: []HookEvent{
			{"SessionStart", false, hookTimeout},
			{"UserPromptSubmit", false, hookTimeout},
			{"PreToolUse", false, hookTimeout},
			{"PostToolUse", false, hookTimeout},
			{"Stop", false, hookTimeout},
			{"SessionEnd", false, hookTimeout},
		},
	},
	MCP: MCPConfig{Absent: "replay install does not write Copilot CLI's MCP settings"},
	InstallNote: func(string, func(string) string) string {
		return "note: Copilot CLI runs a project's hooks only in a folder it trusts (--trust-folder, or its trusted folders)"
	},
})
