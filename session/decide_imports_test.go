package session

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
)

// A CLAUDE.md's @path imports are part of what a decision uses: the imported file is recorded
// in the rules snapshot (and its blob), an edit of it alone makes a new snapshot and reaches
// the next prompt, and replay rebuilds every decision from the log.
func TestImportedFilesAreSnapshottedAndReplay(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	fsys := fstest.MapFS{
		"CLAUDE.md":     {Data: []byte("Project rules: @docs/style.md\n")},
		"docs/style.md": {Data: []byte("Indent with tabs.\n")},
	}
	s := newSession(t, db, fsys, Options{})
	d1 := decide(t, s)
	if !strings.Contains(d1.Prompt, "Project rules: Indent with tabs.") {
		t.Fatalf("prompt lacks the imported text:\n%s", d1.Prompt)
	}
	fsys["docs/style.md"] = &fstest.MapFile{Data: []byte("Indent with two spaces.\n")}
	d2 := decide(t, s)
	if !strings.Contains(d2.Prompt, "Project rules: Indent with two spaces.") {
		t.Fatalf("an edit of the imported file did not reach the next prompt:\n%s", d2.Prompt)
	}
	if d2.Recorded().Snapshot == d1.Recorded().Snapshot {
		t.Error("an edit of the imported file made no new snapshot")
	}
	imported := 0
	for ev, err := range db.Events(ctx, s.Task(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != events.TypeRulesSnapshot {
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range p.(*events.RulesSnapshot).Files {
			if f.Path == "docs/style.md" && f.Provider == string(rules.ProviderImport) {
				imported++
				if _, err := db.Blob(f.Blob); err != nil {
					t.Errorf("imported file's blob: %v", err)
				}
			}
		}
	}
	if imported != 2 {
		t.Errorf("docs/style.md is in %d snapshots, want 2", imported)
	}
	rep, err := Replay(ctx, db, s.Task(), ReplayOptions{})
	if err != nil || !rep.OK() || rep.Decisions != 2 {
		t.Fatalf("replay: %v %+v", err, rep)
	}
}
