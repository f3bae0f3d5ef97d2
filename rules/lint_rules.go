package rules

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// LintRuleSet reports what is wrong with the rules of rs, loaded from files, that shows
// without a session and without the workspace's other files: broken and empty files, shadowed
// and duplicate rules, unknown and foreign keys, special glob constructs, and conditions that
// can never hold. It is pure; the findings are in no particular order ([Lint] sorts them).
func LintRuleSet(rs *RuleSet, files []File) []Finding {
	var out []Finding
	for i := range files {
		f := &files[i]
		code, msg, ok := walkNote(f.ReadError)
		if !ok {
			continue
		}
		kind, sev := FindSkipped, SeverityInfo
		if code == DiagWalkLimit {
			kind, sev = FindLimit, SeverityWarning
		}
		out = append(out, Finding{Kind: kind, Severity: sev, File: f.label(), Root: f.Root, Path: f.Path, Code: code, Message: msg})
	}
	byID := filesByRule(files)
	rulesByID := make(map[string]*Rule, len(rs.rules))
	for _, r := range rs.rules {
		rulesByID[r.ID] = r
	}
	for _, r := range rs.rules {
		l := ruleLint{r: r, f: byID[r.ID]}
		if r.ShadowedBy != "" {
			out = append(out, l.shadowed(rulesByID[r.ShadowedBy]))
		}
		for _, d := range r.Diagnostics {
			if fd, ok := l.diagnostic(d); ok {
				out = append(out, fd)
			}
		}
		out = l.globs(out)
		if fd, ok := l.windsurfLimit(); ok {
			out = append(out, fd)
		}
	}
	for _, g := range rs.sameText {
		kept := rs.rules[g[0]]
		for _, i := range g[1:] {
			r := rs.rules[i]
			fd := ruleLint{r: r}.finding(FindDuplicate, SeverityInfo, 0, "")
			fd.Other = kept.ID
			fd.Message = fmt.Sprintf("the same text as %s: when both apply, the text goes into the prompt once, as %s; keep one file unless each tool needs its own copy",
				kept.ID, kept.ID)
			out = append(out, fd)
		}
	}
	return append(out, rs.sameNames()...)
}

// sameNames reports the rules that share a name with another rule neither hides (a nested
// folder's rule and a root rule of that subfolder, or nested folders' rules in two roots):
// rule://NAME reaches one of them, and each other is reached at its id. Memory files, which
// leave a name they share to the other rule by design, are not reported.
func (rs *RuleSet) sameNames() []Finding {
	var out []Finding
	for _, r := range rs.rules {
		if r.Unusable != "" || r.ShadowedBy != "" || r.isMemory() {
			continue
		}
		w, ok := rs.byName[r.Name]
		if !ok || w == r {
			continue // the name reaches it (see shadow)
		}
		fd := ruleLint{r: r}.finding(FindSameName, SeverityInfo, 0, "")
		fd.Other = w.ID
		fd.Message = fmt.Sprintf("%s has the same name %q and neither hides the other: rule://%s reaches %s, and this rule is reached at %s only; rename one file to give each a name of its own",
			w.ID, r.Name, r.Name, w.ID, r.Address())
		out = append(out, fd)
	}
	return out
}

// filesByRule maps each rule ID to the file it was built from, numbering files of the same
// provider and path as Load does.
func filesByRule(files []File) map[string]*File {
	out := make(map[string]*File, len(files))
	ids := map[string]int{}
	for i := range files {
		f := &files[i]
		if _, _, ok := walkNote(f.ReadError); ok || f.Provider == ProviderImport {
			continue
		}
		id := f.id()
		if n := ids[id]; n > 0 {
			id = fmt.Sprintf("%s#%d", id, n+1)
		}
		out[id] = f
		ids[strings.SplitN(id, "#", 2)[0]]++
	}
	return out
}

// ruleLint lints one rule; f is its file (nil when the caller has none).
type ruleLint struct {
	r     *Rule
	f     *File
	lines []string // the file's lines, read when needed
}

