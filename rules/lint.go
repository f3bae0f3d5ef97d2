package rules

import (
	"cmp"
	"fmt"
	"slices"
)

// FindingKind says what a lint [Finding] is about. The strings are stable: tools and other
// reports (an audit of a task) use the same names.
type FindingKind string

// The finding kinds.
const (
	// FindNeverApplicable: a rule that cannot apply to any request about this workspace: its
	// patterns match no file or folder that exists, lie outside every root, or a condition
	// lists no value.
	FindNeverApplicable FindingKind = "never-applicable"
	// FindBroken: the file was not read as its author meant (frontmatter that does not parse,
	// a key of the wrong type, a binary or truncated file, one longer than its tool allows);
	// the message says what the rule became. A rule meant to be scoped that became always on is
	// an error.
	FindBroken FindingKind = "broken"
	// FindShadowed: a rule hidden by a rule of the same name with higher precedence.
	FindShadowed FindingKind = "shadowed"
	// FindDuplicate: a rule with the same text as another; when both apply, the text goes
	// into the prompt once.
	FindDuplicate FindingKind = "duplicate"
	// FindSameName: a rule with the name of another rule that does not hide it; the name
	// reaches the other, this one only its id.
	FindSameName FindingKind = "same-name"
	// FindUnknownKey: a frontmatter key that nothing reads.
	FindUnknownKey FindingKind = "unknown-key"
	// FindForeignKey: a key of another tool, which the file's own tool ignores.
	FindForeignKey FindingKind = "foreign-key"
	// FindWindowsPath: a pattern with a backslash, which escapes; it is not a separator.
	FindWindowsPath FindingKind = "windows-path"
	// FindExtglob: an extglob (+(a|b), @(…), !(…)), which the dialect does not support.
	FindExtglob FindingKind = "extglob"
	// FindGlob: another glob construct the dialect reads differently from the tools the
	// pattern may have been written for (ranges, POSIX classes, [!a], parentheses, {x},
	// negation, a trailing /, an unbalanced bracket, a pattern over the limits).
	FindGlob FindingKind = "glob"
	// FindEmpty: a rule without a body; there is nothing to put in the prompt.
	FindEmpty FindingKind = "empty"
	// FindImport: an @path import that names no file, loops or goes too deep.
	FindImport FindingKind = "import"
	// FindLimit: discovery or the workspace listing stopped at a bound; what lies beyond was
	// not read or not checked.
	FindLimit FindingKind = "limit"
	// FindSkipped: a place discovery did not read (a link loop, a named pipe, an AGENTS.md
	// inside node_modules).
	FindSkipped FindingKind = "skipped"
)

// Finding is one thing wrong with the rules of a workspace that shows without any session.
type Finding struct {
	// Kind says what the finding is about.
	Kind FindingKind `json:"kind"`
	// Severity is error for a rule that does the opposite of what its author meant (a scoped
	// rule now always on), warning for one that is partly lost, info for the rest.
	Severity Severity `json:"severity"`
	// File is the file as a person would look for it (root-joined path, ~/path, remote:name).
	File string `json:"file"`
	// Root is the workspace root of the file; empty for global and remote rules.
	Root string `json:"root,omitempty"`
	// Path is the file's path relative to its root (or home folder; remote: the name).
	Path string `json:"path"`
	// Line is the 1-based line in the file, or 0 when the finding is about the whole file.
	Line int `json:"line,omitempty"`
	// RuleID and Rule are the rule's ID and name, when the finding is about a rule.
	RuleID string `json:"rule_id,omitempty"`
	Rule   string `json:"rule,omitempty"`
	// Pattern is the pattern the finding is about, as written.
	Pattern string `json:"pattern,omitempty"`
	// Other is the ID of the other rule: the one that shadows this one, or has its text.
	Other string `json:"other,omitempty"`
	// Code is the diagnostic code the finding comes from, when it comes from one.
	Code string `json:"code,omitempty"`
	// Message says what is wrong, what it makes of the rule, and what to do.
	Message string `json:"message"`
}

// String formats the finding on one line: file:line: severity: kind: message.
func (f Finding) String() string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s: %s", f.File, f.Line, f.Severity, f.Kind, f.Message)
	}
	return fmt.Sprintf("%s: %s: %s: %s", f.File, f.Severity, f.Kind, f.Message)
}

func compareFindings(a, b Finding) int {
	return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Pattern, b.Pattern), cmp.Compare(a.Message, b.Message), cmp.Compare(a.RuleID, b.RuleID))
}

// LintOptions bound the listing of the workspace that never-applicable needs.
type LintOptions struct {
	// MaxEntries bounds the files and folders listed over all roots; zero means
	// [DefaultLintEntries]. Past it the listing stops, and never-applicable is reported only
	// for rules whose patterns cannot match anything anywhere (a [FindLimit] finding says so).
	MaxEntries int
}

// DefaultLintEntries is the default bound on the entries [Lint] lists.
const DefaultLintEntries = 200_000

// LintReport is what [Lint] found.
type LintReport struct {
	// Findings are sorted by file, line, kind, pattern and message.
	Findings []Finding
	// Rules is the number of rules discovered, unusable and shadowed ones included.
	Rules int
	// Listed is the number of files and folders listed to check never-applicable.
	Listed int
	// Complete reports whether the listing saw every entry outside the skipped folders.
	Complete bool
}

// Lint discovers the rules of a workspace as [Collect] and [Load] do for a decision, lists
// the workspace's files (bounded; see [LintOptions]) and reports every finding that needs no
// session. It reads the file system; everything it reports about rules is derived from the
// rule set and the listing, sorted.
func Lint(ws Workspace, opt LintOptions) (LintReport, error) {
	files, err := Collect(ws)
	if err != nil {
		return LintReport{}, fmt.Errorf("lint: %w", err)
	}
	// A loader of its own: lint runs once over a workspace, and each run parses every file.
	rs := NewLoader(len(files)).Load(files)
	max := opt.MaxEntries
	if max <= 0 {
		max = DefaultLintEntries
	}
	never, stats := rs.neverApplicable(ws.Roots, max)
	out := LintReport{Rules: len(rs.Rules()), Listed: stats.listed, Complete: stats.complete}
	out.Findings = append(LintRuleSet(rs, files), never...)
	slices.SortFunc(out.Findings, compareFindings)
	out.Findings = slices.CompactFunc(out.Findings, func(a, b Finding) bool { return compareFindings(a, b) == 0 })
	return out, nil
}
