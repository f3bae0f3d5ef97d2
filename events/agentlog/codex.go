package agentlog

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/tasklog/tasklog/events"
)

// codexImporter maps a Codex CLI rollout ($CODEX_HOME/sessions/…/rollout-*.jsonl). The layout is
// told from line 1: the envelope {timestamp, type, payload} of Sept 2025 on, or the legacy one (a
// bare {id, timestamp} header, then bare response items).
type codexImporter struct {
	legacy bool
	n      int
	seen   map[string]bool // call ids of the tool calls made so far
	output bool            // the last response item came from the model
	held   *heldUser
}

// heldUser is a user message read from a response_item, held for one record: the event_msg
// that usually follows carries the same turn and is preferred.
type heldUser struct {
	rec  int
	when time.Time
	text string
}

func (c *codexImporter) kindOf(v any) (string, time.Time) {
	if c.n == 0 && get(v, "payload") == nil && gets(v, "type") == "" {
		c.legacy = true
	}
	c.n++
	if c.legacy {
		if gets(v, "type") == "" {
			return "session_meta", parseTime(get(v, "timestamp"))
		}
		return "response_item:" + codexItemKind(v), time.Time{}
	}
	kind := gets(v, "type")
	switch kind {
	case "response_item":
		kind += ":" + codexItemKind(get(v, "payload"))
	case "event_msg":
		kind += ":" + gets(v, "payload", "type")
	}
	return kind, parseTime(get(v, "timestamp"))
}

func codexItemKind(item any) string {
	k := gets(item, "type")
	if k == "message" {
		k += ":" + gets(item, "role")
	}
	return k
}

func (c *codexImporter) record(s *sink, v any) error {
	typ, payload := gets(v, "type"), get(v, "payload")
	if c.legacy {
		typ, payload = "response_item", v
		if s.kind == "session_meta" {
			typ = "session_meta"
		}
	}
	isUserEvent := typ == "event_msg" && gets(payload, "type") == "user_message"
	if err := c.release(s, isUserEvent, gets(payload, "message")); err != nil {
		return err
	}
	switch typ {
	case "session_meta":
		s.setCwd(gets(payload, "cwd"))
		if ver := gets(payload, "cli_version"); ver != "" {
			s.start.Runtime.Version = ver
		}
		if s.root == "" {
			return nil // legacy: the cwd comes with the environment context
		}
		if err := s.ensureStarted(); err != nil {
			return err
		}
		return s.settingsChanged("", gets(payload, "model_provider"), "")
	case "turn_context":
		s.setCwd(gets(payload, "cwd"))
		return s.settingsChanged("", "", gets(payload, "model"))
	case "response_item":
		return c.item(s, payload)
	case "event_msg":
		if isUserEvent {
			c.output = false
			return c.userText(s, gets(payload, "message"))
		}
		return c.execEvent(s, payload)
	}
	return nil
}

// execEvent maps the exec and patch events of newer builds. A begin whose call the rollout
// holds no response item for becomes the tool call (exec_command_begin{call_id, command, cwd},
// patch_apply_begin{call_id, changes{path: …}}); an end settles its call by exit code or success.
func (c *codexImporter) execEvent(s *sink, p any) error {
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	id := gets(p, "call_id")
	switch gets(p, "type") {
	case "exec_command_begin":
		if id == "" || s.pendingCall(id) != nil || c.seen[id] {
			s.consumed()
			return nil
		}
		if err := c.modelTurn(s); err != nil {
			return err
		}
		params := map[string]any{"command": get(p, "command")}
		dir := s.cwd
		if wd := gets(p, "cwd"); wd != "" {
			params["workdir"] = wd
			if r, ok := s.resolve(wd); ok {
				dir = r
			}
		}
		var writes []events.FileWrite
		if text := codexCommandText("exec_command", params); strings.Contains(text, "*** ") {
			writes = s.patchWrites(text, dir)
		}
		s.toolCall("exec_command", id, params, dir, writes)
		c.seen[id] = true
	case "patch_apply_begin":
		if id == "" || s.pendingCall(id) != nil || c.seen[id] {
			s.consumed()
			return nil
		}
		if err := c.modelTurn(s); err != nil {
			return err
		}
		var writes []events.FileWrite
		changes := obj(get(p, "changes"))
		for _, path := range sortedKeys(changes) {
			op := events.OpEdit
			switch {
			case get(changes[path], "add") != nil:
				op = events.OpCreate
			case get(changes[path], "delete") != nil:
				op = events.OpDelete
			}
			writes = append(writes, s.write(path, op, ""))
		}
		s.toolCall("apply_patch", id, map[string]any{"changes": sortedKeys(changes)}, "", writes)
		c.seen[id] = true
	case "exec_command_end", "patch_apply_end":
		failed := false
		if code, ok := get(p, "exit_code").(json.Number); ok && code.String() != "0" {
			failed = true
		}
		if ok, isBool := get(p, "success").(bool); isBool && !ok {
			failed = true
		}
		if codexRejected(gets(p, "stderr")) || codexRejected(gets(p, "stdout")) {
			failed = true
		}
		if _, err := s.result(id, failed); err != nil {
			return err
		}
		s.consumed() // a call already settled by its response item needs nothing more
	}
	return nil
}

// modelTurn opens a model request unless the last item already came from the model.
func (c *codexImporter) modelTurn(s *sink) error {
	if c.output {
		return nil
	}
	c.output = true
	return s.turn()
}

// codexRejected tells an answer that the user refused the call ("patch rejected by user").
func codexRejected(text string) bool {
	return strings.Contains(strings.ToLower(text), "rejected by user")
}

