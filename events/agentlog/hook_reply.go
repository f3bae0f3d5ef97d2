package agentlog

import (
	"bytes"
	"encoding/json"
)

// MaxDelivery is the most text, in bytes, one reply puts in front of the model. Claude Code
// cuts hook output at about 10,000 characters; the others take the same budget, with room left
// for the reply's JSON.
const MaxDelivery = 9000

// Reply is the dialect's answer to the hook, carrying text to the model; empty text, or an
// event whose answer reaches no model, gives the neutral reply. Replies never block or deny.
func (h *Hook) Reply(text string) []byte {
	d := DialectOf(h.Agent)
	if text == "" || h.Channel == "" || d == nil || d.Reply == nil {
		return NeutralReply(h.Agent, h.Event)
	}
	return d.Reply(h, text)
}

// additionalContextReply is Claude Code's answer carrying text, which Codex and VS Code read
// too: hookSpecificOutput.additionalContext, named for the event.
func additionalContextReply(h *Hook, text string) []byte {
	return replyJSON(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": h.Event, "additionalContext": text}})
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
