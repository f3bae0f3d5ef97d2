package agentlog

import (
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog/hookspec"
)

// Copilot is GitHub Copilot's agent in VS Code.
const Copilot Agent = "copilot"

// VS Code (Copilot): .github/hooks/*.json in VS Code's own shape ({"type", "command",
// "timeout"} per event), and Claude Code's settings files, whose payloads it sends spelled in
// part in camelCase (hookEventName, sessionId); it has no user hook file of its own. MCP servers
// in .vscode/mcp.json, "servers", each with "type": "stdio"; the user's are in VS Code's profile.
// It loads .github/copilot-instructions.md, .github/instructions/** and AGENTS.md at the root
// itself.
var copilotDialect = Register(&Dialect{
	Agent: Copilot,
	Order: 50,
	Payload: hookspec.Spec{
		Precedence:  30,
		Clues:       []hookspec.Clue{{Has: []string{"hookEventName"}, Lacks: []string{"hook_event_name"}}},
		HintDecides: true,
		Neutral:     "{}\n",
		SessionEnds: []string{"SessionEnd"},
	},
	Parse: parseClaudeHook,
	Reply: additionalContextReply,
	LoadsItself: func(source events.RuleSource, path string) bool {
		return source == events.RuleSourceCopilot || rootAgents(source, path)
	},
	Hooks: HookConfig{
		Shape:   HookTypedList,
		Project: ".github/hooks/tasklog.json",
		NoUser: "VS Code reads user hooks from ~/.claude/settings.json, Claude Code's file: " +
			"run 'replay install claude-code --user' (the hook recognises VS Code's payloads)",
		Events: []HookEvent{
			{"SessionStart", false, hookTimeout},
			{"UserPromptSubmit", false, hookTimeout},
			{"PreToolUse", false, hookTimeout},
			{"PostToolUse", false, hookTimeout},
			{"PreCompact", false, hookTimeout},
			{"Stop", false, hookTimeout},
		},
	},
	MCP: MCPConfig{
		Format:  MCPJSON,
		Key:     "servers",
		Entry:   MCPTypedStdio,
		Project: ".vscode/mcp.json",
		NoUser: "VS Code keeps the user's MCP servers in its profile: " +
			"install per project (.vscode/mcp.json), or add the server with VS Code's 'MCP: Add Server'",
	},
})

// copilotWriteTools are VS Code's file tools and the parameter naming the file.
var copilotWriteTools = map[string]struct{ key, op string }{
	"create_file":                  {"filePath", events.OpCreate},
	"createFile":                   {"filePath", events.OpCreate},
	"replace_string_in_file":       {"filePath", events.OpEdit},
	"multi_replace_string_in_file": {"filePath", events.OpEdit},
	"insert_edit_into_file":        {"filePath", events.OpEdit},
	"edit_notebook_file":           {"filePath", events.OpEdit},
}
