package agentlog

// Opencode is opencode (npm opencode-ai).
const Opencode Agent = "opencode"

// opencode (1.18.33, read in its bundle and measured against the real program): no command
// hooks; JS/TS plugins, every {plugin,plugins}/*.{ts,js} of a project's .opencode folder and of
// its configuration folder ($XDG_CONFIG_HOME/opencode, default ~/.config/opencode), loaded in
// its own process. tasklog's plugin speaks to replay serve, which records, decides and delivers:
// chat.message records the prompt, tool.execute.before the call (by opencode's call id),
// tool.execute.after the file a write or edit changed and appends the rules the call brings to
// the tool's output; the prompt's rules go into the user's message as a synthetic part, kept in
// the session (experimental.chat.system.transform reaches the model too, measured, but is made
// afresh for each request and lost to a continued session). It has an MCP client ("mcp" in opencode.json, entries
// {"type": "local", "command": [...]}) that install does not write. It loads by itself the
// first of AGENTS.md, CLAUDE.md and CONTEXT.md found from its working folder up to the worktree,
// and ~/.config/opencode/AGENTS.md (else ~/.claude/CLAUDE.md): of tasklog's rule files, the root
// AGENTS.md.
var opencodeDialect = Register(&Dialect{
	Agent:       Opencode,
	Order:       62,
	LoadsItself: rootAgents,
	Hooks: HookConfig{
		Shape:      HookExtension,
		Project:    ".opencode/plugin",
		User:       ".config/opencode/plugin",
		UserDirEnv: "XDG_CONFIG_HOME",
		UserDir:    ".config",
		Extension:  "tasklog.ts",
	},
	MCP: MCPConfig{Absent: `install writes no MCP server for opencode (add {"type": "local", "command": ["replay", "mcp"]} under "mcp" in opencode.json yourself)`},
})
