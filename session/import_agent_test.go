package session

import (
	"context"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	testsamples "github.com/tasklog/tasklog/session/replaytest/samples"
)

// samplesDir is the real samples folder joined with elem; the test skips with one line when it
// is missing.
func samplesDir(t *testing.T, elem ...string) string {
	t.Helper()
	return testsamples.Dir(t, elem...)
}

// The Codex sample's user mentions @packages/services/src/createService.ts at the first turn: a
// rule scoped to packages/services/** applies there, from the mention, and the import replays.
func TestImportAgentDecidesAgainstWorkspace(t *testing.T) {
	ctx := context.Background()
	files, _ := filepath.Glob(filepath.Join(samplesDir(t, "sessions", "codex"), "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no codex sample")
	}
	ws := fstest.MapFS{
		".clinerules/services.md": {Data: []byte("---\npaths: [\"packages/services/**\"]\n---\nUse createService.\n")},
		"AGENTS.md":               {Data: []byte("Run pnpm check.\n")},
	}
	db := openDB(t)
	s, rep, err := ImportAgent(ctx, db, files[0], AgentImportOptions{Agent: agentlog.Codex,
		Roots: func(recorded []string) ([]Root, error) {
			return []Root{{Path: recorded[0], FS: ws}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Turns != 35 {
		t.Errorf("turns = %d, want 35", rep.Turns)
	}
	x, err := s.Explain(ctx, 1, "services")
	if err != nil {
		t.Fatal(err)
	}
	fromMention := false
	for _, m := range x.Rule.Matches {
		for _, src := range events.SourcesOf(x.Context, m.Root, m.Path) {
			fromMention = fromMention || src.Kind == "mention"
		}
	}
	if !x.Included || !fromMention {
		t.Errorf("turn 1 services rule:\n%s", x)
	}
	if r, err := Replay(ctx, db, s.Task(), ReplayOptions{}); err != nil || !r.OK() {
		t.Errorf("replay of the import: %v %+v", err, r.Changes)
	}
}
