package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// lintBenchTree writes a workspace of n rule files (the shapes of benchFiles) and a source
// tree of files files, half of the rules' patterns matching none of them, plus a node_modules
// folder of a fifth of that, which the listing does not enter.
func lintBenchTree(b *testing.B, n, files int) string {
	b.Helper()
	dir := b.TempDir()
	write := func(p string, data []byte) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, f := range benchFiles(n) {
		write(f.Path, f.Content)
	}
	for i := range files {
		var p string
		switch i % 4 {
		case 0:
			p = fmt.Sprintf("src/mod%d/file%d.ts", (i/4)%(n/2), i)
		case 1:
			p = fmt.Sprintf("packages/p%d/src/deep/file%d.ts", (i/4)%200, i)
		case 2:
			p = fmt.Sprintf("apps/a%d/src/C%d.tsx", (i/4)%100, i)
		case 3:
			p = fmt.Sprintf("docs/guide/g%d/page%d.md", i%50, i)
		}
		write(p, []byte("x"))
		if i%5 == 0 {
			write(fmt.Sprintf("node_modules/pkg%d/f%d.js", i%300, i), []byte("x"))
		}
	}
	return dir
}

// BenchmarkLint lints a workspace of 1,000 rule files and 10,000 other files on disk (plus
// 2,000 in node_modules): discovery, a cold parse of every rule, the listing and the
// findings, as one run of `replay lint` does. Most rules match nothing, so the listing runs
// to the end.
func BenchmarkLint(b *testing.B) {
	dir := lintBenchTree(b, 1000, 10_000)
	ws := Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir)}}}
	var rep LintReport
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if rep, err = Lint(ws, LintOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	if rep.Rules != 1000 || !rep.Complete {
		b.Fatalf("%d rules, complete %v; want 1000, true", rep.Rules, rep.Complete)
	}
	b.ReportMetric(float64(rep.Listed), "entries")
	b.ReportMetric(float64(len(rep.Findings)), "findings")
}
