package projections

import (
	"slices"
	"strings"
	"testing"
)

func TestExtractPaths(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		// The cases of Cline's rule-conditionals.test.ts, verbatim.
		{"cline: basic relative paths", "edit apps/web/src/App.tsx and packages/foo/src",
			[]string{"apps/web/src/App.tsx", "packages/foo/src"}},
		{"cline: simple filenames with extensions", "Does foo.md exist? If not, create foo.md",
			[]string{"foo.md"}},
		{"cline: no bare words without an extension", "Please create foo and then update bar", nil},
		{"cline: ignores URLs", "see https://example.com/a/b and edit src/index.ts",
			[]string{"src/index.ts"}},

		// The behaviour Cline's code implements beyond its tests.
		{"directory keeps its slash", "add a component to apps/web/", []string{"apps/web/"}},
		{"leading ./ removed", "run ./scripts/build.sh", []string{"scripts/build.sh"}},
		{"absolute dropped", "open /etc/passwd and src/a.ts", []string{"src/a.ts"}},
		{"dotdot dropped", "compare ../other/x.ts with src/x.ts", []string{"src/x.ts"}},
		{"dedupe keeps first order", "b/c.ts a/b.ts b/c.ts", []string{"b/c.ts", "a/b.ts"}},
		{"spaces split tokens", "my file.txt", []string{"file.txt"}},
		{"quotes and brackets", `see "src/a.ts", (lib/b.go) [c/d.md] {e/f.rs} 'g/h.py' ` + "`i/j.ts`",
			[]string{"src/a.ts", "lib/b.go", "c/d.md", "e/f.rs", "g/h.py", "i/j.ts"}},
		{"punctuation after", "fix src/a.ts, src/b.ts; src/c.ts: src/d.ts! src/e.ts?",
			[]string{"src/a.ts", "src/b.ts", "src/c.ts", "src/d.ts", "src/e.ts"}},
		{"start of text", "src/a.ts is broken", []string{"src/a.ts"}},
		{"glob is not a path", "files under packages/*/lib", nil},
		{"no start after other char", "x=src/a.ts <src/b.ts>", nil},
		{"token too long", strings.Repeat("a/", 151) + "b.ts", nil},
		{"other schemes stripped", "see file:///home/u/x.ts and ftp://h/y.ts then z/w.ts", []string{"z/w.ts"}},

		// Deliberate differences from Cline's regular expression.
		{"trailing sentence dot", "Please edit src/index.ts.", []string{"src/index.ts"}},
		{"mention @/path", "look at @/src/components/Button.tsx please", []string{"src/components/Button.tsx"}},
		{"mention @/dir/", "everything in @/apps/web/", []string{"apps/web/"}},
		{"mention quoted", `read @"/docs/my notes.md" now`, []string{"docs/my notes.md"}},
		{"mention bare (codex, pi)", "see @packages/services/src/createService.ts.",
			[]string{"packages/services/src/createService.ts"}},
		{"mention file", "what does @README.md say", []string{"README.md"}},
		{"email is not a mention", "mail me@example.com", nil},
		{"backslashes", `edit src\components\Button.tsx`, []string{"src/components/Button.tsx"}},
		{"windows absolute dropped", `edit C:\work\a.ts`, nil},
		{"unicode names", "lies docs/über.md", []string{"docs/über.md"}},
		{"versions are not files", "bump to 1.5 and v2.0.1", nil},
		{"dotfile", "update .gitignore", []string{".gitignore"}},
		{"anchor does not cut at inner dot", "see src/a.ts#L3", nil},
		{"line suffix", "see src/a.ts:12", []string{"src/a.ts"}},
		{"fenced code stripped", "edit src/a.ts\n```ts\nimport x from 'lib/x.ts'\n```\nand b/c.go",
			[]string{"src/a.ts", "b/c.go"}},
		{"tilde fence stripped", "~~~\nx/y.go\n~~~\nz/w.go", []string{"z/w.go"}},
		{"unclosed fence runs to the end", "a/b.go\n```\nc/d.go", []string{"a/b.go"}},
		{"inline triple backticks are not a fence", "```x``` then a/b.go", []string{"a/b.go"}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ExtractPaths(tt.text)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ExtractPaths(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestExtractShell(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{"sed -n '1,200p' packages/services/src/createService.ts", []string{"packages/services/src/createService.ts"}},
		{"ls packages", nil},
		{"find packages/services-prisma -maxdepth 2 -type f | head", []string{"packages/services-prisma"}},
		{`rg "createService" -g"*.ts"`, nil},
		{"cat packages/services/package.json", []string{"packages/services/package.json"}},
		{"tail -5 /tmp/claude-1000/x/tasks/bae407b.output", []string{"/tmp/claude-1000/x/tasks/bae407b.output"}},
		{"go test --coverprofile=out/c.txt ./pkg/...", []string{"out/c.txt"}},
		{"npm i @types/node", nil},
		{`grep -n "chalk\\." src/tui.ts|wc -l`, []string{"src/tui.ts"}},
	}
	for _, tt := range tests {
		got := extract(tt.cmd, shellMode)
		if !slices.Equal(got, tt.want) {
			t.Errorf("shell %q = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}
