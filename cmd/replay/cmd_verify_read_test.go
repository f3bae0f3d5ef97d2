package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// slowBlobs is a store that times out reading the blobs named in it, as a NATS server does in
// the seconds of an election.
type slowBlobs struct {
	*store.DB
	slow map[string]bool
}

func (s slowBlobs) Blob(sum string) ([]byte, error) {
	if s.slow[sum] {
		return nil, fmt.Errorf("blob %s: %w", sum, context.DeadlineExceeded)
	}
	return s.DB.Blob(sum)
}

// A task the store could not be read for gets no verdict, and the tasks before and after it
// are verified all the same: a FAIL before it is still told.
func TestVerifyGoesOnPastAReadFault(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(filepath.Join(t.TempDir(), "t.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	logs := filepath.Join(repoRoot(t), "testdata", "logs")
	var tasks []uuid.UUID
	for _, name := range []string{"bad-drift", "toggle", "remote"} {
		f, err := os.Open(filepath.Join(logs, name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		imported, err := session.Import(ctx, db, f, name, session.ImportOptions{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, imported[0].Task)
	}
	// Every blob of toggle's rules snapshots reads slowly.
	slow := map[string]bool{}
	for ev, err := range db.Events(ctx, tasks[1], 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == events.TypeRulesSnapshot {
			p, _ := ev.Payload()
			for _, f := range p.(*events.RulesSnapshot).Files {
				slow[f.Blob] = true
			}
		}
	}
	results, failed, unread, err := verifyTasks(ctx, slowBlobs{db, slow}, tasks, func(int) {})
	if err != nil || !failed || !unread || len(results) != 3 {
		t.Fatalf("verifyTasks = %d results, failed %v, unread %v, %v; want 3, a FAIL and a task unread", len(results), failed, unread, err)
	}
	if v := []string{results[0].Verdict, results[1].Verdict, results[2].Verdict}; strings.Join(v, " ") != "fail none ok" {
		t.Errorf("verdicts %v, want fail none ok", v)
	}
	var lines strings.Builder
	for _, r := range results {
		printVerdict(&lines, r)
	}
	got := lines.String()
	for _, want := range []string{
		"FAIL " + tasks[0].String() + ": 1 of 5 decisions differ",
		"?    " + tasks[1].String() + ": no verdict: the store could not be read (",
		"context deadline exceeded); nothing was found wrong in what was read",
		"ok   " + tasks[2].String() + ":",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("verdicts lack %q:\n%s", want, got)
		}
	}
}
