package rules

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of frontmatter parsing: a hostile file is a diagnostic, not an outage.
const (
	maxFrontmatterBytes = 64 << 10
	maxYAMLNodes        = 10000 // nodes visited, aliases expanded included ("billion laughs")
	maxYAMLDepth        = 32
)

// Frontmatter is the parsed metadata block of a rule file.
type Frontmatter struct {
	// Present reports whether the file opened with a --- fenced block.
	Present bool
	// Fields are the top-level keys in file order; empty when the block failed to parse.
	Fields []Field
	// Body is the text after the block, or the whole (normalized) file when there is no
	// block or it failed to parse.
	Body string
	// BodyLine is the 1-based line of the file where Body starts.
	BodyLine int
	// Failed reports that the block was present but could not be read at all: the rule is
	// then universal, with the raw file as its body (fail-open).
	Failed bool
	// Lenient reports that strict YAML rejected the block but the line reader accepted it.
	Lenient bool
	// Problems are the parse anomalies, with lines relative to the file.
	Problems []Problem

	// blockLine is the first line of the block (Present), for a reading of the file other
	// than this one (see clineRejects).
	blockLine int
}

// Field is one top-level frontmatter key and its value.
type Field struct {
	// Key is the key as written.
	Key string
	// Value is a string, bool, int, float64, nil, []any or map[string]any.
	Value any
	// Line is the 1-based line of the key in the file.
	Line int
}

// Problem is a parse anomaly; it becomes a [Diagnostic] once the file is known.
type Problem struct {
	// Line is the 1-based line in the file, or 0 when unknown.
	Line int
	// Severity, Code and Message are as in [Diagnostic].
	Severity Severity
	Code     string
	Message  string
}

