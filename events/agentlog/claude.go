package agentlog

import (
	"strings"
	"time"

	"github.com/tasklog/tasklog/events"
)

// claudeImporter maps a Claude Code transcript (~/.claude/projects/<dir>/<session>.jsonl): one
// JSON object per line, an assistant API message spread over one line per content block, tool
// results in user lines, and a cwd on every user, assistant and system line.
type claudeImporter struct {
	msgID string // the assistant message being read; a new one is a new model request
}

func (c *claudeImporter) kindOf(v any) (string, time.Time) {
	kind := gets(v, "type")
	if kind == "" {
		kind = "untyped"
	}
	if st := gets(v, "subtype"); st != "" {
		kind += ":" + st
	}
	return kind, parseTime(get(v, "timestamp"))
}

func (c *claudeImporter) end(*sink) error { return nil }

func (c *claudeImporter) record(s *sink, v any) error {
	s.setCwd(gets(v, "cwd"))
	if ver := gets(v, "version"); ver != "" && !s.started {
		s.start.Runtime.Version = ver
	}
	switch gets(v, "type") {
	case "user":
		return c.user(s, v)
	case "assistant":
		return c.assistant(s, v)
	case "attachment":
		return c.attachment(s, v)
	}
	return nil
}

// claudeWriteTools are the tools that change the file they name when they succeed.
var claudeWriteTools = map[string]struct{ key, op string }{
	"Write":        {"file_path", events.OpCreate},
	"Edit":         {"file_path", events.OpEdit},
	"MultiEdit":    {"file_path", events.OpEdit},
	"NotebookEdit": {"notebook_path", events.OpEdit},
}

func (c *claudeImporter) assistant(s *sink, v any) error {
	msg := get(v, "message")
	model := gets(msg, "model")
	if model == "<synthetic>" {
		s.kind = "assistant:synthetic" // written by Claude Code itself, not a model request
		return nil
	}
	blocks := arr(get(msg, "content"))
	if len(blocks) > 0 {
		s.kind = "assistant:" + gets(blocks[0], "type")
	}
	if id := gets(msg, "id"); id == "" || id != c.msgID {
		c.msgID = id
		if err := s.settingsChanged("", "anthropic", model); err != nil {
			return err
		}
		if err := s.turn(); err != nil {
			return err
		}
	}
	for _, b := range blocks {
		if gets(b, "type") != "tool_use" {
			continue
		}
		name, input := gets(b, "name"), get(b, "input")
		var writes []events.FileWrite
		if w, ok := claudeWriteTools[name]; ok {
			if p := gets(input, w.key); p != "" {
				writes = append(writes, s.write(p, w.op, ""))
			}
		}
		s.toolCall(name, gets(b, "id"), input, "", writes)
	}
	return nil
}

func (c *claudeImporter) user(s *sink, v any) error {
	content := get(v, "message", "content")
	if s.kind == "user" {
		if err := c.permissionMode(s, gets(v, "permissionMode")); err != nil {
			return err
		}
	}
	var results bool
	for _, b := range arr(content) {
		if gets(b, "type") != "tool_result" {
			continue
		}
		results = true
		tur := get(v, "toolUseResult")
		_, errText := tur.(string) // an error result is a plain string
		failed := getb(b, "is_error") || errText
		id := gets(b, "tool_use_id")
		if call := s.pendingCall(id); call != nil {
			if gets(tur, "type") == "update" {
				for i := range call.writes {
					call.writes[i].Op = events.OpEdit
				}
			}
			s.settle(call, failed)
			if err := s.drain(false); err != nil {
				return err
			}
		} else {
			s.warn("tool result %q answers no tool call", id)
		}
	}
	if results || get(v, "toolUseResult") != nil {
		s.kind = "user:tool_result"
		return nil
	}
	switch {
	case getb(v, "isMeta"):
		s.kind = "user:meta"
		return nil
	case getb(v, "isCompactSummary"):
		s.kind = "user:compact_summary"
		return nil
	}
	text := strings.TrimSpace(textOf(content))
	if kind, ok := claudeNotHuman(text); ok {
		s.kind = kind
		return nil
	}
	if name, ok := between(text, "<command-name>", "</command-name>"); ok {
		// A slash command the user typed; its echo and output are separate lines.
		args, _ := between(text, "<command-args>", "</command-args>")
		s.kind = "user:command"
		return s.userMessage(strings.TrimSpace(name + " " + strings.TrimSpace(args)))
	}
	text, err := c.ideContext(s, text)
	if err != nil {
		return err
	}
	if text == "" {
		return nil
	}
	if err := s.userMessage(text); err != nil {
		return err
	}
	return s.mentionsOf(text, atMentions)
}

