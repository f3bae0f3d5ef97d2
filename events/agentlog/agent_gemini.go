package agentlog

import (
	"strings"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog/hookspec"
)

// Gemini is Gemini CLI (@google/gemini-cli).
const Gemini Agent = "gemini"

// geminiOwnEvents are the hook events only Gemini CLI names so (it shares SessionStart,
// SessionEnd and Notification with Claude Code).
var geminiOwnEvents = []string{"BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel",
	"BeforeToolSelection", "BeforeTool", "AfterTool", "PreCompress"}

// geminiClues recognise Gemini CLI's payloads: one of its own event names, or a transcript
// under ~/.gemini/tmp/ (its SessionStart and SessionEnd).
func geminiClues() []hookspec.Clue {
	clues := []hookspec.Clue{{Key: "transcript_path", Contains: "/.gemini/tmp/"}}
	for _, ev := range geminiOwnEvents {
		clues = append(clues, hookspec.Clue{Key: "hook_event_name", Equals: ev})
	}
	return clues
}

// Gemini CLI: "hooks" in .gemini/settings.json (project) or ~/.gemini/settings.json (user), in
// Claude Code's matcher groups with the timeout in milliseconds; the matcher is a regular
// expression on the tool name for BeforeTool/AfterTool, the source or reason for SessionStart
// and SessionEnd, "*" or "" for all. Its MCP servers are "mcpServers" in the same file. It
// loads GEMINI.md files itself (its default context file name), which is no rule family
// tasklog reads. Install leaves out BeforeTool, whose reply reaches no model (the call is
// recorded by AfterTool), PreCompress, which Gemini CLI fires before every model request
// whether or not it compresses, and the events that record nothing (AfterModel,
// BeforeToolSelection, Notification). Gemini CLI reads stderr as the hook's answer when stdout
// is empty, so the neutral reply is {}.
var geminiDialect = Register(&Dialect{
	Agent: Gemini,
	Order: 55,
	Payload: hookspec.Spec{
		Precedence:  31,
		Clues:       geminiClues(),
		HintDecides: true,
		Neutral:     "{}\n",
		SessionEnds: []string{"SessionEnd"},
	},
	Parse: func(_ Agent, v any) (*Hook, error) { return parseGeminiHook(v) },
	Reply: additionalContextReply,
	Hooks: HookConfig{
		Shape:   HookGroups,
		Project: ".gemini/settings.json",
		User:    ".gemini/settings.json",
		// Gemini CLI reads the timeout in milliseconds.
		Events: []HookEvent{
			{"SessionStart", true, hookTimeout * 1000},
			{"BeforeAgent", false, hookTimeout * 1000},
			{"BeforeModel", false, hookTimeout * 1000},
			{"AfterTool", true, hookTimeout * 1000},
			{"AfterAgent", false, hookTimeout * 1000},
			{"SessionEnd", true, hookTimeout * 1000},
		},
	},
	MCP: MCPConfig{
		Format:  MCPJSON,
		Key:     "mcpServers",
		Entry:   MCPCommand,
		Project: ".gemini/settings.json",
		User:    ".gemini/settings.json",
	},
})

// parseGeminiHook reads Gemini CLI's hook payload (0.61.0, read from its source and captured
// from the running program): session_id, transcript_path, cwd, hook_event_name and an ISO
// timestamp on every event; source (SessionStart), prompt (BeforeAgent, which carries
// SessionStart's context in front of the user's text), llm_request{model, messages[{role,
// content}]} (BeforeModel: the text of the request's contents, without the system
// instruction), tool_name and tool_input (BeforeTool, AfterTool), tool_response{llmContent,
// returnDisplay, error} (AfterTool), reason (SessionEnd).
//
// No payload carries the model's function-call id. A call is recorded once, by AfterTool, keyed
// by its tool, its input and the timestamp Gemini CLI stamps on the event (one per event, shared
// by every hook of it): BeforeTool records nothing, since its reply reaches no model and a call
// it recorded would leave AfterTool, whose reply does, nothing new to decide on.
//
// BeforeModel records the model each request goes to (once per model). What the agent loaded
// itself is recorded where it says so: the GEMINI.md files listed in the
// <loaded_context> of the request's first content (BeforeModel) and those a file read discovered
// (the "Newly Discovered Project Context" of an AfterTool's output). Global memory
// (~/.gemini/GEMINI.md) goes to the system instruction, which no payload shows.
func parseGeminiHook(v any) (*Hook, error) {
	event := gets(v, "hook_event_name")
	sid := gets(v, "session_id")
	ts := gets(v, "timestamp")
	h := &Hook{Agent: Gemini, Event: event, SessionID: sid, Kind: HookOther}
	if p, ok := resolvePath(gets(v, "cwd"), "", ""); ok {
		h.Cwd, h.Roots = p, []string{p}
	}
	base := key(string(Gemini), sid)
	switch event {
	case "SessionStart":
		h.Kind = HookSessionStart
	case "BeforeAgent":
		// The reply's text becomes a <hook_context> part of the prompt's turn.
		h.Kind, h.Channel = HookPrompt, events.ChannelPrompt
		prompt := stripHookContext(gets(v, "prompt"))
		h.Records = promptRecords(key(base, digest(prompt)+ts), prompt, h.Cwd, atMentions)
	case "BeforeModel":
		h.Kind = HookInstructions
		h.Model = gets(get(v, "llm_request"), "model")
		if h.Model != "" {
			h.Records = append(h.Records, Record{Key: key(base, "model", h.Model), Payload: &events.SettingsChanged{Model: h.Model}})
		}
		for _, m := range arr(get(get(v, "llm_request"), "messages")) {
			h.Records = append(h.Records, geminiLoaded(base, gets(m, "content"), h.Cwd)...)
		}
	case "BeforeTool":
		h.Kind = HookPreTool
	case "AfterTool":
		// The reply's text is appended to the function response the model gets next.
		h.Kind, h.Channel = HookPostTool, events.ChannelTool
		h.Records = geminiToolRecords(base, v, ts, h.Cwd, firstRoot(h.Roots))
	case "PreCompress":
		// Gemini CLI fires it before every model request, before it checks whether the history
		// is long enough to compress, which it mostly is not: it says nothing happened.
		h.Kind = HookOther
	case "AfterAgent":
		h.Kind = HookStop
		h.Records = []Record{{Key: key(base, "stop", ts), Payload: &events.AgentStopped{Scope: events.StopTurn}}}
	case "SessionEnd":
		h.Kind = HookSessionEnd
		h.Records = []Record{{Key: key(base, "session_end"), Payload: &events.AgentStopped{Scope: events.StopTask, Reason: gets(v, "reason")}}}
	}
	return h, nil
}

