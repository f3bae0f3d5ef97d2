//go:build unix

package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hostile cases' costs, which the README's reliability notes quote. B/op is everything a
// collection or decision allocates, so it bounds the heap it adds.

// BenchmarkHostileSelfLinks collects a rules folder holding five links to itself (the walk was
// exponential: it did not end within a minute).
func BenchmarkHostileSelfLinks(b *testing.B) {
	dir := oldTree(b, map[string]string{".clinerules/z.md": "Z.\n", ".clinerules/sub/b.md": "B.\n"})
	for i := range 5 {
		if err := os.Symlink(".", filepath.Join(dir, ".clinerules", fmt.Sprintf("self%d", i))); err != nil {
			b.Skip("symlinks unsupported:", err)
		}
	}
	ws := Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir)}}}
	b.ReportAllocs()
	for b.Loop() {
		if files, err := Collect(ws); err != nil || len(files) != 7 { // 2 rules, 5 loops
			b.Fatalf("%d files, %v", len(files), err)
		}
	}
}

// BenchmarkHostileEntries collects a workspace whose rules folder holds 20,000 entries and more:
// the walk stops at MaxWalkEntries.
func BenchmarkHostileEntries(b *testing.B) {
	dir := b.TempDir()
	notes := filepath.Join(dir, ".cursor", "rules", "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range MaxWalkEntries + 100 {
		if err := os.WriteFile(filepath.Join(notes, fmt.Sprintf("n%05d.txt", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ws := Workspace{Roots: []Root{{Name: "/ws", FS: os.DirFS(dir)}}}
	b.ReportAllocs()
	for b.Loop() {
		if files, err := Collect(ws); err != nil || len(files) != 2 { // two walk limits
			b.Fatalf("%d files, %v", len(files), err)
		}
	}
}

// hostileBraces is a 40 KB paths pattern of nested brace groups.
var hostileBraces = strings.Repeat("{a,", 10000) + "b" + strings.Repeat("}", 10000)

// boundedBraces is a pattern at every bound but length: nested 4 deep, 252 alternatives.
const boundedBraces = "**/{aa,bb,cc,{dd,{ee,{ff,gg}}}}/*.{x,y,z,w}/{1,2,3,4,5,6,7,8,9}*"

// BenchmarkHostilePattern loads 50 rules, one of them a hostile or a bounded pattern, with a new
// Loader each time (so the pattern is compiled each time), and evaluates them against 100
// context paths never seen before (so no match is remembered).
func BenchmarkHostilePattern(b *testing.B) {
	long := "src/" + strings.Repeat("{a,b}", (MaxPatternLength-len("src/"))/len("{a,b}")) // 1,024 bytes, expanding past the bound
	for _, tc := range []struct{ name, pattern string }{
		{"none", ""},
		{"nested_40KB", hostileBraces},
		{"bounded", boundedBraces},
		{"longest", strings.Repeat("x", MaxPatternLength-len("/**")) + "/**"},
		{"long_expanding", long},
	} {
		files := benchFiles(50)
		if tc.pattern != "" {
			files[0].Content = []byte("---\npaths: [\"" + tc.pattern + "\"]\n---\nHostile.\n")
		}
		b.Run(tc.name+"/load", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = NewLoader(0).Load(files)
			}
		})
		b.Run(tc.name+"/evaluate", func(b *testing.B) {
			rs := NewLoader(0).Load(files)
			ctxs := make([]EvaluationContext, 512)
			for i := range ctxs {
				ctxs[i] = benchContext()
				for j := range ctxs[i].Paths {
					ctxs[i].Paths[j].Path = fmt.Sprintf("aa/v%d/%s", i, ctxs[i].Paths[j].Path)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_ = rs.Evaluate(ctxs[i%len(ctxs)], nil)
				i++
			}
		})
	}
}
