package rules

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseFrontmatter: no input panics the parser or the loader, every file becomes one
// rule, and evaluation is deterministic.
func FuzzParseFrontmatter(f *testing.F) {
	for _, s := range []string{
		"Just text", "---\npaths:\n  - \"src/**\"\n---\n\nHello", "---\npaths: [invalid\n---\nBody",
		"---\nglobs: *.ts,*.tsx\nalwaysApply: false\n---\nB", "\ufeff\r\n---\r\na: 1\r\n---\r\nB",
		"---\n" + laughs() + "---\nB", "---\na: !!binary aGVsbG8=\nb: &x [1]\nc: *x\n---\n",
		"---\ntrigger: glob\nglobs:\n  - a\n  -\n---\n", "---\ncondition: \"(\"\n---\nx",
		"  ---\npaths: [**/*.ts]\n---foo\nbody", "---\npaths:\n\t- a\n... # end\nb: 1\n---\nx", "\u0085\n---\na: 1\n---\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fm := ParseFrontmatter(s)
		if fm.Failed && fm.Body != normalizeText(s) {
			t.Fatalf("a failed parse must keep the whole file as the body")
		}
		text := normalizeText(s)
		cl := clineRejects(fm, text)
		if cl.Failed && cl.Body != text {
			t.Fatalf("a file Cline fails open must keep the whole file as the body")
		}
		if cl.Failed && len(cl.Problems) == 0 {
			t.Fatalf("a file Cline fails open must say why")
		}
		if lines := strings.Count(text, "\n") + 1; cl.Present && (cl.BodyLine < 1 || cl.BodyLine > lines+1) {
			t.Fatalf("Cline's body starts at line %d of a file of %d lines", cl.BodyLine, lines)
		}
		for _, provider := range []Provider{ProviderCursor, ProviderCline, ProviderWindsurf, ProviderTasklog} {
			files := []File{{Provider: provider, Scope: ScopeWorkspace, Path: ".x/r.md", Content: []byte(s)}}
			rs := Load(files)
			if len(rs.Rules()) != 1 {
				t.Fatalf("%d rules from one file", len(rs.Rules()))
			}
			ctx := ctxPaths("src/a.ts", "apps/web/")
			a, _ := json.Marshal(rs.Evaluate(ctx, nil))
			b, _ := json.Marshal(Load(files).Evaluate(ctx, nil))
			if !bytes.Equal(a, b) {
				t.Fatalf("nondeterministic decision")
			}
		}
	})
}

// FuzzGlob: no pattern or path panics, and the indexed evaluation agrees with matching the
// pattern against the path directly.
func FuzzGlob(f *testing.F) {
	for _, c := range [][2]string{
		{"src/**", "src/a.ts"}, {"**/*.{ts,tsx}", "a/b.tsx"}, {"app/[locale]/**", "app/l/x"},
		{"!src/**", "docs/a"}, {"**.go", "a/b.go"}, {"apps/web/**/*.tsx", "apps/web/"},
		{"{a,b/c}/**", "b/c/d"}, {"[", "["}, {"*", "apps/"}, {"src/**/", "src/"}, {"x/**/y/*.z", "x/"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if strings.ContainsAny(pattern, "\n\r\"\\") || strings.ContainsAny(path, "\n\r") || !utf8.ValidString(pattern) {
			return // the pattern is embedded in a YAML file below, which Load reads as UTF-8
		}
		p := CompilePattern(pattern)
		c := prepareCandidate(path)
		want := p.match(&c) || (c.isDir && p.matchBelow(&c))
		rs := Load([]File{{Provider: ProviderCline, Scope: ScopeWorkspace, Path: ".clinerules/r.md",
			Content: []byte("---\npaths: [\"" + pattern + "\"]\n---\nB")}})
		r := rs.Rules()[0]
		if len(r.Conditions) != 1 || len(r.Conditions[0].patterns) != 1 {
			return // the pattern did not survive YAML or was dropped as empty
		}
		got := rs.Evaluate(EvaluationContext{Paths: []ContextPath{{Path: path}}}, nil).Results[0]
		if path == "" {
			return
		}
		if got.Included != want {
			t.Fatalf("pattern %q path %q: index says %v (%s), direct match says %v", pattern, path, got.Included, got.Reason, want)
		}
	})
}
