package rules

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// deniedFS fails to open the names it lists, as a file system does for files its user may not
// read.
type deniedFS struct {
	fs.FS
	denied map[string]bool
}

func (d deniedFS) Open(name string) (fs.File, error) {
	if d.denied[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return d.FS.Open(name)
}

// checkDenied checks the outcome of a workspace whose .clinerules/secret.md and
// .clinerules/locked/ cannot be read beside readable a.md and z.md.
func checkDenied(t *testing.T, rs *RuleSet) {
	t.Helper()
	usable := map[string]bool{}
	for _, r := range rs.Rules() {
		usable[r.ID] = r.Unusable == ""
	}
	for id, want := range map[string]bool{
		"cline:/ws/.clinerules/a.md": true, "cline:/ws/.clinerules/z.md": true,
		"cline:/ws/.clinerules/secret.md": false, "cline:/ws/.clinerules/locked": false,
	} {
		got, ok := usable[id]
		if !ok || got != want {
			t.Errorf("%s: present %v usable %v, want present and usable %v", id, ok, got, want)
		}
	}
	for _, f := range []string{"/ws/.clinerules/secret.md", "/ws/.clinerules/locked"} {
		found := false
		for _, d := range rs.allDiagnostics {
			if d.File == f && d.Code == DiagReadError && strings.Contains(d.Message, "permission denied") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no %s diagnostic saying permission denied: %v", f, DiagReadError, rs.allDiagnostics)
		}
	}
}

// A rule file or folder that cannot be opened (permissions) is reported and the rest is read,
// with and without a Reader.
func TestCollectPermissionDenied(t *testing.T) {
	fsys := deniedFS{FS: fstest.MapFS{
		".clinerules/a.md":        {Data: []byte("A.\n")},
		".clinerules/secret.md":   {Data: []byte("S.\n")},
		".clinerules/locked/c.md": {Data: []byte("C.\n")},
		".clinerules/z.md":        {Data: []byte("Z.\n")},
	}, denied: map[string]bool{".clinerules/secret.md": true, ".clinerules/locked": true}}
	ws := Workspace{Roots: []Root{{Name: "/ws", FS: fsys}}}
	for name, collect := range map[string]func(Workspace) ([]File, error){"Collect": Collect, "Reader": (&Reader{}).Collect} {
		t.Run(name, func(t *testing.T) {
			files, err := collect(ws)
			if err != nil {
				t.Fatal(err)
			}
			checkDenied(t, Load(files))
		})
	}
}

// One collection of a root looks at MaxWalkEntries directory entries at most, whichever walk
// meets them; at the bound it reads what it found and says what it did not look at.
func TestCollectEntryBound(t *testing.T) {
	ws := fstest.MapFS{
		".cursor/rules/a.mdc": {Data: []byte("A.\n")},
		"AGENTS.md":           {Data: []byte("Root.\n")},
	}
	for i := range MaxWalkEntries {
		ws[fmt.Sprintf(".cursor/rules/notes/n%05d.txt", i)] = &fstest.MapFile{}
	}
	files, err := Collect(Workspace{Roots: []Root{{Name: "/ws", FS: ws}}})
	if err != nil {
		t.Fatal(err)
	}
	rs := Load(files)
	if got := ruleIDs(rs); got != "cursor:/ws/.cursor/rules/a.mdc" {
		t.Errorf("rules %q", got)
	}
	d, ok := diagFor(rs, DiagWalkLimit, "/ws/.cursor/rules")
	if !ok || !strings.Contains(d.Message, fmt.Sprint(MaxWalkEntries)) {
		t.Errorf("no walk limit on the rules folder naming %d entries: %v", MaxWalkEntries, rs.Diagnostics())
	}
	if _, ok := diagFor(rs, DiagWalkLimit, "/ws"); !ok {
		t.Errorf("the AGENTS.md search, left no entries, does not say so: %v", rs.Diagnostics())
	}
}

// nestedBraces is a pattern of n nested brace groups: "{a,{a,{a,b}}}" for 3.
func nestedBraces(n int) string {
	return strings.Repeat("{a,", n) + "b" + strings.Repeat("}", n)
}

// Patterns past a size bound never match and say why; patterns at the bounds work.
func TestPatternBounds(t *testing.T) {
	long := "src/" + strings.Repeat("x", MaxPatternLength-len("src/")-len("/**")) + "/**"
	tests := []struct {
		name, pattern, path string
		limited, match      bool
	}{
		{"40 KB of nested braces", nestedBraces(10000), "b", true, false},
		{"longest pattern", long, long[:len(long)-3] + "/a.ts", false, true},
		{"one byte longer", long + "x", long[:len(long)-3] + "/a.ts", true, false},
		{"deepest nesting", "src/" + nestedBraces(MaxBraceDepth) + ".ts", "src/b.ts", false, true},
		{"one level deeper", "src/" + nestedBraces(MaxBraceDepth+1) + ".ts", "src/b.ts", true, false},
		{"most alternatives", "{a,b,c,d}/{a,b,c,d}/{a,b,c,d}/{a,b,c,d}.ts", "d/c/b/a.ts", false, true},
		{"more alternatives", "{a,b,c,d}/{a,b,c,d}/{a,b,c,d}/{a,b,c,d}/{a,b}.ts", "d/c/b/a/b.ts", true, false},
		{"braces in a class do not count", "src/[{][{][{][{][{]" + nestedBraces(MaxBraceDepth) + ".ts", "src/{{{{{b.ts", false, true},
		{"escaped braces do not count", `src/\{\{\{\{\{` + nestedBraces(MaxBraceDepth) + ".ts", "src/{{{{{b.ts", false, true},
		{"literal equality is bounded too", strings.Repeat("a", MaxPatternLength+1), strings.Repeat("a", MaxPatternLength+1), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := CompilePattern(tt.pattern)
			limited := false
			for _, pr := range p.problems {
				if pr.Code == DiagPatternLimit {
					limited = true
					if len(pr.Message) > 200 {
						t.Errorf("the message quotes the whole pattern: %d bytes", len(pr.Message))
					}
				}
			}
			if limited != tt.limited {
				t.Errorf("limited %v, want %v (problems %v)", limited, tt.limited, p.problems)
			}
			if got := p.Match(tt.path); got != tt.match {
				t.Errorf("Match(%q) = %v, want %v", tt.path, got, tt.match)
			}
			if p.Usable() == tt.limited {
				t.Errorf("Usable() = %v", p.Usable())
			}
		})
	}
}