func (l ruleLint) finding(kind FindingKind, sev Severity, line int, code string) Finding {
	r := l.r
	fl := File{Scope: r.Scope, Root: r.Root, Path: r.Path}
	return Finding{Kind: kind, Severity: sev, File: fl.label(), Root: r.Root, Path: r.Path, Line: line,
		RuleID: r.ID, Rule: r.Name, Code: code}
}

// diagnostic turns one of the rule's diagnostics into a finding, when it is one.
func (l *ruleLint) diagnostic(d Diagnostic) (Finding, bool) {
	fd := l.finding("", d.Severity, d.Line, d.Code)
	fd.Message = d.Message
	switch d.Code {
	case DiagParseError, DiagYAMLLimits, DiagNotMapping, DiagNoDelimiters, DiagLegacyFrontmatter:
		fd.Kind = FindBroken
		intent := l.intent(0)
		if d.Code == DiagLegacyFrontmatter && intent == "" {
			return fd, false // a legacy file's description or title, sent as written: nothing lost
		}
		l.loud(&fd, intent)
	case DiagWrongType:
		fd.Kind = FindBroken
		if key := fieldKey(d.Message); patternKeys[key] {
			l.loud(&fd, l.intent(d.Line))
		}
	case DiagForeignKey:
		fd.Kind = FindForeignKey
		if key := fieldKey(d.Message); patternKeys[key] {
			l.loud(&fd, l.intent(d.Line))
		}
	case DiagReadError, DiagBinary, DiagTooLarge, DiagInvalidUTF8, DiagBadTrigger, DiagBadRegexp, DiagDuplicateKey:
		fd.Kind = FindBroken
	case DiagEmptyBody:
		fd.Kind = FindEmpty
	case DiagUnknownKey:
		fd.Kind = FindUnknownKey
	case DiagDuplicateID:
		fd.Kind = FindDuplicate
	case DiagImportMissing, DiagImportCycle, DiagImportDepth:
		fd.Kind = FindImport
	case DiagEmptyList:
		if patternKeys[fieldKey(d.Message)] || strings.HasPrefix(d.Message, "trigger: glob") {
			return fd, false // the listing reports the condition (see neverApplicable)
		}
		fd.Kind = FindNeverApplicable
	case DiagWindowsPath, DiagUnsupported, DiagBadGlob, DiagNegated, DiagNeverMatches, DiagPatternLimit, DiagEmptyPattern:
		fd.Kind = FindGlob
		fd.Pattern = l.patternOf(d)
		switch {
		case d.Code == DiagWindowsPath:
			fd.Kind = FindWindowsPath
		case d.Code == DiagUnsupported && extglobRE.MatchString(fd.Pattern):
			fd.Kind = FindExtglob
		}
	default:
		return fd, false
	}
	return fd, true
}

// patternKeys are the keys that scope a rule to paths, in any tool.
var patternKeys = map[string]bool{"paths": true, "globs": true, "applyTo": true}

// fieldKey is the key a diagnostic's message starts with ("globs should be …").
func fieldKey(msg string) string {
	k, _, _ := strings.Cut(msg, " ")
	return strings.TrimSuffix(k, ":")
}

// loud makes a finding an error when the rule was meant to be scoped (intent names the
// patterns its author wrote) and is not: its message then starts with what the rule became.
func (l *ruleLint) loud(fd *Finding, intent string) {
	if intent == "" || l.r.Unusable != "" || l.r.ShadowedBy != "" || hasPathsFrom(l.r) {
		return
	}
	var became string
	switch l.r.Category {
	case CategoryAlways:
		became = "is always on: it goes into every prompt"
		fd.Severity = SeverityError
	case CategoryManual:
		became = "is manual: it applies only when mentioned, by name or by its file"
		fd.Severity = SeverityWarning
	case CategoryOnRequest:
		became = "is only listed by its description"
		fd.Severity = SeverityWarning
	default:
		return
	}
	fd.Message = fmt.Sprintf("meant for %s, the rule %s. %s", intent, became, fd.Message)
}

