package events

import (
	"cmp"
	"fmt"
	"slices"
)

// Written returns next as it is written against prev, the full decision of the turn before at
// sequence number base: only what changed. ok is false when next cannot be written that way:
// prev used another rules snapshot or has other diagnostics. Both decisions must be full, with
// their context sorted by path and root and their outcomes by id, as decisions are.
func Written(prev, next *Decision, base uint64) (delta *Decision, ok bool) {
	delta = new(Decision)
	if !WrittenInto(delta, prev, next, base) {
		return nil, false
	}
	return delta, true
}

// WrittenInto is Written into delta, which it overwrites whole, for a caller that encodes the
// delta and is done with it (a decision recorded after every prompt). delta shares arrays with
// next. It reports Written's ok and leaves delta as it was when that is false.
func WrittenInto(delta, prev, next *Decision, base uint64) bool {
	if prev.Snapshot != next.Snapshot || !slices.Equal(prev.Diagnostics, next.Diagnostics) {
		return false
	}
	d := delta
	*d = *next
	d.Base, d.Diagnostics = base, nil
	d.Context, d.Gone = diffContext(prev.Context, next.Context)
	if sameArray(prev.Included, next.Included) && sameArray(prev.Excluded, next.Excluded) {
		// Outcomes taken over from prev: nothing of them changed.
		d.Included, d.Excluded, d.Removed = []RuleOutcome{}, []RuleOutcome{}, nil
	} else {
		d.Included, d.Excluded, d.Removed = diffOutcomes(prev, next)
	}
	return true
}

// sameArray reports whether a and b are the same elements of the same array.
func sameArray(a, b []RuleOutcome) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Apply rebuilds the full decision d was written from, given base, the full decision d is
// written against. A full d is returned as it is. An inconsistent delta (a gone path or removed
// rule the base does not have, another snapshot) is ErrInvalid.
func (d *Decision) Apply(base *Decision) (*Decision, error) {
	if d.Base == 0 {
		return d, nil
	}
	if base == nil {
		return nil, fmt.Errorf("%w: decision of turn %d is written against seq %d, which is not at hand", ErrInvalid, d.Turn, d.Base)
	}
	if base.Snapshot != d.Snapshot {
		return nil, fmt.Errorf("%w: decision of turn %d uses snapshot %d but is written against a decision of snapshot %d",
			ErrInvalid, d.Turn, d.Snapshot, base.Snapshot)
	}
	full := *d
	full.Base, full.Gone, full.Removed = 0, nil, nil
	full.Diagnostics = base.Diagnostics
	var err error
	if full.Context, err = applyContext(base.Context, d.Context, d.Gone); err != nil {
		return nil, fmt.Errorf("%w: decision of turn %d: %v", ErrInvalid, d.Turn, err)
	}
	if full.Included, full.Excluded, err = applyOutcomes(base, d); err != nil {
		return nil, fmt.Errorf("%w: decision of turn %d: %v", ErrInvalid, d.Turn, err)
	}
	return &full, nil
}

func comparePaths(a, b PathRef) int {
	return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Root, b.Root))
}

func (c ContextPath) ref() PathRef { return PathRef{Path: c.Path, Root: c.Root} }

// diffContext walks two sorted contexts side by side.
func diffContext(prev, next []ContextPath) (changed []ContextPath, gone []PathRef) {
	changed = []ContextPath{}
	i, j := 0, 0
	for i < len(prev) || j < len(next) {
		var c int
		switch {
		case i == len(prev):
			c = 1
		case j == len(next):
			c = -1
		default:
			c = comparePaths(prev[i].ref(), next[j].ref())
		}
		switch {
		case c < 0:
			gone = append(gone, prev[i].ref())
			i++
		case c > 0:
			changed = append(changed, next[j])
			j++
		default:
			if !slices.Equal(prev[i].Sources, next[j].Sources) {
				changed = append(changed, next[j])
			}
			i++
			j++
		}
	}
	return changed, gone
}

func applyContext(base, changed []ContextPath, gone []PathRef) ([]ContextPath, error) {
	out := make([]ContextPath, 0, len(base)+len(changed))
	g := 0
	j := 0
	for _, p := range base {
		ref := p.ref()
		for j < len(changed) && comparePaths(changed[j].ref(), ref) < 0 {
			out = append(out, changed[j])
			j++
		}
		if g < len(gone) && gone[g] == ref {
			g++
			continue
		}
		if j < len(changed) && comparePaths(changed[j].ref(), ref) == 0 {
			out = append(out, changed[j])
			j++
			continue
		}
		out = append(out, p)
	}
	out = append(out, changed[j:]...)
	if g < len(gone) {
		return nil, fmt.Errorf("gone path %s (root %q) is not in its base's context, or out of order", gone[g].Path, gone[g].Root)
	}
	if !slices.IsSortedFunc(out, func(a, b ContextPath) int { return comparePaths(a.ref(), b.ref()) }) {
		return nil, fmt.Errorf("context paths out of order")
	}
	return out, nil
}

