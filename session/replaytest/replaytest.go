// Package replaytest replays recorded task logs in a runtime's own tests, as Temporal's workflow
// replayer does: every decision in every log is recomputed with today's code and rules engine,
// and the test fails with the first difference, naming the file, the turn and the rule.
//
//	func TestRecordedSessions(t *testing.T) { replaytest.Dir(t, "testdata/logs") }
package replaytest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// ErrDiffers is returned by File when a recomputed decision differs from the recorded one.
var ErrDiffers = errors.New("decision differs from the recorded one")

// Dir replays every *.jsonl file in dir except those named bad-*, each as a subtest, and fails
// the test with the first difference of each file.
func Dir(t testing.TB, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	n := 0
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "bad-") {
			continue
		}
		n++
		if tt, ok := t.(*testing.T); ok {
			tt.Run(filepath.Base(f), func(t *testing.T) {
				if err := File(f); err != nil {
					t.Fatal(err)
				}
			})
		} else if err := File(f); err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Fatalf("replaytest: no logs in %s", dir)
	}
}

// File imports one exported log into a scratch database, checks its hash chain and recomputes
// every decision. The error names the file, and for a difference the turn and rule.
func File(path string) error {
	dir, err := os.MkdirTemp("", "tasklog-replaytest")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(filepath.Join(dir, "replay.db"), &store.Options{NoSync: true})
	if err != nil {
		return err
	}
	defer db.Close()
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	ctx := context.Background()
	name := filepath.Base(path)
	tasks, err := session.Import(ctx, db, in, name, session.ImportOptions{})
	if err != nil {
		return err
	}
	decisions := 0
	for _, task := range tasks {
		if err := db.Verify(ctx, task.Task); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		rep, err := session.Replay(ctx, db, task.Task, session.ReplayOptions{})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if !rep.OK() {
			return fmt.Errorf("%s: %w: %s (%s differ)", name, ErrDiffers, rep.Changes[0], rep.Tally())
		}
		decisions += rep.Decisions
	}
	if decisions == 0 {
		return fmt.Errorf("%s: the log records no decision to replay", name)
	}
	return nil
}
