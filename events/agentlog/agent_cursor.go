package agentlog

import (
	"fmt"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog/hookspec"
)

// Cursor: .cursor/hooks.json, {"version": 1, "hooks": {"event": [{"command", "timeout"}]}};
// MCP servers in .cursor/mcp.json and ~/.cursor/mcp.json, "mcpServers". Its payloads carry a
// conversation_id, and lowerCamel event names (sessionStart, where Claude Code says
// SessionStart) with the session_id some of them carry too. It loads .cursor/rules/**,
// .cursorrules and AGENTS.md anywhere itself.
var cursorDialect = Register(&Dialect{
	Agent: Cursor,
	Order: 40,
	Payload: hookspec.Spec{
		Precedence: 20,
		Clues: []hookspec.Clue{
			{Has: []string{"conversation_id"}, Lacks: []string{"session_id"}},
			{Has: []string{"conversation_id"}, LowerCamel: "hook_event_name"},
		},
		// What each event expects to let the agent go on; Cursor's own approval settings
		// decide the rest.
		Neutral: "{}\n",
		NeutralByEvent: map[string]string{
			"beforeSubmitPrompt": `{"continue":true}` + "\n",
			"beforeReadFile":     `{"permission":"allow"}` + "\n",
		},
		SessionEnds: []string{"sessionEnd"},
	},
	Parse: func(_ Agent, v any) (*Hook, error) { return parseCursorHook(v) },
	Reply: func(_ *Hook, text string) []byte {
		return replyJSON(map[string]any{"additional_context": text})
	},
	LoadsItself: func(source events.RuleSource, _ string) bool {
		return source == events.RuleSourceCursor || source == events.RuleSourceAgents
	},
	Hooks: HookConfig{
		Shape:   HookList,
		Project: ".cursor/hooks.json",
		User:    ".cursor/hooks.json",
		Version: 1,
		Events: []HookEvent{
			{"sessionStart", false, hookTimeout},
			{"beforeSubmitPrompt", false, hookTimeout},
			{"preToolUse", false, hookTimeout},
			{"postToolUse", false, hookTimeout},
			{"preCompact", false, hookTimeout},
			{"stop", false, hookTimeout},
			{"sessionEnd", false, hookTimeout},
		},
	},
	MCP: MCPConfig{
		Format:  MCPJSON,
		Key:     "mcpServers",
		Entry:   MCPCommand,
		Project: ".cursor/mcp.json",
		User:    ".cursor/mcp.json",
	},
})

// Cursor is the Cursor editor's agent.
const Cursor Agent = "cursor"

