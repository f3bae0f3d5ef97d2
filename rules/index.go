package rules

import (
	"path"
	"slices"
	"strings"
	"sync"
)

// patternIndex lets an evaluation test each candidate path only against the patterns that
// could match it: those whose literal prefix starts with the candidate's first segment, those
// whose literal suffix ends with the candidate's extension, and the rest (negated, literal-only
// or wholly wild patterns). It is built once per rule set; it never changes a decision, only
// which pairs are tried.
type patternIndex struct {
	bySeg1   map[string][]patRef // literal prefix of one segment, by it
	bySeg2   map[string][]patRef // literal prefix of two or more segments, by the first two
	segAll   map[string][]patRef // bySeg1 and bySeg2 entries by first segment, for directories
	byExt    map[string][]patRef // no literal prefix; a literal suffix with extensions, by them
	byAnySeg map[string][]patRef // neither; a whole literal segment somewhere, by it
	dirWild  []patRef            // byExt entries that may match below a directory, and every byAnySeg entry
	rest     []patRef
	// base[rule][cond] is the place of the condition's first pattern among all the patterns of
	// the rule set in (rule, condition, pattern) order; places run to places-1. Hits are put in
	// that order by counting them per place, in time linear in hits and patterns.
	base   [][]int32
	places int
}

// place is the position of a hit's pattern in (rule, condition, pattern) order.
func (ix *patternIndex) place(r patRef) int32 { return ix.base[r.rule][r.cond] + r.pat }

// patRef names one pattern: rule, condition and pattern positions.
type patRef struct {
	rule, cond, pat int32
}

// hit is one pattern matching one candidate.
type hit struct {
	patRef
	cand  int32
	below bool
}

func buildIndex(rules []*Rule) *patternIndex {
	ix := &patternIndex{bySeg1: map[string][]patRef{}, bySeg2: map[string][]patRef{}, segAll: map[string][]patRef{},
		byExt: map[string][]patRef{}, byAnySeg: map[string][]patRef{}, base: make([][]int32, len(rules))}
	for ri, r := range rules {
		ix.base[ri] = make([]int32, len(r.Conditions))
		for ci := range r.Conditions {
			ix.base[ri][ci] = int32(ix.places)
			ix.places += len(r.Conditions[ci].patterns)
		}
	}
	for ri, r := range rules {
		if r.Unusable != "" || r.ShadowedBy != "" {
			continue
		}
		for ci := range r.Conditions {
			c := &r.Conditions[ci]
			if c.Key != CondPaths {
				continue
			}
			for pi, p := range c.patterns {
				ref := patRef{int32(ri), int32(ci), int32(pi)}
				switch k := p.indexKeys(); {
				case p.never:
				case k.seg2 != "":
					ix.bySeg2[k.seg2] = append(ix.bySeg2[k.seg2], ref)
					ix.segAll[k.seg1] = append(ix.segAll[k.seg1], ref)
				case k.seg1 != "":
					ix.bySeg1[k.seg1] = append(ix.bySeg1[k.seg1], ref)
					ix.segAll[k.seg1] = append(ix.segAll[k.seg1], ref)
				case k.ext != "":
					ix.byExt[k.ext] = append(ix.byExt[k.ext], ref)
					// A literal extension suffix never matches a directory itself, only maybe
					// something below it.
					if p.belowAny() {
						ix.dirWild = append(ix.dirWild, ref)
					}
				case k.anySeg != "":
					ix.byAnySeg[k.anySeg] = append(ix.byAnySeg[k.anySeg], ref)
					ix.dirWild = append(ix.dirWild, ref)
				default:
					ix.rest = append(ix.rest, ref)
				}
			}
		}
	}
	return ix
}

type indexKeys struct {
	seg1, seg2, ext, anySeg string
}

// indexKeys returns what every match of the pattern is certain to have: the first one or
// two segments of its literal prefix, else the extension of its literal suffix, else a whole
// literal segment. All alternatives must agree; negated and literal-only patterns have none.
func (p *Pattern) indexKeys() indexKeys {
	var k indexKeys
	if p.negate || p.literalOnly || len(p.alts) == 0 {
		return k
	}
	same := func(get func(i int) string) string {
		v := get(0)
		for i := 1; i < len(p.alts); i++ {
			if get(i) != v {
				return ""
			}
		}
		return v
	}
	k.seg1 = same(func(i int) string { s, _, _ := strings.Cut(p.prefixes[i], "/"); return s })
	if k.seg1 != "" {
		k.seg2 = same(func(i int) string {
			parts := strings.SplitN(p.prefixes[i], "/", 3)
			if len(parts) < 2 {
				return ""
			}
			return parts[0] + "/" + parts[1]
		})
		return k
	}
	if k.ext = same(func(i int) string { return suffixExt(p.suffixes[i]) }); k.ext != "" {
		return k
	}
	k.anySeg = same(func(i int) string {
		for _, sg := range p.segments[i] {
			if sg.literal && sg.text != "" {
				return sg.text
			}
		}
		return ""
	})
	return k
}

// suffixExt is the run of extensions a literal suffix fixes (".test.ts" for "-x.test.ts"), if
// it fixes one: the suffix from its first dot. Every name the suffix ends is a name with that
// run of extensions, which [dottedSuffixes] lists.
func suffixExt(s string) string {
	if strings.Contains(s, "/") || strings.HasSuffix(s, ".") {
		return ""
	}
	i := strings.IndexByte(s, '.')
	if i < 0 {
		return ""
	}
	return s[i:]
}

