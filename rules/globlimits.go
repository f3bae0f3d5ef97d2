package rules

import (
	"fmt"
	"strings"
)

// Bounds of one pattern, checked when it is compiled. A pattern past one of them gets a
// [DiagPatternLimit] diagnostic and never matches, so that matching one pattern against one
// path costs at most a bounded amount of work whatever a rule file holds. Real patterns are far
// inside them: the longest of the sample rules is 32 bytes, the most braces one group of six.
const (
	// MaxPatternLength is the longest pattern, in bytes after trimming.
	MaxPatternLength = 1024
	// MaxBraceDepth is the deepest nesting of brace groups: "{a,{b,c}}" nests 2 deep.
	MaxBraceDepth = 4
	// MaxBraceExpansion is the most alternatives a pattern's brace groups may stand for:
	// "{a,b}/{c,d,e}" stands for 6.
	MaxBraceExpansion = 256
)

// overLimit makes the pattern one that never matches, past a bound of its size.
func (p *Pattern) overLimit(why string) {
	p.never = true
	shown := p.trimmed
	if len(shown) > 60 {
		shown = strings.ToValidUTF8(shown[:60], "") + "…"
	}
	p.problem(SeverityWarning, DiagPatternLimit, fmt.Sprintf("%q %s; it never matches", shown, why))
}

// braceShape measures a valid doublestar pattern's brace groups in one pass: how deep they nest
// and how many alternatives they stand for (MaxBraceExpansion+1 standing for "more").
func braceShape(s string) (depth, expansions int) {
	type frame struct{ sum, outer int }
	var stack []frame
	prod := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			if end := strings.IndexByte(s[i+1:], ']'); end >= 0 {
				i += end + 1 // braces in a class are characters
			}
		case '{':
			stack = append(stack, frame{outer: prod})
			prod = 1
			depth = max(depth, len(stack))
		case ',':
			if n := len(stack); n > 0 {
				stack[n-1].sum = capExpansion(stack[n-1].sum + prod)
				prod = 1
			}
		case '}':
			if n := len(stack); n > 0 {
				f := stack[n-1]
				stack = stack[:n-1]
				prod = capExpansion(f.outer * capExpansion(f.sum+prod))
			}
		}
	}
	return depth, prod
}

// capExpansion saturates a count of alternatives just past the bound, so products stay small.
func capExpansion(n int) int { return min(n, MaxBraceExpansion+1) }

func expansionText(n int) string {
	if n > MaxBraceExpansion {
		return fmt.Sprintf("more than %d", MaxBraceExpansion)
	}
	return fmt.Sprint(n)
}