// Patterns and paths are compared in NFC: a rule written on macOS (decomposed) matches the name
// typed elsewhere (composed), and the other way round.
func TestPatternsMatchInNFC(t *testing.T) {
	const nfd, nfc = "docs/Cafe\u0301/**", "docs/Caf\u00e9/**"
	for _, tt := range []struct{ pattern, path string }{
		{nfd, "docs/Caf\u00e9/menu.md"},
		{nfc, "docs/Cafe\u0301/menu.md"},
		{"docs/Cafe\u0301.md", "docs/Caf\u00e9.md"}, // literal equality
	} {
		if !CompilePattern(tt.pattern).Match(tt.path) {
			t.Errorf("%+q does not match %+q", tt.pattern, tt.path)
		}
	}
}

// The same holds through a rule set's index and memory of matches.
func TestEvaluateInNFC(t *testing.T) {
	rs := Load([]File{
		{Provider: ProviderCline, Scope: ScopeWorkspace, Root: "/ws", Path: ".clinerules/nfd.md",
			Content: []byte("---\npaths: [\"docs/Cafe\u0301/**\", \"Cafe\u0301.md\"]\n---\nDecomposed.\n")},
		{Provider: ProviderCline, Scope: ScopeWorkspace, Root: "/ws", Path: ".clinerules/nfc.md",
			Content: []byte("---\npaths: [\"docs/Caf\u00e9/**\", \"Caf\u00e9.md\"]\n---\nComposed.\n")},
	})
	for _, p := range []string{"docs/Caf\u00e9/menu.md", "docs/Cafe\u0301/menu.md", "Caf\u00e9.md", "Cafe\u0301.md"} {
		for range 2 { // the second time from the memory of matches
			d := rs.Evaluate(EvaluationContext{Paths: []ContextPath{{Path: p, Sources: []Source{{Kind: SourceTool}}}}}, nil)
			if got := len(d.Included()); got != 2 {
				t.Errorf("%+q: %d rules included, want both", p, got)
			}
		}
	}
}

// ruleIDs lists the ids of a rule set's rules, space-separated.
func ruleIDs(rs *RuleSet) string {
	var ids []string
	for _, r := range rs.Rules() {
		ids = append(ids, r.ID)
	}
	return strings.Join(ids, " ")
}

// diagFor returns the diagnostic of code on file, if any.
func diagFor(rs *RuleSet, code, file string) (Diagnostic, bool) {
	for _, d := range rs.Diagnostics() {
		if d.Code == code && d.File == file {
			return d, true
		}
	}
	return Diagnostic{}, false
}
