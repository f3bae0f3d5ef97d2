package projections

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ExtractPaths returns the path-like strings of a user's message, in order of first appearance
// and without duplicates: what Cline's extractPathLikeStrings finds, plus inline @mentions.
//
// A candidate is a token that starts the text or follows whitespace or one of ( [ { " ' ` and is
// followed by the end, whitespace or one of ) ] } " ' ` , . ; : ! ?. It counts when it has at least
// two "/"-separated segments ("src/index.ts", "apps/web/") or is a single file name with an
// extension ("foo.md", ".gitignore"). Fenced code blocks and URLs are removed first; a leading
// "./" is removed; absolute paths, ".." segments and tokens over 300 bytes are dropped.
//
// Where this differs from Cline's regular expression, on purpose: @/path, @"/path with spaces"
// and @rel/path mentions count (the "@" and a leading "/" are removed: mentions are
// root-relative); backslashes separate segments; letters outside ASCII are name characters; a
// trailing "." ends the sentence rather than the name; a token followed by some other character
// ("src/a.ts#L3") is not cut short at an inner dot; and a lone name whose extension is all digits
// ("1.5", "v2.0") is a version, not a file.
func ExtractPaths(text string) []string {
	return extract(text, proseMode)
}

// token is one path the scanner found, and whether the user wrote it as an @mention.
type token struct {
	path    string
	mention bool
}

// extractMode tunes the scanner for prose or for shell command lines.
type extractMode struct {
	keepAbsolute bool // shell: absolute paths may still map to a root
	backslash    bool // prose: "\" separates segments (in a shell it escapes)
	mentions     bool // prose: "@" introduces a mention (in a shell it is npm's "@scope/")
	stripFences  bool
	starts       string // characters a token may follow, besides whitespace
	ends         string // characters a token may be followed by, besides whitespace
}

var (
	proseMode = extractMode{backslash: true, mentions: true, stripFences: true,
		starts: "([{\"'`", ends: ")]}\"'`,.;:!?"}
	shellMode = extractMode{keepAbsolute: true,
		starts: "([{\"'`=", ends: ")]}\"'`,.;:!?|&<>"}
)

const maxTokenLen = 300

func extract(text string, m extractMode) []string {
	toks := extractTokens(text, m)
	if toks == nil {
		return nil
	}
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.path
	}
	return out
}

func extractTokens(text string, m extractMode) []token {
	if text == "" {
		return nil
	}
	if m.stripFences {
		text = stripFencedCode(text)
	}
	text = stripURLs(text)
	var out []token
	seen := map[string]bool{}
	add := func(tok string, mention bool) {
		if p, ok := cleanToken(tok, mention, m); ok && !seen[p] {
			seen[p] = true
			out = append(out, token{p, mention})
		}
	}
	prev := ' '
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !m.canStart(prev) {
			prev = r
			i += size
			continue
		}
		mention := false
		start := i
		if r == '@' && m.mentions {
			if j, tok, ok := quotedMention(text, i+1); ok {
				add(tok, true)
				i, prev = j, '"'
				continue
			}
			mention = true
			start = i + 1
		}
		end := start
		for end < len(text) {
			r, size := utf8.DecodeRuneInString(text[end:])
			if !m.isNameRune(r) {
				break
			}
			end += size
		}
		if end == start {
			prev = r
			i += size
			continue
		}
		last, _ := utf8.DecodeLastRuneInString(text[:end])
		if end == len(text) || m.canEnd(firstRune(text[end:])) {
			add(text[start:end], mention)
		}
		prev, i = last, end
	}
	return out
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

func (m extractMode) canStart(prev rune) bool {
	return unicode.IsSpace(prev) || strings.ContainsRune(m.starts, prev)
}

func (m extractMode) canEnd(next rune) bool {
	return unicode.IsSpace(next) || strings.ContainsRune(m.ends, next)
}

