package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// TestExportFailureKeepsTheLastFile: an export that fails halfway (here a rule file's content
// is missing from the database) leaves the file it was to replace as it was, and no partial
// or temporary file beside it.
func TestExportFailureKeepsTheLastFile(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "t.db")
	db, err := store.Open(dbPath, &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	task := uuid.New()
	var evs []events.Event
	ids := events.NewIDSource(nil)
	for _, p := range []events.Payload{
		&events.TaskStarted{Roots: []string{"/ws"}},
		&events.UserMessage{Text: "hello"},
		&events.RulesSnapshot{Files: []events.SnapshotFile{{Provider: "cline", Scope: "workspace", Path: "a.md", Blob: strings.Repeat("ab", 32)}}},
	} {
		ev, err := events.New(p)
		if err != nil {
			t.Fatal(err)
		}
		ev.Turn = 1
		if ev.ID, err = ids.New(time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if _, err := db.Append(context.Background(), task, 0, evs...); err != nil {
		t.Fatal(err)
	}
	db.Close()

	out := filepath.Join(dir, "out", "export.jsonl")
	os.Mkdir(filepath.Dir(out), 0o755)
	if err := os.WriteFile(out, []byte("the last good export\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := replayHere("export", task.String(), "--db", dbPath, "-o", out)
	if code != exitUsage || !strings.Contains(stderr, "a.md") && !strings.Contains(stderr, "blob") {
		t.Fatalf("export: exit %d, %s; want exit 2 naming the missing blob", code, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "the last good export\n" {
		t.Errorf("the failed export changed the file it was to replace: %q", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the failed export left %v beside the file", names)
	}
	// A successful export replaces the file whole and keeps its mode.
	code, _, stderr = replayHere("import", filepath.Join(testenv.RepoRoot(t), "testdata", "logs", "monorepo.jsonl"), "--db", dbPath)
	if code != exitOK {
		t.Fatal(stderr)
	}
	if code, _, stderr = replayHere("export", "0b3c", "--db", dbPath, "-o", out); code != exitOK {
		t.Fatal(stderr)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the export's mode: %v, %v; want the replaced file's 0640", fi.Mode(), err)
	}
}