// parseCursorHook reads Cursor's hook payload (.cursor/hooks.json), as Cursor's documentation
// describes it (cursor.com/docs/hooks): conversation_id, generation_id, model, hook_event_name,
// workspace_roots on every event, and session_id (the conversation id again) on sessionStart and
// sessionEnd; prompt and attachments (beforeSubmitPrompt), tool_name, tool_input, tool_use_id
// and cwd (postToolUse; preToolUse records nothing), trigger (preCompact), status (stop), reason (sessionEnd);
// and for the events install does not subscribe to, file_path (beforeReadFile, afterFileEdit),
// command and cwd (before/afterShellExecution), tool_name and tool_input (MCP). Cursor gives no
// tool call ids to the file and shell events: their key is the generation and what they name.
func parseCursorHook(v any) (*Hook, error) {
	event := gets(v, "hook_event_name")
	sid := gets(v, "conversation_id")
	gen := gets(v, "generation_id")
	h := &Hook{Agent: Cursor, Event: event, SessionID: sid, Kind: HookOther, Model: gets(v, "model"),
		Roots: resolvedRoots(arr(get(v, "workspace_roots")))}
	h.Cwd = firstRoot(h.Roots)
	if p, ok := resolvePath(gets(v, "cwd"), h.Cwd, ""); ok {
		h.Cwd = p
	}
	if len(h.Roots) == 0 && h.Cwd != "" {
		h.Roots = []string{h.Cwd}
	}
	root := firstRoot(h.Roots)
	base := key(string(Cursor), sid)
	switch event {
	case "sessionStart":
		h.Kind, h.Channel = HookSessionStart, events.ChannelSession
		if h.Model != "" {
			h.Records = []Record{{Key: key(base, "model", h.Model), Payload: &events.SettingsChanged{Model: h.Model}}}
		}
	case "beforeSubmitPrompt":
		// Cursor's answer to this event cannot add text; the prompt is recorded only.
		h.Kind = HookPrompt
		prompt := gets(v, "prompt")
		h.Records = promptRecords(key(base, gen, digest(prompt)), prompt, h.Cwd, atMentions)
		for i, a := range arr(get(v, "attachments")) {
			p := firstString(a, "file_path", "filePath")
			if p == "" {
				continue
			}
			m := &events.Mention{Path: p}
			if r, ok := resolvePath(p, h.Cwd, ""); ok {
				m.Resolved = r
			}
			h.Records = append(h.Records, Record{Key: key(base, gen, "attachment", digest(p), fmt.Sprint(i)), Payload: m})
		}
	case "beforeReadFile":
		h.Kind = HookPreTool
		p := gets(v, "file_path")
		h.Records = []Record{toolRecord(base, "read_file", "r"+digest(gen+"\x00"+p), map[string]any{"path": p}, h.Cwd, root)}
	case "beforeShellExecution", "afterShellExecution":
		h.Kind = HookPreTool
		cmd := gets(v, "command")
		if event == "afterShellExecution" {
			h.Kind = HookPostTool
		}
		h.Records = []Record{toolRecord(base, "shell", "s"+digest(gen+"\x00"+cmd), map[string]any{"command": cmd}, h.Cwd, root)}
	case "beforeMCPExecution", "afterMCPExecution":
		h.Kind = HookPreTool
		if event == "afterMCPExecution" {
			h.Kind = HookPostTool
		}
		tool, input := gets(v, "tool_name"), get(v, "tool_input")
		if s, ok := input.(string); ok { // Cursor passes MCP input as a JSON string
			if d, err := decodeAny([]byte(s)); err == nil {
				input = d
			}
		}
		raw, _ := marshal(input)
		h.Records = []Record{toolRecord(base, tool, "m"+digest(gen+"\x00"+tool+"\x00"+string(raw)), input, h.Cwd, root)}
	case "afterFileEdit":
		h.Kind, h.Channel = HookPostTool, events.ChannelTool
		p := gets(v, "file_path")
		raw, _ := marshal(get(v, "edits"))
		id := "e" + digest(gen+"\x00"+p+"\x00"+string(raw))
		h.Records = append([]Record{toolRecord(base, "edit_file", id, map[string]any{"path": p}, h.Cwd, root)},
			writeRecords(base, id, []events.FileWrite{resolveWrite(p, events.OpEdit, h.Cwd)})...)
	case "preToolUse":
		// Cursor's answer here allows, denies or rewrites the call; its agent_message reaches the
		// model only with a denial, which tasklog never gives. The call is recorded when it ends,
		// by postToolUse: recorded here, it would leave postToolUse, whose reply does reach the
		// model, nothing new to decide on, and no rule would ever be delivered.
		h.Kind = HookPreTool
	case "postToolUse":
		// Cursor calls it after a call that succeeded only; additional_context is added to the
		// conversation after the tool's result.
		h.Kind, h.Channel = HookPostTool, events.ChannelTool
		rec := cursorToolCall(base, v, h.Cwd, root)
		h.Records = []Record{rec}
		tc := rec.Payload.(*events.ToolCall)
		if w, ok := cursorWrite(tc.Tool, get(v, "tool_input"), h.Cwd); ok {
			h.Records = append(h.Records, writeRecords(base, tc.ID, []events.FileWrite{w})...)
		}
	case "preCompact":
		h.Kind = HookCompact
		h.Records = []Record{{Key: key(base, "compaction", gen), Payload: &events.Compaction{Trigger: gets(v, "trigger")}}}
	case "stop":
		h.Kind = HookStop
		h.Records = []Record{{Key: key(base, "stop", gen), Payload: &events.AgentStopped{Scope: events.StopTurn, Reason: gets(v, "status")}}}
	case "sessionEnd":
		h.Kind = HookSessionEnd
		h.Records = []Record{{Key: key(base, "session_end"), Payload: &events.AgentStopped{Scope: events.StopTask, Reason: gets(v, "reason")}}}
	}
	return h, nil
}

// cursorToolCall is the tool_call of a postToolUse payload, keyed by its tool_use_id.
func cursorToolCall(base string, v any, cwd, root string) Record {
	tool, input := gets(v, "tool_name"), get(v, "tool_input")
	id := gets(v, "tool_use_id")
	if id == "" {
		raw, _ := marshal(input)
		id = "h" + digest(tool+"\x00"+string(raw))
	}
	return toolRecord(base, tool, id, input, cwd, root)
}

// cursorWriteTools are Cursor's tools that change the file they name, with the operation.
// Cursor's hooks page names Write and Delete among its tools (Shell, Read, Write, Grep, Delete,
// Task, MCP:<name>), and maps both Claude Code's Write and its Edit onto Write, so a Write is
// taken for an edit; StrReplace and Edit, which some Cursor builds name, edit too.
var cursorWriteTools = map[string]string{
	"Write":      events.OpEdit,
	"StrReplace": events.OpEdit,
	"Edit":       events.OpEdit,
	"Delete":     events.OpDelete,
}

// cursorPathKeys are the tool_input keys a Cursor file tool may name its file under: the page
// documents none, so Claude Code's file_path (what Cursor maps Claude's tools from) comes first.
var cursorPathKeys = []string{"file_path", "path", "target_file"}

// cursorWrite is the file a successful call of one of Cursor's file tools changed.
func cursorWrite(tool string, input any, cwd string) (events.FileWrite, bool) {
	op, ok := cursorWriteTools[tool]
	if !ok {
		return events.FileWrite{}, false
	}
	p := firstString(input, cursorPathKeys...)
	if p == "" {
		return events.FileWrite{}, false
	}
	return resolveWrite(p, op, cwd), true
}
