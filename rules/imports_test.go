package rules

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestScanImports(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"@AGENTS.md", []string{"AGENTS.md"}},
		{"See @docs/a.md and @b/c.", []string{"docs/a.md", "b/c"}},
		{"Read @~/x.md, then @/ws/y.md;", []string{"~/x.md", "/ws/y.md"}},
		{"ask @alice or @here", nil}, // no "/" or ".": a person, not a file
		{"mail me@example.com", nil}, // "@" inside a word
		{"`@a.md` and ``x `@b.md` y`` then @c.md", []string{"c.md"}},
		{"an unclosed ` then @d.md", []string{"d.md"}}, // a lone backtick is text
		{"```\n@a.md\n```\n@b.md", []string{"b.md"}},
		{"~~~~md\n@a.md\n~~~\nstill fenced @x.md\n~~~~\n@b.md", []string{"b.md"}},
		{"    ```\n@a.md", []string{"a.md"}}, // indented four spaces: code, not a fence
		{"(@docs/a.md)", nil},                // "@" after "(": not at a word's start
		{"\t@tab.md", []string{"tab.md"}},
	}
	for _, tt := range tests {
		var got []string
		for _, r := range scanImports(tt.text) {
			got = append(got, r.path)
			if tt.text[r.start] != '@' {
				t.Errorf("%q: ref %q does not start at its @", tt.text, r.path)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("scanImports(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// collectLoad collects the root ws (and home) and loads the result.
func collectLoad(t *testing.T, ws, home fstest.MapFS) ([]File, *RuleSet) {
	t.Helper()
	w := Workspace{Roots: []Root{{Name: "/ws", FS: ws}}}
	if home != nil {
		w.Home = home
	}
	files, err := Collect(w)
	if err != nil {
		t.Fatal(err)
	}
	return files, Load(files)
}

func ruleByID(t *testing.T, rs *RuleSet, id string) *Rule {
	t.Helper()
	for _, r := range rs.Rules() {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no rule %s in %s", id, ruleIDs(rs))
	return nil
}

// A chain of imports is expanded up to MaxImportDepth hops; the next hop keeps its token with
// import_depth. Collect reads exactly the files the expansion uses.
func TestImportDepth(t *testing.T) {
	ws := fstest.MapFS{"CLAUDE.md": {Data: []byte("Start @c/f1.md")}}
	for i := 1; i <= MaxImportDepth+2; i++ {
		ws[fmt.Sprintf("c/f%d.md", i)] = &fstest.MapFile{Data: fmt.Appendf(nil, "hop %d @f%d.md", i, i+1)}
	}
	files, rs := collectLoad(t, ws, nil)
	r := ruleByID(t, rs, "claude:/ws/CLAUDE.md")
	want := "Start hop 1 hop 2 hop 3 hop 4 hop 5 @f6.md"
	if r.Body != want {
		t.Errorf("body %q, want %q", r.Body, want)
	}
	if !hasCode(r.Diagnostics, DiagImportDepth) {
		t.Errorf("no import_depth diagnostic: %v", r.Diagnostics)
	}
	var imported []string
	for _, f := range files {
		if f.Provider == ProviderImport {
			imported = append(imported, f.Path)
		}
	}
	if wantFiles := []string{"c/f1.md", "c/f2.md", "c/f3.md", "c/f4.md", "c/f5.md"}; !slices.Equal(imported, wantFiles) {
		t.Errorf("imported files %q, want %q", imported, wantFiles)
	}
	if len(r.Imports) != MaxImportDepth {
		t.Errorf("rule imports %q", r.Imports)
	}
}

// The files a rules snapshot records (here: through JSON, as an event holds them) re-load to
// the same expanded body: replay needs nothing but the snapshot. Without the imported files
// the import is a diagnostic, not a silent change.
func TestImportsReplayFromRecordedFiles(t *testing.T) {
	ws := fstest.MapFS{
		"CLAUDE.md":         {Data: []byte("@AGENTS.md\n\nAnd @docs/x.md")},
		"AGENTS.md":         {Data: []byte("Agents text.")},
		"docs/x.md":         {Data: []byte("X text.")},
		"pkg/CLAUDE.md":     {Data: []byte("Pkg: @../docs/x.md and @/ws/docs/x.md")},
		".claude/CLAUDE.md": {Data: []byte("Home-ish @~/style.md")},
	}
	home := fstest.MapFS{"style.md": {Data: []byte("Home style.")}}
	files, rs := collectLoad(t, ws, home)
	data, err := json.Marshal(files)
	if err != nil {
		t.Fatal(err)
	}
	var recorded []File
	if err := json.Unmarshal(data, &recorded); err != nil {
		t.Fatal(err)
	}
	again := Load(recorded)
	for id, want := range map[string]string{
		"claude:/ws/CLAUDE.md":         "Agents text.\n\nAnd X text.",
		"claude:/ws/pkg/CLAUDE.md":     "Pkg: X text. and X text.",
		"claude:/ws/.claude/CLAUDE.md": "Home-ish Home style.",
	} {
		for _, set := range []*RuleSet{rs, again} {
			if got := ruleByID(t, set, id).Body; got != want {
				t.Errorf("%s: body %q, want %q", id, got, want)
			}
		}
	}
	// A snapshot without the imported file: the token stays and says why.
	var partial []File
	for _, f := range recorded {
		if f.Path != "docs/x.md" {
			partial = append(partial, f)
		}
	}
	r := ruleByID(t, Load(partial), "claude:/ws/CLAUDE.md")
	if r.Body != "Agents text.\n\nAnd @docs/x.md" || !hasCode(r.Diagnostics, DiagImportMissing) {
		t.Errorf("without docs/x.md: body %q, diagnostics %v", r.Body, r.Diagnostics)
	}
}

// An AGENTS.md and a rules-folder file are not expanded; imports outside the root are
// diagnostics; an import of a folder is missing.
func TestImportsWhereNotExpanded(t *testing.T) {
	ws := fstest.MapFS{
		"AGENTS.md":             {Data: []byte("See @docs/x.md")},
		".claude/rules/r.md":    {Data: []byte("See @docs/x.md")},
		"docs/x.md":             {Data: []byte("X.")},
		"CLAUDE.md":             {Data: []byte("Up @../secret.md, abs @/etc/passwd.txt, dir @docs/.")},
		"docs/sub/keep.md":      {Data: []byte("k")},
		"node_modules/x/CLAUDE": {Data: []byte("n")},
	}
	files, rs := collectLoad(t, ws, nil)
	for _, f := range files {
		if f.Provider == ProviderImport {
			t.Errorf("read %s, which no CLAUDE.md imports", f.Path)
		}
	}
	for _, id := range []string{"agents:/ws/AGENTS.md", "claude:/ws/.claude/rules/r.md"} {
		if b := ruleByID(t, rs, id).Body; b != "See @docs/x.md" {
			t.Errorf("%s expanded: %q", id, b)
		}
	}
	r := ruleByID(t, rs, "claude:/ws/CLAUDE.md")
	n := 0
	for _, d := range r.Diagnostics {
		if d.Code == DiagImportMissing {
			n++
		}
	}
	if n != 3 || !strings.Contains(r.Body, "@../secret.md") {
		t.Errorf("want 3 import_missing, got %v; body %q", r.Diagnostics, r.Body)
	}
}

// BenchmarkLoadWithImports loads a CLAUDE.md that imports five files (one of them through
// another) among 50 rules: the expansion Load adds to every re-load of a changed snapshot.
func BenchmarkLoadWithImports(b *testing.B) {
	ws := fstest.MapFS{"CLAUDE.md": {Data: []byte("# Rules\n@docs/a.md\n@docs/b.md\n@docs/c.md\n@docs/d.md\n")}}
	for _, n := range []string{"a", "b", "c", "d"} {
		ws["docs/"+n+".md"] = &fstest.MapFile{Data: []byte(strings.Repeat("Text of "+n+". ", 200))}
	}
	ws["docs/d.md"] = &fstest.MapFile{Data: []byte("D then @e.md")}
	ws["docs/e.md"] = &fstest.MapFile{Data: []byte(strings.Repeat("Text of e. ", 200))}
	for i := range 50 {
		ws[fmt.Sprintf(".clinerules/r%02d.md", i)] = &fstest.MapFile{Data: fmt.Appendf(nil, "---\npaths: [\"src/m%d/**\"]\n---\nRule %d.\n", i, i)}
	}
	files, err := Collect(Workspace{Roots: []Root{{Name: "/ws", FS: ws}}})
	if err != nil {
		b.Fatal(err)
	}
	l := NewLoader(0)
	b.ReportAllocs()
	for b.Loop() {
		if rs := l.Load(files); len(rs.Rules()) != 51 {
			b.Fatal(len(rs.Rules()))
		}
	}
}

// Hostile imports stay bounded: a fan of empty files importing each other many times over
// five hops, and a large file imported many times, expand into at most MaxImportExpansions
// imports and MaxFileSize bytes, with too_large.
func TestImportFansAreBounded(t *testing.T) {
	fan := func(next string, n int) []byte { return []byte(strings.Repeat("@"+next+" ", n)) }
	ws := fstest.MapFS{
		"CLAUDE.md":     {Data: append([]byte("Fan: "), fan("f1.md", 200)...)},
		"f1.md":         {Data: fan("f2.md", 200)},
		"f2.md":         {Data: fan("f3.md", 200)},
		"f3.md":         {Data: fan("f4.md", 200)},
		"f4.md":         {Data: fan("f5.md", 200)},
		"f5.md":         {Data: []byte("")},
		"big/CLAUDE.md": {Data: append([]byte("Big: "), fan("big.md", 5000)...)},
		"big/big.md":    {Data: []byte(strings.Repeat("x", MaxFileSize/3))},
	}
	_, rs := collectLoad(t, ws, nil)
	for _, id := range []string{"claude:/ws/CLAUDE.md", "claude:/ws/big/CLAUDE.md"} {
		r := ruleByID(t, rs, id)
		if !hasCode(r.Diagnostics, DiagTooLarge) || len(r.Body) > 2*MaxFileSize {
			t.Errorf("%s: body %d bytes, diagnostics %v", id, len(r.Body), r.Diagnostics)
		}
	}
	if b := ruleByID(t, rs, "claude:/ws/big/CLAUDE.md").Body; strings.Count(b, strings.Repeat("x", MaxFileSize/3)) != 2 {
		t.Errorf("big: want the file expanded twice, then the tokens")
	}
}