// hasPathsFrom reports whether the rule has a pattern condition of its own keys (not the
// implicit one of a subfolder's location).
func hasPathsFrom(r *Rule) bool {
	for _, c := range r.Conditions {
		if c.Key == CondPaths && c.From != FromLocation {
			return true
		}
	}
	return false
}

var intentKeyRE = regexp.MustCompile(`^(paths|globs|applyTo)\s*:\s*(.*?)\s*$`)

// intent names the patterns the file's frontmatter meant to scope the rule to ("globs:
// src/**/*.ts"), read from its raw lines, since a block that failed to parse has no fields:
// at line (1-based) when it is set, else the first pattern key of the leading block. It is ""
// when there is none or it lists nothing.
func (l *ruleLint) intent(line int) string {
	if l.f == nil {
		return ""
	}
	if l.lines == nil {
		l.lines = strings.Split(normalizeText(string(l.f.Content)), "\n")
	}
	lines := l.lines
	if line > 0 {
		if line > len(lines) {
			return ""
		}
		return intentAt(lines, line-1)
	}
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i < len(lines) && strings.TrimSpace(lines[i]) == "---" {
		i++
	}
	for ; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if t == "---" || t == "..." || t == "" || strings.HasPrefix(t, "#") {
			return ""
		}
		if s := intentAt(lines, i); s != "" {
			return s
		}
	}
	return ""
}

// intentAt reads a pattern key at lines[i]: its inline value, or the "- item" lines below it.
func intentAt(lines []string, i int) string {
	m := intentKeyRE.FindStringSubmatch(lines[i])
	if m == nil {
		return ""
	}
	var items []string
	if val := stripComment(m[2]); val != "" {
		val = strings.TrimSuffix(strings.TrimPrefix(val, "["), "]") // a flow list, closed or not
		items = splitTopLevel(val, ',')
	} else {
		for j := i + 1; j < len(lines); j++ {
			item, ok := strings.CutPrefix(strings.TrimSpace(lines[j]), "- ")
			if !ok {
				break
			}
			items = append(items, item)
		}
	}
	var kept []string
	for _, it := range items {
		if it = strings.Trim(strings.TrimSpace(it), `"'`); it != "" {
			kept = append(kept, it)
		}
	}
	if len(kept) == 0 || everything(kept) {
		return ""
	}
	return m[1] + " " + strings.Join(kept, ", ")
}

// everything reports whether patterns are written to mean "every file" (globs: ["*"], as
// many Cline rules have): such a rule is meant to be always on, and is.
func everything(patterns []string) bool {
	for _, p := range patterns {
		switch strings.TrimPrefix(p, "./") {
		case "*", "**", "**/*", "*.*", "**/*.*":
		default:
			return false
		}
	}
	return true
}

// stripComment drops a YAML comment (" #" outside quotes) from the end of a value.
func stripComment(v string) string {
	quote := byte(0)
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || v[i-1] == ' ' || v[i-1] == '\t'):
			return strings.TrimSpace(v[:i])
		}
	}
	return strings.TrimSpace(v)
}

// patternOf finds the pattern a pattern diagnostic is about, among the rule's patterns.
func (l *ruleLint) patternOf(d Diagnostic) string {
	for _, c := range l.r.Conditions {
		if c.Key != CondPaths {
			continue
		}
		for _, v := range c.Values {
			for _, pr := range CompilePattern(v).problems {
				if pr.Code == d.Code && strings.HasSuffix(d.Message, pr.Message) {
					return v
				}
			}
		}
	}
	return ""
}

// windsurfMaxChars is how many characters Windsurf allows a rule file of its rules folder
// (docs.windsurf.com, Memories & Rules: "Rule files are limited to 12,000 characters each").
const windsurfMaxChars = 12_000

// windsurfLimit is a warning for a file of a .windsurf/rules folder over windsurfMaxChars,
// which tasklog delivers whole and Windsurf may not.
func (l ruleLint) windsurfLimit() (Finding, bool) {
	r := l.r
	if r.Provider != ProviderWindsurf || l.f == nil || !strings.HasPrefix(r.Path, ".windsurf/rules/") {
		return Finding{}, false
	}
	n := utf8.RuneCount(l.f.Content)
	if n <= windsurfMaxChars {
		return Finding{}, false
	}
	fd := l.finding(FindBroken, SeverityWarning, 0, "")
	fd.Message = fmt.Sprintf("the file has %d characters, over the %d Windsurf allows a rule file: Windsurf may not send all of it, while tasklog delivers it whole; split it into files of %d characters or fewer",
		n, windsurfMaxChars, windsurfMaxChars)
	return fd, true
}