// dottedSuffixes calls f with every suffix of the file name that starts at a dot and does not
// end with one: ".test.ts" and ".ts" for "a.test.ts".
func dottedSuffixes(name string, f func(string)) {
	if strings.HasSuffix(name, ".") {
		return
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '.' {
			f(name[i:])
		}
	}
}

// matchMemo remembers, per candidate path and root, the patterns of the rule set it matched.
// Which patterns a path matches depends on nothing but the path, its root and the rule set,
// and a task's context keeps most of its paths from one turn to the next: each new path is
// matched once. The memo is bounded; a full one is emptied and refilled.
type matchMemo struct {
	mu sync.Mutex
	m  map[memoKey][]memoHit
}

type memoKey struct{ root, path string }

type memoHit struct {
	patRef
	below bool
}

// maxMemo bounds the memo: a hundred contexts' worth of distinct paths.
const maxMemo = 10_000

// lookup fills found[i] with what candidate i matched, when remembered, and reports which.
func (mm *matchMemo) lookup(cands []candidate, found [][]memoHit, known []bool) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	for i := range cands {
		found[i], known[i] = mm.m[memoKey{cands[i].root, cands[i].path}]
	}
}

func (mm *matchMemo) put(k memoKey, h []memoHit) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if mm.m == nil || len(mm.m) >= maxMemo {
		mm.m = make(map[memoKey][]memoHit)
	}
	mm.m[k] = h
}

// collectHits finds, for every candidate, the patterns it matches (from the memo, or by trying
// the patterns the index gives it) and returns the hits sorted by rule, condition, pattern and
// candidate: the order results report.
func (rs *RuleSet) collectHits(st *evalState) []hit {
	sc := st.scratch
	hits := sc.hits[:0]
	n := len(st.candidates)
	sc.found, sc.known = slices.Grow(sc.found[:0], n)[:n], slices.Grow(sc.known[:0], n)[:n]
	found, known := sc.found, sc.known
	rs.matches.lookup(st.candidates, found, known)
	for ci := range st.candidates {
		cand := &st.candidates[ci]
		if !known[ci] {
			full := prepareCandidate(cand.path)
			full.root, full.index = cand.root, cand.index
			found[ci] = rs.matchCandidate(&full)
			rs.matches.put(memoKey{cand.root, cand.path}, found[ci])
		}
		for _, h := range found[ci] {
			hits = append(hits, hit{h.patRef, int32(ci), h.below})
		}
	}
	sc.hits = hits
	return rs.index.order(hits, sc)
}

// order returns the hits sorted by rule, condition, pattern and candidate. They come in
// candidate order, and a candidate matches a pattern once, so a stable counting sort by pattern
// place gives that order, in time linear in hits and patterns (a comparison sort of every hit
// at every decision grew faster than the rule set and the context).
func (ix *patternIndex) order(hits []hit, sc *scratch) []hit {
	if len(hits) < 2 {
		return hits
	}
	sc.start = slices.Grow(sc.start[:0], ix.places+1)[:ix.places+1]
	start := sc.start
	clear(start)
	for _, h := range hits {
		start[ix.place(h.patRef)+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	sc.ordered = slices.Grow(sc.ordered[:0], len(hits))[:len(hits)]
	out := sc.ordered
	for _, h := range hits {
		p := ix.place(h.patRef)
		out[start[p]] = h
		start[p]++
	}
	return out
}

// matchCandidate tries a candidate against the patterns the index gives it.
func (rs *RuleSet) matchCandidate(cand *candidate) []memoHit {
	found := []memoHit{}
	try := func(refs []patRef) {
		for _, ref := range refs {
			c := &rs.rules[ref.rule].Conditions[ref.cond]
			if c.Root != "" && cand.root != "" && cand.root != c.Root {
				continue
			}
			p := c.patterns[ref.pat]
			if p.match(cand) {
				found = append(found, memoHit{ref, false})
			} else if cand.isDir && p.matchBelow(cand) {
				found = append(found, memoHit{ref, true})
			}
		}
	}
	ix := rs.index
	segs := cand.segs
	var two string // the first two segments, sliced rather than joined
	if len(segs) > 1 {
		two = cand.stripped[:len(segs[0])+1+len(segs[1])]
	}
	if cand.isDir {
		// A one-segment directory may lie above any longer prefix; a deeper one shares its
		// first two segments with every prefix it is on one line with.
		if len(segs) == 1 {
			try(ix.segAll[segs[0]])
		} else {
			try(ix.bySeg1[segs[0]])
			try(ix.bySeg2[two])
		}
		try(ix.dirWild)
		try(ix.rest)
		return found
	}
	try(ix.bySeg1[segs[0]])
	if len(segs) > 1 {
		try(ix.bySeg2[two])
	}
	dottedSuffixes(path.Base(cand.stripped), func(ext string) { try(ix.byExt[ext]) })
	for i, sg := range segs {
		if !slices.Contains(segs[:i], sg) {
			try(ix.byAnySeg[sg])
		}
	}
	try(ix.rest)
	return found
}
