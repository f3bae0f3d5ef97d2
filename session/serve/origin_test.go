package serve

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// TestTasksRecordTheMachine: the tasks a server starts, by a hook or an open, record the
// machine and user its Options name, and none when they name none.
func TestTasksRecordTheMachine(t *testing.T) {
	tests := []struct {
		name          string
		machine, user string
		hook          bool
	}{
		{"hook", "build-7", "ana", true},
		{"open", "build-7", "ana", false},
		{"unnamed", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := workspace(t)
			s, db := start(t, Options{Machine: tt.machine, User: tt.user})
			c := dial(t, s)
			var task string
			if tt.hook {
				res, err := c.Hook(context.Background(), "claude-code", preToolUse(ws, "sess-1", "toolu_1"))
				if err != nil {
					t.Fatal(err)
				}
				task = res.Task
			} else {
				task = openTask(t, c, "claude-code", ws)
			}
			evs := logOf(t, s, db, uuid.MustParse(task))
			if len(evs) == 0 || evs[0].Type != events.TypeTaskStarted {
				t.Fatalf("the log does not begin with task_started: %v", evs)
			}
			p, err := evs[0].Payload()
			if err != nil {
				t.Fatal(err)
			}
			if ts := p.(*events.TaskStarted); ts.Machine != tt.machine || ts.User != tt.user {
				t.Fatalf("task_started records machine %q user %q, want %q %q", ts.Machine, ts.User, tt.machine, tt.user)
			}
		})
	}
}

// TestPendingRunsOpenedFirst: on the open store, a request finds Opened's work pending (a
// spooled payload) and runs Opened before it; with nothing pending it does not.
func TestPendingRunsOpenedFirst(t *testing.T) {
	ws := workspace(t)
	var opened, pending atomic.Int64
	s, _ := start(t, Options{Hold: -1,
		Opened:  func(context.Context, store.Store) error { opened.Add(1); return nil },
		Pending: func() bool { return pending.Load() > 0 }})
	c := dial(t, s)
	steps := []struct {
		pending bool
		want    int64
	}{
		{false, 1}, // opening the store runs it
		{false, 1},
		{true, 2},
		{false, 2},
	}
	for i, st := range steps {
		pending.Store(0)
		if st.pending {
			pending.Store(1)
		}
		if _, err := c.Hook(context.Background(), "claude-code", preToolUse(ws, "sess-1", fmt.Sprintf("toolu_%d", i))); err != nil {
			t.Fatal(err)
		}
		if got := opened.Load(); got != st.want {
			t.Fatalf("request %d (pending %v): Opened ran %d times, want %d", i, st.pending, got, st.want)
		}
	}
}
