package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func rulesTestWorkspace(t *testing.T) string {
	t.Helper()
	return workspaceOf(t, map[string]string{
		".cursor/rules/ts.mdc":       "---\ndescription: TS\nglobs: *.ts,**/*.tsx\n---\nUse strict.\n",
		".clinerules/always.md":      "Always on.\n",
		".clinerules/docs.md":        "---\npaths: [\"docs/**\"]\n---\nDocs only.\n",
		".windsurf/rules/release.md": "---\ntrigger: manual\n---\nRelease.\n",
		"apps/web/AGENTS.md":         "Web agents.\n",
	})
}

// workspaceOf is a new folder holding files, by slash-separated path.
func workspaceOf(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type rulesJSON struct {
	Rules []struct {
		ID, Name, Source, Category, Reason string
		Applies                            bool
		ShadowedBy                         string `json:"shadowed_by"`
		Matched                            []struct{ Condition, Pattern, Path string }
		Diagnostics                        []struct{ Code string }
	}
}

func runRules(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cmdRules(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCmdRulesJSON(t *testing.T) {
	dir := rulesTestWorkspace(t)
	remote := filepath.Join(t.TempDir(), "remote.json")
	if err := os.WriteFile(remote, []byte(`[{"name":"org","contents":"Org rule.","alwaysEnabled":true}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runRules(t, "--workspace", dir, "--path", `apps\web\page.tsx`, "--json",
		"--remote-rules", remote, "--mention", "release")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got rulesJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	root := filepath.ToSlash(dir)
	want := map[string]string{
		"agents:" + root + "/apps/web/AGENTS.md":           "matched",
		"cline:" + root + "/.clinerules/always.md":         "always",
		"cline:" + root + "/.clinerules/docs.md":           "no_match",
		"cursor:" + root + "/.cursor/rules/ts.mdc":         "matched",
		"windsurf:" + root + "/.windsurf/rules/release.md": "mentioned",
		"cline:remote:org":                                 "always",
	}
	if len(got.Rules) != len(want) {
		t.Fatalf("%d rules, want %d:\n%s", len(got.Rules), len(want), stdout)
	}
	for _, r := range got.Rules {
		if want[r.ID] != r.Reason {
			t.Errorf("%s: reason %s, want %s", r.ID, r.Reason, want[r.ID])
		}
		if r.ID == "cursor:"+root+"/.cursor/rules/ts.mdc" {
			if len(r.Matched) != 1 || r.Matched[0].Pattern != "**/*.tsx" || r.Matched[0].Path != "apps/web/page.tsx" {
				t.Errorf("ts.mdc matched %+v", r.Matched)
			}
			if len(r.Diagnostics) == 0 {
				t.Errorf("ts.mdc has no diagnostics")
			}
		}
	}
	// The same invocation prints the same bytes.
	_, again, _ := runRules(t, "--workspace", dir, "--path", `apps\web\page.tsx`, "--json", "--remote-rules", remote, "--mention", "release")
	if again != stdout {
		t.Errorf("output is not deterministic")
	}
}

func TestCmdRulesTable(t *testing.T) {
	dir := rulesTestWorkspace(t)
	root := filepath.ToSlash(dir)
	code, stdout, stderr := runRules(t, "--workspace", dir, "--path", "docs/a.md", "--disable", "cline:"+root+"/.clinerules/always.md", "--prompt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"toggled_off", "no_match", "matched", "patterns: *.ts, **/*.tsx", "unquoted_star",
		"--- prompt (Cline format) ---", ".clinerules/docs.md\nDocs only."} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
}

func TestCmdRulesUsage(t *testing.T) {
	dir := rulesTestWorkspace(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"not": "an array"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--workspace", filepath.Join(dir, "missing")},
		{"--workspace", dir, "--remote-rules", bad},
		{"--workspace", dir, "--remote-rules", filepath.Join(dir, "none.json")},
		{"--workspace", dir, "--home", filepath.Join(dir, "nohome")},
		{"--workspace", dir, "extra"},
		{"--bogus"},
	} {
		if code, _, stderr := runRules(t, args...); code != 2 || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
}

// A nested .cursor/rules folder's rule that does not apply shows both its conditions: the
// folder it lies in and its own globs, anchored there.
func TestCmdRulesNestedRuleShowsItsOwnGlobs(t *testing.T) {
	dir := workspaceOf(t, map[string]string{
		"apps/api/.cursor/rules/database.mdc": "---\nglobs: src/db/**/*.ts\n---\nUse the query builder.\n",
		"apps/api/readme.md":                  "api\n",
	})
	code, stdout, stderr := runRules(t, "--workspace", dir, "--path", "apps/api/readme.md")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "    within: apps/api/**\n    patterns: apps/api/src/db/**/*.ts\n") {
		t.Errorf("the nested rule does not show the folder it lies in and its own globs:\n%s", stdout)
	}
}

// Two rules of one name (a root rule in a subfolder of .cursor/rules and a nested folder's) are
// each shown at the address that reaches it: the name resolves to one, the other is rule://ID.
func TestCmdRulesSharedNameShowsEachAddress(t *testing.T) {
	dir := workspaceOf(t, map[string]string{
		".cursor/rules/apps/api/db.mdc": "---\nalwaysApply: true\n---\nroot one\n",
		"apps/api/.cursor/rules/db.mdc": "---\nalwaysApply: true\n---\nnested one\n",
	})
	code, stdout, stderr := runRules(t, "--workspace", dir, "--path", "apps/api/x.ts")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if strings.Count(stdout, "(rule://apps/api/db)") != 1 || !strings.Contains(stdout, "(rule://cursor:") {
		t.Errorf("the two rules named apps/api/db are not each shown at their own address:\n%s", stdout)
	}
}

// --disable names a rule by its name, its id or the file the table shows, as --mention does.
func TestCmdRulesDisableByName(t *testing.T) {
	dir := rulesTestWorkspace(t)
	root := filepath.ToSlash(dir)
	for _, given := range []string{"always", ".clinerules/always.md", "cline:" + root + "/.clinerules/always.md"} {
		code, stdout, stderr := runRules(t, "--workspace", dir, "--disable", given)
		if code != 0 || stderr != "" {
			t.Fatalf("--disable %s: exit %d, stderr %q", given, code, stderr)
		}
		if !regexp.MustCompile(`(?m)^\.clinerules/always\.md +cline/workspace +always +no +toggled_off$`).MatchString(stdout) {
			t.Errorf("--disable %s did not turn the always rule off:\n%s", given, stdout)
		}
	}
}

// --mention names a manual rule as --disable names a rule: by its name, its id or the file the
// table shows; each includes it.
func TestCmdRulesMentionByFile(t *testing.T) {
	dir := rulesTestWorkspace(t)
	root := filepath.ToSlash(dir)
	for _, given := range []string{"release", ".windsurf/rules/release.md", "windsurf:" + root + "/.windsurf/rules/release.md"} {
		code, stdout, stderr := runRules(t, "--workspace", dir, "--mention", given)
		if code != 0 || stderr != "" {
			t.Fatalf("--mention %s: exit %d, stderr %q", given, code, stderr)
		}
		if !regexp.MustCompile(`(?m)^\.windsurf/rules/release\.md +windsurf/workspace +manual +yes +mentioned$`).MatchString(stdout) {
			t.Errorf("--mention %s did not include the release rule:\n%s", given, stdout)
		}
	}
}