func (c *codexImporter) end(s *sink) error { return c.release(s, false, "") }

// release emits a held response_item user message unless this record is the event_msg that
// repeats it, in which case the held one is counted as a duplicate.
func (c *codexImporter) release(s *sink, userEvent bool, text string) error {
	h := c.held
	if h == nil {
		return nil
	}
	c.held = nil
	if userEvent && strings.TrimSpace(text) == strings.TrimSpace(h.text) {
		s.t.skipped["duplicate:response_item:message:user"]++
		return nil
	}
	rec, when, kind, mapped := s.rec, s.when, s.kind, s.mapped
	s.rec, s.when = h.rec, h.when
	err := c.userText(s, h.text)
	s.rec, s.when, s.kind, s.mapped = rec, when, kind, mapped
	return err
}

func (c *codexImporter) item(s *sink, item any) error {
	t := gets(item, "type")
	if t == "message" && gets(item, "role") != "assistant" {
		if gets(item, "role") != "user" {
			return nil
		}
		text := strings.TrimSpace(textOf(get(item, "content")))
		switch {
		case strings.HasPrefix(text, "<environment_context>"):
			cwd, _ := between(text, "<cwd>", "</cwd>")
			s.setCwd(strings.TrimSpace(cwd))
			s.kind += ":environment_context"
			return nil
		case strings.HasPrefix(text, "<user_instructions>"):
			s.kind += ":user_instructions"
			return nil
		}
		c.output = false
		if c.legacy {
			return c.userText(s, text)
		}
		c.held = &heldUser{rec: s.rec, when: s.when, text: text}
		s.consumed()
		return nil
	}
	switch t {
	case "function_call_output", "custom_tool_call_output":
		c.output = false
		id := gets(item, "call_id")
		ok, err := s.result(id, codexFailed(get(item, "output")))
		if err != nil {
			return err
		}
		if !ok && !c.seen[id] {
			s.warn("tool output %q answers no tool call", id)
		}
		return nil
	}
	if err := c.modelTurn(s); err != nil {
		return err
	}
	if id := gets(item, "call_id"); id != "" {
		if c.seen == nil {
			c.seen = map[string]bool{}
		}
		c.seen[id] = true
	}
	switch t {
	case "function_call":
		return c.functionCall(s, item)
	case "custom_tool_call":
		name, input := gets(item, "name"), gets(item, "input")
		var writes []events.FileWrite
		if name == "apply_patch" {
			writes = s.patchWrites(input, "")
		}
		s.toolCall(name, gets(item, "call_id"), map[string]any{"input": input}, "", writes)
	case "local_shell_call":
		cl := s.toolCall("local_shell", gets(item, "call_id"), get(item, "action"), "", nil)
		cl.assumeOK = true
	}
	return nil
}

func (c *codexImporter) functionCall(s *sink, item any) error {
	name, rawArgs := gets(item, "name"), gets(item, "arguments")
	var args any = map[string]any{}
	if strings.TrimSpace(rawArgs) != "" {
		v, err := decodeAny([]byte(rawArgs))
		if err != nil {
			v = map[string]any{"arguments": rawArgs}
		}
		args = v
	}
	dir := s.cwd
	for _, k := range []string{"workdir", "cwd"} {
		if wd := gets(args, k); wd != "" {
			if p, ok := s.resolve(wd); ok {
				dir = p
			}
		}
	}
	var writes []events.FileWrite
	if text := codexCommandText(name, args); strings.Contains(text, "*** ") {
		writes = s.patchWrites(text, dir)
	}
	s.toolCall(name, gets(item, "call_id"), args, dir, writes)
	return nil
}

// codexCommandText is the text of a call that may carry a patch: the shell command line, or an
// apply_patch input.
func codexCommandText(name string, args any) string {
	var parts []string
	for _, k := range []string{"command", "cmd", "input", "patch"} {
		switch v := get(args, k).(type) {
		case string:
			parts = append(parts, v)
		case []any:
			for _, a := range v {
				parts = append(parts, str(a))
			}
		}
	}
	text := strings.Join(parts, "\n")
	if name != "apply_patch" && !strings.Contains(text, "apply_patch") {
		return ""
	}
	return text
}

// userText emits a human turn: the IDE preamble of the VS Code extension becomes a tab
// snapshot, the request after it the user message, its @tokens mentions.
func (c *codexImporter) userText(s *sink, text string) error {
	text = strings.TrimSpace(text)
	if pre, req, ok := strings.Cut(text, "## My request for Codex:"); ok {
		text = strings.TrimSpace(req)
		open, active := codexIDETabs(pre)
		if len(open) > 0 || len(active) > 0 {
			if err := s.tabSnapshot(open, active); err != nil {
				return err
			}
		}
	}
	if text == "" {
		return nil
	}
	if err := s.userMessage(text); err != nil {
		return err
	}
	return s.mentionsOf(text, atMentions)
}

// codexIDETabs reads "## Active file: p" and the "## Open tabs:" list ("- name: path").
func codexIDETabs(pre string) (open, active []string) {
	inTabs := false
	for line := range strings.Lines(pre) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "## Active file:"):
			active = append(active, strings.TrimSpace(strings.TrimPrefix(line, "## Active file:")))
			inTabs = false
		case strings.HasPrefix(line, "## Open tabs:"):
			inTabs = true
		case strings.HasPrefix(line, "## "):
			inTabs = false
		case inTabs && strings.HasPrefix(line, "- "):
			item := strings.TrimPrefix(line, "- ")
			if _, p, ok := strings.Cut(item, ": "); ok {
				item = p
			}
			open = append(open, strings.TrimSpace(item))
		}
	}
	return open, active
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
