package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestLintSamples lints the real rule files, each repository's files together in one
// workspace at the places their tools read them (a second workspace of the repository takes a
// file whose place is taken), and writes every finding and the counts by kind to
// testdata/lint_samples.golden, reviewed by hand (-update rewrites it). The workspaces hold the
// rule files only, not the repositories' other files, so never-applicable there says only that
// a rule's patterns match none of the rule files. It skips with one line when the samples are
// absent.
func TestLintSamples(t *testing.T) {
	dir, samples := readSamples(t)
	type workspace struct {
		name string
		fs   fstest.MapFS
	}
	var order []string
	byName := map[string]*workspace{}
	for _, s := range samples {
		data, err := os.ReadFile(filepath.Join(dir, s.kind, s.local))
		if err != nil {
			t.Fatalf("%s: %v", s.local, err)
		}
		_, p := placeSample(s)
		for n := 1; ; n++ {
			name := fmt.Sprintf("/%s#%d", s.repo, n)
			w, ok := byName[name]
			if !ok {
				w = &workspace{name: name, fs: fstest.MapFS{}}
				byName[name] = w
				order = append(order, name)
			}
			if _, taken := w.fs[p]; !taken {
				w.fs[p] = &fstest.MapFile{Data: data}
				break
			}
		}
	}
	slices.Sort(order)
	var sb strings.Builder
	counts := map[FindingKind]int{}
	severities := map[Severity]int{}
	rules, files := 0, 0
	for _, name := range order {
		w := byName[name]
		files += len(w.fs)
		rep, err := Lint(Workspace{Roots: []Root{{Name: name, FS: w.fs}}}, LintOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rules += rep.Rules
		for _, f := range rep.Findings {
			counts[f.Kind]++
			severities[f.Severity]++
			fmt.Fprintln(&sb, f.String())
		}
	}
	fmt.Fprintf(&sb, "\nfiles=%d workspaces=%d rules=%d\n", files, len(order), rules)
	var kinds []string
	for k := range counts {
		kinds = append(kinds, string(k))
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		fmt.Fprintf(&sb, "kind %s=%d\n", k, counts[FindingKind(k)])
	}
	for _, s := range []Severity{SeverityError, SeverityWarning, SeverityInfo} {
		fmt.Fprintf(&sb, "severity %s=%d\n", s, severities[s])
	}
	if files != len(samples) || rules != len(samples) {
		t.Errorf("%d samples placed as %d files, %d rules", len(samples), files, rules)
	}
	checkGolden(t, "testdata/lint_samples.golden", sb.String())
}
