package agentlog

import (
	"strings"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog/hookspec"
)

// Qwen is Qwen Code (npm @qwen-code/qwen-code).
const Qwen Agent = "qwen"

// Qwen Code (0.24.4, read in its bundle and measured against the real program): Claude Code's
// hooks in settings.json ($QWEN_HOME, default ~/.qwen, for the user; .qwen/ in a project), matcher
// groups whose hooks are commands or HTTP posts to loopback ({"type": "http", "url", "headers",
// "timeout"}); its MCP servers ("mcpServers", {"command", "args"}) are in the same file. Its
// payloads are Claude Code's with its own tools (read_file, write_file, edit, run_shell_command,
// each naming its file with file_path), the model's call id as tool_call_id beside its own
// tool_use_id, prompt ids "<session>########<n>", and InstructionsLoaded for every QWEN.md,
// AGENTS.md and @-import it loads. Its additionalContext reaches the model from SessionStart,
// UserPromptSubmit (which it runs again, with an empty prompt, before each request carrying tool
// results), PostToolUse and PostToolUseFailure; PreToolUse's is dropped. It loads QWEN.md and
// AGENTS.md from the working folder up to the project root, ~/.qwen/QWEN.md and AGENTS.md,
// QWEN.local.md and .qwen/rules/ itself: of tasklog's rule files, the root AGENTS.md.
var qwenDialect = Register(&Dialect{
	Agent: Qwen,
	Order: 57,
	Payload: hookspec.Spec{
		// Before Codex's clue of a model (Qwen Code's SessionStart names one).
		Precedence: 37,
		Clues: []hookspec.Clue{
			{Key: "transcript_path", Contains: "/.qwen/projects/"},
			{Has: []string{"tool_call_id", "tool_use_id"}},
			{Key: "prompt_id", Contains: "########"},
		},
		HintDecides: true,
		SessionEnds: []string{"SessionEnd"},
	},
	Parse:       parseQwenHook,
	Reply:       additionalContextReply,
	LoadsItself: rootAgents,
	Hooks: HookConfig{
		Shape:      HookGroups,
		Project:    ".qwen/settings.json",
		User:       ".qwen/settings.json",
		UserDirEnv: "QWEN_HOME",
		UserDir:    ".qwen",
		HTTP:       true,
		// Not PreToolUse: its text never reaches the model, and PostToolUse records the call.
		Events: []HookEvent{
			{"SessionStart", true, hookTimeout},
			{"InstructionsLoaded", true, hookTimeout},
			{"UserPromptSubmit", false, hookTimeout},
			{"PostToolUse", true, hookTimeout},
			{"PostToolUseFailure", true, hookTimeout},
			{"PreCompact", true, hookTimeout},
			{"Stop", false, hookTimeout},
			{"SessionEnd", true, hookTimeout},
		},
	},
	MCP: MCPConfig{
		Format:     MCPJSON,
		Key:        "mcpServers",
		Entry:      MCPCommand,
		Project:    ".qwen/settings.json",
		User:       ".qwen/settings.json",
		UserDirEnv: "QWEN_HOME",
		UserDir:    ".qwen",
	},
})

// qwenWriteTools are Qwen Code's file tools and what a call does to the file it names.
var qwenWriteTools = map[string]string{
	"write_file": events.OpCreate,
	"edit":       events.OpEdit,
}

// parseQwenHook reads Qwen Code's payloads through Claude Code's reader, keyed by the model's
// call id, with its own tools' writes; its PreToolUse, and the empty prompts it submits before
// requests that carry tool results, record nothing.
func parseQwenHook(agent Agent, v any) (*Hook, error) {
	m := obj(v)
	event := gets(v, "hook_event_name")
	if id := gets(v, "tool_call_id"); id != "" {
		c := make(map[string]any, len(m))
		for k, x := range m {
			c[k] = x
		}
		c["tool_use_id"] = id // the model's id, as Qwen Code's transcript keeps it
		v = c
	}
	h, err := parseClaudeHook(agent, v)
	if err != nil {
		return nil, err
	}
	switch {
	case event == "PreToolUse":
		// Its additionalContext is read and dropped (measured): the call is recorded and
		// decided with PostToolUse(Failure), whose text reaches the model with the result.
		h.Records, h.Channel = nil, ""
	case event == "UserPromptSubmit" && gets(v, "prompt") == "":
		// Submitted again before a request with tool results: no new prompt.
		h.Records = nil
	case event == "PostToolUse":
		tool, input := gets(v, "tool_name"), get(v, "tool_input")
		op, ok := qwenWriteTools[tool]
		p := gets(input, "file_path")
		if !ok || p == "" || claudeToolFailed(agent, get(v, "tool_response")) {
			break
		}
		if strings.HasPrefix(gets(get(v, "tool_response"), "llmContent"), "Successfully overwrote") {
			op = events.OpEdit
		}
		base := key(string(agent), h.SessionID)
		h.Records = append(h.Records, writeRecords(base, gets(v, "tool_use_id"), []events.FileWrite{resolveWrite(p, op, h.Cwd)})...)
	}
	return h, nil
}
