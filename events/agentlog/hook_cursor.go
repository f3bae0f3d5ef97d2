package agentlog

import (
	"fmt"

	"github.com/tasklog/tasklog/events"
)

// parseCursorHook reads Cursor's hook payload (.cursor/hooks.json), as Cursor's documentation
// describes it: conversation_id, generation_id, hook_event_name, workspace_roots on every event;
// prompt and attachments (beforeSubmitPrompt), file_path (beforeReadFile, afterFileEdit),
// command and cwd (before/afterShellExecution), tool_name and tool_input (MCP and the generic
// tool events), status (stop). Cursor gives no tool call ids to the file and shell events:
// their key is the generation and what they name.
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
	case "preToolUse", "postToolUse":
		h.Kind = HookPreTool
		if event == "postToolUse" {
			h.Kind, h.Channel = HookPostTool, events.ChannelTool
		}
		ev := "PreToolUse"
		if event == "postToolUse" {
			ev = "PostToolUse"
		}
		h.Records = claudeToolRecords(Cursor, base, ev, v, h.Cwd, root)
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