func (m extractMode) isNameRune(r rune) bool {
	switch {
	case r == '_' || r == '.' || r == '-' || r == '/':
		return true
	case r == '\\':
		return m.backslash
	case r < utf8.RuneSelf:
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// quotedMention reads the "…" of @"/path with spaces" starting at i (just after the "@").
func quotedMention(text string, i int) (int, string, bool) {
	if i >= len(text) || text[i] != '"' {
		return 0, "", false
	}
	j := strings.IndexByte(text[i+1:], '"')
	if j < 0 {
		return 0, "", false
	}
	tok := text[i+1 : i+1+j]
	if strings.ContainsAny(tok, "\n\r") {
		return 0, "", false
	}
	return i + 2 + j, tok, true
}

// cleanToken applies the shape rules of ExtractPaths to one token.
func cleanToken(tok string, mention bool, m extractMode) (string, bool) {
	tok = strings.TrimRight(tok, ".")
	if m.backslash {
		tok = strings.ReplaceAll(tok, `\`, "/")
	}
	if mention {
		tok = strings.TrimPrefix(tok, "/") // Cline's @/path is relative to the workspace
	}
	for strings.HasPrefix(tok, "./") {
		tok = tok[2:]
	}
	if tok == "" || len(tok) > maxTokenLen {
		return "", false
	}
	abs := strings.HasPrefix(tok, "/")
	if abs && !m.keepAbsolute {
		return "", false
	}
	body := strings.TrimPrefix(strings.TrimSuffix(tok, "/"), "/")
	if body == "" {
		return "", false
	}
	for s := range strings.SplitSeq(body, "/") {
		if s == "" || s == ".." {
			return "", false
		}
	}
	if !abs && !strings.Contains(body, "/") && !isFileName(body, strings.HasSuffix(tok, "/")) {
		return "", false
	}
	return tok, true
}

// stripURLs blanks what Cline's /\b\w+:\/\/[^\s]+/ matches: a scheme of word characters,
// "://" and everything up to whitespace.
func stripURLs(text string) string {
	i := strings.Index(text, "://")
	if i < 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for i >= 0 {
		start := i
		for start > 0 && isWordByte(text[start-1]) {
			start--
		}
		if start == i { // no scheme: not a URL, keep it
			b.WriteString(text[:i+3])
			text = text[i+3:]
		} else {
			end := i + 3
			for end < len(text) {
				r, size := utf8.DecodeRuneInString(text[end:])
				if unicode.IsSpace(r) {
					break
				}
				end += size
			}
			b.WriteString(text[:start])
			b.WriteByte(' ')
			text = text[end:]
		}
		i = strings.Index(text, "://")
	}
	b.WriteString(text)
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || isASCIILetter(c)
}

// isFileName is the single-segment case: a name with an extension of 1 to 10 ASCII letters or
// digits, not all digits.
func isFileName(s string, dir bool) bool {
	i := strings.LastIndexByte(s, '.')
	if dir || i < 0 {
		return false
	}
	ext := s[i+1:]
	if len(ext) < 1 || len(ext) > 10 {
		return false
	}
	digits := true
	for j := 0; j < len(ext); j++ {
		c := ext[j]
		switch {
		case c >= '0' && c <= '9':
		case isASCIILetter(c):
			digits = false
		default:
			return false
		}
	}
	return !digits
}

// stripFencedCode blanks ``` and ~~~ fenced blocks: code is not the user naming files. An
// unclosed fence runs to the end, as Markdown renders it.
func stripFencedCode(text string) string {
	if !strings.Contains(text, "```") && !strings.Contains(text, "~~~") {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	fence := ""
	for line := range strings.SplitAfterSeq(text, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if fence == "" {
			if f := fenceOf(trimmed); f != "" {
				fence = f
				b.WriteString("\n")
				continue
			}
			b.WriteString(line)
			continue
		}
		if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
			fence = ""
		}
		b.WriteString("\n")
	}
	return b.String()
}

// fenceOf returns the fence a line opens ("```", "````", "~~~"), or "".
func fenceOf(line string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == c {
			n++
		}
		if n >= 3 && (c == '~' || !strings.ContainsRune(line[n:], '`')) {
			return line[:n] // a backtick in the info string makes it inline code, not a fence
		}
	}
	return ""
}

// Guessed is a path GuessPaths found.
type Guessed struct {
	// Path is the path as written, cleaned as ExtractPaths cleans it.
	Path string
	// Mention is set for an inline @mention: the user named the path, it is no guess.
	Mention bool
}

// GuessPaths returns the paths a user's message may name, for a session to check against the
// workspace when it records the message: what ExtractPaths finds, with three corrections. A name
// in double quotes or backticks that holds spaces ("Screenshot 2025-10-24 at 2.54.54 PM.png") is
// one path, and the words inside it are not read again; abbreviations of one-letter parts
// ("e.g", "i.e") are not file names; and inline @mentions are marked, as they are no guesses.
// Whether a name such as "Node.js" is a product or a file only the workspace can tell: that is
// what the session's check is for.
func GuessPaths(text string) []Guessed {
	if text == "" {
		return nil
	}
	text = stripFencedCode(text)
	var out []Guessed
	seen := map[string]bool{}
	add := func(p string, mention bool) {
		if !seen[p] {
			seen[p] = true
			out = append(out, Guessed{Path: p, Mention: mention})
		}
	}
	var rest strings.Builder
	rest.Grow(len(text))
	for i := 0; i < len(text); {
		c := text[i]
		if c == '"' || c == '`' {
			if j := strings.IndexByte(text[i+1:], c); j >= 0 {
				inner := text[i+1 : i+1+j]
				if strings.Contains(inner, " ") && !strings.ContainsAny(inner, "\n\r\t") {
					mention := c == '"' && i > 0 && text[i-1] == '@'
					if p, ok := spacedName(inner, mention); ok {
						add(p, mention)
					}
					if trimmed := strings.TrimSpace(inner); strings.Count(trimmed, " ") <= maxNameSpaces &&
						isFileName(trimmed[strings.LastIndexByte(trimmed, '/')+1:], false) {
						rest.WriteByte(' ') // a name with spaces, kept or dropped whole: not its words
						i += j + 2
						continue
					}
				}
			}
		}
		rest.WriteByte(c)
		i++
	}
	for _, t := range extractTokens(rest.String(), proseMode) {
		if !isAbbreviation(t.path) {
			add(t.path, t.mention)
		}
	}
	return out
}

// spacedName accepts a quoted name with spaces as a path (an absolute one only as a mention): each segment non-empty and no "..",
// and a last segment with a file extension (or a trailing "/"), not too long.
func spacedName(s string, mention bool) (string, bool) {
	s = strings.TrimSpace(s)
	if mention {
		s = strings.TrimPrefix(s, "/") // @"/path with spaces" is relative to the workspace
	} else if strings.HasPrefix(s, "/") {
		return "", false
	}
	for strings.HasPrefix(s, "./") {
		s = s[2:]
	}
	if s == "" || len(s) > maxTokenLen || strings.Contains(s, "://") {
		return "", false
	}
	dir := strings.HasSuffix(s, "/")
	body := strings.TrimSuffix(s, "/")
	segs := strings.Split(body, "/")
	for _, seg := range segs {
		if seg == "" || seg == ".." || strings.TrimSpace(seg) != seg {
			return "", false
		}
	}
	last := segs[len(segs)-1]
	if dir && len(segs) < 2 || !dir && !isFileName(last, false) {
		return "", false
	}
	// A sentence in quotes is not a file name: at most a few words.
	if strings.Count(s, " ") > maxNameSpaces {
		return "", false
	}
	return s, true
}

// maxNameSpaces is the most spaces a quoted file name holds; more is a sentence.
const maxNameSpaces = 8

// isAbbreviation tells "e.g", "i.e", "a.k.a": dot-separated parts of one letter each.
func isAbbreviation(p string) bool {
	if strings.Contains(p, "/") {
		return false
	}
	parts := strings.Split(p, ".")
	if len(parts) < 2 {
		return false
	}
	for _, part := range parts {
		if utf8.RuneCountInString(part) != 1 {
			return false
		}
	}
	return true
}
