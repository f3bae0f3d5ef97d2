package projections

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func FuzzExtractPaths(f *testing.F) {
	for _, s := range []string{
		"edit apps/web/src/App.tsx and packages/foo/src", "Does foo.md exist? If not, create foo.md",
		"see https://example.com/a/b and edit src/index.ts", `read @"/docs/my notes.md" and @/src/a.ts.`,
		"```ts\nx/y.ts\n```\nz/w.ts", `src\a.ts ./b/c.go ../d/e.go /abs/f.go`, "@", `@"`, "\xff/\xfe.go",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := ExtractPaths(text)
		seen := map[string]bool{}
		for _, p := range got {
			if p == "" || len(p) > maxTokenLen || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "./") {
				t.Fatalf("ExtractPaths(%q) gave %q", text, p)
			}
			if slices.Contains(strings.Split(p, "/"), "..") {
				t.Fatalf("ExtractPaths(%q) gave %q with ..", text, p)
			}
			if seen[p] {
				t.Fatalf("ExtractPaths(%q) gave %q twice", text, p)
			}
			seen[p] = true
		}
		_ = extract(text, shellMode)
	})
}

func FuzzToolTargets(f *testing.F) {
	for _, s := range []struct{ tool, params string }{
		{"read_file", `{"path":"a.ts","absolutePath":"/w/a.ts"}`},
		{"apply_patch", `{"input":"*** Begin Patch\n*** Update File: a.go\n*** Move to: b.go\n*** End Patch"}`},
		{"shell", `{"command":["bash","-lc","apply_patch <<'P'\n*** Add File: x.go\nP\ncat y/z.go"],"workdir":"sub"}`},
		{"Glob", `{"pattern":"src/**/*.ts","path":"/w"}`},
		{"Grep", `{"path":"."}`},
		{"mcp__x__y", `{"paths":["a","b"],"file_path":"c"}`},
		{"read_files", `{"files":[{"path":"a"},1,null]}`},
		{"Bash", `{"command":"cat <<<x\n<<\n<<-'E'\nE"}`},
	} {
		f.Add(s.tool, s.params)
	}
	f.Fuzz(func(t *testing.T, tool, params string) {
		roots := []string{"/w", `C:\w`}
		for _, tg := range ToolTargets(tool, json.RawMessage(params)) {
			if strings.TrimSpace(tg.Path) == "" {
				t.Fatalf("ToolTargets(%q, %q) gave an empty target", tool, params)
			}
			root, rel, reason := Normalize(tg.Path, roots, "sub")
			if reason != "" {
				continue
			}
			if root == "" || rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "//") ||
				slices.Contains(strings.Split(rel, "/"), "..") || slices.Contains(strings.Split(rel, "/"), ".") {
				t.Fatalf("Normalize(%q) = %q, %q", tg.Path, root, rel)
			}
		}
	})
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"src/a.ts", `C:\w\a.ts`, "file:///c%3A/w/x", "//srv/share/x", "~", "../..", "/w/../w/a/"} {
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, p, cwd string) {
		root, rel, reason := Normalize(p, []string{"/w", `C:\w`, "/w/n"}, cwd)
		if reason != "" {
			if root != "" || rel != "" || !slices.Contains(reasons[:], reason) {
				t.Fatalf("Normalize(%q, %q) = %q, %q, %q", p, cwd, root, rel, reason)
			}
			return
		}
		segs := strings.Split(strings.TrimSuffix(rel, "/"), "/")
		if root == "" || slices.Contains(segs, "..") || slices.Contains(segs, ".") || slices.Contains(segs, "") {
			t.Fatalf("Normalize(%q, %q) = %q, %q", p, cwd, root, rel)
		}
	})
}
