package rules

import (
	"html"
	"slices"
	"strings"
)

// RenderCline renders the included rules as Cline's prompt does: one block per rule, its
// display path on the first line and its body below, blocks separated by a blank line.
func (d Decision) RenderCline() string {
	var sb strings.Builder
	n := 0
	for _, res := range d.Results {
		if res.Included {
			n += len(res.Rule.DisplayPath) + len(res.Rule.Body) + 3
		}
	}
	sb.Grow(n)
	for _, res := range d.Results {
		if !res.Included {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString("\n\n")
		}
		sb.WriteString(res.Rule.DisplayPath)
		sb.WriteByte('\n')
		sb.WriteString(res.Rule.Body)
	}
	return sb.String()
}

// RenderTagged renders the included rules in a <generic-rules> section, with their bodies,
// and the on-request rules in a <domain-rules> section, by name and description, for the
// model to read through rule://<name>, or the address a rule gives when that is not it (see
// Rule.Address). An empty section is left out.
func (d Decision) RenderTagged() string {
	var gen, dom strings.Builder
	n := 0
	for _, res := range d.Results {
		if res.Included {
			n += len(res.Rule.Name) + len(res.Rule.Provider) + len(res.Rule.DisplayPath) + len(res.Rule.Body) + 48
		}
	}
	gen.Grow(n)
	for _, res := range d.Results {
		r := res.Rule
		switch {
		case res.Included:
			for _, piece := range [...]string{`<rule name="`, attr(r.Name), `" source="`, attr(string(r.Provider)), `" path="`,
				attr(r.DisplayPath), "\">\n", r.Body, "\n</rule>\n"} {
				gen.WriteString(piece)
			}
		case res.Listed:
			dom.WriteString(`<rule name="` + attr(r.Name))
			if a := r.Address(); a != RuleURIScheme+r.Name {
				dom.WriteString(`" address="` + attr(a)) // a name with a space, or one another rule holds
			}
			dom.WriteString("\">\n")
			if r.Description != "" {
				dom.WriteString("<description>" + html.EscapeString(r.Description) + "</description>\n")
			}
			for _, p := range r.Patterns() {
				dom.WriteString("<glob>" + html.EscapeString(p) + "</glob>\n")
			}
			dom.WriteString("</rule>\n")
		}
	}
	var sb strings.Builder
	if gen.Len() > 0 {
		sb.WriteString("<generic-rules>\n" + gen.String() + "</generic-rules>\n")
	}
	if dom.Len() > 0 {
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString("<domain-rules>\nRead " + RuleURIScheme + "<name> when working in a matching domain.\n" + dom.String() + "</domain-rules>\n")
	}
	return sb.String()
}

func attr(s string) string { return html.EscapeString(s) }

// AppliedRule is one entry of Cline's "conditional rules applied" notice: a rule that was
// included because its conditions held.
type AppliedRule struct {
	// Name is the rule's display path, as Cline names it.
	Name string `json:"name"`
	// RuleID identifies the rule.
	RuleID string `json:"rule_id"`
	// MatchedConditions lists, per condition, the values that matched, in condition order.
	MatchedConditions []MatchedCondition `json:"matchedConditions"`
}

// MatchedCondition is the values of one condition that matched (for paths: the patterns).
type MatchedCondition struct {
	// Condition is the condition key ("paths", "mode", ...).
	Condition string `json:"condition"`
	// Values are the values that matched, each once, in match order.
	Values []string `json:"values"`
}

// ConditionalRulesApplied lists the included rules that had conditions, with the condition
// values that matched, in rule ID order. A manual rule included for a mention of its file had
// none ([MatchMentioned] is no condition of the rule): it is not listed.
func (d Decision) ConditionalRulesApplied() []AppliedRule {
	return d.ConditionalRulesAppliedAfter(Decision{}, nil)
}

// ConditionalRulesAppliedAfter is ConditionalRulesApplied of a decision made after last (see
// RuleSet.EvaluateAfter), whose list was lastApplied: a rule whose matches are last's own
// (the same memory) is listed as lastApplied lists it, sharing what the entry points to.
func (d Decision) ConditionalRulesAppliedAfter(last Decision, lastApplied []AppliedRule) []AppliedRule {
	return d.ConditionalRulesAppliedInto(last, lastApplied, nil)
}

// ConditionalRulesAppliedInto is ConditionalRulesAppliedAfter written in spare's array when it
// is large enough, as a caller that no longer needs a list made before hands it back: spare's
// elements are overwritten, so it must be no list the caller still reads (lastApplied among
// them).
func (d Decision) ConditionalRulesAppliedInto(last Decision, lastApplied, spare []AppliedRule) []AppliedRule {
	if len(last.Results) != len(d.Results) {
		last.Results = nil
	}
	n := 0
	for _, res := range d.Results {
		if conditional(res) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := spare[:0]
	if cap(out) < n {
		out = make([]AppliedRule, 0, n)
	}
	j := 0 // lastApplied is in rule ID order too
	for i, res := range d.Results {
		if !conditional(res) {
			continue
		}
		if last.Results != nil && last.Results[i].Rule == res.Rule && last.Results[i].Included && sameMemory(last.Results[i].Matches, res.Matches) {
			for j < len(lastApplied) && lastApplied[j].RuleID < res.Rule.ID {
				j++
			}
			if j < len(lastApplied) && lastApplied[j].RuleID == res.Rule.ID && lastApplied[j].Name == res.Rule.DisplayPath {
				out = append(out, lastApplied[j])
				continue
			}
		}
		ar := AppliedRule{Name: res.Rule.DisplayPath, RuleID: res.Rule.ID}
		for _, m := range res.Matches {
			if m.Condition == MatchMentioned {
				continue
			}
			n := len(ar.MatchedConditions)
			if n == 0 || ar.MatchedConditions[n-1].Condition != m.Condition {
				ar.MatchedConditions = append(ar.MatchedConditions, MatchedCondition{Condition: m.Condition})
				n++
			}
			mc := &ar.MatchedConditions[n-1]
			if !contains(mc.Values, m.Pattern) {
				mc.Values = append(mc.Values, m.Pattern)
			}
		}
		out = append(out, ar)
	}
	return out
}

// sameMemory reports whether two non-empty match slices are the same memory.
func sameMemory(a, b []Match) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// conditional reports whether res is an included rule with a condition that matched.
func conditional(res Result) bool {
	return res.Included && slices.ContainsFunc(res.Matches, func(m Match) bool { return m.Condition != MatchMentioned })
}
