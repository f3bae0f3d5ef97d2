package agentlog

import (
	"strings"
	"unicode"

	"github.com/tasklog/tasklog/events"
)

// clineMentions finds the file and folder mentions in raw Cline user text: "@/path",
// `@"/path with spaces"`, "@workspace:/path" and `@workspace:"/path"`. URLs, commits, @problems,
// @terminal and @git-changes are not paths and are left out. Trailing ".,;:!?()" is not part of
// an unquoted mention. The result is the path as written, without the "@".
func clineMentions(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		if text[i] != '@' || (i > 0 && !isSpaceByte(text[i-1])) {
			continue
		}
		rest := text[i+1:]
		if r, ok := strings.CutPrefix(rest, "workspace:"); ok {
			rest = r
		}
		var m string
		if strings.HasPrefix(rest, `"/`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				continue
			}
			m = rest[1 : 1+end]
		} else if strings.HasPrefix(rest, "/") {
			m = strings.TrimRight(untilSpace(rest), ".,;:!?()")
		}
		if len(m) > 1 {
			out = append(out, m)
		}
	}
	return out
}

// atMentions finds "@token" mentions in typed text (Claude Code, pi, Codex): an "@" at the start
// or after white space or an opening bracket, then a token up to white space, quoted when it
// holds spaces. Trailing punctuation is dropped, and only tokens that look like paths are kept:
// they hold a "/" or end in a file extension, and are not URLs, e-mail addresses or agents.
func atMentions(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		if text[i] != '@' || (i > 0 && !isSpaceByte(text[i-1]) && !strings.ContainsRune("([{'\"`", rune(text[i-1]))) {
			continue
		}
		rest := text[i+1:]
		var m string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				continue
			}
			m = rest[1 : 1+end]
		} else {
			m = strings.TrimRight(untilSpace(rest), ".,;:!?)]}'\"`")
		}
		if looksLikePath(m) {
			out = append(out, m)
		}
	}
	return out
}

// mentionTarget is the file part of a mention: without a "#anchor" or a ":line" range.
func mentionTarget(m string) string {
	if i := strings.IndexByte(m, '#'); i > 0 {
		m = m[:i]
	}
	if i := strings.LastIndexByte(m, ':'); i > 1 && isDigits(m[i+1:]) {
		m = m[:i]
	}
	if i := strings.LastIndexByte(m, ':'); i > 1 && isLineRange(m[i+1:]) {
		m = m[:i]
	}
	return m
}

func looksLikePath(m string) bool {
	if m == "" || strings.Contains(m, "://") || strings.Contains(m, "@") {
		return false
	}
	if strings.HasPrefix(m, "agent-") {
		return false
	}
	t := mentionTarget(m)
	if i := strings.IndexByte(t, ':'); i >= 0 && !isDrive(t) {
		return false // @server:resource
	}
	if strings.ContainsAny(t, `/\`) || strings.HasPrefix(t, "~") {
		return true
	}
	dot := strings.LastIndexByte(t, '.')
	return dot > 0 && dot < len(t)-1 && isWord(t[dot+1:])
}

// mentionsOf emits the mentions in text found by find, each resolved against the current
// working directory without its anchor or line range.
func (s *sink) mentionsOf(text string, find func(string) []string) error {
	for _, m := range find(text) {
		ev := events.Mention{Path: m}
		if p, ok := s.resolve(mentionTarget(m)); ok {
			ev.Resolved = p
			s.t.path(p)
		}
		if err := s.event(&ev); err != nil {
			return err
		}
	}
	return nil
}

func untilSpace(s string) string {
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		return s[:i]
	}
	return s
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isLineRange(s string) bool {
	a, b, ok := strings.Cut(s, "-")
	return ok && isDigits(a) && isDigits(b)
}

func isWord(s string) bool {
	for _, c := range s {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return s != ""
}
