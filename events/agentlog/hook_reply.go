package agentlog

import (
	"bytes"
	"encoding/json"
	"strings"
)

// MaxDelivery is the most text, in bytes, one reply puts in front of the model. Claude Code
// cuts hook output at about 10,000 characters; the others take the same budget, with room left
// for the reply's JSON.
const MaxDelivery = 9000

// Reply is the dialect's answer to the hook, carrying text to the model; empty text, or an
// event whose answer reaches no model, gives the neutral reply. Replies never block or deny.
func (h *Hook) Reply(text string) []byte {
	if text == "" || h.Channel == "" {
		return NeutralReply(h.Agent, h.Event)
	}
	switch h.Agent {
	case Cline:
		return replyJSON(map[string]any{"cancel": false, "contextModification": text})
	case Cursor:
		return replyJSON(map[string]any{"additional_context": text})
	}
	return replyJSON(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": h.Event, "additionalContext": text}})
}

// NeutralReply is the answer that changes nothing: nothing at all for Claude Code and Codex,
// {} for VS Code's Copilot, {"cancel": false} for Cline, and for Cursor what each event
// expects to let the agent go on ({"continue": true} before a prompt, {"permission": "allow"}
// before a file read, {} otherwise: Cursor's own approval settings decide the rest).
func NeutralReply(agent Agent, event string) []byte {
	switch agent {
	case Cline:
		return []byte(`{"cancel":false}` + "\n")
	case Cursor:
		switch event {
		case "beforeSubmitPrompt":
			return []byte(`{"continue":true}` + "\n")
		case "beforeReadFile":
			return []byte(`{"permission":"allow"}` + "\n")
		}
		return []byte("{}\n")
	case Copilot:
		return []byte("{}\n")
	}
	return nil
}

func replyJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil
	}
	return buf.Bytes()
}

// LoadsNatively reports whether the agent's own loader puts a rule in front of the model, so
// tasklog must not deliver it: provider is the rule's provider (rules.Provider*), path its
// display path (root-relative, "~/…" for global rules).
//
//	claude-code  .claude/rules/** (with their paths), CLAUDE.md anywhere, ~/.claude/*
//	codex        AGENTS.md at the root, ~/.codex/AGENTS.md
//	cline        .clinerules/**, ~/Documents/Cline/Rules/**, .cursorrules, .windsurfrules, AGENTS.md at the root
//	cursor       .cursor/rules/**, .cursorrules, AGENTS.md anywhere
//	copilot      .github/copilot-instructions.md, .github/instructions/**, AGENTS.md at the root
//	qwen         AGENTS.md at the root (with QWEN.md, ~/.qwen/ and .qwen/rules/, no family of tasklog's)
//
// Everything else (other families, tasklog's own .tasklog/rules, AGENTS.md in subfolders for
// Codex, Cline and Copilot) is delivered.
func LoadsNatively(agent Agent, provider, path string) bool {
	rootAgents := provider == "agents" && (path == "AGENTS.md" || strings.HasPrefix(path, "~/"))
	switch agent {
	case ClaudeCode:
		return provider == "claude"
	case Codex:
		return rootAgents
	case Cline:
		return provider == "cline" || rootAgents || path == ".cursorrules" || path == ".windsurfrules"
	case Cursor:
		return provider == "cursor" || provider == "agents"
	case Copilot:
		return provider == "copilot" || rootAgents
	case Qwen:
		return provider == "agents" && path == "AGENTS.md"
	}
	return false
}