// Lookup returns the field with the given key.
func (fm *Frontmatter) Lookup(key string) (Field, bool) {
	for _, f := range fm.Fields {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

// normalizeText strips a UTF-8 byte order mark and turns CRLF and lone CR into LF, so that
// a rule reads the same whatever the checkout's line endings.
func normalizeText(s string) string {
	s = strings.TrimPrefix(s, "\ufeff")
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return s
}

// ParseFrontmatter splits a rule file into its frontmatter and body. It never fails: a
// block that strict YAML rejects is read line by line, as Cursor and Windsurf read theirs
// ("globs: *.ts,*.tsx"); a block neither can read leaves the whole file as the body with a
// [DiagParseError] problem. Leading blank lines before the opening --- are tolerated.
func ParseFrontmatter(text string) Frontmatter {
	text = normalizeText(text)
	fm := Frontmatter{Body: text, BodyLine: 1}
	start := 0
	line := 1
	for start < len(text) { // skip leading blank lines
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 || strings.TrimSpace(text[start:start+end]) != "" {
			break
		}
		start += end + 1
		line++
	}
	rest := text[start:]
	first, after, ok := strings.Cut(rest, "\n")
	if !ok || strings.TrimRight(first, " \t") != "---" {
		fm.checkBareKeys(rest, line)
		return fm
	}
	openLine := line
	block, body, closeLine, found := findClosingFence(after, openLine+1)
	if !found {
		fm.Problems = append(fm.Problems, Problem{Line: openLine, Severity: SeverityWarning, Code: DiagParseError,
			Message: "frontmatter opens with --- but never closes; the whole file is the body"})
		return fm
	}
	fm.Present = true
	fm.Body = body
	fm.BodyLine = closeLine + 1
	fm.blockLine = openLine + 1
	if len(block) > maxFrontmatterBytes {
		fm.fail(openLine, DiagYAMLLimits, fmt.Sprintf("frontmatter is %d bytes, over the %d byte limit", len(block), maxFrontmatterBytes), text)
		return fm
	}
	if strings.TrimSpace(block) == "" {
		return fm
	}
	fields, probs, err := parseStrictYAML(block, openLine+1)
	if err == nil {
		fm.Fields = fields
		fm.Problems = append(fm.Problems, probs...)
		fm.Problems = append(fm.Problems, duplicateKeys(fields)...)
		return fm
	}
	if errors.Is(err, errYAMLLimits) {
		fm.fail(openLine, DiagYAMLLimits, err.Error(), text)
		return fm
	}
	if lf, ok := parseLenient(block, openLine+1); ok {
		fm.Fields = lf
		fm.Lenient = true
		fm.Problems = append(fm.Problems, strictFailure(block, openLine, err, true)...)
		fm.Problems = append(fm.Problems, duplicateKeys(lf)...)
		return fm
	}
	fm.Problems = append(fm.Problems, strictFailure(block, openLine, err, false)...)
	fm.Failed = true
	fm.Body = text
	fm.BodyLine = 1
	return fm
}

// duplicateKeys warns of each top-level key given again after its first line. [Frontmatter.Lookup]
// reads the first; YAML forbids the repeat, and js-yaml, which Cline reads frontmatter with,
// rejects the whole block for it.
func duplicateKeys(fields []Field) []Problem {
	var out []Problem
	for i, f := range fields {
		if g, ok := firstOf(fields, i); ok {
			out = append(out, Problem{Line: f.Line, Severity: SeverityWarning, Code: DiagDuplicateKey,
				Message: fmt.Sprintf("key %q is given again (first on line %d); only the first is read, and YAML readers that follow the standard, such as Cline's, reject the whole frontmatter", f.Key, g.Line)})
		}
	}
	return out
}

// firstOf is the field before fields[i] that has its key, when one does.
func firstOf(fields []Field, i int) (Field, bool) {
	for _, g := range fields[:i] {
		if g.Key == fields[i].Key {
			return g, true
		}
	}
	return Field{}, false
}

// clineFence is how Cline finds the frontmatter of a file's text trimmed, normalized (no \r):
// a first line of exactly ---, then the block up to the first line that starts with ---, and
// the body after that line's --- and its line break (on the same line when more follows the
// ---). Cline matches /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.
func clineFence(trimmed string) (block, body string, ok bool) {
	rest, ok := strings.CutPrefix(trimmed, "---\n")
	if !ok {
		return "", "", false
	}
	i := strings.Index(rest, "\n---")
	if i < 0 {
		return "", "", false
	}
	return rest[:i], strings.TrimPrefix(rest[i+len("\n---"):], "\n"), true
}

// clineRejects is fm as Cline reads the file it was parsed from. Cline finds the block and the
// body with clineFenceRE and reads the block with a YAML reader that follows the standard
// (js-yaml's load); a block that reader rejects (an unquoted * it reads as an alias, a tab in
// the indentation, a key given twice, a tag it does not know, a second document) makes Cline
// send the file always on, its whole text the body, and so does a file in which Cline finds
// no block (an opening line "--- ", an empty block "---" "---", a block closed by "..." alone)
// while tasklog found one: fm is then failed, with a [DiagParseError] that says why. A block
// that is a value other than a mapping gives Cline no key: no condition, the body after it. A
// block that only yaml.v3 rejects (a tab on a blank or comment line, which js-yaml skips) is
// read without those lines. A block over tasklog's YAML limits fails as it does for every
// tool, though Cline would read it. fm's problems are never changed in place: a parse is
// shared.
//
// text is the file's text as ParseFrontmatter made fm of it, normalized (normalizeText).
func clineRejects(fm Frontmatter, text string) Frontmatter {
	trimmed := strings.TrimFunc(text, isJSSpace)
	block, body, found := clineFence(trimmed)
	if !found {
		if !fm.Present {
			return fm // no block for either
		}
		return clineFailed(fm, text, max(fm.blockLine-1, 1), "Cline finds no frontmatter in this file: it takes a first line of exactly --- (no trailing spaces) and a block of at least one line closed by a line that starts with --- (not ...)")
	}
	// Only after a line that starts with ... can a block hold a second document: Cline's
	// pattern ends it at the first line that starts with ---.
	marked := strings.HasPrefix(block, "...") || strings.Contains(block, "\n...")
	if fm.Present && !fm.Failed && !fm.Lenient && !marked && block == lines(text, fm.blockLine, fm.BodyLine-1) &&
		strings.TrimSpace(body) == strings.TrimSpace(fm.Body) {
		// Cline's block is the one strict YAML read, with no document marker (a line "... x"
		// ends a document without ending tasklog's block): what js-yaml rejects of it, the
		// parse said already.
		return clineRejectsParsed(fm, text)
	}
	lead := len(text) - len(strings.TrimLeftFunc(text, isJSSpace)) // where trimmed starts in text
	blockLine := strings.Count(text[:lead], "\n") + 2
	bodyLine := strings.Count(text[:lead+len(trimmed)-len(body)], "\n") + 1
	out := Frontmatter{Present: true, Body: body, BodyLine: bodyLine, blockLine: blockLine}
	if len(block) > maxFrontmatterBytes {
		out.fail(blockLine-1, DiagYAMLLimits, fmt.Sprintf("frontmatter is %d bytes, over the %d byte limit", len(block), maxFrontmatterBytes), text)
		return out
	}
	block = blankForJSYAML(block)
	fields, probs, err := parseStrictYAML(block, blockLine)
	var notMapping notMappingError
	switch {
	case marked && !singleDocument(block):
		return clineFailed(fm, text, blockLine, "frontmatter holds more than one YAML document (a line ... and more after it), which Cline's YAML reader rejects")
	case errors.Is(err, errYAMLLimits):
		out.fail(blockLine-1, DiagYAMLLimits, err.Error(), text)
		return out
	case errors.As(err, &notMapping):
		out.Problems = []Problem{{Line: blockLine, Severity: SeverityWarning, Code: DiagNotMapping,
			Message: err.Error() + ": Cline reads no key of it, so the rule has no condition"}}
		return out
	case err != nil:
		return clineFailed(fm, text, yamlErrorLine(err, blockLine-1, blockLine), "frontmatter is not YAML as Cline reads it ("+err.Error()+")"+clineHint(block))
	}
	out.Fields, out.Problems = fields, probs
	return clineRejectsParsed(out, text)
}

// clineRejectsParsed is fm, whose block strict YAML read, failed as Cline fails it when
// js-yaml rejects what the parse noted: a key given twice, a tag js-yaml does not know.
func clineRejectsParsed(fm Frontmatter, text string) Frontmatter {
	for i, f := range fm.Fields {
		if _, ok := firstOf(fm.Fields, i); ok {
			return clineFailed(fm, text, f.Line, fmt.Sprintf("frontmatter gives the key %q twice, which Cline's YAML reader rejects", f.Key))
		}
	}
	for _, p := range fm.Problems {
		if p.Code == DiagYAMLTag && !strings.Contains(p.Message, "!!omap") && !strings.Contains(p.Message, "!!set") && !strings.Contains(p.Message, "!!pairs") {
			return clineFailed(fm, text, p.Line, "frontmatter has a YAML tag Cline's YAML reader does not know")
		}
	}
	return fm
}

// clineFailed is fm, of the file text, failed as Cline fails a rule file open, with a
// [DiagParseError] at line saying why.
func clineFailed(fm Frontmatter, text string, line int, why string) Frontmatter {
	out := Frontmatter{Present: true, Failed: true, Body: text, BodyLine: 1}
	for _, p := range fm.Problems {
		switch p.Code {
		case DiagNotStrict, DiagDuplicateKey, DiagYAMLTag, DiagParseError, DiagNotMapping, DiagYAMLLimits:
		default:
			out.Problems = append(out.Problems, p)
		}
	}
	out.Problems = append(out.Problems, Problem{Line: line, Severity: SeverityError, Code: DiagParseError,
		Message: why + "; Cline keeps the rule always on, with the whole file as its body"})
	return out
}

// lines is the lines of text from line from up to, not including, line to (1-based), joined.
func lines(text string, from, to int) string {
	start := 0
	for line := 1; line < from; line++ {
		i := strings.IndexByte(text[start:], '\n')
		if i < 0 {
			return ""
		}
		start += i + 1
	}
	end := start
	for line := from; line < to; line++ {
		i := strings.IndexByte(text[end:], '\n')
		if i < 0 {
			return text[start:]
		}
		end += i + 1
	}
	return strings.TrimSuffix(text[start:end], "\n")
}

var (
	tabBlankLineRE = regexp.MustCompile(`(?m)^[ \t]*\t[ \t]*(#.*)?$`)
	unquotedStarRE = regexp.MustCompile(`(?m)(^[ \t]*-[ \t]*\*|[\[,][ \t]*\*|^[A-Za-z_][\w-]*:[ \t]*\*)`)
	tabIndentRE    = regexp.MustCompile(`(?m)^ *\t`)
)

// blankForJSYAML empties the blank and comment-only lines that hold a tab, which js-yaml skips
// and yaml.v3 rejects; every line keeps its place.
func blankForJSYAML(block string) string {
	return tabBlankLineRE.ReplaceAllString(block, "")
}

// clineHint says how to write a frontmatter block so that a YAML reader that follows the
// standard reads it, for the two ways users' rule files most often miss it; else "".
func clineHint(block string) string {
	switch {
	case unquotedStarRE.MatchString(block):
		return `: quote each pattern that starts with * ("**/*.ts"), which YAML reads as an alias`
	case tabIndentRE.MatchString(block):
		return ": indent with spaces, as YAML forbids tabs there"
	}
	return ""
}

func (fm *Frontmatter) fail(line int, code, msg, text string) {
	fm.Problems = append(fm.Problems, Problem{Line: line, Severity: SeverityError, Code: code,
		Message: msg + "; the rule is kept universal with the whole file as its body"})
	fm.Failed = true
	fm.Body = text
	fm.BodyLine = 1
}

// findClosingFence finds the line "---" (or YAML's "...") that ends the block.
func findClosingFence(s string, firstLine int) (block, body string, closeLine int, ok bool) {
	pos := 0
	line := firstLine
	for pos <= len(s) {
		end := strings.IndexByte(s[pos:], '\n')
		var cur string
		next := len(s) + 1
		if end < 0 {
			cur = s[pos:]
		} else {
			cur = s[pos : pos+end]
			next = pos + end + 1
		}
		if t := strings.TrimRight(cur, " \t"); t == "---" || t == "..." {
			block = s[:pos]
			if next <= len(s) {
				body = s[next:]
			}
			return block, body, line, true
		}
		if end < 0 {
			break
		}
		pos = next
		line++
	}
	return "", "", 0, false
}

var bareKeyRE = regexp.MustCompile(`^(description|globs|paths|alwaysApply|applyTo|trigger):`)

// checkBareKeys notes a file whose metadata lost its --- fences: it is read as body.
func (fm *Frontmatter) checkBareKeys(rest string, line int) {
	if bareKeyRE.MatchString(rest) {
		fm.Problems = append(fm.Problems, Problem{Line: line, Severity: SeverityWarning, Code: DiagNoDelimiters,
			Message: "the file starts with metadata keys but has no --- fences; it is read as plain body"})
	}
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// yamlErrorLine is the file's line of a YAML error in a block that starts below line before:
// the line the error names, else fallback.
func yamlErrorLine(err error, before, fallback int) int {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		if n, e := strconv.Atoi(m[1]); e == nil {
			return before + n
		}
	}
	return fallback
}

// strictFailure explains why strict YAML rejected the block.
func strictFailure(block string, openLine int, err error, lenient bool) []Problem {
	msg := err.Error()
	line := yamlErrorLine(err, openLine, openLine)
	var out []Problem
	for i, l := range strings.Split(block, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && isKey(k) && strings.HasPrefix(strings.TrimSpace(v), "*") {
			out = append(out, Problem{Line: openLine + 1 + i, Severity: SeverityWarning, Code: DiagUnquotedStar,
				Message: fmt.Sprintf("the value of %q starts with an unquoted * (YAML reads it as an alias); quote it: %s: %q",
					k, k, strings.TrimSpace(v))})
		}
	}
	if lenient {
		out = append(out, Problem{Line: line, Severity: SeverityWarning, Code: DiagNotStrict,
			Message: "frontmatter is not strict YAML (" + msg + "); read line by line as Cursor and Windsurf do"})
	} else {
		out = append(out, Problem{Line: line, Severity: SeverityError, Code: DiagParseError,
			Message: "frontmatter is not YAML (" + msg + "); the rule is kept universal with the whole file as its body"})
	}
	return out
}

func isKey(k string) bool {
	if k == "" || k != strings.TrimSpace(k) {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// decodeContent turns a file's bytes into text, reporting NUL bytes and invalid UTF-8.
func decodeContent(b []byte) (text string, binary bool, invalidUTF8 bool) {
	if bytes.IndexByte(b, 0) >= 0 {
		return "", true, false
	}
	if !utf8.Valid(b) {
		return strings.ToValidUTF8(string(b), "\uFFFD"), false, true
	}
	return string(b), false, false
}

// isJSSpace is what JavaScript's trim takes away: white space and line terminators, U+FEFF too,
// but not U+0085.
func isJSSpace(r rune) bool { return r == '\ufeff' || r != '\u0085' && unicode.IsSpace(r) }
