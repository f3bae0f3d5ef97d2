package rules

import (
	"fmt"
	"path"
	"strings"
)

// Claude Code expands "@path" imports in its CLAUDE.md files: the path is resolved against the
// importing file's folder ("~/" names the home folder, an absolute path inside the root names
// that file), imported files may import others up to five hops from the CLAUDE.md, and an "@"
// inside a code span or a fenced code block is text. No other tool expands imports in its
// files: Codex, Cursor and the AGENTS.md convention read AGENTS.md as plain markdown, so an
// AGENTS.md is expanded only when a CLAUDE.md imports it.
//
// Collect reads the imported files into the list it returns (Provider [ProviderImport], unless
// the file is a rule file of the list already), so that a rules snapshot records them and Load
// expands from the list alone: replay needs nothing else.

// Bounds of import expansion.
const (
	// MaxImportDepth is how many hops an import chain may take from the file that starts it.
	MaxImportDepth = 5
	// MaxImportedFiles bounds the files one collection reads for imports, per root and for
	// the home folder.
	MaxImportedFiles = 100
	// MaxImportExpansions bounds the imports expanded into one rule, counting each time a file
	// is taken in: a fan of imports (a file importing another a thousand times, five hops deep)
	// stays linear work, as the body stays within MaxFileSize.
	MaxImportExpansions = 1000
)

// importRef is one "@path" import in a text.
type importRef struct {
	start, end int    // the "@path" token's bytes in the text
	path       string // the path as written, without trailing punctuation
}

// scanImports finds the imports of a markdown text: "@" at the start of a line or after a
// space, outside fenced code blocks and code spans, followed by a path. A token that has
// neither a "/" nor a "." (a person's @name, @here) is not an import, and trailing sentence
// punctuation is not part of the path ("see @docs/api.md." imports docs/api.md).
func scanImports(text string) []importRef {
	var out []importRef
	fence := ""
	off := 0
	for off <= len(text) {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		line := text[off:end]
		if f := fenceOf(line); fence == "" && f != "" {
			fence = f
		} else if fence != "" {
			if f != "" && f[0] == fence[0] && len(f) >= len(fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), f[:1])) == "" {
				fence = ""
			}
		} else {
			out = scanLine(text, off, end, out)
		}
		off = end + 1
	}
	return out
}

// fenceOf returns the run of ``` or ~~~ (three or more) that opens a fenced block on line,
// indented by at most three spaces, or "".
func fenceOf(line string) string {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 || len(trimmed) < 3 {
		return ""
	}
	ch := trimmed[0]
	if ch != '`' && ch != '~' {
		return ""
	}
	n := len(trimmed) - len(strings.TrimLeft(trimmed, string(ch)))
	if n < 3 {
		return ""
	}
	return trimmed[:n]
}

// scanLine finds the imports of text[start:end], one line, skipping code spans.
func scanLine(text string, start, end int, out []importRef) []importRef {
	for i := start; i < end; i++ {
		switch text[i] {
		case '`':
			n := 1
			for i+n < end && text[i+n] == '`' {
				n++
			}
			if close := closingTicks(text[i+n:end], n); close >= 0 {
				i += n + close + n - 1
			} else {
				i += n - 1
			}
		case '@':
			if i > start && text[i-1] != ' ' && text[i-1] != '\t' {
				continue
			}
			j := i + 1
			for j < end && text[j] != ' ' && text[j] != '\t' && text[j] != '`' {
				j++
			}
			p := strings.TrimRight(text[i+1:j], ".,;:!?)]}'\"")
			if p != "" && strings.ContainsAny(p, "./") && p[0] != '@' {
				out = append(out, importRef{start: i, end: i + 1 + len(p), path: p})
			}
			i = j - 1
		}
	}
	return out
}

// closingTicks finds a run of exactly n backticks in s: the end of a code span.
func closingTicks(s string, n int) int {
	for i := 0; i < len(s); i++ {
		if s[i] != '`' {
			continue
		}
		m := 1
		for i+m < len(s) && s[i+m] == '`' {
			m++
		}
		if m == n {
			return i
		}
		i += m - 1
	}
	return -1
}

// importKey names a file of a collection.
type importKey struct{ scope, root, path string }

func keyOf(f *File) importKey { return importKey{f.Scope, f.Root, f.Path} }

// importTarget resolves an import written in file f. why is set when it cannot name a file of
// the workspace or the home folder.
func importTarget(f *File, p string) (k importKey, why string) {
	switch {
	case f.Scope == ScopeRemote:
		return k, "a remote rule has no folder to resolve it against"
	case strings.HasPrefix(p, "~/"):
		k = importKey{ScopeGlobal, "", path.Clean(p[2:])}
	case strings.HasPrefix(p, "/"):
		rel, ok := strings.CutPrefix(p, f.Root+"/")
		if f.Scope != ScopeWorkspace || f.Root == "" || !ok {
			return k, "an absolute path outside the workspace root"
		}
		k = importKey{ScopeWorkspace, f.Root, path.Clean(rel)}
	default:
		k = importKey{f.Scope, f.Root, path.Join(path.Dir(f.Path), p)}
	}
	if k.path == ".." || strings.HasPrefix(k.path, "../") || k.path == "." {
		return k, "outside its root"
	}
	return k, ""
}

