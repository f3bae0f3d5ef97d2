package rules

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/text/unicode/norm"
)

// Pattern is one compiled path pattern (a paths/globs/applyTo entry).
//
// Patterns are matched with doublestar/v4 behind a thin layer that makes them answer as
// Cline's picomatch(pattern.trim(), {dot: true}) did, as GLOBS.md lays down. Each rule of
// that document is applied where its comment says so. Compile once with [CompilePattern];
// matching never re-parses.
type Pattern struct {
	// Raw is the pattern as written.
	Raw string

	trimmed     string     // Raw without surrounding space: what literal equality compares against
	alts        []string   // doublestar patterns; a candidate matches if any matches
	prefixes    []string   // per alt: a literal prefix every match starts with (quick reject)
	suffixes    []string   // per alt: a literal suffix every match ends with (quick reject)
	pieces      [][]string // per alt: literal text every match contains (quick reject)
	segments    [][]segment
	below       []belowInfo // per alt: what the directory test needs
	negate      bool
	inner       string // a negated pattern without its "!"s and leading "./": what literal equality negates
	never       bool   // can never match: absolute, or a ".." segment
	always      bool   // the negation of a pattern that can never match: matches every candidate
	literalOnly bool   // invalid or unsupported: only literal equality can match
	dirOnly     bool   // ends in "/": matches only candidates written with a trailing "/"
	slashOK     bool   // ends in *, ** or ]: a candidate's trailing "/" is accepted
	problems    []Problem
}

// maxBracketLiterals bounds the [body] groups read both as a class and as literal text;
// each one doubles the alternatives.
const maxBracketLiterals = 4

var (
	extglobRE   = regexp.MustCompile(`[@!+?*]\(`)
	rangeRE     = regexp.MustCompile(`\{[^{},]*\.\.[^{},]*\}`)
	driveRE     = regexp.MustCompile(`^[A-Za-z]:[\\/]`)
	winEscapeRE = regexp.MustCompile(`\\[A-Za-z0-9_.-]`)
)

