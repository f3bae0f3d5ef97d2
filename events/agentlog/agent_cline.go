package agentlog

import (
	"path/filepath"
	"strings"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog/hookspec"
)

// Cline: executable files named after the event (its CLI also accepts an extension; its VS Code
// extension only the bare name, which is what install writes), in .clinerules/hooks or
// ~/Documents/Cline/Hooks. MCP servers in cline_mcp_settings.json, "mcpServers", per user only:
// the CLI keeps it in $CLINE_MCP_SETTINGS_PATH, else $CLINE_DATA_DIR/settings, else
// $CLINE_DIR/data/settings (default ~/.cline), the VS Code extension in its global storage
// folder. It loads .clinerules/**, ~/Documents/Cline/Rules/**, .cursorrules, .windsurfrules and
// AGENTS.md at the root itself.
var clineDialect = Register(&Dialect{
	Agent: Cline,
	Order: 30,
	Payload: hookspec.Spec{
		Precedence:  10,
		Clues:       []hookspec.Clue{{Has: []string{"hookName"}}, {Has: []string{"taskId"}}},
		Neutral:     `{"cancel":false}` + "\n",
		SessionEnds: []string{"TaskComplete", "TaskCancel", "SessionShutdown", "agent_end", "agent_abort"},
	},
	Parse: func(_ Agent, v any) (*Hook, error) { return parseClineHook(v) },
	Reply: func(_ *Hook, text string) []byte {
		return replyJSON(map[string]any{"cancel": false, "contextModification": text})
	},
	LoadsItself: func(source events.RuleSource, path string) bool {
		return source == events.RuleSourceCline || rootAgents(source, path) || path == ".cursorrules" || path == ".windsurfrules"
	},
	Hooks: HookConfig{
		Shape:   HookScripts,
		Project: ".clinerules/hooks",
		User:    "Documents/Cline/Hooks",
		Events: []HookEvent{
			{Name: "TaskStart"}, {Name: "TaskResume"}, {Name: "UserPromptSubmit"}, {Name: "PreToolUse"},
			{Name: "PostToolUse"}, {Name: "PreCompact"}, {Name: "TaskComplete"}, {Name: "TaskCancel"},
			{Name: "TaskError"}, {Name: "SessionShutdown"},
		},
	},
	MCP: MCPConfig{
		Format:    MCPJSON,
		Key:       "mcpServers",
		Entry:     MCPEnabled,
		NoProject: "Cline reads MCP servers per user only",
		User:      ".cline/data/settings/cline_mcp_settings.json",
		UserFile:  clineMCPSettings,
		AlsoUser: []OptionalFile{
			{".config/Code/User/globalStorage/saoudrizwan.claude-dev", ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"},
			{"Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev",
				"Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"},
		},
	},
})

// clineMCPSettings is the file Cline's CLI reads its MCP servers from when its environment
// moves it: $CLINE_MCP_SETTINGS_PATH, else under $CLINE_DATA_DIR, else under $CLINE_DIR; "" for
// the default, ~/.cline/data/settings/cline_mcp_settings.json.
func clineMCPSettings(getenv func(string) string) string {
	const file = "cline_mcp_settings.json"
	var p string
	switch {
	case strings.TrimSpace(getenv("CLINE_MCP_SETTINGS_PATH")) != "":
		p = strings.TrimSpace(getenv("CLINE_MCP_SETTINGS_PATH"))
	case strings.TrimSpace(getenv("CLINE_DATA_DIR")) != "":
		p = filepath.Join(strings.TrimSpace(getenv("CLINE_DATA_DIR")), "settings", file)
	case strings.TrimSpace(getenv("CLINE_DIR")) != "":
		p = filepath.Join(strings.TrimSpace(getenv("CLINE_DIR")), "data", "settings", file)
	default:
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

// clineHookEvents maps the hookName of a Cline payload (the SDK's names and the extension's,
// which are the hook files' names) to the hook file's name.
var clineHookEvents = map[string]string{
	"agent_start": "TaskStart", "TaskStart": "TaskStart", "TaskResume": "TaskResume",
	"tool_call": "PreToolUse", "PreToolUse": "PreToolUse",
	"tool_result": "PostToolUse", "PostToolUse": "PostToolUse",
	"user_prompt_submit": "UserPromptSubmit", "UserPromptSubmit": "UserPromptSubmit",
	"agent_end": "TaskComplete", "TaskComplete": "TaskComplete",
	"agent_abort": "TaskCancel", "TaskCancel": "TaskCancel",
	"PreCompact": "PreCompact", "SessionShutdown": "SessionShutdown",
}

// parseClineHook reads Cline's hook payload: taskId, workspaceRoots, hookName, and per event
// tool_call/tool_result ({id, name, input}) or preToolUse/postToolUse ({toolName, parameters}
// whose values are JSON strings).
func parseClineHook(v any) (*Hook, error) {
	name := gets(v, "hookName")
	event, ok := clineHookEvents[name]
	if !ok {
		event = name
	}
	sid := gets(v, "taskId")
	h := &Hook{Agent: Cline, Event: event, SessionID: sid, Kind: HookOther, Roots: resolvedRoots(arr(get(v, "workspaceRoots")))}
	if p, ok := resolvePath(gets(v, "workspaceInfo", "rootPath"), "", ""); ok {
		h.Cwd = p
	} else {
		h.Cwd = firstRoot(h.Roots)
	}
	if len(h.Roots) == 0 && h.Cwd != "" {
		h.Roots = []string{h.Cwd}
	}
	base := key(string(Cline), sid)
	// Every hook file that exists runs with the same payload, timestamp included.
	stamp := gets(v, "timestamp")
	switch event {
	case "TaskStart", "TaskResume":
		h.Kind = HookSessionStart
	case "UserPromptSubmit":
		// Cline's answer to this event never reached the model where it was tried; the
		// prompt is recorded, the rules go with the tool hooks.
		h.Kind = HookPrompt
		prompt := firstString(get(v, "userPromptSubmit"), "prompt")
		if prompt == "" {
			prompt = gets(v, "prompt")
		}
		h.Records = promptRecords(key(base, stamp, digest(prompt)), prompt, h.Cwd, clineMentions)
	case "PreToolUse", "PostToolUse":
		h.Kind, h.Channel = HookPreTool, events.ChannelTool
		if event == "PostToolUse" {
			h.Kind = HookPostTool
		}
		h.Records = clineToolRecords(base, event, v, h.Cwd, firstRoot(h.Roots))
	case "PreCompact":
		h.Kind = HookCompact
		h.Records = []Record{{Key: key(base, "compaction", stamp), Payload: &events.Compaction{}}}
	case "TaskComplete", "TaskCancel", "SessionShutdown":
		h.Kind = HookSessionEnd
		reason := gets(v, "turn", "status")
		if event == "TaskCancel" {
			reason = "cancelled"
		}
		h.Records = []Record{{Key: key(base, "end", stamp), Payload: &events.AgentStopped{Scope: events.StopTask, Reason: reason}}}
	}
	return h, nil
}

// clineToolRecords are a Cline tool call and, after one that succeeded, its file writes.
func clineToolRecords(base, event string, v any, cwd, root string) []Record {
	call := get(v, "tool_call")
	if event == "PostToolUse" {
		call = get(v, "tool_result")
	}
	legacy := get(v, "preToolUse")
	if event == "PostToolUse" {
		legacy = get(v, "postToolUse")
	}
	tool, id, input := gets(call, "name"), gets(call, "id"), get(call, "input")
	if tool == "" {
		tool = gets(legacy, "toolName")
	}
	if input == nil {
		input = clineParameters(get(legacy, "parameters"))
	}
	if id == "" {
		raw, _ := marshal(input)
		id = "h" + digest(tool+"\x00"+string(raw))
	}
	rec := toolRecord(base, tool, id, input, cwd, root)
	if event == "PreToolUse" {
		return []Record{rec}
	}
	ok, known := get(legacy, "success").(bool)
	if !known {
		ok = !strings.Contains(strings.ToLower(gets(call, "error")), "error")
	}
	if !ok {
		rec.Payload.(*events.ToolCall).Failed = true
		return []Record{rec}
	}
	result := gets(legacy, "result") + gets(call, "output", "result")
	return append([]Record{rec}, writeRecords(base, id, clineWrites(tool, input, result, cwd))...)
}

// clineParameters decodes the parameters of Cline's preToolUse/postToolUse, whose values are
// JSON strings when they hold arrays or objects.
func clineParameters(p any) any {
	m := obj(p)
	if m == nil {
		return p
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		out[k] = val
		if s, ok := val.(string); ok && (strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{")) {
			if d, err := decodeAny([]byte(s)); err == nil {
				out[k] = d
			}
		}
	}
	return out
}

// clineWrites are the files a successful Cline tool call changed: the SDK's editor (a create
// when it had no old text and said so), the extension's apply_patch, and its path tools as the
// api history names them.
func clineWrites(tool string, input any, result, cwd string) []events.FileWrite {
	p := firstString(input, "path", "absolutePath")
	switch tool {
	case "editor":
		if p == "" {
			return nil
		}
		op := events.OpEdit
		if get(input, "old_text") == nil && strings.Contains(result, "created") {
			op = events.OpCreate
		}
		return []events.FileWrite{resolveWrite(p, op, cwd)}
	case "apply_patch":
		return patchWritesAt(firstString(input, "input", "patch", "command"), cwd)
	}
	if op, ok := clineAPIWrites[tool]; ok && p != "" {
		return []events.FileWrite{resolveWrite(p, op, cwd)}
	}
	return nil
}
