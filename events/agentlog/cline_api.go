package agentlog

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tasklog/tasklog/events"
)

// clineAPIWrites are the tools of the api history that change the file in their path.
var clineAPIWrites = map[string]string{
	"write_to_file":   events.OpCreate,
	"replace_in_file": events.OpEdit,
	"new_rule":        events.OpCreate,
	"delete_file":     events.OpDelete,
}

// clineHumanTags are the wrappers Cline puts around what the human typed.
var clineHumanTags = []string{"task", "feedback", "answer", "user_message"}

// importClineAPI reads a task folder that holds only api_conversation_history.json: what was
// sent to the model. A user message gives the cwd and tabs of its environment details, the
// human's wrapped text and the mentions Cline expanded in it, and the results of the calls
// before it; an assistant message is a model request whose first tool_use Cline ran.
func importClineAPI(src clineSources, opts Options, emit func(Item) error) (Report, error) {
	c := newClineImporter(src, src.api, opts, emit)
	s := c.s
	f, err := src.openAPI()
	if err != nil {
		return s.t.report(), err
	}
	defer f.Close()
	ar, err := newArrayReader(f)
	if err != nil {
		return s.t.report(), fmt.Errorf("%s: %w", src.api, err)
	}
	for i := 0; ; i++ {
		v, err := ar.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s.t.report(), fmt.Errorf("%s: record %d: %w", src.api, i, err)
		}
		role := gets(v, "role")
		s.begin(i, "api:"+role, parseTime(get(v, "ts")))
		switch role {
		case "user":
			err = c.apiUser(v)
		case "assistant":
			err = c.apiAssistant(v)
		}
		if err != nil {
			return s.t.report(), err
		}
		s.finish()
	}
	if s.t.records == 0 {
		return s.t.report(), fmt.Errorf("%s: %w: no messages", src.api, ErrFormat)
	}
	if c.notExecuted > 0 {
		s.t.skipped["api:tool_use_not_executed"] += c.notExecuted
	}
	return s.close()
}

// apiUser settles the pending call from a tool_result block (or, before native tool calls, a
// "[tool] Result:" heading), then emits the turn's cwd, human text, mentions and tabs.
func (c *clineImporter) apiUser(v any) error {
	s := c.s
	var texts []string
	for _, b := range blocksOf(get(v, "content")) {
		switch gets(b, "type") {
		case "text":
			texts = append(texts, gets(b, "text"))
		case "tool_result":
			body := textOf(get(b, "content"))
			if _, err := s.result(gets(b, "tool_use_id"), getb(b, "is_error") || resultFailed(strings.TrimSpace(body))); err != nil {
				return err
			}
			s.consumed()
		}
	}
	req := strings.Join(texts, "\n\n")
	if len(s.pending) > 0 {
		c.settle(req)
		if err := s.drain(true); err != nil {
			return err
		}
	}
	if cwd := requestCwd(req); cwd != "" {
		s.setCwd(cwd)
	}
	for _, tag := range clineHumanTags {
		if body, ok := between(req, "<"+tag+">", "</"+tag+">"); ok {
			for _, block := range []string{"<file_content ", "<folder_content "} {
				body, _, _ = strings.Cut(body, block) // the expansions Cline appended
			}
			if err := s.userMessage(strings.TrimSpace(body)); err != nil {
				return err
			}
			break
		}
	}
	for _, p := range expandedMentions(req) {
		if err := s.mention(p); err != nil {
			return err
		}
	}
	if open, visible, ok := requestTabs(req); ok {
		return s.tabSnapshot(open, visible)
	}
	return nil
}

// apiAssistant is a model request; Cline runs the first tool_use of the message.
func (c *clineImporter) apiAssistant(v any) error {
	s := c.s
	if err := s.turn(); err != nil {
		return err
	}
	first := true
	for _, b := range blocksOf(get(v, "content")) {
		if gets(b, "type") != "tool_use" {
			continue
		}
		if !first {
			c.notExecuted++
			continue
		}
		first = false
		name, input := gets(b, "name"), get(b, "input")
		var writes []events.FileWrite
		if op, ok := clineAPIWrites[name]; ok {
			for _, k := range []string{"absolutePath", "path"} {
				if p := gets(input, k); p != "" {
					writes = append(writes, s.write(p, op, ""))
					break
				}
			}
		}
		s.toolCall(name, gets(b, "id"), input, "", writes)
	}
	return nil
}

// blocksOf is a message's content as blocks: a plain string is one text block.
func blocksOf(content any) []any {
	if t, ok := content.(string); ok {
		return []any{map[string]any{"type": "text", "text": t}}
	}
	return arr(content)
}
