package session

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tasklog/tasklog/events"
)

// guessWorkspace has a rule for every .js file and one for every .png, and a few real files.
func guessWorkspace() fstest.MapFS {
	return fstest.MapFS{
		".clinerules/js.md":  {Data: []byte("---\npaths: [\"**/*.js\"]\n---\nUse ES modules.\n")},
		".clinerules/png.md": {Data: []byte("---\npaths: [\"**/*.png\"]\n---\nOptimise images.\n")},
		"web/app.js":         {Data: []byte("export {}\n")},
		"shots/Screenshot 2025-10-24 at 2.54.54 PM.png": {Data: []byte("png")},
		"docs/notes.md": {Data: []byte("# notes\n")},
	}
}

func lastGuesses(t *testing.T, s *Session, typ events.Type) []events.Guess {
	t.Helper()
	var out []events.Guess
	for ev, err := range s.db.Events(context.Background(), s.task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != typ {
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) {
		case *events.UserMessage:
			out = p.Guesses
		case *events.ToolCall:
			out = p.Guesses
		}
	}
	return out
}

func includedNames(d *Decision) []string {
	var out []string
	for _, o := range d.Recorded().Included {
		out = append(out, o.Name)
	}
	return out
}

// TestGuessesAreConfirmedAtRecordTime: product names, abbreviations, the tail of a file name
// with spaces and git branch names no longer switch rules on; a guess the workspace has, one a
// tool named, a quoted name with spaces and an inline mention do.
func TestGuessesAreConfirmedAtRecordTime(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, openDB(t), guessWorkspace(), Options{})
	if _, err := s.UserMessage(ctx, "Upgrade Node.js and xterm.js, e.g. in a branch; see Screenshot 2025-10-24 at 2.54.54 PM.png"); err != nil {
		t.Fatal(err)
	}
	want := []events.Guess{{Path: "Node.js", Why: "not_found"}, {Path: "xterm.js", Why: "not_found"}, {Path: "PM.png", Why: "not_found"}}
	if got := lastGuesses(t, s, events.TypeUserMessage); !slices.Equal(got, want) {
		t.Errorf("guesses = %+v\nwant %+v", got, want)
	}
	d, err := s.Decide(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := includedNames(d); len(got) != 0 {
		t.Errorf("included %v, want nothing: no guess was confirmed", got)
	}
	if got := d.Recorded().Dropped; !slices.Equal(got, []events.Count{{Name: "unconfirmed", N: 3}}) {
		t.Errorf("dropped = %v, want 3 unconfirmed", got)
	}
	x, err := s.Explain(ctx, 1, "js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x.String(), "3 guessed paths were left out: the workspace did not confirm them (unconfirmed)") {
		t.Errorf("explanation does not give the reason:\n%s", x)
	}

	s.UserMessage(ctx, `fix web/app.js, the image "shots/Screenshot 2025-10-24 at 2.54.54 PM.png" and @docs/guide.md`)
	want = []events.Guess{{Path: "shots/Screenshot 2025-10-24 at 2.54.54 PM.png", Confirmed: true, Why: "exists"},
		{Path: "web/app.js", Confirmed: true, Why: "exists"}, {Path: "docs/guide.md", Confirmed: true, Why: "mention"}}
	if got := lastGuesses(t, s, events.TypeUserMessage); !slices.Equal(got, want) {
		t.Errorf("guesses = %+v\nwant %+v", got, want)
	}
	if d, err = s.Decide(ctx); err != nil {
		t.Fatal(err)
	}
	if got := includedNames(d); !slices.Equal(got, []string{"js", "png"}) {
		t.Errorf("included %v, want js and png", got)
	}

	// A shell command: the branch name is no path, the file a tool wrote before is seen.
	s.FileWrite(ctx, "/ws/gen/out.js", events.OpCreate)
	s.ToolCall(ctx, "Bash", "b1", json.RawMessage(`{"command":"git checkout -b fix/menu.js && node gen/out.js"}`))
	want = []events.Guess{{Path: "gen/out.js", Confirmed: true, Why: "seen"}}
	if got := lastGuesses(t, s, events.TypeToolCall); !slices.Equal(got, want) {
		t.Errorf("shell guesses = %+v\nwant %+v", got, want)
	}
}

// TestGuessesWithoutAWorkspace: a root with no file system to read (an import without
// --workspace) confirms nothing.
func TestGuessesWithoutAWorkspace(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, openDB(t), nil, Options{Roots: []Root{{Path: "/ws"}}})
	s.UserMessage(ctx, "edit web/app.js")
	want := []events.Guess{{Path: "web/app.js", Why: "no_workspace"}}
	if got := lastGuesses(t, s, events.TypeUserMessage); !slices.Equal(got, want) {
		t.Errorf("guesses = %+v, want %+v", got, want)
	}
	// A message with no path-like string carries no guesses field: it reads the same either way.
	s.UserMessage(ctx, "thanks")
	if got := lastGuesses(t, s, events.TypeUserMessage); got != nil {
		t.Errorf("guesses of a message without paths = %+v, want none", got)
	}
}
