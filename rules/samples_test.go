package rules

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	testsamples "github.com/tasklog/tasklog/session/replaytest/samples"
)

// samplesDir is the real samples folder joined with elem; the test skips with one line when it
// is missing.
func samplesDir(t *testing.T, elem ...string) string {
	t.Helper()
	return testsamples.Dir(t, elem...)
}

type sample struct {
	kind, repo, origPath, local string
}

func readSamples(t *testing.T) (string, []sample) {
	t.Helper()
	dir := samplesDir(t, "rules")
	fh, err := os.Open(filepath.Join(dir, "SOURCES.tsv"))
	if err != nil {
		t.Fatalf("rule samples: %v", err)
	}
	defer fh.Close()
	var out []sample
	sc := bufio.NewScanner(fh)
	for first := true; sc.Scan(); first = false {
		cols := strings.Split(sc.Text(), "\t")
		if first || len(cols) < 5 {
			continue
		}
		out = append(out, sample{kind: cols[0], repo: cols[1], origPath: cols[2], local: cols[4]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b sample) int { return strings.Compare(a.kind+"/"+a.local, b.kind+"/"+b.local) })
	return dir, out
}

// placeSample puts a sample where its tool reads it: its own path when that is a rules
// location already, else the tool's rules folder.
func placeSample(s sample) (provider Provider, p string) {
	orig := s.origPath
	inside := func(marker string) (string, bool) {
		if i := strings.Index(orig, marker); i >= 0 && (i == 0 || orig[i-1] == '/') {
			return orig[i:], true
		}
		return "", false
	}
	base := path.Base(orig)
	switch s.kind {
	case "cursor-mdc":
		if q, ok := inside(".cursor/rules/"); ok {
			return ProviderCursor, q
		}
		return ProviderCursor, ".cursor/rules/" + base
	case "cursorrules-legacy":
		return ProviderCursor, ".cursorrules"
	case "windsurf":
		if q, ok := inside(".windsurf/rules/"); ok {
			return ProviderWindsurf, q
		}
		if base == ".windsurfrules" {
			return ProviderWindsurf, base
		}
		return ProviderWindsurf, ".windsurf/rules/" + base
	case "claude-rules":
		if q, ok := inside(".claude/rules/"); ok {
			return ProviderClaude, q
		}
		return ProviderClaude, orig // CLAUDE.md, at the root or in a subfolder
	case "clinerules":
		if q, ok := inside(".clinerules/"); ok {
			return ProviderCline, q
		}
		return ProviderCline, ".clinerules/" + base
	case "copilot-instructions":
		if base == "copilot-instructions.md" {
			return ProviderCopilot, ".github/copilot-instructions.md"
		}
		return ProviderCopilot, ".github/instructions/" + base
	case "agents-md":
		return ProviderAgents, orig
	}
	return "", ""
}

// TestSamples loads every real rule file: each must become exactly one rule, usable or
// reported unusable with a diagnostic saying why, and none may panic. The golden summary
// (testdata/samples.golden) was reviewed by hand; what was checked:
//   - every Cursor .mdc with unquoted globs ("globs: **/*.sql, ...", "globs: *.py, **/*.py",
//     "globs: **/*.{ts,tsx,...}") is scoped with the comma-split patterns, braces kept whole,
//     and carries not_strict_yaml/unquoted_star, never parse_error;
//   - Cursor files with empty description/globs and alwaysApply: false are manual, with a
//     description only on_request, with alwaysApply: true always (globs then ignored_key);
//   - Windsurf trigger values map to always/on_request/scoped ("trigger: glob" with a block
//     list), and the taskmaster files copied from Cursor (no trigger) read the Cursor keys;
//   - .clinerules from cline/prompts with globs: ["*"] stay always-on, as in Cline, with a
//     foreign_key warning; the one with paths: is scoped; the file whose metadata lost its
//     fences is a plain rule with no_delimiters;
//   - .claude/rules with globs: (EduPod) stay always-on with foreign_key; subfolder CLAUDE.md
//     and AGENTS.md files are scoped to their folder;
//   - Copilot applyTo comma strings are split; copilot-instructions.md is always-on, and so
//     is an instructions file with applyTo: "**" (every request, as VS Code reads it);
//   - the legacy .cursorrules with frontmatter is always-on and keeps the whole text as its
//     body, --- block included, with legacy_frontmatter (its keys are not read).
func TestSamples(t *testing.T) {
	dir, samples := readSamples(t)
	var sb strings.Builder
	counts := map[string]int{}
	categories := map[Category]int{}
	rules := 0
	for _, s := range samples {
		data, err := os.ReadFile(filepath.Join(dir, s.kind, s.local))
		if err != nil {
			t.Errorf("%s: %v", s.local, err)
			continue
		}
		provider, p := placeSample(s)
		rs := Load([]File{{Provider: provider, Scope: ScopeWorkspace, Root: "/ws", Path: p, Content: data}})
		got := rs.Rules()
		if len(got) != 1 {
			t.Errorf("%s: %d rules, want 1", s.local, len(got))
			continue
		}
		r := got[0]
		rules++
		categories[r.Category]++
		if r.Unusable != "" && len(r.Diagnostics) == 0 {
			t.Errorf("%s: unusable (%s) without a diagnostic", s.local, r.Unusable)
		}
		if (s.kind == "cursor-mdc" || s.kind == "windsurf") && hasCode(r.Diagnostics, DiagParseError) {
			t.Errorf("%s: Cursor/Windsurf frontmatter failed open: %v", s.local, r.Diagnostics)
		}
		_ = rs.Evaluate(ctxPaths("src/index.ts", "apps/web/"), nil) // must not panic
		var ds []string
		for _, d := range r.Diagnostics {
			counts[d.Code]++
			if d.Line > 0 {
				ds = append(ds, fmt.Sprintf("%s@%d", d.Code, d.Line))
			} else {
				ds = append(ds, d.Code)
			}
		}
		unusable := ""
		if r.Unusable != "" {
			unusable = " unusable=" + r.Unusable
		}
		fmt.Fprintf(&sb, "%s/%s\n\t%s %s name=%s %s%s patterns=%q body=%d\n\tdiagnostics=%s\n",
			s.kind, s.local, provider, p, r.Name, r.Category, unusable, r.Patterns(), len(r.Body), strings.Join(ds, " "))
	}
	fmt.Fprintf(&sb, "\nfiles=%d rules=%d\n", len(samples), rules)
	for _, c := range []Category{CategoryAlways, CategoryScoped, CategoryOnRequest, CategoryManual, CategoryStream} {
		fmt.Fprintf(&sb, "category %s=%d\n", c, categories[c])
	}
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&sb, "diagnostic %s=%d\n", k, counts[k])
	}
	if rules != len(samples) {
		t.Errorf("%d files gave %d rules", len(samples), rules)
	}
	checkGolden(t, "testdata/samples.golden", sb.String())
}
