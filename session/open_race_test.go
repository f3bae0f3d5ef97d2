package session

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/store"
)

// staleHead is a store whose Head answers one event behind, as a head read just before another
// writer appended: the read that follows sees the newer event.
type staleHead struct {
	store.Store
	lag uint64
}

func (s staleHead) Head(task uuid.UUID) (store.Head, error) {
	h, err := s.Store.Head(task)
	if err != nil || s.lag == 0 || h.Seq <= s.lag {
		return h, err
	}
	for ev, err := range s.Store.Events(context.Background(), task, h.Seq-s.lag) {
		if err != nil {
			return store.Head{}, err
		}
		return store.Head{Seq: ev.Seq, Hash: ev.Hash, LastTurn: ev.Turn}, nil
	}
	return h, nil
}

// A task that grows between the read of its head and the read of its events opens at the later
// head (another writer's append is no broken chain), and the session appends after it; a log
// with fewer events than its head says is still a broken chain.
func TestOpenWhileAnotherWriterAppends(t *testing.T) {
	db := openDB(t)
	first := newSession(t, db, clineWorkspace(), Options{})
	ctx := context.Background()
	for _, text := range []string{"one", "two", "three"} {
		if _, err := first.UserMessage(ctx, text); err != nil {
			t.Fatal(err)
		}
	}
	want := first.Version()
	opts := Options{Roots: []Root{{Path: "/ws", FS: clineWorkspace()}}, Now: fixedClock()}
	s, err := Open(ctx, staleHead{Store: db, lag: 1}, first.Task(), opts)
	if err != nil {
		t.Fatalf("open while the log grew: %v", err)
	}
	if s.Version() != want {
		t.Fatalf("opened at version %d, want the later head %d", s.Version(), want)
	}
	if err := s.Reattach(db); err != nil {
		t.Fatalf("the session's head is not the log's: %v", err)
	}
	if _, err := s.UserMessage(ctx, "four"); err != nil {
		t.Fatalf("append after an open that saw the log grow: %v", err)
	}

	// A head beyond the events: a broken chain, as before.
	_, err = Open(ctx, aheadHead{db}, first.Task(), opts)
	if !errors.Is(err, store.ErrChainBroken) {
		t.Fatalf("a head past the last event: %v, want ErrChainBroken", err)
	}
}

// aheadHead is a store whose Head claims one event more than its log holds.
type aheadHead struct{ store.Store }

func (s aheadHead) Head(task uuid.UUID) (store.Head, error) {
	h, err := s.Store.Head(task)
	h.Seq++
	return h, err
}