// claudeNotHuman recognizes user-role text that Claude Code wrote, not the human.
func claudeNotHuman(text string) (string, bool) {
	for _, p := range []struct{ prefix, kind string }{
		{"<local-command-stdout>", "user:command_output"},
		{"<local-command-stderr>", "user:command_output"},
		{"<local-command-caveat>", "user:meta"},
		{"<task-notification>", "user:task_notification"},
		{"<system-reminder>", "user:meta"},
		{"[Request interrupted by user", "user:interrupt"},
		{"This session is being continued from a previous conversation", "user:compact_summary"},
		{"Stop hook feedback:", "user:hook_feedback"},
		{"Base directory for this skill:", "user:skill"},
	} {
		if strings.HasPrefix(text, p.prefix) {
			return p.kind, true
		}
	}
	if text == "" {
		return "user:empty", true
	}
	return "", false
}

// ideContext emits the file the IDE reports open (<ide_opened_file>, <ide_selection>) as a tab
// snapshot and returns the text without those blocks and without system reminders.
func (c *claudeImporter) ideContext(s *sink, text string) (string, error) {
	var active string
	for _, tag := range []string{"ide_opened_file", "ide_selection", "system-reminder"} {
		for {
			body, rest, ok := cutBlock(text, tag)
			if !ok {
				break
			}
			text = rest
			switch tag {
			case "ide_opened_file":
				if p, ok := between(body, "opened the file ", " in the IDE"); ok {
					active = p
				}
			case "ide_selection":
				first, _, _ := strings.Cut(body, "\n")
				if _, p, ok := strings.Cut(first, " from "); ok {
					active = strings.TrimSuffix(strings.TrimSpace(p), ":")
				}
			}
		}
	}
	if active != "" {
		if err := s.tabSnapshot([]string{active}, []string{active}); err != nil {
			return "", err
		}
	}
	return strings.TrimSpace(text), nil
}

// permissionMode maps Claude Code's permission mode to tasklog's: plan, or act for the others.
func (c *claudeImporter) permissionMode(s *sink, mode string) error {
	switch mode {
	case "":
		return nil
	case "plan":
		return s.settingsChanged("plan", "", "")
	default:
		return s.settingsChanged("act", "", "")
	}
}

// attachment maps a resolved mention (newer builds): type file or directory, with an absolute
// filename and the displayPath the user typed.
func (c *claudeImporter) attachment(s *sink, v any) error {
	a := get(v, "attachment")
	t := gets(a, "type")
	s.kind = "attachment:" + t
	var abs, shown string
	switch t {
	case "file", "already_read_file":
		abs, shown = gets(a, "filename"), gets(a, "displayPath")
	case "directory":
		abs, shown = gets(a, "path"), gets(a, "displayPath")
	default:
		return nil
	}
	if shown == "" {
		shown = abs
	}
	if shown == "" {
		return nil
	}
	m := events.Mention{Path: shown}
	if p, ok := s.resolve(abs); ok {
		m.Resolved = p
	} else if p, ok := s.resolve(shown); ok {
		m.Resolved = p
	}
	s.t.path(m.Resolved)
	return s.event(&m)
}

// between returns the text between the first open and the following close.
func between(s, open, close string) (string, bool) {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return "", false
	}
	body, _, ok := strings.Cut(rest, close)
	return body, ok
}

// cutBlock removes the first <tag>…</tag> block from s and returns its body and the rest.
func cutBlock(s, tag string) (body, rest string, ok bool) {
	open, close := "<"+tag+">", "</"+tag+">"
	i := strings.Index(s, open)
	if i < 0 {
		return "", s, false
	}
	j := strings.Index(s[i:], close)
	if j < 0 {
		return "", s, false
	}
	return s[i+len(open) : i+j], s[:i] + s[i+j+len(close):], true
}
