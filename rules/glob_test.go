package rules

import (
	"slices"
	"testing"
)

// Every row of GLOBS.md, in both directions (a path that must match, one that must not),
// plus the matching cases of Cline's plan (§9.1) and tests.
func TestPatternMatch(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
		why           string
	}{
		// Cline plan §9.1 and rule-conditionals.test.ts.
		{"src/index.ts", "src/index.ts", true, "exact file match"},
		{"src/index.ts", "src/index.tsx", false, "exact file match"},
		{"src/**", "src/index.ts", true, "globstar"},
		{"src/**", "apps/src/index.ts", false, "globstar is anchored"},
		{"apps/**", "src/index.ts", false, "other folder"},
		{"src/*.ts", "src/a.ts", true, "star"},
		{"src/*.ts", "src/a/b.ts", false, "star stays in one segment"},
		{"src/**", `src\components\Button.tsx`, true, "windows candidate folded to POSIX"},
		{"apps/web/**", "apps/web/src/App.tsx", true, "plan example"},
		{"packages/*/src/**", "packages/foo/src/a.ts", true, "plan example"},
		{"packages/*/src/**", "packages/foo/lib/a.ts", false, "plan example"},
		// Issue examples.
		{"src/**", "src", true, "dir/** matches dir"},
		{"src/**", "src/", true, "dir/** matches dir/"},
		{"**/*.yml", ".github/workflows/ci.yml", true, "dot: true"},
		{"**/*.yml", ".github/workflows/ci.yaml", false, "dot: true"},
		{"*", ".env", true, "dot: true for *"},
		{"**/Makefile", "Makefile", true, "**/ matches no folder"},
		{"**/Makefile", "lib/Makefile", true, "**/ matches folders"},
		{"**/Makefile", "lib/Makefile.am", false, "**/ then a literal"},
		// GLOBS: replicate.
		{" src/** ", `src\a.ts`, true, "trim the pattern; fold backslashes"},
		{" src/** ", "lib/a.ts", false, "trim the pattern"},
		{"./src/**", "src/a.ts", true, "leading ./ dropped"},
		{"././src/**", "src/a.ts", true, "leading ./ dropped repeatedly"},
		{"./src/**", "lib/a.ts", false, "leading ./ dropped"},
		{"src/[id]/page.tsx", "src/[id]/page.tsx", true, "equal pattern matches"},
		{"src/[id]/page.tsx", "src/[ix]/page.tsx", false, "equal pattern matches"},
		{"app/[locale]/**", "app/[locale]/x.tsx", true, "[body] as literal"},
		{"app/[locale]/**", "app/l/x.tsx", true, "[body] as one character"},
		{"app/[locale]/**", "app/x/x.tsx", false, "[body] as one character"},
		{"app/[locale]/**", "app/locale/x.tsx", false, "[body] is not its letters"},
		{"src/**", "src/../secret.ts", false, "wildcards never match .."},
		{"src/**", "src/lib/secret.ts", true, "wildcards match normal segments"},
		{"**/*.ts", "./src/a.ts", false, "wildcards never match ."},
		{"**/*.ts", "src/a.ts", true, "normalized evidence matches"},
		{"*", "apps/", true, "trailing / accepted after a final *"},
		{"scripts/modules/*", "scripts/modules/x/", true, "trailing / accepted after a final *"},
		{"scripts/modules/*", "scripts/other/x/", false, "trailing / accepted after a final *"},
		{"app/[ab]", "app/a/", true, "trailing / accepted after a final ]"},
		{"a/b", "a/b/", false, "no trailing / after a literal"},
		{"src/**/", "src", false, "pattern ending in / needs a / candidate"},
		{"src/**/", "src/", true, "pattern ending in / matches a / candidate"},
		{"src/**/", "src/a/", true, "pattern ending in / matches a / candidate"},
		{"**/*.{ts}", "a.{ts}", true, "single-item braces are literal"},
		{"**/*.{ts}", "a.ts", false, "single-item braces are literal"},
		{"**/*.{ts,tsx}", "a.tsx", true, "braces with a comma alternate"},
		{"**/*.{ts,tsx}", "a.js", false, "braces with a comma alternate"},
		{"**.go", "pkg/x/y.go", true, "leading **.ext at any depth"},
		{"**.go", "y.go", true, "leading **.ext at the root"},
		{"**.go", "pkg/x/y.rs", false, "leading **.ext"},
		{"!src/**", "docs/a.md", true, "negation"},
		{"!src/**", "src/a.md", false, "negation"},
		{"!!src/**", "src/a.md", true, "even ! count is no negation"},
		// GLOBS: do not replicate.
		{"[!a]", "b", true, "[!a] is negation"},
		{"[!a]", "!", true, "[!a] is negation, ! is not a"},
		{"[!a]", "a", false, "[!a] is negation"},
		{"app/(group)/x", "app/(group)/x", true, "parentheses are literal"},
		{"app/(group)/page/*", "app/(group)/page/a.tsx", true, "parentheses are literal"},
		{"app/(group)/x", "app/group/x", false, "parentheses are not a group"},
		{"+(a|b)", "a", false, "extglobs unsupported"},
		{"+(a|b)", "+(a|b)", true, "unsupported patterns match literally"},
		{"{1..3}", "2", false, "ranges unsupported"},
		{"[[:alpha:]]", "a", false, "POSIX classes unsupported"},
		{"src/[", "src/[", true, "unbalanced [ matches only literally"},
		{"src/[", "src/a", false, "unbalanced [ is invalid"},
		{"src/{a", "src/{a", true, "unbalanced { matches only literally"},
		{"?.ts", "é.ts", true, "? matches one rune"},
		{"?.ts", "😀.ts", true, "? matches one rune, emoji included"},
		{"??.ts", "😀.ts", false, "? matches one rune, not a UTF-16 unit"},
		{`src\docs\a.md`, "src/docs/a.md", false, "backslash escapes, not a separator"},
		{`src\*`, "src*", true, "backslash escapes"},
		// GLOBS: * is any run of characters within a segment, whatever their Unicode.
		{"*.md", "🎉.md", true, "* over an astral-plane character"},
		{"docs/*.md", "docs/a🎉b.md", true, "* over text around an emoji"},
		{"docs/*.md", "docs/🎉/a.md", false, "* stays within one segment"},
		{"notes/*", "notes/x\u0307y.md", true, "* over a combining mark that composes with nothing"},
		{"notes/*y.md", "notes/e\u0301y.md", true, "* over a decomposed accent (compared in NFC)"},
		{"a*b", "a\U0001F600\u0301b", true, "* over an emoji followed by a combining mark"},
		{"a*b", "a\U0001F600/b", false, "* never crosses a /"},
		// GLOBS: ** that is not a whole segment is *, within one segment.
		{"**a", "xa", true, "**a is *a"},
		{"**a", "a", true, "**a is *a, which matches a"},
		{"**a", "b/xa", false, "**a stays within one segment"},
		{"a**", "ab", true, "a** is a*"},
		{"a**", "ab/c", false, "a** stays within one segment"},
		{"src/a**/x.ts", "src/abc/x.ts", true, "a** inside a path is a*"},
		{"src/a**/x.ts", "src/abc/d/x.ts", false, "a** inside a path crosses no /"},
		{"src/**b.ts", "src/ab.ts", true, "**b.ts after a / is *b.ts"},
		{"src/**b.ts", "src/a/ab.ts", false, "**b.ts after a / stays within one segment"},
		// "!pat" negates the whole pattern (GLOBS.md), after the leading "./" of pat is dropped
		// and when pat can never match; as picomatch 4.0.4 answers (picomatch(pattern, {dot:
		// true})), but for the extglob, which GLOBS.md reads literally.
		{"!./src/**", "src/a.ts", false, "negated, ./ dropped"},
		{"!./src/**", "docs/a.md", true, "negated, ./ dropped"},
		{"!././src/**", "src/a.ts", false, "negated, every ./ dropped"},
		{"!/abs/**", "docs/a.md", true, "the negation of what cannot match matches everything"},
		{"!/abs/**", "src/a.ts", true, "the negation of what cannot match matches everything"},
		{"!../x/**", "docs/a.md", true, "the negation of what cannot match matches everything"},
		{"!src/[", "docs/a.md", true, "negated literal-only pattern"},
		{"!+(a|b)", "docs/a.md", true, "negated literal-only pattern"},
		{"!+(a|b)", "+(a|b)", false, "literal only: the negation excludes that spelling alone"},
		// Never.
		{"/abs/**", "docs/a.md", false, "absolute never matches"},
		{"/src/**", "src/a.ts", false, "absolute never matches"},
		{"../x/**", "x/a", false, ".. never matches"},
		{"", "a", false, "empty never matches"},
	}
	for _, tt := range tests {
		if got := CompilePattern(tt.pattern).Match(tt.path); got != tt.want {
			t.Errorf("%q vs %q = %v, want %v (%s)", tt.pattern, tt.path, got, tt.want, tt.why)
		}
	}
}

