package rules

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for p, s := range files {
		m[p] = &fstest.MapFile{Data: []byte(s)}
	}
	return m
}

// short is a finding as the table writes it: kind, severity, path[:line] and the pattern.
func short(f Finding) string {
	s := fmt.Sprintf("%s %s %s", f.Kind, f.Severity, f.Path)
	if f.Line > 0 {
		s += fmt.Sprintf(":%d", f.Line)
	}
	if f.Pattern != "" {
		s += " " + f.Pattern
	}
	return s
}

func TestLint(t *testing.T) {
	src := map[string]string{"src/api/x.ts": "x", "docs/guide.md": "x", "node_modules/pkg/index.js": "x"}
	with := func(rules map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range src {
			m[k] = v
		}
		for k, v := range rules {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name  string
		files map[string]string
		max   int
		want  []string
		// msgs must each appear in the message of the finding at the same index of want.
		msgs []string
	}{
		{name: "clean", files: with(map[string]string{
			".cursor/rules/api.mdc":   "---\nglobs: src/api/**\n---\napi",
			".cursor/rules/style.mdc": "---\nalwaysApply: true\n---\nstyle",
			".claude/rules/docs.md":   "---\npaths:\n  - \"**/*.md\"\n---\ndocs",
			".claude/rules/dir.md":    "---\npaths: [\"docs/\"]\n---\ndocs folder", // matches the folder itself
			"apps/web/AGENTS.md":      "web",
		}), want: []string{"glob warning .claude/rules/dir.md docs/"}},
		{name: "never applicable", files: with(map[string]string{
			".cursor/rules/rst.mdc": "---\nglobs: docs/**/*.rst\n---\nrst",
		}), want: []string{"never-applicable warning .cursor/rules/rst.mdc"},
			msgs: []string{`no file or folder of the workspace matches its globs ("docs/**/*.rst")`}},
		{name: "a dependency folder is not listed", files: with(map[string]string{
			".claude/rules/pkg.md": "---\npaths: [\"node_modules/pkg/**\"]\n---\npkg",
			".claude/rules/js.md":  "---\npaths: [\"**/*.js\"]\n---\njs",
		}), want: []string{"never-applicable warning .claude/rules/js.md"}},
		{name: "outside every root", files: with(map[string]string{
			".claude/rules/abs.md": "---\npaths: [\"/src/**\", \"../other/**\"]\n---\nabs",
		}), want: []string{
			"never-applicable warning .claude/rules/abs.md",
			"glob warning .claude/rules/abs.md:2 ../other/**",
			"glob warning .claude/rules/abs.md:2 /src/**",
		}, msgs: []string{"can match a path inside a workspace root", `".." segment`, "absolute"}},
		{name: "empty lists", files: with(map[string]string{
			".windsurf/rules/g.md": "---\ntrigger: glob\n---\ng",
			".clinerules/m.md":     "---\nmode: []\n---\nm",
		}), want: []string{
			"never-applicable warning .clinerules/m.md:2",
			"never-applicable warning .windsurf/rules/g.md",
		}, msgs: []string{"mode lists no value", "globs lists no pattern"}},
		{name: "scoped rule whose frontmatter fails is always on", files: with(map[string]string{
			".clinerules/api.md": "---\npaths: [src/api/**\n  x: : :\n---\napi",
		}), want: []string{"broken error .clinerules/api.md:2"},
			msgs: []string{"meant for paths src/api/**, the rule is always on"}},
		{name: "broken without patterns stays an error, not meant", files: with(map[string]string{
			".clinerules/d.md": "---\ndescription: [a\n  x: : :\n---\nd",
		}), want: []string{"broken error .clinerules/d.md:2"}, msgs: []string{"frontmatter is not YAML"}},
		{name: "no fences", files: with(map[string]string{
			".clinerules/nf.md": "globs: src/**\ndescription: x\n\nbody",
		}), want: []string{"broken error .clinerules/nf.md:1"}, msgs: []string{"meant for globs src/**, the rule is always on"}},
		{name: "a key given twice", files: with(map[string]string{
			".cursor/rules/twice.mdc": "---\nglobs: src/**\nglobs: docs/**\n---\ntwice",
		}), want: []string{"broken warning .cursor/rules/twice.mdc:3"}, msgs: []string{`key "globs" is given again (first on line 2); only the first is read`}},
		{name: "a key given twice in a Cline rule", files: with(map[string]string{
			".clinerules/twice.md": "---\npaths:\n  - \"src/**\"\npaths:\n  - \"docs/**\"\n---\ntwice",
		}), want: []string{"broken error .clinerules/twice.md:4"}, msgs: []string{`meant for paths src/**, the rule is always on: it goes into every prompt. frontmatter gives the key "paths" twice, which Cline's YAML reader rejects`}},
		{name: "a Cline rule's unquoted *", files: with(map[string]string{
			".clinerules/ts.md":     "---\npaths: [**/*.ts]\n---\nts",
			".cursor/rules/tsx.mdc": "---\nglobs: **/*.tsx\n---\ntsx",
			".clinerules/tab.md":    "---\npaths:\n\t- \"src/**\"\n---\ntab",
			"src/app.ts":            "",
			"src/view.tsx":          "",
		}), want: []string{"broken error .clinerules/tab.md:3", "broken error .clinerules/ts.md:2"}, msgs: []string{
			"frontmatter is not YAML as Cline reads it (yaml: line 2: found character that cannot start any token): indent with spaces",
			`meant for paths **/*.ts, the rule is always on: it goes into every prompt. frontmatter is not YAML as Cline reads it (yaml: did not find expected alphabetic or numeric character): quote each pattern that starts with * ("**/*.ts")`,
		}},
		{name: "Cline paths as a string", files: with(map[string]string{
			".clinerules/s.md": "---\npaths: \"src/**\"\n---\ns",
		}), want: []string{"broken error .clinerules/s.md:2"}, msgs: []string{"meant for paths src/**, the rule is always on"}},
		{name: "foreign pattern key", files: with(map[string]string{
			".clinerules/g.md":                       "---\nglobs:\n  - src/**\n  - '*.ts'\n---\ng",
			".claude/rules/b.md":                     "---\npaths: [\"src/**\"]\nglobs: docs/**\n---\nb",
			".github/instructions/c.instructions.md": "---\nglobs: src/**\n---\nc",
		}), want: []string{
			"foreign-key warning .claude/rules/b.md:3",
			"foreign-key error .clinerules/g.md:2",
			"foreign-key warning .github/instructions/c.instructions.md:2",
		}, msgs: []string{"Cursor and Windsurf's key", "meant for globs src/**, *.ts, the rule is always on", "meant for globs src/**, the rule is manual"}},
		{name: "foreign globs meaning every file, and a comment", files: with(map[string]string{
			".clinerules/all.md": "---\nglobs: [\"*\"] # always active\n---\nall",
			".clinerules/doc.md": "---\nglobs: [\"docs/**\"] # docs only\n---\ndoc",
		}), want: []string{"foreign-key warning .clinerules/all.md:2", "foreign-key error .clinerules/doc.md:2"},
			msgs: []string{"globs is Cursor and Windsurf's key", "meant for globs docs/**, the rule is always on"}},
		{name: "legacy single file", files: with(map[string]string{
			".cursorrules":   "---\nglobs: src/**\n---\nlegacy",
			".windsurfrules": "---\ndescription: d\n---\nlegacy two",
		}), want: []string{"broken error .cursorrules:2"}, msgs: []string{"meant for globs src/**, the rule is always on"}},
		{name: "shadowed across tools", files: with(map[string]string{
			".clinerules/api.md":     "---\npaths: [\"src/api/**\"]\n---\nCline text",
			".windsurf/rules/api.md": "---\ntrigger: glob\nglobs: src/api/**\n---\nWindsurf text",
			".clinerules/copy.md":    "same",
			".cursor/rules/copy.mdc": "---\nalwaysApply: true\n---\nsame",
		}), want: []string{
			"shadowed warning .clinerules/api.md",
			"shadowed info .clinerules/copy.md",
		}, msgs: []string{
			// The full sentence is in testdata/lint.golden.json.
			"its text differs and tasklog delivers only the other's, while an agent that reads Cline's rules itself still sends this one: rename one file to keep both",
			"the same text, so nothing is lost",
		}},
		{name: "shadowed within a tool", files: with(map[string]string{
			".cursor/rules/api.mdc": "---\nalwaysApply: true\n---\nmdc text",
			".cursor/rules/api.md":  "---\nalwaysApply: true\n---\nmd text",
		}), want: []string{"shadowed warning .cursor/rules/api.mdc"}, msgs: []string{
			"both come from the same tool and scope, and the smaller ID wins; its text differs and tasklog delivers only the other's, while an agent that reads Cursor's rules itself still sends this one",
		}},
		{name: "shadowed in tasklog's own folder", files: with(map[string]string{
			".tasklog/rules/api.mdc": "---\nalwaysApply: true\n---\nmdc text",
			".tasklog/rules/api.md":  "---\nalwaysApply: true\n---\nmd text",
		}), want: []string{"shadowed warning .tasklog/rules/api.mdc"}, msgs: []string{
			"its text differs and never reaches the model: rename one file to keep both, or delete this one",
		}},
		{name: "a Windsurf rule over Windsurf's limit", files: with(map[string]string{
			".windsurf/rules/long.md": "---\ntrigger: always_on\n---\n" + strings.Repeat("é", 12_001),
			".windsurf/rules/fits.md": "---\ntrigger: always_on\n---\n" + strings.Repeat("é", 11_970),
			".clinerules/big.md":      strings.Repeat("x", 20_000),
		}), want: []string{"broken warning .windsurf/rules/long.md"}, msgs: []string{
			"the file has 12028 characters, over the 12000 Windsurf allows a rule file: Windsurf may not send all of it",
		}},
		{name: "two rules of one name, neither hiding the other", files: with(map[string]string{
			".cursor/rules/apps/api/db.mdc": "---\nalwaysApply: true\n---\nroot one",
			"apps/api/.cursor/rules/db.mdc": "---\nalwaysApply: true\n---\nnested one",
			"AGENTS.md":                     "agents",
			".clinerules/AGENTS.md":         "a Cline rule named AGENTS, beside the memory file",
		}), want: []string{"same-name info apps/api/.cursor/rules/db.mdc"}, msgs: []string{
			`cursor:/ws/.cursor/rules/apps/api/db.mdc has the same name "apps/api/db" and neither hides the other: rule://apps/api/db reaches cursor:/ws/.cursor/rules/apps/api/db.mdc, and this rule is reached at rule://cursor:/ws/apps/api/.cursor/rules/db.mdc only`,
		}},
		{name: "duplicate text", files: with(map[string]string{
			".clinerules/one.md":    "same text",
			".claude/rules/two.md":  "same text",
			".cursor/rules/id1.mdc": "---\nalwaysApply: true\n---\nother",
		}), want: []string{"duplicate info .clinerules/one.md"}, msgs: []string{"the same text as claude:/ws/.claude/rules/two.md"}},
		{name: "keys and empty body", files: with(map[string]string{
			".cursor/rules/k.mdc": "---\nalwaysApply: true\npriority: high\ntitle: ok\n---\nk",
			".clinerules/e.md":    "---\ndescription: x\n---\n",
		}), want: []string{"empty warning .clinerules/e.md", "unknown-key info .cursor/rules/k.mdc:3"}},
		{name: "glob constructs", files: with(map[string]string{
			".cursor/rules/g.mdc": "---\nglobs: src\\api\\*.ts, +(a|b)/**, x/{1..3}/*, [[:alpha:]]*, [!a]*, app/(group)/**, **/*.{ts}, src/, !docs/**, src/api/**\n---\ng",
		}), want: []string{
			"glob warning .cursor/rules/g.mdc **/*.{ts}",
			"glob info .cursor/rules/g.mdc [!a]*",
			"glob info .cursor/rules/g.mdc app/(group)/**",
			"glob warning .cursor/rules/g.mdc src/",
			"extglob warning .cursor/rules/g.mdc:2 +(a|b)/**",
			"glob warning .cursor/rules/g.mdc:2 !docs/**",
			"glob warning .cursor/rules/g.mdc:2 [[:alpha:]]*",
			"glob warning .cursor/rules/g.mdc:2 x/{1..3}/*",
			"windows-path warning .cursor/rules/g.mdc:2 src\\api\\*.ts",
		}},
		{name: "listing bound", max: 3, files: with(map[string]string{
			".cursor/rules/rst.mdc": "---\nglobs: docs/**/*.rst\n---\nrst",
			".cursor/rules/abs.mdc": "---\nglobs: /x/**\n---\nabs",
		}), want: []string{
			"limit warning .",
			"never-applicable warning .cursor/rules/abs.mdc",
			"glob warning .cursor/rules/abs.mdc:2 /x/**",
		}, msgs: []string{"stopped at the 3 entries it lists at most: 1 rule whose patterns", "can match a path inside", "absolute"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Lint(Workspace{Roots: []Root{{Name: "/ws", FS: mapFS(tc.files)}}}, LintOptions{MaxEntries: tc.max})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rep.Findings {
				got = append(got, short(f))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("findings:\n%s\nwant:\n%s\n\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), findingLines(rep.Findings))
			}
			for i, m := range tc.msgs {
				if !strings.Contains(rep.Findings[i].Message, m) {
					t.Errorf("finding %d: %q\nwant it to say %q", i, rep.Findings[i].Message, m)
				}
			}
		})
	}
}

func findingLines(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.String() + "\n")
	}
	return b.String()
}

