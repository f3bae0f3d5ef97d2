package agentlog

import (
	"strings"

	"github.com/tasklog/tasklog/events"
)

// request handles api_req_started, one model request. Its text is JSON whose "request" is the
// user turn as sent: the results of the calls since the last request, the human's wrapped text
// with expanded mentions, and the <environment_details> block with the cwd and the tabs.
func (c *clineImporter) request(text string) error {
	s := c.s
	v, _ := decodeAny([]byte(text))
	req := gets(v, "request")
	c.settle(req)
	if err := s.drain(true); err != nil {
		return err
	}
	if cwd := requestCwd(req); cwd != "" {
		s.setCwd(cwd)
	}
	for _, p := range expandedMentions(req) {
		r, ok := s.resolve(p)
		if ok && c.mentioned[r] {
			continue // already emitted from the typed text
		}
		ev := events.Mention{Path: p}
		if ok {
			ev.Resolved = r
			s.t.path(r)
		}
		if err := s.event(&ev); err != nil {
			return err
		}
	}
	clear(c.mentioned)
	if open, visible, ok := requestTabs(req); ok {
		if err := s.tabSnapshot(open, visible); err != nil {
			return err
		}
	}
	return s.turn()
}

// settle decides the pending calls from the results at the head of the next request: Cline runs
// one tool per message, so results and calls pair in order. A call with no result (the task was
// interrupted, or the user denied it without one) did not succeed. Without a request text (older
// or synthetic files) the calls are taken as done.
func (c *clineImporter) settle(req string) {
	s := c.s
	labels := resultLabels(req)
	for i, cl := range s.pending {
		if cl.done {
			continue
		}
		switch {
		case req == "":
			s.settle(cl, false)
		case i < len(labels):
			s.settle(cl, labels[i].failed)
		default:
			s.settle(cl, true)
		}
	}
}

// resultLabel is a "[tool for 'arg'] Result:" heading in a request and whether its body says
// the call failed.
type resultLabel struct {
	tool   string
	failed bool
}

func resultLabels(req string) []resultLabel {
	var out []resultLabel
	for rest := req; ; {
		i := strings.Index(rest, "] Result:")
		if i < 0 {
			return out
		}
		start := strings.LastIndex(rest[:i], "\n[") + 1
		if start == 0 && !strings.HasPrefix(rest, "[") {
			rest = rest[i+len("] Result:"):]
			continue
		}
		head := strings.TrimPrefix(rest[start:i], "[")
		tool, _, _ := strings.Cut(head, " ")
		rest = rest[i+len("] Result:"):]
		body := strings.TrimSpace(rest)
		if len(body) > 300 {
			body = body[:300]
		}
		out = append(out, resultLabel{tool: tool, failed: resultFailed(body)})
	}
}

func resultFailed(body string) bool {
	lower := strings.ToLower(body)
	for _, p := range []string{"the user denied this operation", "the tool execution failed", "error", "<error>"} {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	return strings.Contains(lower, "denied this operation")
}

// requestCwd reads the working directory from "# Current Working Directory (<cwd>) Files" in the
// environment details, else from a resumption notice ("The current working directory is now
// '<cwd>'").
func requestCwd(req string) string {
	env := environmentDetails(req)
	if _, rest, ok := strings.Cut(env, "# Current Working Directory ("); ok {
		if cwd, _, ok := strings.Cut(rest, ") Files"); ok && !strings.Contains(cwd, "\n") {
			return strings.TrimSpace(cwd)
		}
	}
	if cwd, ok := between(req, "The current working directory is now '", "'"); ok && !strings.Contains(cwd, "\n") {
		return strings.TrimSpace(cwd)
	}
	return ""
}

// environmentDetails is the body of the last <environment_details> block.
func environmentDetails(req string) string {
	i := strings.LastIndex(req, "<environment_details>")
	if i < 0 {
		return ""
	}
	body := req[i+len("<environment_details>"):]
	if j := strings.Index(body, "</environment_details>"); j >= 0 {
		body = body[:j]
	}
	return body
}

// requestTabs reads "# <Host> Visible Files" and "# <Host> Open Tabs": one cwd-relative path a
// line, or "(No visible files)" / "(No open tabs)".
func requestTabs(req string) (open, visible []string, ok bool) {
	var cur *[]string
	for line := range strings.Lines(environmentDetails(req)) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "# "):
			cur = nil
			if strings.HasSuffix(line, " Visible Files") {
				cur, ok = &visible, true
			} else if strings.HasSuffix(line, " Open Tabs") {
				cur, ok = &open, true
			}
		case cur == nil || strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "(No "):
		default:
			*cur = append(*cur, strings.TrimSpace(line))
		}
	}
	return open, visible, ok
}

// expandedMentions are the paths of <file_content>/<folder_content> blocks Cline appended inside
// a human-authored wrapper (<task>, <feedback>, <answer>, <user_message>) or under "Files attached
// by the user:". Expansion also runs on text the user did not write, so paths that cannot be
// paths (quotes, backticks) and failed reads are left out.
func expandedMentions(req string) []string {
	var parts []string
	for _, tag := range []string{"task", "feedback", "answer", "user_message"} {
		for rest := req; ; {
			body, after, ok := cutFirst(rest, "<"+tag+">", "</"+tag+">")
			if !ok {
				break
			}
			parts = append(parts, body)
			rest = after
		}
	}
	if _, att, ok := strings.Cut(req, "Files attached by the user:"); ok {
		if i := strings.Index(att, "<environment_details>"); i >= 0 {
			att = att[:i]
		}
		parts = append(parts, att)
	}
	var out []string
	seen := map[string]bool{}
	for _, part := range parts {
		for _, open := range []string{`<file_content path="`, `<folder_content path="`} {
			for rest := part; ; {
				i := strings.Index(rest, open)
				if i < 0 {
					break
				}
				rest = rest[i+len(open):]
				p, after, ok := strings.Cut(rest, `"`)
				if !ok {
					break
				}
				rest = after
				body := strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(after, " "), ">"), "\n")
				if p == "" || strings.ContainsAny(p, "'`\"\n<>") || strings.HasPrefix(body, "Error fetching content") || seen[p] {
					continue
				}
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// cutFirst returns the body of the first open…close pair in s and the text after it.
func cutFirst(s, open, close string) (body, after string, ok bool) {
	i := strings.Index(s, open)
	if i < 0 {
		return "", "", false
	}
	rest := s[i+len(open):]
	j := strings.Index(rest, close)
	if j < 0 {
		return "", "", false
	}
	return rest[:j], rest[j+len(close):], true
}
