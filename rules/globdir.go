package rules

import (
	"math/bits"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// maxBelowSegments bounds the pattern segments the directory test handles (its states are
// bits of a uint64).
const maxBelowSegments = 62

// MatchBelow reports whether the pattern could match some path strictly below the directory
// dir ("apps/web/" for "add a page under apps/web"), which Cline's matcher misses.
//
// The test walks the pattern's segments against the directory's segments as a small NFA
// ("**" consumes any number of segments, any other segment consumes one it matches) and
// succeeds when the whole directory is consumed with pattern segments left over for the part
// below. It is sound: every "yes" names a path below dir that the pattern matches, since any
// non-empty remainder of a valid pattern matches some path. To keep a directory from waking
// every "**/*.ext" rule, the directory must also consume at least one segment that is not a
// bare wildcard ("*" or "**"): "apps/web/**/*.tsx" and "**/web/**" point into apps/web/,
// "**/*.tsx" does not. Patterns with a brace group spanning a "/" are left out (no answer
// rather than a guess), as are negated, literal-only and never-matching patterns.
func (p *Pattern) MatchBelow(dir string) bool {
	c := prepareCandidate(dir)
	if !c.isDir || c.stripped == "" || c.dotSeg {
		return false
	}
	return p.matchBelow(&c)
}

func (p *Pattern) matchBelow(c *candidate) bool {
	if p.never || p.literalOnly || p.negate || c.dotSeg || len(c.segs) == 0 {
		return false
	}
	for i, segs := range p.segments {
		bi := &p.below[i]
		if segs == nil || !bi.ok || !bi.mayAnchor(c.segs) {
			continue
		}
		// Quick reject: the directory and the pattern's literal prefix must lie on one line.
		if pre := p.prefixes[i]; pre != "" && !onOneLine(c.stripped, pre) {
			continue
		}
		if belowSegments(segs, bi.stars, c.segs) {
			return true
		}
	}
	return false
}

// belowAny reports whether some alternative could match below a directory at all.
func (p *Pattern) belowAny() bool {
	if p.never || p.literalOnly || p.negate {
		return false
	}
	for _, segs := range p.segments {
		if segs != nil && canAnchorBelow(segs) {
			return true
		}
	}
	return false
}

// canAnchorBelow reports whether some segment before the last is neither "*" nor "**": a
// directory can anchor the pattern only by consuming such a segment.
func canAnchorBelow(segs []segment) bool {
	for _, s := range segs[:len(segs)-1] {
		if s.text != "*" && s.text != "**" {
			return true
		}
	}
	return false
}

// onOneLine reports whether one of two slash paths is the other or a folder above it.
func onOneLine(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return strings.HasPrefix(b, a) && (len(a) == len(b) || b[len(a)] == '/')
}

// belowSegments runs the NFA. Bit j of free (anchored) is set when the walk can be at
// pattern position j without (with) having consumed a non-wildcard segment.
func belowSegments(pat []segment, stars uint64, dir []string) bool {
	n := len(pat)
	var free, anch uint64 = 1, 0
	free, anch = closure(stars, free), closure(stars, anch)
	for _, d := range dir {
		var nf, na uint64
		for j := 0; j < n; j++ {
			bit := uint64(1) << j
			if (free|anch)&bit == 0 {
				continue
			}
			seg := pat[j]
			if seg.text == "**" {
				nf |= free & bit
				na |= anch & bit
				continue
			}
			if !segmentMatch(seg, d) {
				continue
			}
			if seg.text == "*" {
				nf |= (free & bit) << 1
				na |= (anch & bit) << 1
			} else {
				na |= bit << 1
			}
		}
		free, anch = closure(stars, nf), closure(stars, na)
		if free|anch == 0 {
			return false
		}
	}
	// Something must remain below: a position before the end that is not just the empty
	// segment of a trailing "/".
	rest := uint64(1)<<n - 1
	if n > 0 && pat[n-1].text == "" {
		rest &^= uint64(1) << (n - 1)
	}
	return anch&rest != 0
}

func segmentMatch(seg segment, name string) bool {
	if seg.literal {
		return seg.text == name
	}
	return doublestar.MatchUnvalidated(seg.text, name)
}

// closure lets a "**" match zero segments: a state on a "**" also stands after it, in
// ascending order so that runs of "**" chain.
func closure(stars, st uint64) uint64 {
	for m := stars; m != 0; m &= m - 1 {
		j := bits.TrailingZeros64(m)
		if st&(uint64(1)<<j) != 0 {
			st |= uint64(1) << (j + 1)
		}
	}
	return st
}

// belowInfo is precomputed for the directory test of one alternative.
type belowInfo struct {
	ok    bool     // some segment before the last can anchor (see canAnchorBelow)
	stars uint64   // bit j set when segment j is "**"
	lits  []string // when every anchoring segment is literal: their texts (a quick reject)
}

func newBelowInfo(segs []segment) belowInfo {
	var bi belowInfo
	if segs == nil {
		return bi
	}
	bi.ok = canAnchorBelow(segs)
	allLit := true
	for j, s := range segs {
		if s.text == "**" {
			bi.stars |= uint64(1) << j
		}
		if j < len(segs)-1 && s.text != "*" && s.text != "**" {
			if !s.literal {
				allLit = false
			}
			bi.lits = append(bi.lits, s.text)
		}
	}
	if !allLit {
		bi.lits = nil
	}
	return bi
}

// mayAnchor reports whether the directory holds a segment that could anchor the pattern.
func (bi *belowInfo) mayAnchor(dir []string) bool {
	if bi.lits == nil {
		return true
	}
	for _, d := range dir {
		for _, l := range bi.lits {
			if d == l {
				return true
			}
		}
	}
	return false
}