// TestLintRoots: a rule's patterns are matched against every root's files, as the evaluator
// matches them against every root's candidate paths; walk limits of discovery are findings.
func TestLintRoots(t *testing.T) {
	a := mapFS(map[string]string{
		".clinerules/docs.md":                "---\npaths: [\"docs/**\"]\n---\ndocs",
		"apps/api/.cursor/rules/handler.mdc": "---\nglobs: src/**\n---\nhandler",
		"apps/api/README.md":                 "x",
	})
	b := mapFS(map[string]string{"docs/a.md": "x", "src/h.ts": "x"})
	rep, err := Lint(Workspace{Roots: []Root{{Name: "/a", FS: a}, {Name: "/b", FS: b}}}, LintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// docs/** matches /b's docs/a.md; the nested rule's globs are anchored at apps/api, and
	// no root has apps/api/src.
	want := "/a/apps/api/.cursor/rules/handler.mdc: warning: never-applicable: no file or folder of the workspace matches its globs (\"apps/api/src/**\")"
	if len(rep.Findings) != 1 || !strings.HasPrefix(rep.Findings[0].String(), want) {
		t.Fatalf("findings:\n%s\nwant one starting %s", findingLines(rep.Findings), want)
	}

	// Global rules without a workspace root: only what no path could meet is reported.
	home := mapFS(map[string]string{
		".cursor/rules/ts.mdc":  "---\nglobs: src/**\n---\nts",
		".cursor/rules/abs.mdc": "---\nglobs: /abs/**\n---\nabs",
	})
	rep, err = Lint(Workspace{Home: home}, LintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, f := range rep.Findings {
		kinds = append(kinds, string(f.Kind)+" "+f.File)
	}
	if got := strings.Join(kinds, "; "); got != "never-applicable ~/.cursor/rules/abs.mdc; glob ~/.cursor/rules/abs.mdc" || rep.Complete {
		t.Fatalf("home only: %s, complete %v; want the absolute pattern's two findings, not complete", got, rep.Complete)
	}

	many := map[string]string{"src/x.ts": "x"}
	for i := range 5 {
		many[fmt.Sprintf(".clinerules/r%d.md", i)] = fmt.Sprintf("rule %d", i)
	}
	rep, err = Lint(Workspace{Roots: []Root{{Name: "/ws", FS: mapFS(many)}}, MaxFilesPerFolder: 2}, LintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Kind != FindLimit || !strings.Contains(rep.Findings[0].Message, "more than 2 rule files") {
		t.Fatalf("findings:\n%s\nwant one limit finding for the rules folder", findingLines(rep.Findings))
	}
}

// unreadableFS fails to list one folder.
type unreadableFS struct {
	fstest.MapFS
	dir string
}

func (u unreadableFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if name == u.dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrPermission}
	}
	return u.MapFS.ReadDir(name)
}

// TestLintUnreadableFolder: a folder that cannot be listed may hold what a pattern pointing
// into it looks for, so such a rule is not called never applicable; one that merely could
// match anywhere is.
func TestLintUnreadableFolder(t *testing.T) {
	ws := unreadableFS{MapFS: mapFS(map[string]string{
		".claude/rules/private.md": "---\npaths: [\"private/**/*.rs\"]\n---\nprivate",
		".claude/rules/rust.md":    "---\npaths: [\"**/*.rs\"]\n---\nrust",
		"private/a.rs":             "x",
	}), dir: "private"}
	rep, err := Lint(Workspace{Roots: []Root{{Name: "/ws", FS: ws}}}, LintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Kind != FindNeverApplicable || rep.Findings[0].Path != ".claude/rules/rust.md" {
		t.Fatalf("findings:\n%s\nwant only rust.md never applicable", findingLines(rep.Findings))
	}
}

// TestLintJSON pins the JSON shape of findings (testdata/lint.golden.json; -update rewrites it).
func TestLintJSON(t *testing.T) {
	ws := mapFS(map[string]string{
		".clinerules/api.md":     "---\nglobs: src/api/**\n---\napi",
		".windsurf/rules/api.md": "---\ntrigger: glob\nglobs: src/**\n---\nwindsurf api",
		".cursor/rules/rst.mdc":  "---\nglobs: docs/**/*.rst\nowner: me\n---\nrst",
		"src/api/x.ts":           "x",
	})
	rep, err := Lint(Workspace{Roots: []Root{{Name: "/ws", FS: ws}}}, LintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(rep.Findings, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "testdata/lint.golden.json", string(b)+"\n")
}
