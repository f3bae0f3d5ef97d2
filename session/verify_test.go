package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store"
)

// verifiedTask records a short hook task with three decisions and their deliveries.
func verifiedTask(t *testing.T) (store.Store, uuid.UUID) {
	t.Helper()
	db := openDB(t)
	a := openAgent(t, db, agentlog.ClaudeCode)
	for i, p := range []string{"/ws/src/api/routes.ts", "/ws/docs/a.md", "/ws/src/api/b.ts"} {
		deliverAfter(t, a, fmt.Sprint(i), p)
	}
	return db, a.Task()
}

// copyLog writes task's log into a new store through Append, which seals it again, changing
// each event with change first: a log whose chain is sound, whatever its events say.
func copyLog(t *testing.T, from store.Store, task uuid.UUID, change func(ev *events.Event)) store.Store {
	t.Helper()
	ctx := context.Background()
	to := openDB(t)
	for ev, err := range from.Events(ctx, task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == events.TypeRulesSnapshot {
			p, err := ev.Payload()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range p.(*events.RulesSnapshot).Files {
				b, err := from.Blob(f.Blob)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := to.PutBlobs([][]byte{b}); err != nil {
					t.Fatal(err)
				}
			}
		}
		change(&ev)
		if _, err := to.Append(ctx, task, ev.Seq-1, ev); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// Verify replays beside the chain check: a sound log reproduces; a decision rewritten in a log
// whose chain was sealed again over it is found by the replay.
func TestVerifyReplaysTheDecisions(t *testing.T) {
	ctx := context.Background()
	db, task := verifiedTask(t)
	rep, err := Verify(ctx, db, task)
	if err != nil || !rep.OK() || rep.Decisions != 3 || rep.Deliveries == 0 {
		t.Fatalf("Verify = %+v, %v; want three decisions and their deliveries reproduced", rep, err)
	}
	forged := copyLog(t, db, task, func(ev *events.Event) {
		if ev.Type != events.TypeDecision || ev.Seq != rep.Events-1 && ev.Seq != rep.Events {
			return
		}
		// The engine version of the last decision, which is written in full or as a delta.
		ev.Data = []byte(strings.Replace(string(ev.Data), `"engine":"`, `"engine":"forged-`, 1))
	})
	if err := forged.Verify(ctx, task); err != nil {
		t.Fatalf("the copy's chain: %v", err)
	}
	rep, err = Verify(ctx, forged, task)
	if err != nil || rep.OK() || !strings.Contains(fmt.Sprint(rep.Changes), "engine forged-") {
		t.Fatalf("Verify of a forged decision = %+v, %v; want the changed engine reported", rep, err)
	}
}

// brokenChain is a store whose chain check fails.
type brokenChain struct{ store.Store }

func (b brokenChain) Verify(ctx context.Context, task uuid.UUID) error {
	return &store.VerifyError{Task: task, Seq: 2, Problem: "hash mismatch"}
}

// failingBlobs is a store that cannot read a rules snapshot's blobs.
type failingBlobs struct{ store.Store }

func (failingBlobs) Blob(string) ([]byte, error) { return nil, errors.New("blob unreadable") }

// The chain's verdict comes first; a replay that fails over a sound chain is a ReplayError.
func TestVerifyChainFirst(t *testing.T) {
	ctx := context.Background()
	db, task := verifiedTask(t)
	rep, err := Verify(ctx, brokenChain{db}, task)
	var ve *store.VerifyError
	if !errors.Is(err, store.ErrChainBroken) || !errors.As(err, &ve) || ve.Seq != 2 || rep.Decisions != 0 {
		t.Fatalf("Verify over a broken chain = %+v, %v; want the chain's error and no report", rep, err)
	}
	_, err = Verify(ctx, failingBlobs{db}, task)
	var re *ReplayError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "blob unreadable") || errors.Is(err, store.ErrChainBroken) {
		t.Fatalf("Verify with unreadable blobs = %v; want a ReplayError", err)
	}
	if _, err := Verify(ctx, db, uuid.New()); !errors.Is(err, store.ErrTaskNotFound) {
		t.Fatalf("Verify of an unknown task = %v, want ErrTaskNotFound", err)
	}
}
