package replaytest_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/session/replaytest"
)

var logs = filepath.Join("..", "..", "testdata", "logs")

// This is the whole regression test a runtime writes for its recorded sessions.
func TestRepositoryLogs(t *testing.T) {
	replaytest.Dir(t, logs)
}

// TestFirstFormatLogs replays logs written before decisions could be written against the one
// before them (decision schema v1): old recordings keep passing.
func TestFirstFormatLogs(t *testing.T) {
	replaytest.Dir(t, filepath.Join(logs, "v1"))
}

// TestEngineLogs replays the sessions recorded under each earlier rule engine: the same Cursor
// session in rules1 (the attached manual rule left out, no duplicate_key diagnostic) and rules2
// (both), and in rules2 sessions over a legacy .clinerules file, which rules/2 sent as written
// (a Cline task, and Claude Code tasks whose hooks delivered it: with a --- block, an unclosed
// one, keys without fences). Each decision and delivery is decided again as its engine decided
// it, so no engine's decisions change unnoticed.
func TestEngineLogs(t *testing.T) {
	for _, engine := range []string{"rules1", "rules2", "rules3"} {
		t.Run(engine, func(t *testing.T) { replaytest.Dir(t, filepath.Join(logs, engine)) })
	}
}

func TestFileNamesTheFirstDifference(t *testing.T) {
	err := replaytest.File(filepath.Join(logs, "bad-drift.jsonl"))
	if !errors.Is(err, replaytest.ErrDiffers) {
		t.Fatalf("err = %v, want ErrDiffers", err)
	}
	for _, want := range []string{"bad-drift.jsonl", "turn 1", "rule frontend", "1 of 5 decisions differ"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestFileRefusesABrokenChain(t *testing.T) {
	err := replaytest.File(filepath.Join(logs, "bad-tampered.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "bad-tampered.jsonl:8") {
		t.Fatalf("err = %v, want the file and line of the altered event", err)
	}
}

// dirRecorder stands in for *testing.T to see what Dir reports on a directory with no logs.
type dirRecorder struct {
	testing.TB
	failed string
}

func (d *dirRecorder) Helper()                   {}
func (d *dirRecorder) Fatal(args ...any)         { d.failed = fmt.Sprint(args...) }
func (d *dirRecorder) Fatalf(f string, a ...any) { d.failed = fmt.Sprintf(f, a...) }

func TestDirWithoutLogsFails(t *testing.T) {
	r := &dirRecorder{TB: t}
	replaytest.Dir(r, t.TempDir())
	if !strings.Contains(r.failed, "no logs") {
		t.Errorf("Dir on an empty folder reported %q, want a failure saying there are no logs", r.failed)
	}
}
