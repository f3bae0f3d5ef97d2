package agentlog

import "testing"

func TestResolvePath(t *testing.T) {
	tests := []struct {
		name, p, cwd, home string
		want               string
		ok                 bool
	}{
		{"relative", "src/a.ts", "/repo", "", "/repo/src/a.ts", true},
		{"dot segments", "./src/../lib/b.ts", "/repo", "", "/repo/lib/b.ts", true},
		{"escape above cwd", "../../home/codespace/x.md", "/workspaces/app", "", "/home/codespace/x.md", true},
		{"absolute posix", "/etc//hosts", "/repo", "", "/etc/hosts", true},
		{"leading at", "@src/a.ts", "/repo", "", "/repo/src/a.ts", true},
		{"tilde", "~/notes.md", "/repo", "/Users/me", "/Users/me/notes.md", true},
		{"tilde without home", "~/notes.md", "/repo", "", "", false},
		{"lower-case drive", `c:\Users\x\a.ts`, "", "", "C:/Users/x/a.ts", true},
		{"upper-case drive, forward slashes", "C:/Users/x/a.ts", "", "", "C:/Users/x/a.ts", true},
		{"drive relative to windows cwd", `sub\b.ts`, "C:/Users/x/proj", "", "C:/Users/x/proj/sub/b.ts", true},
		{"dot-dot stops at the drive", "../../../..", "C:/a", "", "C:/", true},
		{"vscode uri form", "/c:/Users/x/a.ts", "", "", "C:/Users/x/a.ts", true},
		{"file uri", "file:///home/u/a%20b.ts", "", "", "/home/u/a b.ts", true},
		{"url is not a path", "https://example.com/a", "/repo", "", "", false},
		{"relative without cwd", "src/a.ts", "", "", "", false},
		{"quoted", `"/repo/with space.ts"`, "", "", "/repo/with space.ts", true},
		{"unc share", `\\server\share\a.txt`, "", "", "//server/share/a.txt", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := resolvePath(tt.p, tt.cwd, tt.home)
			if got != tt.want || ok != tt.ok {
				t.Errorf("resolvePath(%q, %q, %q) = %q, %v; want %q, %v", tt.p, tt.cwd, tt.home, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestHomeOf(t *testing.T) {
	for cwd, want := range map[string]string{
		"/Users/me/src/app":   "/Users/me",
		"/home/u":             "/home/u",
		"C:/Users/70912/Docs": "C:/Users/70912",
		"/workspaces/app":     "",
		"/root/x":             "/root",
	} {
		if got := homeOf(cwd); got != want {
			t.Errorf("homeOf(%q) = %q, want %q", cwd, got, want)
		}
	}
}

func TestMentionSyntax(t *testing.T) {
	tests := []struct {
		name string
		find func(string) []string
		text string
		want []string
	}{
		{"cline file and folder", clineMentions, "look at @/src/a.ts, and @/lib/ please", []string{"/src/a.ts", "/lib/"}},
		{"cline quoted", clineMentions, `see @"/docs/Implementation Plan.md" now`, []string{"/docs/Implementation Plan.md"}},
		{"cline workspace", clineMentions, "@workspace:/api/main.go", []string{"/api/main.go"}},
		{"cline non-paths", clineMentions, "@problems @terminal @git-changes @https://x.dev @a1b2c3d", nil},
		{"cline needs a space before", clineMentions, "mail me@/x.ts", nil},
		{"token trailing punctuation", atMentions, "Evaluate @packages/services/src/createService.ts. Then @README.md!", []string{"packages/services/src/createService.ts", "README.md"}},
		{"token line anchor kept as written", atMentions, "read @src/a.ts:10-20 and @src/b.ts#L3", []string{"src/a.ts:10-20", "src/b.ts#L3"}},
		{"token not paths", atMentions, "ask @agent-reviewer, mail bob@example.com, @server:res, @here", nil},
		{"token quoted", atMentions, `open @"My Docs/a b.txt"`, []string{"My Docs/a b.txt"}},
		{"token tilde and windows", atMentions, `@~/x/y.md @C:\proj\a.cs`, []string{"~/x/y.md", `C:\proj\a.cs`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			equal(t, "mentions", tt.find(tt.text), tt.want)
		})
	}
	if got := mentionTarget("src/a.ts:10-20"); got != "src/a.ts" {
		t.Errorf("mentionTarget = %q", got)
	}
	if got := mentionTarget("C:/a.ts:12"); got != "C:/a.ts" {
		t.Errorf("mentionTarget = %q", got)
	}
}

func TestPatchFiles(t *testing.T) {
	text := "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: docs/new.md\n+hi\n*** Update File: src/a.ts\n*** Move to: src/b.ts\n@@\n-x\n+y\n*** Delete File: old.txt\n*** End Patch\nPATCH"
	got := patchFiles(text)
	want := []patchOp{{"docs/new.md", "create"}, {"src/a.ts", "edit"}, {"src/b.ts", "create"}, {"old.txt", "delete"}}
	if len(got) != len(want) {
		t.Fatalf("patchFiles = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("op %d = %v, want %v", i, got[i], want[i])
		}
	}
}
