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
	byBody := map[string][]int{}
	var bodies []string
	for i, r := range rules {
		if r.Unusable != "" || r.ShadowedBy != "" || r.Body == "" {
			continue
		}
		if _, ok := byBody[r.Body]; !ok {
			bodies = append(bodies, r.Body)
		}
		byBody[r.Body] = append(byBody[r.Body], i)
	}
	var groups [][]int
	for _, body := range bodies { // in the order of their first rule's ID
		g := byBody[body]
		if len(g) < 2 {
			continue
		}
		slices.SortStableFunc(g, func(a, b int) int { return cmp.Compare(rules[b].precedence, rules[a].precedence) })
		groups = append(groups, g)
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
