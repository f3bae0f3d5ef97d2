package session

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// TestRequests numbers decisions by prompt and request: a decision before the first user
// message is prompt 0, each user message starts a prompt whose requests count from 1, and
// --prompt's last request and a request by number find their turn.
func TestRequests(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s := newSession(t, db, clineWorkspace(), Options{})
	read := func(p string) {
		if _, err := s.ToolCall(ctx, "read_file", "", json.RawMessage(`{"path":"`+p+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	read("apps/web/a.ts")
	decide(t, s) // turn 1: before any prompt
	s.UserMessage(ctx, "first")
	decide(t, s) // turn 2
	read("apps/web/b.ts")
	decide(t, s) // turn 3
	read("apps/web/c.ts")
	decide(t, s) // turn 4
	s.UserMessage(ctx, "second")
	decide(t, s) // turn 5
	s.UserMessage(ctx, "third, no decision yet")

	reqs, err := RequestsOf(ctx, db, s.Task())
	if err != nil {
		t.Fatal(err)
	}
	want := []Position{{0, 1}, {1, 1}, {1, 2}, {1, 3}, {2, 1}}
	for i, w := range want {
		if got := reqs.At(i + 1); got != w {
			t.Errorf("turn %d is %v, want %v", i+1, got, w)
		}
	}
	if got := reqs.At(6); got != (Position{3, 1}) {
		t.Errorf("the turn after the last decision is %v, want prompt 3, request 1", got)
	}
	for _, c := range []struct {
		at   Position
		turn int
		ok   bool
	}{
		{Position{Prompt: 1}, 4, true},
		{Position{Prompt: 1, Request: 2}, 3, true},
		{Position{Prompt: 0}, 1, true},
		{Position{Prompt: 2, Request: 2}, 0, false},
		{Position{Prompt: 3}, 0, false},
	} {
		if turn, ok := reqs.Turn(c.at); turn != c.turn || ok != c.ok {
			t.Errorf("Turn(%v) = %d, %v; want %d, %v", c.at, turn, ok, c.turn, c.ok)
		}
	}
	if _, err := TurnOfPrompt(ctx, db, s.Task(), 3); !errors.Is(err, ErrNoDecision) {
		t.Errorf("TurnOfPrompt of a prompt without a decision: %v, want ErrNoDecision", err)
	}
	rec, err := DecisionAt(ctx, db, s.Task(), 3)
	if err != nil || rec.Position != (Position{1, 2}) {
		t.Errorf("DecisionAt(3) is at %v (%v), want prompt 1, request 2", rec.Position, err)
	}
	all, err := Decisions(ctx, db, s.Task())
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range all {
		if r.Position != want[i] {
			t.Errorf("Decisions()[%d] is at %v, want %v", i, r.Position, want[i])
		}
	}
	if got := rec.Requests.Source(rec.Decision.Context[0].Sources[0]); got == "" || got == SourceString(rec.Decision.Context[0].Sources[0]) {
		t.Errorf("a source named by request reads %q, as by turn", got)
	}
}