// CompilePattern compiles one path pattern. It never fails: a pattern that cannot match as
// written is still returned (matching only by literal equality, or never) with problems
// that say why.
func CompilePattern(raw string) *Pattern {
	p := &Pattern{Raw: raw}
	// GLOBS: trim the pattern, as Cline did before calling picomatch.
	s := strings.TrimSpace(raw)
	p.trimmed = s
	if s == "" {
		p.never = true
		p.problem(SeverityWarning, DiagEmptyPattern, "empty pattern dropped")
		return p
	}
	// Before any other work, which is quadratic in the length for nested braces.
	if len(s) > MaxPatternLength {
		p.overLimit(fmt.Sprintf("is %d bytes long, more than the %d a pattern may have", len(s), MaxPatternLength))
		return p
	}
	// Compared in NFC, as candidate paths are.
	s = toNFC(s)
	p.trimmed = s
	// GLOBS: a leading "./" is dropped, repeatedly.
	for strings.HasPrefix(s, "./") {
		s = strings.TrimLeft(s[2:], "/")
	}
	// GLOBS: "!pat" negates the whole pattern (an odd count of "!", not "!(").
	bangs := len(s) - len(strings.TrimLeft(s, "!"))
	if bangs > 0 && !strings.HasPrefix(s[bangs:], "(") {
		s = s[bangs:]
		// GLOBS: the "./" of the negated pattern is dropped too ("!./src/**" is "!src/**").
		for strings.HasPrefix(s, "./") {
			s = strings.TrimLeft(s[2:], "/")
		}
		if bangs%2 == 1 {
			p.negate, p.inner = true, s
			p.problem(SeverityWarning, DiagNegated, fmt.Sprintf("%q matches every path that %q does not; to exclude paths, list only the ones to include", raw, s))
		}
	}
	if strings.HasPrefix(s, "/") || driveRE.MatchString(s) {
		p.cannotMatch(raw, "is absolute and can never match: candidate paths are relative to their workspace root")
		return p
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == ".." {
			p.cannotMatch(raw, "contains a \"..\" segment and can never match: candidate paths stay inside their root")
			return p
		}
	}
	// GLOBS: a backslash escapes the next character; warn about Windows-style separators.
	if winEscapeRE.MatchString(s) {
		p.problem(SeverityWarning, DiagWindowsPath, fmt.Sprintf("%q: a backslash escapes the next character, it is not a path separator; write / instead", raw))
	}
	// GLOBS: extglobs, ranges and POSIX classes are not supported: diagnostic, literal only.
	switch {
	case extglobRE.MatchString(s):
		p.unsupported(raw, "extglobs like +(a|b), @(...), !(...)")
		return p
	case rangeRE.MatchString(s):
		p.unsupported(raw, "ranges like {1..3}")
		return p
	case strings.Contains(s, "[[:"):
		p.unsupported(raw, "POSIX classes like [[:alpha:]]")
		return p
	}
	// GLOBS: a leading "**.ext" matches at any depth. Any other "**" that is not a whole
	// segment ("**a", "a**", "src/a**b") is left to doublestar, which reads it as "*": it
	// stays within one segment.
	if strings.HasPrefix(s, "**.") {
		s = "**/*" + s[2:]
	}
	// GLOBS: "{ts}" (one item, no comma) is literal text.
	s = literalSingleBraces(s)
	if !doublestar.ValidatePattern(s) {
		// GLOBS: an unbalanced [ or { is invalid; only literal equality can match it.
		p.literalOnly = true
		p.problem(SeverityWarning, DiagBadGlob, fmt.Sprintf("%q is not a valid pattern (unbalanced [ or {); only a path spelled exactly like it matches", raw))
		return p
	}
	if depth, n := braceShape(s); depth > MaxBraceDepth || n > MaxBraceExpansion {
		p.overLimit(fmt.Sprintf("nests brace groups %d deep and stands for %s alternatives; a pattern may nest %d deep and stand for %d",
			depth, expansionText(n), MaxBraceDepth, MaxBraceExpansion))
		return p
	}
	// GLOBS: "[body]" without regex characters matches the literal text or one character.
	p.alts = bracketAlternatives(s)
	for _, a := range p.alts {
		p.prefixes = append(p.prefixes, literalPrefix(a))
		p.suffixes = append(p.suffixes, literalSuffix(a))
		p.pieces = append(p.pieces, literalPieces(a))
		segs := splitSegments(a)
		p.segments = append(p.segments, segs)
		p.below = append(p.below, newBelowInfo(segs))
	}
	// GLOBS: a pattern ending in "/" matches only candidates written with a trailing "/".
	p.dirOnly = strings.HasSuffix(s, "/")
	// GLOBS: a candidate ending in "/" is accepted after a final *, ** or ].
	p.slashOK = strings.HasSuffix(s, "*") || strings.HasSuffix(s, "]")
	return p
}

func (p *Pattern) problem(sev Severity, code, msg string) {
	p.problems = append(p.problems, Problem{Severity: sev, Code: code, Message: msg})
}

// cannotMatch marks a pattern whose path part can never match a candidate (why says why): it
// never matches, or, negated, matches every candidate.
func (p *Pattern) cannotMatch(raw, why string) {
	if p.negate {
		p.always = true
		p.problem(SeverityWarning, DiagNegated, fmt.Sprintf("%q: %q %s, so its negation matches every path", raw, p.inner, why))
		return
	}
	p.never = true
	p.problem(SeverityWarning, DiagNeverMatches, fmt.Sprintf("%q %s", raw, why))
}

func (p *Pattern) unsupported(raw, what string) {
	p.literalOnly = true
	p.problem(SeverityWarning, DiagUnsupported, fmt.Sprintf("%q uses %s, which are not supported; only a path spelled exactly like it matches", raw, what))
}

// Usable reports whether the pattern can match anything at all.
func (p *Pattern) Usable() bool { return !p.never }

