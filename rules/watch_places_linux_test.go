//go:build linux

package rules

import "testing"

// The places discovery reads beyond the rules folders (nested .cursor/rules, memory files in
// dot-folders, memory files in folders it does not enter, imported files) are watched: a
// change to each is seen by the next collection of a watched root.
func TestWatchSeesNewPlaces(t *testing.T) {
	tests := []struct {
		name   string
		tree   map[string]string
		change func(t *testing.T, dir string)
	}{
		{"nested rules folder created", map[string]string{"apps/api/main.ts": "x\n"},
			func(t *testing.T, dir string) { write(t, dir, "apps/api/.cursor/rules/api.mdc", "API.\n") }},
		{"nested rules folder in a new .cursor", map[string]string{"apps/api/.cursor/mcp.json": "{}\n"},
			func(t *testing.T, dir string) { write(t, dir, "apps/api/.cursor/rules/api.mdc", "API.\n") }},
		{"nested rule edited", map[string]string{"apps/api/.cursor/rules/api.mdc": "Old.\n"},
			func(t *testing.T, dir string) { write(t, dir, "apps/api/.cursor/rules/api.mdc", "New.\n") }},
		{"nested rule in a subfolder of the rules folder", map[string]string{"apps/api/.cursor/rules/a.mdc": "A.\n"},
			func(t *testing.T, dir string) { write(t, dir, "apps/api/.cursor/rules/sub/b.mdc", "B.\n") }},
		{"memory file in a dot-folder", map[string]string{".taskmaster/tasks.json": "{}\n"},
			func(t *testing.T, dir string) { write(t, dir, ".taskmaster/CLAUDE.md", "Tasks.\n") }},
		{"memory file in a dot-folder edited", map[string]string{".taskmaster/CLAUDE.md": "Old.\n"},
			func(t *testing.T, dir string) { write(t, dir, ".taskmaster/CLAUDE.md", "New.\n") }},
		{"memory file in a skipped folder", map[string]string{"node_modules/pkg/index.js": "x\n"},
			func(t *testing.T, dir string) { write(t, dir, "node_modules/AGENTS.md", "Dep.\n") }},
		{"memory file in a skipped folder removed", map[string]string{"node_modules/AGENTS.md": "Dep.\n"},
			func(t *testing.T, dir string) { remove(t, dir, "node_modules/AGENTS.md") }},
		{"imported file edited", map[string]string{"CLAUDE.md": "@docs/x.md\n", "docs/x.md": "Old.\n"},
			func(t *testing.T, dir string) { write(t, dir, "docs/x.md", "New.\n") }},
		{"imported file appears", map[string]string{"CLAUDE.md": "@docs/x.md\n"},
			func(t *testing.T, dir string) { write(t, dir, "docs/x.md", "New.\n") }},
		{"imported file at the root edited", map[string]string{"CLAUDE.md": "@NOTES.md\n", "NOTES.md": "Old.\n"},
			func(t *testing.T, dir string) { write(t, dir, "NOTES.md", "New.\n") }},
		{"imported file in a skipped folder edited", map[string]string{"CLAUDE.md": "@node_modules/pkg/RULES.md\n", "node_modules/pkg/RULES.md": "Old.\n"},
			func(t *testing.T, dir string) { write(t, dir, "node_modules/pkg/RULES.md", "New.\n") }},
		{"file imported by an imported file edited", map[string]string{"CLAUDE.md": "@a/one.md\n", "a/one.md": "@../b/two.md\n", "b/two.md": "Old.\n"},
			func(t *testing.T, dir string) { write(t, dir, "b/two.md", "New.\n") }},
		{"imported file removed", map[string]string{"CLAUDE.md": "@docs/x.md\n", "docs/x.md": "Old.\n"},
			func(t *testing.T, dir string) { remove(t, dir, "docs/x.md") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := map[string]string{"AGENTS.md": "Root.\n"}
			for k, v := range tt.tree {
				tree[k] = v
			}
			dir := oldTree(t, tree)
			r, ws := watching(t, dir)
			if rw := r.roots["/ws"]; rw == nil || rw.w == nil {
				t.Fatal("precondition: root should be watched")
			}
			tt.change(t, dir)
			check(t, r, ws, dir)
		})
	}
}
