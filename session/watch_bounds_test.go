package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A once: false rule fed the same match delta after delta writes one event per turn, not one
// per delta.
func TestWatchRepeatingRuleFiresOncePerTurn(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, openDB(t), streamWorkspace(), Options{})
	decide(t, s)
	for turn := 1; turn <= 3; turn++ {
		before := s.Version()
		n := 0
		for i := range 200 {
			fired, err := s.Watch(ctx, fmt.Sprintf("tool:t%d_c%d", turn, i%4), "rm -rf x ")
			if err != nil {
				t.Fatal(err)
			}
			n += len(fired)
		}
		if n != 1 || s.Version() != before+1 {
			t.Errorf("turn %d: 200 matching deltas fired %d times and wrote %d events; want 1 and 1",
				turn, n, s.Version()-before)
		}
		decide(t, s)
	}
}

// Every distinct tool stream used to keep its window for the life of the session.
func TestWatchKeepsABoundedNumberOfWindows(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, openDB(t), streamWorkspace(), Options{})
	decide(t, s)
	chunk := strings.Repeat("x", watchWindow)
	for i := range 1000 {
		if _, err := s.Watch(ctx, fmt.Sprintf("tool:call_%d", i), chunk); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.watch.windows); n > maxWindows {
		t.Fatalf("%d windows kept after 1,000 tool streams, want at most %d", n, maxWindows)
	}
	total := 0
	for _, w := range s.watch.windows {
		total += len(w.buf)
	}
	if total > maxWindows*watchWindow {
		t.Errorf("windows hold %d bytes, over %d", total, maxWindows*watchWindow)
	}
	// The least recently fed went: the newest stream is still there, the first is not.
	if s.watch.windows["tool:call_999"] == nil || s.watch.windows["tool:call_0"] != nil {
		t.Errorf("eviction did not drop the least recently used window")
	}
}

func TestWatchWindowEndsWithItsCall(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, openDB(t), streamWorkspace(), Options{})
	decide(t, s)
	watch := func(source, delta string) []string {
		t.Helper()
		fired, err := s.Watch(ctx, source, delta)
		if err != nil {
			t.Fatal(err)
		}
		return firedNames(fired)
	}
	watch("tool:call_1", `{"command":"rm -`)
	watch("tool:call_2", `{"command":"ls`)
	// The runtime records call 1 once its arguments are complete: its window goes.
	if _, err := s.ToolCall(ctx, "execute_command", "call_1", []byte(`{"command":"rm -x"}`)); err != nil {
		t.Fatal(err)
	}
	watch(StreamText, "ok")
	if s.watch.windows["tool:call_1"] != nil {
		t.Errorf("the window of a recorded tool call is still kept")
	}
	if s.watch.windows["tool:call_2"] == nil {
		t.Errorf("the window of a call not yet recorded was dropped")
	}
	// A stream that reuses the id starts empty, so the old half does not complete a match.
	if got := watch("tool:call_1", `rf /"}`); got != nil {
		t.Errorf("a match spanned a recorded call and a new one: %v", got)
	}
	s.EndStream("tool:call_2")
	if s.watch.windows["tool:call_2"] != nil {
		t.Errorf("EndStream kept the window")
	}
	// A new turn starts every stream afresh.
	watch(StreamText, "let v: an")
	decide(t, s)
	if got := watch(StreamText, "y"); got != nil {
		t.Errorf("a match spanned two turns: %v", got)
	}
}

// BenchmarkWatchManyToolStreams feeds 12,800 tool calls' arguments of 4 KiB each, as a long
// agent session does, and reports the heap Watch's windows keep afterwards.
func BenchmarkWatchManyToolStreams(b *testing.B) {
	ctx := context.Background()
	chunk := strings.Repeat("y", watchWindow)
	var kept int
	for range b.N {
		s := newSession(b, openDB(b), streamWorkspace(), Options{})
		decide(b, s)
		for i := range 12800 {
			if _, err := s.Watch(ctx, fmt.Sprintf("tool:call_%d", i), chunk); err != nil {
				b.Fatal(err)
			}
		}
		kept = 0
		for _, w := range s.watch.windows {
			kept += cap(w.buf)
		}
	}
	b.ReportMetric(float64(kept)/1024, "window-KiB")
}
