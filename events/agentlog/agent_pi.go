package agentlog

// pi: no command hooks; extensions in .pi/extensions/NAME/index.ts (project) and
// ~/.pi/agent/extensions/NAME/index.ts ($PI_CODING_AGENT_DIR), loaded by themselves. Its
// extension speaks to replay serve, which records, decides and delivers; pi has no MCP client.
var piDialect = Register(&Dialect{
	Agent: Pi,
	Order: 60,
	Hooks: HookConfig{
		Shape:      HookExtension,
		Project:    ".pi/extensions/tasklog",
		User:       ".pi/agent/extensions/tasklog",
		UserDirEnv: "PI_CODING_AGENT_DIR",
		UserDir:    ".pi/agent",
	},
	MCP: MCPConfig{Absent: "pi has no MCP client"},
})