// stripHookContext removes the <hook_context> blocks Gemini CLI puts in front of the prompt
// (SessionStart's replies): what is left is what the user typed. Gemini CLI escapes < and > in
// a hook's text, so a block ends at the first </hook_context>.
func stripHookContext(prompt string) string {
	for {
		rest, ok := strings.CutPrefix(strings.TrimLeft(prompt, " \t\r\n"), "<hook_context>")
		if !ok {
			return prompt
		}
		i := strings.Index(rest, "</hook_context>")
		if i < 0 {
			return prompt
		}
		prompt = strings.TrimLeft(rest[i+len("</hook_context>"):], "\r\n")
	}
}

// geminiWriteTools are Gemini CLI's tools that change the file they name.
var geminiWriteTools = map[string]string{"write_file": events.OpCreate, "replace": events.OpEdit}

// geminiToolRecords are the tool_call of an AfterTool payload and, after a call that succeeded,
// its file writes and the memory files its output says were discovered.
func geminiToolRecords(base string, v any, ts, cwd, root string) []Record {
	tool, input := gets(v, "tool_name"), get(v, "tool_input")
	raw, _ := marshal(input)
	id := "g" + digest(tool+"\x00"+string(raw)+"\x00"+ts)
	rec := toolRecord(base, tool, id, input, cwd, root)
	resp := get(v, "tool_response")
	if e := get(resp, "error"); e != nil {
		rec.Payload.(*events.ToolCall).Failed = true
		return []Record{rec}
	}
	out := []Record{rec}
	if op, ok := geminiWriteTools[tool]; ok {
		if p := gets(input, "file_path"); p != "" {
			// write_file over an existing file says "Successfully overwrote file".
			if op == events.OpCreate && strings.Contains(gets(resp, "llmContent"), "overwrote") {
				op = events.OpEdit
			}
			out = append(out, writeRecords(base, id, []events.FileWrite{resolveWrite(p, op, cwd)})...)
		}
	}
	if text := gets(resp, "llmContent"); text != "" {
		if _, found, ok := strings.Cut(text, geminiJITPrefix); ok {
			out = append(out, geminiContextFiles(base, found, "Project", "nested_traversal", cwd)...)
		}
	}
	return out
}

// geminiJITPrefix heads the memory files Gemini CLI discovers beside a file it reads, in the
// tool's output.
const geminiJITPrefix = "--- Newly Discovered Project Context ---"

// geminiSections are the sections of <loaded_context> and the memory type of each.
var geminiSections = []struct{ tag, memoryType string }{
	{"global_context", "User"},
	{"user_project_memory", "Local"},
	{"extension_context", "Extension"},
	{"project_context", "Project"},
}

// geminiLoaded are the memory files a request's text says were loaded: the "--- Context from:
// PATH ---" lines inside <loaded_context>, typed by the section that holds them.
func geminiLoaded(base, text, cwd string) []Record {
	var out []Record
	for {
		_, rest, ok := strings.Cut(text, "<loaded_context>")
		if !ok {
			return out
		}
		block, after, _ := strings.Cut(rest, "</loaded_context>")
		text = after
		for _, s := range geminiSections {
			if _, inner, ok := strings.Cut(block, "<"+s.tag+">"); ok {
				inner, _, _ = strings.Cut(inner, "</"+s.tag+">")
				out = append(out, geminiContextFiles(base, inner, s.memoryType, "session_start", cwd)...)
			}
		}
	}
}

// geminiContextFiles are the InstructionsLoaded of each "--- Context from: PATH ---" line of text.
func geminiContextFiles(base, text, memoryType, reason, cwd string) []Record {
	var out []Record
	for line := range strings.Lines(text) {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "--- Context from: ")
		if !ok {
			continue
		}
		name, ok = strings.CutSuffix(name, " ---")
		p, resolved := resolvePath(name, cwd, homeOf(cwd))
		if !ok || !resolved {
			continue
		}
		out = append(out, Record{Key: key(base, "instructions", p, reason),
			Payload: &events.InstructionsLoaded{Path: p, MemoryType: memoryType, Reason: reason}})
	}
	return out
}