func TestPatternDiagnostics(t *testing.T) {
	tests := []struct {
		pattern string
		codes   []string
	}{
		{"src/**", nil},
		{"", []string{DiagEmptyPattern}},
		{"/abs/**", []string{DiagNeverMatches}},
		{"C:\\src\\**", []string{DiagNeverMatches}},
		{"src/../x", []string{DiagNeverMatches}},
		{"!src/**", []string{DiagNegated}},
		{"+(a|b)", []string{DiagUnsupported}},
		{"!(a)", []string{DiagUnsupported}},
		{"{1..3}", []string{DiagUnsupported}},
		{"[[:alpha:]]", []string{DiagUnsupported}},
		{"src/[", []string{DiagBadGlob}},
		{`src\docs\a.md`, []string{DiagWindowsPath}},
	}
	for _, tt := range tests {
		var got []string
		for _, p := range CompilePattern(tt.pattern).problems {
			got = append(got, p.Code)
		}
		if !slices.Equal(got, tt.codes) {
			t.Errorf("%q: codes %v, want %v", tt.pattern, got, tt.codes)
		}
	}
}

func TestMatchBelow(t *testing.T) {
	tests := []struct {
		pattern, dir string
		want         bool
	}{
		{"apps/web/**/*.tsx", "apps/web/", true},
		{"apps/web/**/*.tsx", "apps/", true},
		{"apps/web/**/*.tsx", "apps/api/", false},
		{"apps/web/**/*.tsx", "apps/web/src/deep/", true},
		{"apps/*/src/**", "apps/web/", true},
		{"packages/*/src/**", "packages/", true},
		{"**/web/**", "apps/web/", true},
		{"**/*.tsx", "apps/web/", false}, // not anchored: a directory does not wake every extension rule
		{"*/src/**", "apps/", false},     // a bare * alone does not anchor
		{"apps/web/page.tsx", "apps/web/", true},
		{"apps/web", "apps/web/", false}, // nothing below: the pattern names the dir itself
		{"apps/web/**", "apps/", true},
		{"!apps/**", "apps/", false},
		{"{apps/web,libs}/x.ts", "apps/", false}, // brace spans a separator: no answer
		{"apps/web/**/*.tsx", "apps/web", false}, // not a directory candidate
		{"app/[locale]/**", "app/[locale]/", true},
		{"a/**/**/b/*.ts", "a/x/b/", true},
		{"a/**/**/b/*.ts", "a/", true},
		{"**/**/web/*.ts", "x/y/web/", true},
		{"**/web/*.ts", "x/y/", false},
		{"src/*/[ab]/*.ts", "src/x/", true},
		{"*/[ab]/*.ts", "x/", false}, // a bare * does not anchor
	}
	for _, tt := range tests {
		if got := CompilePattern(tt.pattern).MatchBelow(tt.dir); got != tt.want {
			t.Errorf("MatchBelow(%q, %q) = %v, want %v", tt.pattern, tt.dir, got, tt.want)
		}
	}
}

// A rule whose only pattern is the negation of one that cannot match applies to every path
// (the patterns themselves are rows of TestPatternMatch).
func TestNegationOfWhatCannotMatchApplies(t *testing.T) {
	rs := Load([]File{{Provider: ProviderClaude, Scope: ScopeWorkspace, Root: "/ws", Path: ".claude/rules/r.md",
		Content: []byte("---\npaths: [\"!/abs/**\"]\n---\nbody\n")}})
	d := rs.Evaluate(EvaluationContext{Paths: []ContextPath{{Path: "docs/a.md"}}}, nil)
	if len(d.Results) != 1 || !d.Results[0].Included {
		t.Errorf("a rule of \"!/abs/**\" on docs/a.md: %+v, want it included", d.Results)
	}
}
