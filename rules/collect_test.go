package rules

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func fileKeys(fs []File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Provider)+" "+f.Scope+" "+f.Root+" "+f.Path)
	}
	return out
}

func TestCollect(t *testing.T) {
	ws := fstest.MapFS{
		".tasklog/rules/a.md":                    {Data: []byte("a")},
		".clinerules/b.md":                       {Data: []byte("b")},
		".clinerules/sub/c.md":                   {Data: []byte("c")},
		".clinerules/workflows/w.md":             {Data: []byte("w")},
		".clinerules/hooks/h.md":                 {Data: []byte("h")},
		".clinerules/skills/s/SKILL.md":          {Data: []byte("s")},
		".clinerules/.DS_Store":                  {Data: []byte("x")},
		".cursor/rules/ts.mdc":                   {Data: []byte("t")},
		".cursor/rules/nested/deep.mdc":          {Data: []byte("d")},
		".cursor/rules/notes.txt":                {Data: []byte("n")},
		".cursorrules":                           {Data: []byte("legacy")},
		".windsurf/rules/w.md":                   {Data: []byte("w")},
		".windsurf/rules/sub/ignored.md":         {Data: []byte("i")},
		".windsurfrules":                         {Data: []byte("legacy")},
		".claude/rules/x/y.md":                   {Data: []byte("y")},
		".github/copilot-instructions.md":        {Data: []byte("main")},
		".github/instructions/r.instructions.md": {Data: []byte("r")},
		".github/instructions/readme.md":         {Data: []byte("no")},
		"AGENTS.md":                              {Data: []byte("root")},
		"apps/web/AGENTS.md":                     {Data: []byte("web")},
		"apps/web/node_modules/pkg/AGENTS.md":    {Data: []byte("dep")},
		"packages/core/CLAUDE.md":                {Data: []byte("core")},
		".git/AGENTS.md":                         {Data: []byte("git")},
	}
	home := fstest.MapFS{
		"Documents/Cline/Rules/g.md":                 {Data: []byte("g")},
		"Documents/Cline/Rules/sub/h.txt":            {Data: []byte("h")},
		".codeium/windsurf/memories/global_rules.md": {Data: []byte("gr")},
	}
	files, err := Collect(Workspace{Roots: []Root{{Name: "/ws", FS: ws}}, Home: home,
		Remote: []RemoteRule{{Name: "org", Contents: "o", AlwaysEnabled: true}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"claude workspace /ws .claude/rules/x/y.md",
		"cline workspace /ws .clinerules/b.md",
		"cline workspace /ws .clinerules/sub/c.md",
		"cursor workspace /ws .cursor/rules/nested/deep.mdc",
		"cursor workspace /ws .cursor/rules/ts.mdc",
		"cursor workspace /ws .cursorrules",
		"agents workspace /ws .git/AGENTS.md", // a memory_skipped note: version control is not searched
		"copilot workspace /ws .github/copilot-instructions.md",
		"copilot workspace /ws .github/instructions/r.instructions.md",
		"tasklog workspace /ws .tasklog/rules/a.md",
		"windsurf workspace /ws .windsurf/rules/w.md",
		"windsurf workspace /ws .windsurfrules",
		"agents workspace /ws AGENTS.md",
		"agents workspace /ws apps/web/AGENTS.md",
		"claude workspace /ws packages/core/CLAUDE.md",
		"windsurf global  .codeium/windsurf/memories/global_rules.md",
		"cline global  Documents/Cline/Rules/g.md",
		"cline global  Documents/Cline/Rules/sub/h.txt",
		"cline remote  org",
	}
	if got := fileKeys(files); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCollectLegacyClinerulesFile(t *testing.T) {
	files, _ := Collect(Workspace{Roots: []Root{{Name: "r", FS: fstest.MapFS{".clinerules": {Data: []byte("x")}}}}})
	if got := fileKeys(files); !slices.Equal(got, []string{"cline workspace r .clinerules"}) {
		t.Errorf("got %v", got)
	}
	if r := Load(files).Rules()[0]; r.Name != "clinerules" || r.Category != CategoryAlways {
		t.Errorf("rule %+v", r)
	}
}

func TestCollectLargeFileAndLimits(t *testing.T) {
	big := strings.Repeat("x", MaxFileSize+10)
	files, _ := Collect(Workspace{Roots: []Root{{Name: "r", FS: fstest.MapFS{".clinerules/big.md": {Data: []byte(big)}}}}})
	if len(files) != 1 || len(files[0].Content) != MaxFileSize || files[0].Size != int64(len(big)) {
		t.Fatalf("files = %d, content %d, size %d", len(files), len(files[0].Content), files[0].Size)
	}
	r := Load(files).Rules()[0]
	if !hasCode(r.Diagnostics, DiagTooLarge) || r.Unusable != "" || len(r.Body) != MaxFileSize {
		t.Errorf("big rule: %v unusable=%q body=%d", r.Diagnostics, r.Unusable, len(r.Body))
	}
}

func TestCollectSymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, ".clinerules")
	if err := os.MkdirAll(rules, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rules, "a.md"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(rules, filepath.Join(rules, "loop")); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	files, err := Collect(Workspace{Roots: []Root{{Name: "r", FS: os.DirFS(dir)}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) > DefaultMaxFilesPerFolder+2 {
		t.Fatalf("unbounded: %d files", len(files))
	}
	rs := Load(files)
	if !hasCode(rs.Diagnostics(), DiagLinkLoop) {
		t.Errorf("the loop is not reported: %v", rs.Diagnostics())
	}
	seen := map[string]bool{}
	for _, r := range rs.Rules() {
		if seen[r.ID] {
			t.Fatalf("duplicate id %s", r.ID)
		}
		seen[r.ID] = true
	}
}

func TestCollectUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, ".cursorrules")
	if err := os.WriteFile(p, []byte("x"), 0o000); err != nil {
		t.Fatal(err)
	}
	files, _ := Collect(Workspace{Roots: []Root{{Name: "r", FS: os.DirFS(dir)}}})
	if len(files) != 1 || files[0].ReadError == "" {
		t.Fatalf("files %+v", files)
	}
	if r := Load(files).Evaluate(EvaluationContext{}, nil).Results[0]; r.Reason != ReasonInvalid {
		t.Errorf("reason %s", r.Reason)
	}
}

func TestCollectNilFS(t *testing.T) {
	if _, err := Collect(Workspace{Roots: []Root{{Name: "x"}}}); err == nil {
		t.Fatal("want ErrNoFS")
	}
}
