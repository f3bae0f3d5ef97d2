package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
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

// readFaultTasks imports bad-drift (a FAIL), toggle and remote (sound) into a store whose blobs
// of toggle's rules snapshots time out, so that toggle cannot be read to its end.
func readFaultTasks(t *testing.T) (slowBlobs, []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(filepath.Join(t.TempDir(), "t.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	logs := filepath.Join(testenv.RepoRoot(t), "testdata", "logs")
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
	return slowBlobs{db, slow}, tasks
}

// A task the store could not be read for gets no verdict, and the tasks before and after it
// are verified all the same: a FAIL before it is still told.
func TestVerifyGoesOnPastAReadFault(t *testing.T) {
	ctx := context.Background()
	db, tasks := readFaultTasks(t)
	results, failed, unread, err := verifyTasks(ctx, db, tasks, func(int) {})
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

// verify's exit status: a FAIL wins over a task without a verdict (1), which alone is 2 with a
// line saying to run verify again, and sound tasks are 0.
func TestVerifyExitWithAReadFault(t *testing.T) {
	db, tasks := readFaultTasks(t)
	failing, unread, sound := tasks[0], tasks[1], tasks[2]
	for _, tt := range []struct {
		name   string
		tasks  []uuid.UUID
		code   int
		stderr string
	}{
		{"a FAIL and a task unread", []uuid.UUID{failing, unread, sound}, exitFailed, ""},
		{"a task unread after a FAIL", []uuid.UUID{unread, failing}, exitFailed, ""},
		{"a task unread", []uuid.UUID{unread, sound}, exitUsage, "could not be read to the end of every task: run verify again for a verdict"},
		{"sound tasks", []uuid.UUID{sound}, exitOK, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := verifyAndReport(db, tt.tasks, false, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
			if tt.stderr != "" && !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr.String())
			}
			if tt.stderr == "" && strings.Contains(stderr.String(), "run verify again") {
				t.Errorf("stderr asks to run verify again though a verdict was given:\n%s", stderr.String())
			}
			verdicts := 0
			for line := range strings.Lines(stdout.String()) {
				if strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "FAIL ") || strings.HasPrefix(line, "?    ") {
					verdicts++
				}
			}
			if verdicts != len(tt.tasks) {
				t.Errorf("%d verdicts for %d tasks:\n%s", verdicts, len(tt.tasks), stdout.String())
			}
		})
	}
}
