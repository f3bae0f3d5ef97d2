// Package audit names what tasklog finds wrong with a workspace's rules: a rule the agent
// missed, one it loaded where it does not apply, one that can never apply, one hidden by
// another, one whose frontmatter broke. A finding of a recorded task names the request it was
// seen at; a finding about the rule files alone (a lint of the workspace) names none. Both share
// the kinds and the shape here, so that a script reads them the same way.
//
// The package imports nothing of this module: the rules package and the session package both
// use it.
package audit

import (
	"cmp"
	"fmt"
	"slices"
)

// Kind is what a finding is about.
type Kind string

// The finding kinds, in the order a report lists them.
const (
	// Broken is a rule file whose frontmatter failed to parse; what the engine made of it
	// (universal, by failing open) is in the evidence.
	Broken Kind = "broken"
	// MissedByAgent is a rule that applied at a request while the agent had not loaded it; the
	// evidence says whether tasklog delivered it, or why it could not.
	MissedByAgent Kind = "missed_by_agent"
	// LoadedNotApplicable is a rule the agent loaded by itself whose own conditions did not
	// match the evidence at that request.
	LoadedNotApplicable Kind = "loaded_not_applicable"
	// NeverApplicable is a scoped rule whose patterns match no file of the workspace, or lie
	// outside every root.
	NeverApplicable Kind = "never_applicable"
	// Shadowed is a rule hidden by a rule of the same name with higher precedence.
	Shadowed Kind = "shadowed"
	// Duplicate is a rule whose text another included rule already carries.
	Duplicate Kind = "duplicate"
)

// Kinds lists every kind in report order.
func Kinds() []Kind {
	return []Kind{Broken, MissedByAgent, LoadedNotApplicable, NeverApplicable, Shadowed, Duplicate}
}

// Severity grades a finding.
type Severity string

// The severities.
const (
	// Error is a rule the model did not get, or got where it should not have.
	Error Severity = "error"
	// Warning is a rule that works against its author's intent without losing text.
	Warning Severity = "warning"
)

// Moment names a request of a recorded task.
type Moment struct {
	Prompt  int    `json:"prompt"`
	Request int    `json:"request"`
	Turn    int    `json:"turn"`
	Seq     uint64 `json:"seq" jsonschema:"the decision event's sequence number"`
}

// Finding is one thing found about one rule.
type Finding struct {
	Kind     Kind     `json:"kind"`
	Severity Severity `json:"severity"`
	// Rule is the rule's name; ID its id ("claude:/ws/.claude/rules/api.md"); Path its file as
	// shown to the model.
	Rule string `json:"rule"`
	ID   string `json:"id"`
	Path string `json:"path,omitempty"`
	// At is the first request the finding was seen at; nil for a finding about the rule files
	// alone.
	At *Moment `json:"at,omitempty"`
	// Requests counts the requests it was seen at (0 for a finding about the files alone).
	Requests int `json:"requests,omitempty"`
	// Evidence says what was found, in a sentence a person can act on.
	Evidence string `json:"evidence"`
}

// String is the finding on one line: "missed_by_agent api (.claude/rules/api.md) at prompt 1,
// request 3: …".
func (f Finding) String() string {
	at := ""
	if f.At != nil {
		at = fmt.Sprintf(" at prompt %d, request %d", f.At.Prompt, f.At.Request)
		switch {
		case f.Requests == 2:
			at += " (and 1 later request)"
		case f.Requests > 2:
			at += fmt.Sprintf(" (and %d later requests)", f.Requests-1)
		}
	}
	path := ""
	if f.Path != "" {
		path = " (" + f.Path + ")"
	}
	return fmt.Sprintf("%s %s%s%s: %s", f.Kind, f.Rule, path, at, f.Evidence)
}

// Sort orders findings for a report: errors first, then by kind in Kinds order, by the request
// first seen, by rule id.
func Sort(fs []Finding) {
	rank := func(k Kind) int { return slices.Index(Kinds(), k) }
	turn := func(f Finding) int {
		if f.At == nil {
			return 0
		}
		return f.At.Turn
	}
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if a.Severity != b.Severity {
			if a.Severity == Error {
				return -1
			}
			if b.Severity == Error {
				return 1
			}
		}
		return cmp.Or(cmp.Compare(rank(a.Kind), rank(b.Kind)), cmp.Compare(turn(a), turn(b)), cmp.Compare(a.ID, b.ID))
	})
}

// YesNo is how the audit shows a column that may be unknown, such as whether the agent loaded
// a rule: "yes", "no", or "?" when nil (the agent reports no loads).
func YesNo(b *bool) string {
	switch {
	case b == nil:
		return "?"
	case *b:
		return "yes"
	}
	return "no"
}