// candidate is a context path prepared once per evaluation.
type candidate struct {
	path     string // POSIX form
	stripped string // path without its trailing "/" (directories), else path
	isDir    bool
	dotSeg   bool // has a "." or ".." segment: wildcards never match it
	segs     []string
	root     string
	index    int // into EvaluationContext.Paths
}

// foldSlashes folds "\" to "/" in a candidate (GLOBS).
func foldSlashes(p string) string {
	if strings.IndexByte(p, '\\') >= 0 {
		return strings.ReplaceAll(p, `\`, "/")
	}
	return p
}

// prepareCandidate readies a path for matching: folded, in NFC, a trailing "/" taken as a
// directory, split into segments.
func prepareCandidate(raw string) candidate {
	p := toNFC(foldSlashes(raw))
	c := candidate{path: p, stripped: p}
	if strings.HasSuffix(p, "/") {
		c.isDir = true
		c.stripped = strings.TrimSuffix(p, "/")
	}
	c.segs = strings.Split(c.stripped, "/")
	for _, seg := range c.segs {
		if seg == "." || seg == ".." {
			c.dotSeg = true
		}
	}
	return c
}

// toNFC is s in Unicode NFC; ASCII, the common case, is returned as it is without a look-up.
func toNFC(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFC.String(s)
		}
	}
	return s
}

// Match reports whether the pattern matches the candidate path (a root-relative POSIX path;
// backslashes are folded, a trailing "/" marks a directory).
func (p *Pattern) Match(path string) bool {
	c := prepareCandidate(path)
	return p.match(&c)
}

func (p *Pattern) match(c *candidate) bool {
	switch {
	case p.never:
		return false
	case p.always:
		return true
	}
	// GLOBS: a pattern equal to the candidate matches, whatever glob characters it holds.
	if c.path == p.trimmed {
		return true
	}
	if p.literalOnly {
		// Negated, what only matched by equality matches every other path.
		return p.negate && c.path != p.inner
	}
	// GLOBS: wildcards never match a "." or ".." segment.
	m := !c.dotSeg && p.matchAlts(c)
	return m != p.negate
}

func (p *Pattern) matchAlts(c *candidate) bool {
	if p.dirOnly && !c.isDir {
		return false
	}
	for i, a := range p.alts {
		if p.matchForm(i, a, c.path) {
			return true
		}
		if c.isDir && p.slashOK && p.matchForm(i, a, c.stripped) {
			return true
		}
	}
	return false
}

// matchForm rejects on literal text first, which settles most pairs without doublestar.
func (p *Pattern) matchForm(i int, alt, s string) bool {
	if !strings.HasPrefix(s, p.prefixes[i]) || !strings.HasSuffix(s, p.suffixes[i]) {
		return false
	}
	for _, piece := range p.pieces[i] {
		if !strings.Contains(s, piece) {
			return false
		}
	}
	return doublestar.MatchUnvalidated(alt, s)
}

// literalPieces are the runs of literal text outside brace and bracket groups, cut at "/"
// (a "**/" may match nothing, and "dir/**" matches "dir"): every match contains each.
func literalPieces(a string) []string {
	var out []string
	var run strings.Builder
	flush := func() {
		if run.Len() > 0 {
			out = append(out, run.String())
			run.Reset()
		}
	}
	depth := 0
	for i := 0; i < len(a); i++ {
		switch ch := a[i]; {
		case ch == '\\':
			flush()
			i++
		case ch == '{' || ch == '[':
			flush()
			depth++
		case ch == '}' || ch == ']':
			depth--
		case depth > 0:
		case ch == '*' || ch == '?' || ch == '/':
			flush()
		default:
			run.WriteByte(ch)
		}
	}
	flush()
	return out
}

const metaChars = `*?[]{}\`

// literalPrefix is the literal text before the first meta character, cut back to its last
// "/" so that "src/**" still admits "src" itself.
func literalPrefix(a string) string {
	i := strings.IndexAny(a, metaChars)
	if i < 0 {
		i = len(a)
	}
	lit := a[:i]
	if j := strings.LastIndexByte(lit, '/'); j >= 0 {
		return lit[:j]
	}
	return ""
}

// literalSuffix is the literal text after the last meta character, without a leading "/"
// (a "**/" before it may match nothing: "**/Makefile" matches "Makefile").
func literalSuffix(a string) string {
	i := strings.LastIndexAny(a, metaChars)
	if i < 0 {
		return a // no meta characters: only the pattern itself matches
	}
	return strings.TrimPrefix(a[i+1:], "/")
}

// literalSingleBraces escapes every brace group without a top-level comma.
func literalSingleBraces(s string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	b := []byte(s)
	var out []byte
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if ch == '\\' && i+1 < len(b) {
			out = append(out, ch, b[i+1])
			i++
			continue
		}
		if ch == '{' {
			if end, comma := matchBrace(b, i); end > 0 && !comma {
				out = append(out, '\\', '{')
				out = append(out, literalSingleBraces(string(b[i+1:end]))...)
				out = append(out, '\\', '}')
				i = end
				continue
			}
		}
		out = append(out, ch)
	}
	return string(out)
}

// matchBrace finds the } closing the { at i and whether the group has a top-level comma.
func matchBrace(b []byte, i int) (end int, comma bool) {
	depth := 0
	inClass := false
	for j := i; j < len(b); j++ {
		switch ch := b[j]; {
		case ch == '\\':
			j++
		case inClass:
			if ch == ']' {
				inClass = false
			}
		case ch == '[':
			inClass = true
		case ch == '{':
			depth++
		case ch == '}':
			depth--
			if depth == 0 {
				return j, comma
			}
		case ch == ',' && depth == 1:
			comma = true
		}
	}
	return -1, false
}

// classRegexChars are picomatch's regex characters: a bracket body holding one of them is
// a character class only; one without is also tried as literal text.
const classRegexChars = `-*+?.^${}(|)[]!\`

// bracketAlternatives expands each literal-capable [body] into the class and the escaped
// literal text.
func bracketAlternatives(s string) []string {
	type group struct{ start, end int }
	var groups []group
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			end := strings.IndexByte(s[i+1:], ']')
			if end < 0 {
				return []string{s}
			}
			end += i + 1
			if body := s[i+1 : end]; body != "" && !strings.ContainsAny(body, classRegexChars) {
				groups = append(groups, group{i, end})
			}
			i = end
		}
	}
	if len(groups) == 0 || len(groups) > maxBracketLiterals {
		return []string{s}
	}
	alts := []string{""}
	prev := 0
	for _, g := range groups {
		lit := `\[` + s[g.start+1:g.end] + `\]`
		class := s[g.start : g.end+1]
		var next []string
		for _, a := range alts {
			next = append(next, a+s[prev:g.start]+class, a+s[prev:g.start]+lit)
		}
		alts = next
		prev = g.end + 1
	}
	for i := range alts {
		alts[i] += s[prev:]
	}
	return alts
}

// segment is one "/"-separated part of a pattern.
type segment struct {
	text    string
	literal bool // no meta characters: compared by equality
}

// splitSegments splits a doublestar pattern at its separators, or returns nil when a brace
// group or escape spans one, or there are too many for the directory test's bit sets (the
// test then stays silent rather than guess).
func splitSegments(a string) []segment {
	depth := 0
	for i := 0; i < len(a); i++ {
		switch a[i] {
		case '\\':
			if i+1 < len(a) && a[i+1] == '/' {
				return nil
			}
			i++
		case '{':
			depth++
		case '}':
			depth--
		case '/':
			if depth > 0 {
				return nil
			}
		}
	}
	parts := strings.Split(a, "/")
	if len(parts) > maxBelowSegments {
		return nil
	}
	segs := make([]segment, len(parts))
	for i, t := range parts {
		segs[i] = segment{text: t, literal: !strings.ContainsAny(t, metaChars)}
	}
	return segs
}
