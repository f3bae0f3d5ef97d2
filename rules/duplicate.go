package rules

import (
	"cmp"
	"slices"
)

// The same text reached twice (a CLAUDE.md that is a link to AGENTS.md, a CLAUDE.md that only
// imports AGENTS.md, one file copied into two tools' folders) goes into the prompt once: of the
// included rules with the same body, the one of highest precedence (then the smaller ID) stays
// and the others are excluded with ReasonDuplicate, naming it, as a shadowed rule names its
// shadow. Which rules are included depends on the context, so this is settled per decision.

// groupSameText lists the groups of usable, unshadowed rules whose bodies are the same, each
// in precedence order. rules are sorted by ID.
func groupSameText(rules []*Rule) [][]int {
	first := make(map[string]int, len(rules)) // body -> index of its first rule, or -1-group
	var groups [][]int
	for i, r := range rules {
		if r.Unusable != "" || r.ShadowedBy != "" || r.Body == "" {
			continue
		}
		j, ok := first[r.Body]
		switch {
		case !ok:
			first[r.Body] = i
		case j >= 0:
			first[r.Body] = -1 - len(groups)
			groups = append(groups, []int{j, i})
		default:
			groups[-1-j] = append(groups[-1-j], i)
		}
	}
	for _, g := range groups { // in the order of their first rule's ID
		slices.SortStableFunc(g, func(a, b int) int { return cmp.Compare(rules[b].precedence, rules[a].precedence) })
	}
	return groups
}

// dedupe excludes, in each group of rules with the same text, every included rule but the
// first.
func (rs *RuleSet) dedupe(results []Result) {
	for _, g := range rs.sameText {
		kept := -1
		for _, i := range g {
			if !results[i].Included {
				continue
			}
			if kept < 0 {
				kept = i
				continue
			}
			id := rs.rules[kept].ID
			results[i] = Result{Rule: results[i].Rule, ShadowedBy: id}.with(ReasonDuplicate,
				"the same text as "+id+", which is included: it goes into the prompt once")
		}
	}
}
