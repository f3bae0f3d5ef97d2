package session

import (
	"slices"

	"github.com/tasklog/tasklog/rules"
)

// matchArrays lends an evaluation the matches arrays of decisions nobody holds any more. A
// decision copies the matches of every rule whose matches changed: a full evaluation those of a
// rule that matched another path or other evidence, a decision on the last one's paths with new
// evidence on one of them those of every rule that matched that path (see resourced). The array
// it replaces is still the last decision's, and the caller may hold that decision, or one
// before it that shares the array. An array the session made is lent again once every decision
// that holds it has been handed back to DecideInto, each into the decision after it: nothing of
// a decision handed back is read again (see DecideInto).
type matchArrays struct {
	// owned are, by the rule's index in the results, the matches arrays of the last evaluation
	// that the session's evaluations made, and the number of the decision that made each.
	owned []ownedMatches
	// n numbers the session's decisions, the one being made included (failed ones too).
	n uint64
	// freeFrom is the first decision of the chain the decision being made ends: each from it on
	// was handed back into the one after it, so nothing but the session holds what only they hold.
	freeFrom uint64
	// spare are arrays nobody holds, emptied.
	spare [][]rules.Match
}

// ownedMatches is a matches array made in decision n.
type ownedMatches struct {
	matches []rules.Match
	n       uint64
}

// spareMatchesMax bounds the arrays kept for lending: a tool call changes the matches of a few
// rules, those that matched the path it touched.
const spareMatchesMax = 64

// begin starts a decision; handedBack tells that it is written into the decision before it
// (the one that holds the last record).
func (m *matchArrays) begin(handedBack bool) {
	m.n++
	if !handedBack {
		m.freeFrom = m.n
	}
}

// lend is an empty array with room for n matches that nobody holds, nil when there is none
// (see rules.RuleSet.EvaluateLent). The array is the caller's from then on.
func (m *matchArrays) lend(n int) []rules.Match {
	i := slices.IndexFunc(m.spare, func(a []rules.Match) bool { return cap(a) >= n })
	if i < 0 {
		return nil
	}
	a := m.spare[i]
	m.spare[i] = m.spare[len(m.spare)-1]
	m.spare[len(m.spare)-1] = nil
	m.spare = m.spare[:len(m.spare)-1]
	return a
}

// copyOf is a copy of matches in an array lent, or a new one.
func (m *matchArrays) copyOf(matches []rules.Match) []rules.Match {
	if a := m.lend(len(matches)); a != nil {
		return append(a, matches...)
	}
	return slices.Clone(matches)
}

// written counts the decision made, whose evaluation's results are results, after the last
// evaluation's, last. A rule's array that changed was made by this decision (an evaluation
// takes the last one's or makes one); the array it replaced is lent from now on when the
// session made it in a decision from freeFrom on (whatever rule set the last was of: only the
// decisions that hold an array matter).
func (m *matchArrays) written(last, results []rules.Result) {
	if len(m.owned) != len(results) {
		clear(m.owned[:cap(m.owned)])
		m.owned = slices.Grow(m.owned[:0], len(results))[:len(results)]
	}
	for i, r := range results {
		var was []rules.Match
		if i < len(last) {
			was = last[i].Matches
		}
		if sameArray(was, r.Matches) {
			continue
		}
		if o := m.owned[i]; sameArray(o.matches, was) && o.n >= m.freeFrom && len(m.spare) < spareMatchesMax {
			m.spare = append(m.spare, emptied(was))
		}
		m.owned[i] = ownedMatches{}
		if len(r.Matches) > 0 {
			m.owned[i] = ownedMatches{matches: r.Matches, n: m.n}
		}
	}
}

// sameArray reports whether two non-empty match slices start in the same memory: an empty
// slice counts as no array here, where sameBacking looks at capacity.
func sameArray(a, b []rules.Match) bool {
	return len(a) > 0 && len(b) > 0 && sameBacking(a, b)
}
