package agentlog

import (
	"strings"
	"time"

	"github.com/tasklog/tasklog/events"
)

// piImporter maps a pi session (~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl): a session
// header with the cwd, then entries. Layouts v1 (a plain list), v2 and v3 (id/parentId tree) are
// read alike, in file order; oh-my-pi's leading title line is skipped.
type piImporter struct{}

func (p *piImporter) kindOf(v any) (string, time.Time) {
	kind := gets(v, "type")
	if kind == "message" {
		kind += ":" + gets(v, "message", "role")
	}
	when := parseTime(get(v, "timestamp"))
	if when.IsZero() {
		when = parseTime(get(v, "message", "timestamp"))
	}
	return kind, when
}

// piWriteTools are pi's tools that change the file in their path argument.
var piWriteTools = map[string]string{"write": events.OpCreate, "edit": events.OpEdit}

func (p *piImporter) end(*sink) error { return nil }

func (p *piImporter) record(s *sink, v any) error {
	switch gets(v, "type") {
	case "session":
		s.setCwd(gets(v, "cwd"))
		if err := s.ensureStarted(); err != nil {
			return err
		}
		return s.settingsChanged("", gets(v, "provider"), gets(v, "modelId"))
	case "model_change":
		provider, model := gets(v, "provider"), gets(v, "modelId")
		if m := gets(v, "model"); m != "" && model == "" { // oh-my-pi: "provider/id"
			provider, model, _ = strings.Cut(m, "/")
			if model == "" {
				provider, model = "", m
			}
		}
		return s.settingsChanged("", provider, model)
	case "message":
		return p.message(s, get(v, "message"))
	}
	return nil
}

func (p *piImporter) message(s *sink, msg any) error {
	switch gets(msg, "role") {
	case "user":
		text := strings.TrimSpace(textOf(get(msg, "content")))
		text, files := cutFileBlocks(text)
		if err := s.userMessage(text); err != nil {
			return err
		}
		for _, f := range files {
			if err := s.mention(f); err != nil {
				return err
			}
		}
		return s.mentionsOf(text, atMentions)
	case "assistant":
		if err := s.settingsChanged("", gets(msg, "provider"), gets(msg, "model")); err != nil {
			return err
		}
		if err := s.turn(); err != nil {
			return err
		}
		// A response that ended in an error or was aborted never ran its calls.
		stopped := gets(msg, "stopReason") == "error" || gets(msg, "stopReason") == "aborted"
		for _, b := range arr(get(msg, "content")) {
			if gets(b, "type") != "toolCall" {
				continue
			}
			name, args := gets(b, "name"), get(b, "arguments")
			var writes []events.FileWrite
			if op, ok := piWriteTools[name]; ok {
				if path := gets(args, "path"); path != "" {
					writes = append(writes, s.write(path, op, ""))
				}
			}
			c := s.toolCall(name, gets(b, "id"), args, "", writes)
			if stopped {
				s.settle(c, true)
			}
		}
		if stopped {
			return s.drain(false)
		}
	case "toolResult":
		id := gets(msg, "toolCallId")
		ok, err := s.result(id, getb(msg, "isError"))
		if err != nil {
			return err
		}
		if !ok {
			s.warn("tool result %q answers no tool call", id)
		}
	case "bashExecution":
		// A command the user ran with "!": a tool call, settled at once.
		exit, _ := get(msg, "exitCode").(interface{ Int64() (int64, error) })
		failed := getb(msg, "cancelled")
		if exit != nil {
			if n, err := exit.Int64(); err == nil && n != 0 {
				failed = true
			}
		}
		c := s.toolCall("bash", "", map[string]any{"command": gets(msg, "command"), "user": true}, "", nil)
		s.settle(c, failed)
		return s.drain(false)
	}
	return nil
}

// cutFileBlocks removes the <file name="ABS">…</file> blocks pi inlines for files given on the
// command line and returns the text and the file names.
func cutFileBlocks(text string) (string, []string) {
	var files []string
	for {
		i := strings.Index(text, `<file name="`)
		if i < 0 {
			return text, files
		}
		rest := text[i+len(`<file name="`):]
		name, _, ok := strings.Cut(rest, `"`)
		j := strings.Index(rest, "</file>")
		if !ok || j < 0 {
			return text, files
		}
		files = append(files, name)
		text = strings.TrimSpace(text[:i] + rest[j+len("</file>"):])
	}
}
