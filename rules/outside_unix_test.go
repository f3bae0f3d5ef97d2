//go:build unix

package rules

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretText is what lies outside the workspace; no collection may hold it.
const secretText = "TOP SECRET: the deploy key"

// outsideTree makes base/ws (the workspace, with files) beside base/secret.txt and base/elsewhere/
// (a folder of rule-looking files), then the links of links (name in ws -> target).
func outsideTree(t *testing.T, files map[string]string, links map[string]string) (base, ws string) {
	t.Helper()
	base = t.TempDir()
	ws = filepath.Join(base, "ws")
	for name, content := range map[string]string{
		"secret.txt":          secretText + "\n",
		"elsewhere/a.md":      secretText + " (a)\n",
		"elsewhere/b.mdc":     secretText + " (b)\n",
		"elsewhere/sub/c.md":  secretText + " (c)\n",
		"ws/.keep":            "",
		"home/.keep":          "",
		"home/dotfiles/g.md":  "Global rule kept in dotfiles.\n",
		"home/.ssh/id_rsa.md": secretText + " (home)\n",
	} {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Skip("symlinks unsupported:", err)
		}
	}
	backdate(t, base, 3600e9)
	return base, ws
}

// A rule file, a rules folder or an import whose real path leaves the workspace root is not
// read, whichever way the workspace is collected: a diagnostic names the link and its target,
// and nothing of the target reaches a rule, a file of the collection or its snapshot. Links that
// stay inside are followed as before.
func TestCollectRefusesLinksOutOfTheRoot(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		links map[string]string
		// refused maps the file a diagnostic is about to what its message must say.
		refused map[string]string
		rules   string // the rule ids, space-separated
	}{
		{
			name:    "rule file",
			files:   map[string]string{"ws/.clinerules/ok.md": "Always OK.\n"},
			links:   map[string]string{"ws/.clinerules/s.md": "../../secret.txt"},
			refused: map[string]string{"/ws/.clinerules/s.md": ".clinerules/s.md is a link to ../../secret.txt ("},
			rules:   "cline:/ws/.clinerules/ok.md",
		},
		{
			name:    "single-file source",
			links:   map[string]string{"ws/.cursorrules": "../secret.txt"},
			refused: map[string]string{"/ws/.cursorrules": ".cursorrules is a link to ../secret.txt"},
		},
		{
			name:    "rules folder",
			links:   map[string]string{"ws/.cursor/rules": "../../elsewhere"},
			refused: map[string]string{"/ws/.cursor/rules": ".cursor/rules is a link to ../../elsewhere"},
		},
		{
			name:    "folder above a rules folder",
			files:   map[string]string{"elsewhere/rules/x.md": secretText + " (x)\n"},
			links:   map[string]string{"ws/.claude": "../elsewhere"},
			refused: map[string]string{"/ws/.claude/rules": ".claude/rules leads through the link .claude to ../elsewhere"},
		},
		{
			name:    "subfolder of a rules folder",
			files:   map[string]string{"ws/.clinerules/ok.md": "Always OK.\n"},
			links:   map[string]string{"ws/.clinerules/more": "../../elsewhere"},
			refused: map[string]string{"/ws/.clinerules/more": ".clinerules/more is a link to ../../elsewhere"},
			rules:   "cline:/ws/.clinerules/ok.md",
		},
		{
			name:    "AGENTS.md",
			links:   map[string]string{"ws/AGENTS.md": "../secret.txt"},
			refused: map[string]string{"/ws/AGENTS.md": "AGENTS.md is a link to ../secret.txt"},
		},
		{
			name:    "import",
			files:   map[string]string{"ws/CLAUDE.md": "Read @link.md first.\n"},
			links:   map[string]string{"ws/link.md": "../secret.txt"},
			refused: map[string]string{"/ws/link.md": "link.md is a link to ../secret.txt"},
			rules:   "claude:/ws/CLAUDE.md",
		},
		{
			name:    "link to a link that leads out",
			files:   map[string]string{"ws/.clinerules/ok.md": "Always OK.\n"},
			links:   map[string]string{"ws/.clinerules/a.md": "b.md", "ws/.clinerules/b.md": "../../secret.txt"},
			refused: map[string]string{"/ws/.clinerules/a.md": "is a link to", "/ws/.clinerules/b.md": "is a link to ../../secret.txt"},
			rules:   "cline:/ws/.clinerules/ok.md",
		},
		{
			name:  "links inside the root",
			files: map[string]string{"ws/docs/in.md": "Always in.\n", "ws/docs/rules/r.md": "Always r.\n", "ws/CLAUDE.md": "See @docs/link.md.\n"},
			links: map[string]string{"ws/.clinerules/in.md": "../docs/in.md", "ws/.claude/rules": "../docs/rules",
				"ws/docs/link.md": "in.md"},
			rules: "claude:/ws/.claude/rules/r.md claude:/ws/CLAUDE.md cline:/ws/.clinerules/in.md",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ws := outsideTree(t, tc.files, tc.links)
			for _, way := range collectWays {
				t.Run(way.name, func(t *testing.T) {
					var files []File
					var err error
					within(t, way.name, func() { files, err = way.run(t, ws) })
					if err != nil {
						t.Fatal(err)
					}
					for _, f := range files {
						if bytes.Contains(f.Content, []byte("TOP SECRET")) {
							t.Errorf("%s holds the content of a file outside the root", f.Path)
						}
					}
					rs := Load(files)
					if got := ruleIDs(rs); got != tc.rules {
						t.Errorf("rules %q, want %q", got, tc.rules)
					}
					for _, r := range rs.Rules() {
						if strings.Contains(r.Body, "TOP SECRET") {
							t.Errorf("rule %s: body %q", r.ID, r.Body)
						}
					}
					n := 0
					for _, d := range rs.Diagnostics() {
						if d.Code == DiagOutsideRoot {
							n++
						}
					}
					if n != len(tc.refused) {
						t.Errorf("%d %s diagnostics, want %d: %v", n, DiagOutsideRoot, len(tc.refused), rs.Diagnostics())
					}
					for file, says := range tc.refused {
						d, ok := diagFor(rs, DiagOutsideRoot, file)
						if !ok || !strings.Contains(d.Message, says) || !strings.Contains(d.Message, "not read") {
							t.Errorf("%s: want a %s diagnostic saying %q; got %v", file, DiagOutsideRoot, says, rs.Diagnostics())
						}
					}
				})
			}
		})
	}
}