// shadowed explains why the rule is hidden by w.
func (l ruleLint) shadowed(w *Rule) Finding {
	r := l.r
	fd := l.finding(FindShadowed, SeverityWarning, 0, "")
	if w == nil {
		fd.Message = "hidden by " + r.ShadowedBy + ", a rule of the same name"
		return fd
	}
	fd.Other = w.ID
	var why string
	switch {
	case w.AlwaysEnabled:
		why = "an always-enabled remote rule outranks every rule of its name"
	case w.precedence == r.precedence:
		why = "both come from the same tool and scope, and the smaller ID wins"
	case w.Provider == r.Provider:
		why = "within a tool, workspace rules outrank global ones, and global ones remote ones"
	default:
		why = fmt.Sprintf("%s's folder ranks above %s's (tasklog, Cursor, Windsurf, Claude Code, Cline, Copilot, AGENTS.md)",
			titleOf(w.Provider), titleOf(r.Provider))
	}
	if r.Body == w.Body {
		fd.Severity = SeverityInfo
		fd.Message = fmt.Sprintf("hidden by %s, of the same name %q: %s; it has the same text, so nothing is lost", w.ID, r.Name, why)
		return fd
	}
	if r.Provider != ProviderTasklog {
		// Shadowing is tasklog's: the agent whose folder this file is in reads it all the same.
		fd.Message = fmt.Sprintf("hidden by %s, of the same name %q: %s; its text differs and tasklog delivers only the other's, while an agent that reads %s's rules itself still sends this one: rename one file to keep both",
			w.ID, r.Name, why, titleOf(r.Provider))
		return fd
	}
	fd.Message = fmt.Sprintf("hidden by %s, of the same name %q: %s; its text differs and never reaches the model: rename one file to keep both, or delete this one",
		w.ID, r.Name, why)
	return fd
}

var bracketNotRE = regexp.MustCompile(`\[![^\]]*\]`)

// globs reports the constructs of the rule's own patterns that the dialect reads
// differently from the glob libraries their authors may know (GLOBS.md), where loading
// gives no diagnostic for them.
func (l *ruleLint) globs(out []Finding) []Finding {
	for _, c := range l.r.Conditions {
		if c.Key != CondPaths || c.From == FromLocation {
			continue
		}
		for _, v := range c.Values {
			s := strings.TrimSpace(v)
			if !strings.ContainsAny(s, "[(){") && !strings.HasSuffix(s, "/") {
				continue // the common case, settled without compiling
			}
			if p := CompilePattern(v); p.never || p.always || p.literalOnly {
				continue // loading reported it
			}
			add := func(sev Severity, msg string) {
				fd := l.finding(FindGlob, sev, 0, "")
				fd.Pattern, fd.Message = v, fmt.Sprintf("%s %q: %s", c.From, v, msg)
				out = append(out, fd)
			}
			if bracketNotRE.MatchString(s) {
				add(SeverityInfo, "[!…] matches any character but those listed, as in shells; picomatch 4.0 (Cline) read it as a set holding !")
			}
			if strings.ContainsAny(s, "()") {
				add(SeverityInfo, "parentheses are literal: (group) matches a folder named (group), as Next.js route groups are; picomatch (Cline) read them as a regex group")
			}
			if literalSingleBraces(s) != s {
				add(SeverityWarning, "a brace group with one item and no comma ({ts}) is literal text, as in picomatch; list two items ({ts,tsx}) or drop the braces")
			}
			if strings.HasSuffix(s, "/") {
				add(SeverityWarning, "ends in /: it matches only a folder named with a trailing /, never a file in it; write "+strings.TrimSuffix(s, "/")+"/** to match the files")
			}
		}
	}
	return out
}
