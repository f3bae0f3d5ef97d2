package session

import (
	"slices"

	"github.com/tasklog/tasklog/rules"
)

// matchArrays lends resourced the matches arrays of decisions nobody holds any more. A decision
// on the last one's paths with new evidence on one of them copies the matches of every rule
// that matched that path (see resourced); the array it replaces is still the last decision's,
// and the caller may hold that decision, or one before it that shares the array. An array
// resourced made is lent again once every decision that holds it has been handed back to
// DecideInto, each into the decision after it: nothing of a decision handed back is read
// again (see DecideInto).
type matchArrays struct {
	// owned are the matches arrays of the last evaluation that resourced made, each with the
	// rule's index in the results and the number of the decision that made it.
	owned []ownedMatches
	// n numbers the session's decisions, the one being made included (failed ones too).
	n uint64
	// freeFrom is the first decision of the chain the decision being made ends: each from it on
	// was handed back into the one after it, so nothing but the session holds what only they hold.
	freeFrom uint64
	// spare are arrays nobody holds, emptied.
	spare [][]rules.Match
	// made and freed are what the decision being made copied and let go; they count once it is
	// written (see written).
	made, freed []ownedMatches
}

// ownedMatches is a matches array resourced made, for the rule at index rule of the results,
// in decision n.
type ownedMatches struct {
	rule    int
	matches []rules.Match
	n       uint64
}

// spareMatchesMax bounds the arrays kept for lending: a tool call changes the evidence of one
// path, whose rules are a few.
const spareMatchesMax = 64

// begin starts a decision; handedBack tells that it is written into the decision before it
// (the one that holds the last record).
func (m *matchArrays) begin(handedBack bool) {
	m.n++
	if !handedBack {
		m.freeFrom = m.n
	}
	m.made, m.freed = m.made[:0], m.freed[:0]
}

// copyOf is a copy of the matches of the rule at index rule, which the decision being made
// writes in place of the last evaluation's, in an array nobody holds when there is one. The
// array it replaces is let go when resourced made it in a decision from freeFrom on.
func (m *matchArrays) copyOf(rule int, last []rules.Match) []rules.Match {
	if i := slices.IndexFunc(m.owned, func(o ownedMatches) bool { return o.rule == rule && sameArray(o.matches, last) }); i >= 0 && m.owned[i].n >= m.freeFrom {
		m.freed = append(m.freed, m.owned[i])
	}
	var out []rules.Match
	if i := slices.IndexFunc(m.spare, func(a []rules.Match) bool { return cap(a) >= len(last) }); i >= 0 {
		out = append(m.spare[i], last...)
		m.spare = slices.Delete(m.spare, i, i+1)
	} else {
		out = slices.Clone(last)
	}
	m.made = append(m.made, ownedMatches{rule: rule, matches: out, n: m.n})
	return out
}

// written counts the decision made: the arrays it let go are lent from now on, and the arrays
// of its evaluation's results that resourced made (results is that evaluation's; same tells
// that it evaluated the rule set of the last) are remembered with the decision that made them.
func (m *matchArrays) written(results []rules.Result, same bool) {
	if !same {
		m.owned = m.owned[:0]
	}
	kept := m.owned[:0] // what the evaluation still holds: not the arrays it let go
	for _, o := range m.owned {
		if o.rule < len(results) && sameArray(results[o.rule].Matches, o.matches) {
			kept = append(kept, o)
		}
	}
	clear(m.owned[len(kept):]) // keep no array alive through the tail
	m.owned = append(kept, m.made...)
	for _, f := range m.freed {
		if len(m.spare) < spareMatchesMax {
			m.spare = append(m.spare, emptied(f.matches))
		}
	}
	clear(m.made)
	clear(m.freed)
	m.made, m.freed = m.made[:0], m.freed[:0]
}

// sameArray reports whether two non-empty match slices start in the same memory.
func sameArray(a, b []rules.Match) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}
