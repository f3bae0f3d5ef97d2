package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tasklog/tasklog/events"
)

// writeFiles writes each file (a path relative to dir, slash-separated) with its content.
func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// checkToolCallsOnce fails t unless the task in db holds want distinct tool calls, each
// recorded exactly once.
func checkToolCallsOnce(t *testing.T, db string, want int) {
	t.Helper()
	calls := map[string]int{}
	for _, ev := range taskEvents(t, db) {
		if ev.Type != events.TypeToolCall {
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			t.Fatal(err)
		}
		calls[p.(*events.ToolCall).ID]++
	}
	if len(calls) != want {
		t.Errorf("%d distinct tool calls recorded, want %d", len(calls), want)
	}
	for id, n := range calls {
		if n != 1 {
			t.Errorf("tool call %s recorded %d times", id, n)
		}
	}
}