type decided struct {
	RuleOutcome
	included bool
}

func outcomesByID(d *Decision) map[string]decided {
	m := make(map[string]decided, len(d.Included)+len(d.Excluded))
	for _, o := range d.Included {
		m[o.ID] = decided{o, true}
	}
	for _, o := range d.Excluded {
		m[o.ID] = decided{o, false}
	}
	return m
}

// Equal reports whether o and p record the same outcome: every field, and the same matches.
func (o RuleOutcome) Equal(p RuleOutcome) bool {
	return o.ID == p.ID && o.Name == p.Name && o.Category == p.Category && o.Source == p.Source &&
		o.Path == p.Path && o.Reason == p.Reason && o.Detail == p.Detail && o.ShadowedBy == p.ShadowedBy &&
		slices.Equal(o.Matches, p.Matches)
}

// byID walks a full decision's outcomes, both lists merged, in id order.
type byID struct {
	inc, exc []RuleOutcome
}

// next returns the outcome of the smallest id left, and whether it is included.
func (w *byID) next() (o RuleOutcome, included, ok bool) {
	switch {
	case len(w.inc) > 0 && (len(w.exc) == 0 || w.inc[0].ID < w.exc[0].ID):
		o, w.inc = w.inc[0], w.inc[1:]
		return o, true, true
	case len(w.exc) > 0:
		o, w.exc = w.exc[0], w.exc[1:]
		return o, false, true
	}
	return RuleOutcome{}, false, false
}

// diffOutcomes walks both decisions' outcomes in id order side by side.
func diffOutcomes(prev, next *Decision) (included, excluded []RuleOutcome, removed []string) {
	included, excluded = []RuleOutcome{}, []RuleOutcome{}
	before, after := byID{prev.Included, prev.Excluded}, byID{next.Included, next.Excluded}
	b, bIn, bOK := before.next()
	a, aIn, aOK := after.next()
	for bOK || aOK {
		switch {
		case aOK && (!bOK || a.ID < b.ID): // new
		case !aOK || b.ID < a.ID: // gone
			removed = append(removed, b.ID)
			b, bIn, bOK = before.next()
			continue
		default: // both: written only when it changed
			same := bIn == aIn && a.Equal(b)
			b, bIn, bOK = before.next()
			if same {
				a, aIn, aOK = after.next()
				continue
			}
		}
		if aIn {
			included = append(included, a)
		} else {
			excluded = append(excluded, a)
		}
		a, aIn, aOK = after.next()
	}
	return included, excluded, removed
}

func applyOutcomes(base, d *Decision) (included, excluded []RuleOutcome, err error) {
	all := outcomesByID(base)
	for _, id := range d.Removed {
		if _, ok := all[id]; !ok {
			return nil, nil, fmt.Errorf("removed rule %s is not in its base", id)
		}
		delete(all, id)
	}
	for _, o := range d.Included {
		all[o.ID] = decided{o, true}
	}
	for _, o := range d.Excluded {
		all[o.ID] = decided{o, false}
	}
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	included, excluded = []RuleOutcome{}, []RuleOutcome{}
	for _, id := range ids {
		if o := all[id]; o.included {
			included = append(included, o.RuleOutcome)
		} else {
			excluded = append(excluded, o.RuleOutcome)
		}
	}
	return included, excluded, nil
}

// Clone returns a deep copy of d, sharing no slice with it.
func (d *Decision) Clone() *Decision {
	c := *d
	c.Context = slices.Clone(d.Context)
	n := 0
	for _, p := range d.Context {
		n += len(p.Sources)
	}
	srcs := make([]Source, 0, n)
	for i, p := range c.Context {
		if p.Sources != nil {
			start := len(srcs)
			srcs = append(srcs, p.Sources...)
			c.Context[i].Sources = srcs[start:len(srcs):len(srcs)]
		}
	}
	c.Gone, c.Dropped, c.Removed, c.Diagnostics = slices.Clone(d.Gone), slices.Clone(d.Dropped), slices.Clone(d.Removed), slices.Clone(d.Diagnostics)
	n = 0
	for _, list := range [][]RuleOutcome{d.Included, d.Excluded} {
		for _, o := range list {
			n += len(o.Matches)
		}
	}
	matches := make([]Match, 0, n) // one array for every outcome's matches
	c.Included, matches = cloneOutcomes(d.Included, matches)
	c.Excluded, _ = cloneOutcomes(d.Excluded, matches)
	return &c
}

func cloneOutcomes(in []RuleOutcome, matches []Match) ([]RuleOutcome, []Match) {
	out := slices.Clone(in)
	for i := range out {
		if m := out[i].Matches; m != nil {
			start := len(matches)
			matches = append(matches, m...)
			out[i].Matches = matches[start:len(matches):len(matches)]
		}
	}
	return out, matches
}