// The user's own rules may link anywhere in the home folder (dotfiles), not out of it.
func TestCollectHomeRefusesLinksOutOfHome(t *testing.T) {
	base, _ := outsideTree(t, nil, map[string]string{
		"home/.claude/rules/dot.md":      "../../dotfiles/g.md",
		"home/.claude/rules/secret.md":   "../../../secret.txt",
		"home/Documents/Cline/Rules/etc": "../../../../elsewhere",
	})
	files, err := Collect(Workspace{Home: os.DirFS(filepath.Join(base, "home"))})
	if err != nil {
		t.Fatal(err)
	}
	rs := Load(files)
	if got, want := ruleIDs(rs), "claude:~/.claude/rules/dot.md"; got != want {
		t.Errorf("rules %q, want %q", got, want)
	}
	for _, file := range []string{"~/.claude/rules/secret.md", "~/Documents/Cline/Rules/etc"} {
		if _, ok := diagFor(rs, DiagOutsideRoot, file); !ok {
			t.Errorf("%s: no %s diagnostic: %v", file, DiagOutsideRoot, rs.Diagnostics())
		}
	}
	for _, f := range files {
		if bytes.Contains(f.Content, []byte("TOP SECRET")) {
			t.Errorf("%s holds the content of a file outside the home folder", f.Path)
		}
	}
}

// A socket in a rules folder is skipped with a not_regular diagnostic, like a named pipe, not
// reported as an unreadable rule.
func TestCollectSkipsSockets(t *testing.T) {
	dir := oldTree(t, map[string]string{".clinerules/a.md": "Always A.\n"})
	l, err := net.Listen("unix", filepath.Join(dir, ".clinerules", "s.md"))
	if err != nil {
		t.Skip("unix sockets unsupported:", err)
	}
	t.Cleanup(func() { l.Close() })
	collectWithin(t, dir, func(t *testing.T, rs *RuleSet) {
		if got, want := ruleIDs(rs), "cline:/ws/.clinerules/a.md"; got != want {
			t.Errorf("rules %q, want %q", got, want)
		}
		d, ok := diagFor(rs, DiagNotRegular, "/ws/.clinerules/s.md")
		if !ok || !strings.Contains(d.Message, "a socket") {
			t.Errorf("no %s diagnostic for the socket: %v", DiagNotRegular, rs.Diagnostics())
		}
	})
}
