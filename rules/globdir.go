package rules

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

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
	c.segs = strings.Split(c.stripped, "/")
	return p.matchBelow(&c)
}

func (p *Pattern) matchBelow(c *candidate) bool {
	if p.never || p.literalOnly || p.negate {
		return false
	}
	for _, segs := range p.segments {
		if segs != nil && belowSegments(segs, c.segs) {
			return true
		}
	}
	return false
}

// belowSegments runs the NFA. A state is a pattern position and whether a non-wildcard
// segment has been consumed (anchored).
func belowSegments(pat, dir []string) bool {
	n := len(pat)
	// states[j*2+a]: at pattern position j, anchored a.
	cur := make([]bool, 2*(n+1))
	next := make([]bool, 2*(n+1))
	cur[0] = true
	closure(pat, cur)
	for _, d := range dir {
		clear(next)
		any := false
		for j := 0; j < n; j++ {
			for a := 0; a < 2; a++ {
				if !cur[j*2+a] {
					continue
				}
				seg := pat[j]
				switch {
				case seg == "**":
					next[j*2+a] = true
					any = true
				case doublestar.MatchUnvalidated(seg, d):
					na := a
					if seg != "*" {
						na = 1
					}
					next[(j+1)*2+na] = true
					any = true
				}
			}
		}
		if !any {
			return false
		}
		closure(pat, next)
		cur, next = next, cur
	}
	for j := 0; j < n; j++ {
		if cur[j*2+1] && !(j == n-1 && pat[j] == "") {
			return true
		}
	}
	return false
}

// closure lets a "**" match zero segments.
func closure(pat []string, st []bool) {
	for j := 0; j < len(pat); j++ {
		if pat[j] != "**" {
			continue
		}
		for a := 0; a < 2; a++ {
			if st[j*2+a] {
				st[(j+1)*2+a] = true
			}
		}
	}
}
