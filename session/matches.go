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
	// owned are, by the rule's index in the results, the matches arrays resourced made and the
	// number of the decision that made each; an entry whose array the last evaluation does not
	// hold is dropped at the next full evaluation.
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
	if rule < len(m.owned) {
		if o := m.owned[rule]; sameArray(o.matches, last) && o.n >= m.freeFrom {
			m.freed = append(m.freed, o)
		}
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

// written counts the decision made, whose evaluation's results are results: the arrays it let
// go are lent from now on, and those it made are remembered. same tells that it evaluated the
// last decision's rule set, full that it evaluated every rule again (which may have replaced
// any array: the entries of those it no longer holds are dropped).
func (m *matchArrays) written(results []rules.Result, same, full bool) {
	switch {
	case !same || len(m.owned) != len(results):
		clear(m.owned[:cap(m.owned)])
		m.owned = slices.Grow(m.owned[:0], len(results))[:len(results)]
	case full:
		for i, o := range m.owned {
			if o.matches != nil && !sameArray(results[i].Matches, o.matches) {
				m.owned[i] = ownedMatches{}
			}
		}
	}
	for _, o := range m.made {
		m.owned[o.rule] = o
	}
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
