package agentlog

import (
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog/hookspec"
)

// hookTimeout is the budget, in seconds, install gives every hook.
const hookTimeout = 10

// Claude Code: command hooks in settings.json ("hooks", matcher groups; the matcher filters the
// tool for Pre/PostToolUse(Failure), the source, reason, load reason or trigger for
// SessionStart, SessionEnd, InstructionsLoaded and PreCompact, and is ignored for
// UserPromptSubmit and Stop); MCP servers in a project's .mcp.json and the user's ~/.claude.json
// (top-level "mcpServers"; the same file holds Claude Code's own state, which is left alone).
// It loads .claude/rules/** (with their paths), CLAUDE.md anywhere and ~/.claude/* itself.
var claudeCodeDialect = Register(&Dialect{
	Agent: ClaudeCode,
	Order: 10,
	Payload: hookspec.Spec{
		// Claude Code's payloads carry nothing the others lack: it is what is left.
		HintDecides: true,
		Default:     true,
		SessionEnds: []string{"SessionEnd"},
	},
	Parse: parseClaudeHook,
	Reply: additionalContextReply,
	LoadsItself: func(source events.RuleSource, _ string) bool {
		return source == events.RuleSourceClaude
	}, // From claudeResumeKeepsFrom on, 'claude --continue' sends the hook text again; before, and
	// when the transcript names no version, it does not (TestClaudeResume).
	ResumeKeepsHookText: func(version string) bool {
		return version != "" && compareVersions(version, claudeResumeKeepsFrom) >= 0
	},

	Hooks: HookConfig{
		Shape:   HookGroups,
		Project: ".claude/settings.json",
		User:    ".claude/settings.json",
		Events: []HookEvent{
			{"SessionStart", true, hookTimeout},
			{"InstructionsLoaded", true, hookTimeout},
			{"UserPromptSubmit", false, hookTimeout},
			{"PreToolUse", true, hookTimeout},
			{"PostToolUse", true, hookTimeout},
			{"PostToolUseFailure", true, hookTimeout},
			{"PreCompact", true, hookTimeout},
			{"Stop", false, hookTimeout},
			{"SessionEnd", true, hookTimeout},
		},
	},
	MCP: MCPConfig{
		Format:  MCPJSON,
		Key:     "mcpServers",
		Entry:   MCPCommand,
		Project: ".mcp.json",
		User:    ".claude.json",
	},
})
