package agentlog

import (
	"strings"

	"github.com/tasklog/tasklog/events"
)

// parseClaudeHook reads the Claude Code hook shape, which Codex shares (with its own tools, a
// turn_id and a string tool_response) and VS Code's Copilot spells in part in camelCase
// (hookEventName, sessionId).
func parseClaudeHook(agent Agent, v any) (*Hook, error) {
	event := firstString(v, "hook_event_name", "hookEventName")
	sid := firstString(v, "session_id", "sessionId")
	h := &Hook{Agent: agent, Event: event, SessionID: sid, Model: gets(v, "model"), Kind: HookOther}
	if p, ok := resolvePath(gets(v, "cwd"), "", ""); ok {
		h.Cwd, h.Roots = p, []string{p}
	}
	base := key(string(agent), sid)
	switch event {
	case "SessionStart":
		h.Kind = HookSessionStart
		if h.Model != "" {
			h.Records = append(h.Records, Record{Key: key(base, "model", h.Model), Payload: &events.SettingsChanged{Model: h.Model}})
		}
		// Claude Code's hooks are not told its version; its transcript's lines are. The version
		// is recorded before the resume below depends on it.
		version := ""
		if agent == ClaudeCode {
			version = transcriptVersion(gets(v, "transcript_path"))
			if version != "" {
				h.Records = append(h.Records, Record{Key: key(base, "agent_version", version),
					Payload: &events.SettingsChanged{AgentVersion: version}})
			}
		}
		// After a compaction the model no longer has the hook text of the session before: it is
		// a compaction, and what applies is delivered anew. After a resume ('claude --continue',
		// '--resume') Claude Code before 2.1.261 keeps the hook text in the transcript but does
		// not send it again: a compaction too. Claude Code from 2.1.261 on and Codex ('codex exec
		// resume') send the history with the hook text again: their resume is none
		// (TestClaudeResume, TestCodexResume).
		if src := gets(v, "source"); src == "compact" || src == "resume" && !resumeKeepsHookText(agent, version) {
			h.Records = append(h.Records, Record{Key: key(base, "compaction"), Payload: &events.Compaction{Trigger: src}})
			h.Channel, h.Redeliver = events.ChannelSession, true
		}
	case "UserPromptSubmit":
		h.Kind, h.Channel = HookPrompt, events.ChannelPrompt
		prompt := gets(v, "prompt")
		id := firstString(v, "prompt_id", "turn_id")
		if id == "" { // VS Code gives neither: the prompt and its time tell prompts apart
			id = digest(prompt) + gets(v, "timestamp")
		}
		h.Records = promptRecords(key(base, id), prompt, h.Cwd, atMentions)
	case "PreToolUse", "PostToolUse", "PostToolUseFailure":
		h.Kind, h.Channel = HookPreTool, events.ChannelTool
		if event != "PreToolUse" {
			h.Kind = HookPostTool
		}
		h.Records = claudeToolRecords(agent, base, event, v, h.Cwd, firstRoot(h.Roots))
	case "InstructionsLoaded":
		h.Kind = HookInstructions
		if p, ok := resolvePath(gets(v, "file_path"), h.Cwd, homeOf(h.Cwd)); ok {
			reason := gets(v, "load_reason")
			h.Records = []Record{{Key: key(base, "instructions", p, reason),
				Payload: &events.InstructionsLoaded{Path: p, MemoryType: gets(v, "memory_type"), Reason: reason}}}
		}
	case "PreCompact":
		h.Kind = HookCompact
		h.Records = []Record{{Key: key(base, "compaction"), Payload: &events.Compaction{Trigger: gets(v, "trigger")}}}
	case "Stop":
		h.Kind = HookStop
		id := firstString(v, "prompt_id", "turn_id", "timestamp")
		h.Records = []Record{{Key: key(base, "stop", id), Payload: &events.AgentStopped{Scope: events.StopTurn}}}
	case "SessionEnd":
		h.Kind = HookSessionEnd
		h.Records = []Record{{Key: key(base, "session_end"), Payload: &events.AgentStopped{Scope: events.StopTask, Reason: gets(v, "reason")}}}
	}
	return h, nil
}

// claudeToolRecords are the tool_call of a Pre/PostToolUse payload and, after a call that
// succeeded, its file writes.
func claudeToolRecords(agent Agent, base, event string, v any, cwd, root string) []Record {
	tool, input := gets(v, "tool_name"), get(v, "tool_input")
	id := gets(v, "tool_use_id")
	if id == "" {
		raw, _ := marshal(input)
		id = "h" + digest(tool+"\x00"+string(raw))
	}
	rec := toolRecord(base, tool, id, input, cwd, root)
	if event == "PreToolUse" {
		return []Record{rec}
	}
	resp := get(v, "tool_response")
	if rt := gets(v, "tool_result", "result_type"); rt != "" && rt != "success" { // Copilot CLI
		rec.Payload.(*events.ToolCall).Failed = true
		return []Record{rec}
	}
	if event == "PostToolUseFailure" || claudeToolFailed(agent, resp) {
		rec.Payload.(*events.ToolCall).Failed = true
		return []Record{rec}
	}
	return append([]Record{rec}, writeRecords(base, id, claudeWrites(tool, input, resp, cwd))...)
}

// claudeWrites are the files a successful call of tool changed: Claude Code's file tools,
// VS Code's, and Codex patches (apply_patch, or a shell command carrying one).
func claudeWrites(tool string, input, resp any, cwd string) []events.FileWrite {
	if w, ok := claudeWriteTools[tool]; ok {
		p := firstString(input, w.key, "path") // Copilot CLI names its file "path"
		if p == "" {
			return nil
		}
		op := w.op
		switch gets(resp, "type") {
		case "update":
			op = events.OpEdit
		case "create":
			op = events.OpCreate
		}
		return []events.FileWrite{resolveWrite(p, op, cwd)}
	}
	if w, ok := copilotWriteTools[tool]; ok {
		if p := gets(input, w.key); p != "" {
			return []events.FileWrite{resolveWrite(p, w.op, cwd)}
		}
		return nil
	}
	if tool == "editFiles" {
		var out []events.FileWrite
		for _, f := range arr(get(input, "files")) {
			if p := str(f); p != "" {
				out = append(out, resolveWrite(p, events.OpEdit, cwd))
			}
		}
		return out
	}
	dir := cwd
	if wd := firstString(input, "workdir", "cwd"); wd != "" {
		if p, ok := resolvePath(wd, cwd, homeOf(cwd)); ok {
			dir = p
		}
	}
	if tool == "apply_patch" {
		return patchWritesAt(firstString(input, "command", "input", "patch"), dir)
	}
	if text := codexCommandText(tool, input); strings.Contains(text, "*** ") {
		return patchWritesAt(text, dir)
	}
	return nil
}

// resumeKeepsHookText tells whether agent, at version (empty when unknown), sends the hook text
// of a resumed session to the model again (its Dialect's ResumeKeepsHookText): its SessionStart
// with source "resume" is then no compaction.
func resumeKeepsHookText(agent Agent, version string) bool {
	d := DialectOf(agent)
	return d != nil && d.ResumeKeepsHookText != nil && d.ResumeKeepsHookText(version)
}

// claudeResumeKeepsFrom is the first Claude Code version that sends a resumed session's hook
// text again, measured with TestClaudeResume: 2.1.260 does not, 2.1.261 does (npm has no
// 2.1.262), as do 2.1.263, 2.1.266 and 2.1.332.
const claudeResumeKeepsFrom = "2.1.261"
