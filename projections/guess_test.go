package projections

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/events"
)

func TestGuessPaths(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []Guessed
	}{
		{"a quoted name with spaces is one path, its last word is not read",
			`attached "Screenshot 2025-10-24 at 2.54.54 PM.png" for the bug`,
			[]Guessed{{Path: "Screenshot 2025-10-24 at 2.54.54 PM.png"}}},
		{"backticks too, with folders",
			"open `docs/Release notes.md` and src/a.ts",
			[]Guessed{{Path: "docs/Release notes.md"}, {Path: "src/a.ts"}}},
		{"abbreviations are no file names", "use a bundler, e.g. esbuild, i.e. fast", nil},
		{"product names are read: only the workspace can tell",
			"upgrade Node.js and xterm.js", []Guessed{{Path: "Node.js"}, {Path: "xterm.js"}}},
		{"a quoted sentence is not a name", `he said "we should fix it in the next release of the app.js"`,
			[]Guessed{{Path: "app.js"}}},
		{"an absolute quoted name is dropped as prose drops absolute paths", `see "/tmp/My File.txt"`, nil},
		{"inline mentions are marked", `look at @src/a.ts and @"/docs/API notes.md"`,
			[]Guessed{{Path: "docs/API notes.md", Mention: true}, {Path: "src/a.ts", Mention: true}}},
		{"code fences are not read", "```\ncat \"my notes.md\"\n```\nthen fix b/c.go", []Guessed{{Path: "b/c.go"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GuessPaths(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("GuessPaths(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestShellGuesses(t *testing.T) {
	tests := []struct {
		name   string
		tool   string
		params string
		want   []string
		shell  bool
	}{
		{"git branch names are refs, not paths", "Bash",
			`{"command":"git checkout -b feature/login.v2 && git push origin feature/login.v2 && cat src/a.ts"}`,
			[]string{"src/a.ts"}, true},
		{"git checkout of a file restores it: a path", "Bash", `{"command":"git checkout src/a.ts"}`,
			[]string{"src/a.ts"}, true},
		{"a new branch named like a file is still a branch", "Bash", `{"command":"git checkout -b fix/menu.js"}`, nil, true},
		{"after -- come paths", "Bash", `{"command":"git checkout main -- lib/b.go"}`, []string{"lib/b.go"}, true},
		{"a quoted name with spaces", "Bash", `{"command":"open \"assets/Screen Shot 1.png\" out/x.txt"}`,
			[]string{"assets/Screen Shot 1.png", "out/x.txt"}, true},
		{"workdir applies", "shell", `{"command":["bash","-lc","cat a/b.ts"],"workdir":"pkg"}`, []string{"pkg/a/b.ts"}, true},
		{"a shell call with nothing path-like", "Bash", `{"command":"ls"}`, nil, true},
		{"cursor Shell, in its working_directory", "Shell", `{"command":"cat src/a.ts","working_directory":"/ws/app"}`,
			[]string{"/ws/app/src/a.ts"}, true},
		{"not a shell tool", "Read", `{"file_path":"src/a.ts"}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, shell := ShellGuesses(tt.tool, json.RawMessage(tt.params))
			if !slices.Equal(got, tt.want) || shell != tt.shell {
				t.Errorf("ShellGuesses = %q, %v; want %q, %v", got, shell, tt.want, tt.shell)
			}
		})
	}
}

// TestGuessesInTheContext: a confirmed guess is evidence; an unconfirmed one is counted as
// dropped (unconfirmed) unless the config lets it in; an event without guesses reads its text as
// before.
func TestGuessesInTheContext(t *testing.T) {
	guessed := func(b *logBuilder) {
		b.add(&events.UserMessage{Text: "bump Node.js in src/app.ts", Guesses: []events.Guess{
			{Path: "Node.js", Why: "not_found"}, {Path: "src/app.ts", Confirmed: true, Why: "exists"}}})
		b.add(&events.ToolCall{Tool: "Bash", Params: json.RawMessage(`{"command":"git switch fix/x.js && cat lib/b.ts"}`),
			Guesses: []events.Guess{{Path: "lib/b.ts", Why: "not_found"}}})
	}
	tests := []struct {
		name    string
		config  string
		build   func(*logBuilder)
		paths   []string
		dropped []events.Count
	}{
		{"unconfirmed guesses activate nothing", "", guessed,
			[]string{"src/app.ts"}, []events.Count{{Name: ReasonUnconfirmed, N: 2}}},
		{"the config lets them in", `{"activate_unconfirmed_guesses":true}`, guessed,
			[]string{"Node.js", "lib/b.ts", "src/app.ts"}, nil},
		{"an event recorded before guesses were checked reads as before", "", func(b *logBuilder) {
			b.user("bump Node.js in src/app.ts")
			b.tool("Bash", `{"command":"git switch fix/x.js && cat lib/b.ts"}`)
		}, []string{"Node.js", "fix/x.js", "lib/b.ts", "src/app.ts"}, nil},
		{"an empty list is checked: nothing from the text", "", func(b *logBuilder) {
			b.add(&events.UserMessage{Text: "bump Node.js", Guesses: []events.Guess{}})
		}, []string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newLog(t, []string{"/ws"}, tt.config)
			tt.build(b)
			task := b.fold()
			if got := pathsOf(task.Context()); !slices.Equal(got, tt.paths) {
				t.Errorf("paths = %q, want %q", got, tt.paths)
			}
			if got := task.Dropped(); !slices.Equal(got, tt.dropped) {
				t.Errorf("dropped = %v, want %v", got, tt.dropped)
			}
		})
	}
}

func TestSeenAndLocate(t *testing.T) {
	b := newLog(t, []string{"/ws", "/other"}, "")
	b.add(&events.FileWrite{Path: "/ws/src/new.ts", Op: events.OpCreate})
	b.tool("read_file", `{"path":"lib/x.go"}`)
	task := b.fold()
	for _, tt := range []struct {
		path, cwd string
		seen      bool
	}{
		{"src/new.ts", "", true}, {"/ws/src/new.ts", "", true}, {"new.ts", "/ws/src", true},
		{"lib/x.go", "", true}, {"src/other.ts", "", false}, {"/elsewhere/a.ts", "", false},
	} {
		if got := task.Seen(tt.path, tt.cwd); got != tt.seen {
			t.Errorf("Seen(%q, %q) = %v, want %v", tt.path, tt.cwd, got, tt.seen)
		}
	}
	if root, rel, ok := task.Locate("/other/a/b.ts", ""); !ok || root != 1 || rel != "a/b.ts" {
		t.Errorf("Locate = %d, %q, %v; want 1, a/b.ts, true", root, rel, ok)
	}
	if _, _, ok := task.Locate("/elsewhere/a.ts", ""); ok {
		t.Error("Locate of a path outside every root: ok")
	}
}

func BenchmarkGuessPaths(b *testing.B) {
	text := strings.Repeat(`Please fix apps/web/src/App.tsx and "docs/Release notes.md", e.g. the Node.js bump; see Screenshot 2025-10-24 at 2.54.54 PM.png. `, 20)
	b.ReportAllocs()
	for b.Loop() {
		GuessPaths(text)
	}
}

func BenchmarkShellGuesses(b *testing.B) {
	params := json.RawMessage(`{"command":"git checkout -b fix/menu.js && npm test -- src/a.test.ts && cat \"assets/Screen Shot 1.png\" lib/b.go"}`)
	b.ReportAllocs()
	for b.Loop() {
		ShellGuesses("Bash", params)
	}
}
