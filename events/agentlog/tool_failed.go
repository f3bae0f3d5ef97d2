package agentlog

import (
	"encoding/json"
	"regexp"
	"strings"
)

// How the agents say a tool call failed, read from what the call returned: shared by the hook
// dialects and the session-file importers.

// exitCode reads Codex's "Exit code: N" header of a tool output.
var exitCode = regexp.MustCompile(`^Exit code: (-?\d+)`)

// claudeToolFailed reads a PostToolUse tool_response: Claude Code reports an error as a plain
// string; Codex reports every output as a string, with an exit code header for shell calls and
// patches; an object saying success false failed anywhere.
func claudeToolFailed(agent Agent, resp any) bool {
	if b, ok := get(resp, "success").(bool); ok {
		return !b
	}
	text, isText := resp.(string)
	if !isText {
		return getb(resp, "is_error") || getb(resp, "interrupted")
	}
	if agent != Codex {
		return agent == ClaudeCode || strings.HasPrefix(strings.ToLower(strings.TrimSpace(text)), "error")
	}
	if m := exitCode.FindStringSubmatch(text); m != nil {
		return m[1] != "0"
	}
	return codexFailed(text)
}

// codexFailed reads a tool output: a JSON string {output, metadata{exit_code}} or plain text. A
// call the user rejected ("patch rejected by user") failed whatever its exit code.
func codexFailed(out any) bool {
	text, _ := out.(string)
	if text == "" {
		text = gets(out, "content")
	}
	if v, err := decodeAny([]byte(text)); err == nil {
		if codexRejected(gets(v, "output")) {
			return true
		}
		if code, ok := get(v, "metadata", "exit_code").(json.Number); ok {
			return code.String() != "0"
		}
		if b, ok := get(v, "success").(bool); ok {
			return !b
		}
	}
	if codexRejected(text) {
		return true
	}
	lower := strings.ToLower(strings.TrimSpace(text))
	for _, p := range []string{"error", "failed", "aborted", "apply_patch verification failed"} {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	return false
}