// expandsImports reports whether the file is one its tool expands imports in, as the engine
// versions of reading rd read it: a CLAUDE.md, and since rules/4 the root's CLAUDE.local.md.
func expandsImports(f *File, rd reading) bool {
	if f.Provider != ProviderClaude {
		return false
	}
	return path.Base(f.Path) == "CLAUDE.md" || isRootLocalMemory(f, rd)
}

// isRootLocalMemory reports whether f is the workspace root's CLAUDE.local.md, Claude Code's
// personal memory file, which the engines read as one since rules/4.
func isRootLocalMemory(f *File, rd reading) bool {
	return rd > readingV3 && f.Provider == ProviderClaude && f.Scope == ScopeWorkspace && f.Path == "CLAUDE.local.md"
}

// expander expands the imports of one rule's body from the files of its collection.
type expander struct {
	l       *Loader
	r       *Rule
	file    string // the rule's file, labelled
	files   map[importKey]*File
	size    int
	count   int                       // imports expanded so far, against MaxImportExpansions
	parsed  map[string]*parsedContent // by file label: each imported file is hashed once
	clipped bool
}

// diag adds a diagnostic to the rule (as builder.diag does; the expander does not hold the
// builder, which would then be allocated for every rule).
func (e *expander) diag(line int, sev Severity, code, msg string) {
	e.r.Diagnostics = append(e.r.Diagnostics, Diagnostic{RuleID: e.r.ID, File: e.file, Line: line,
		Severity: sev, Code: code, Message: msg})
}

// expand returns text with its imports replaced by the imported files' text, each expanded in
// turn. f is the file text belongs to, depth its hops from the rule's file, stack the files of
// the chain (for cycles); line, when positive, is the line of text's first byte in the rule's
// own file, for diagnostics.
func (e *expander) expand(f *File, text string, depth int, stack []string, line int) string {
	refs := scanImports(text)
	if len(refs) == 0 {
		return text
	}
	var sb strings.Builder
	prev := 0
	for _, ref := range refs {
		sb.WriteString(text[prev:ref.start])
		prev = ref.end
		at := 0
		if line > 0 {
			at = line + strings.Count(text[:ref.start], "\n")
		}
		sb.WriteString(e.one(f, text[ref.start:ref.end], ref.path, depth, stack, at))
	}
	sb.WriteString(text[prev:])
	return sb.String()
}

// one expands one import, or keeps its token with a diagnostic saying why not.
func (e *expander) one(f *File, token, p string, depth int, stack []string, line int) string {
	where := ""
	if depth > 0 {
		where = " (in " + f.label() + ")"
	}
	fail := func(sev Severity, code, why string) string {
		e.diag(line, sev, code, fmt.Sprintf("import %s%s is not expanded: %s", token, where, why))
		return token
	}
	k, why := importTarget(f, p)
	if why != "" {
		return fail(SeverityWarning, DiagImportMissing, why)
	}
	target := e.files[k]
	switch {
	case depth >= MaxImportDepth: // Collect does not read so far
		return fail(SeverityWarning, DiagImportDepth, fmt.Sprintf("it is more than %d hops from %s", MaxImportDepth, e.file))
	case target == nil:
		return fail(SeverityWarning, DiagImportMissing, "no such file was found when the rules were read")
	case target.ReadError != "":
		return fail(SeverityWarning, DiagImportMissing, "the file could not be read: "+target.ReadError)
	}
	label := target.label()
	for _, s := range stack {
		if s == label {
			return fail(SeverityWarning, DiagImportCycle, fmt.Sprintf("%s is already being expanded (%s -> %s): a cycle", label, strings.Join(stack, " -> "), label))
		}
	}
	if e.clipped || e.count >= MaxImportExpansions {
		e.clipped = true
		return token
	}
	pc := e.parsed[label]
	if pc == nil {
		pc = e.l.parse(target.Content)
		if e.parsed == nil {
			e.parsed = map[string]*parsedContent{}
		}
		e.parsed[label] = pc
	}
	if pc.binary {
		return fail(SeverityWarning, DiagImportMissing, label+" holds NUL bytes: it is binary")
	}
	// Bounds before work: an import whose file as written would take the body past
	// MaxFileSize, or past MaxImportExpansions, is not expanded at all.
	if e.size+len(strings.TrimSpace(pc.text)) > MaxFileSize {
		e.clipped = true
		return token
	}
	e.count++
	e.r.Imports = appendOnce(e.r.Imports, label)
	body := strings.TrimSpace(e.expand(target, normalizeText(pc.text), depth+1, append(stack[:len(stack):len(stack)], label), 0))
	if e.size+len(body) > MaxFileSize {
		e.clipped = true
		return token
	}
	e.size += len(body)
	return body
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// expandImports expands the body of a CLAUDE.md rule r (read from f, its body text after
// the frontmatter starting at line bodyLine) from the files of its collection. It takes the
// rule's parts rather than the builder so that the builder stays on the stack.
func expandImports(l *Loader, r *Rule, f *File, body string, bodyLine int, files map[importKey]*File, rd reading) {
	if files == nil || !expandsImports(f, rd) {
		return
	}
	e := &expander{l: l, r: r, file: f.label(), files: files, size: len(body)}
	body = e.expand(f, body, 0, []string{e.file}, bodyLine)
	if e.clipped {
		e.diag(0, SeverityWarning, DiagTooLarge, fmt.Sprintf("the imported files come to more than %d bytes or %d imports; the imports past that bound are not expanded", MaxFileSize, MaxImportExpansions))
	}
	r.Body = strings.TrimSpace(body)
}
