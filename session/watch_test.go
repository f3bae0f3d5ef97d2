package session

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
)

func streamWorkspace() fstest.MapFS {
	return fstest.MapFS{
		".tasklog/rules/no-any.md": {Data: []byte("---\ncondition: ':\\s*any\\b'\nscope: text\n---\nDo not type values as any.\n")},
		".tasklog/rules/no-rm.md":  {Data: []byte("---\ncondition: 'rm -rf'\nscope: tool\nonce: false\n---\nNever delete recursively.\n")},
	}
}

func firedNames(fired []Fired) []string {
	var n []string
	for _, f := range fired {
		n = append(n, f.Rule.Name)
	}
	return n
}

func TestWatch(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s := newSession(t, db, streamWorkspace(), Options{})
	decide(t, s)
	watch := func(s *Session, source, delta string) []string {
		t.Helper()
		fired, err := s.Watch(ctx, source, delta)
		if err != nil {
			t.Fatal(err)
		}
		return firedNames(fired)
	}
	if got := watch(s, StreamText, "const x: an"); got != nil {
		t.Fatalf("fired on a partial match: %v", got)
	}
	if got := watch(s, StreamThinking, "y"); got != nil {
		t.Errorf("a match across two streams fired: %v", got)
	}
	if got := watch(s, StreamText, "y = 1"); strings.Join(got, ",") != "no-any" {
		t.Errorf("a match across two deltas of one stream: fired %v, want [no-any]", got)
	}
	if got := watch(s, StreamText, "; let y: any"); got != nil {
		t.Errorf("a once-only rule fired twice: %v", got)
	}
	if got := watch(s, StreamText, "rm -rf /tmp/x"); got != nil {
		t.Errorf("a tool-scoped rule fired on text: %v", got)
	}
	// once: false fires again, but in a later turn: one reminder per turn, not one per delta.
	if got := watch(s, "tool:call_1", `{"command":"rm -rf build"}`); strings.Join(got, ",") != "no-rm" {
		t.Errorf("tool call 1: fired %v, want [no-rm]", got)
	}
	if got := watch(s, "tool:call_2", `{"command":"rm -rf build"}`); got != nil {
		t.Errorf("tool call 2 of the same turn: fired %v, want nothing (once per turn)", got)
	}
	decide(t, s)
	if got := watch(s, "tool:call_3", `{"command":"rm -rf dist"}`); strings.Join(got, ",") != "no-rm" {
		t.Errorf("tool call 3, next turn: fired %v, want [no-rm] (once: false)", got)
	}

	// Reopened, the session knows from the log that no-any has fired, that no-rm fired in
	// this turn, and which rules exist.
	again, err := Open(ctx, db, s.Task(), Options{Roots: []Root{{Path: "/ws", FS: streamWorkspace()}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := watch(again, StreamText, "function f(a: any)"); got != nil {
		t.Errorf("after a restart no-any fired again: %v", got)
	}
	if got := watch(again, "tool:call_9", "rm -rf dist"); got != nil {
		t.Errorf("after a restart in the same turn no-rm fired again: %v", got)
	}
	decide(t, again)
	if got := watch(again, "tool:call_10", "rm -rf dist"); strings.Join(got, ",") != "no-rm" {
		t.Errorf("after a restart, next turn: fired %v, want [no-rm]", got)
	}
	if n := again.state.TriggerCount("tasklog:/ws/.tasklog/rules/no-rm.md"); n != 3 {
		t.Errorf("no-rm fired %d times in the log, want 3", n)
	}
}

func TestWatchBufferIsBounded(t *testing.T) {
	s := newSession(t, openDB(t), streamWorkspace(), Options{})
	decide(t, s)
	chunk := strings.Repeat("nothing to see here. ", 200)
	for range 500 {
		if _, err := s.Watch(context.Background(), StreamText, chunk); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.watch.windows[StreamText].buf); n > watchWindow {
		t.Errorf("stream buffer holds %d bytes, more than the %d-byte window", n, watchWindow)
	}
}

func TestWatchSkipsToggledOffRules(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, openDB(t), streamWorkspace(), Options{})
	decide(t, s)
	s.Toggle(ctx, "tasklog:/ws/.tasklog/rules/no-any.md", false)
	fired, err := s.Watch(ctx, StreamText, "x: any")
	if err != nil || len(fired) != 0 {
		t.Errorf("a toggled-off rule fired: %v %v", firedNames(fired), err)
	}
}
