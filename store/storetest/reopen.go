package storetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// RunReopen runs the scenarios about what outlives a store: it writes through a store from
// open, closes it, and checks that the store reopen returns on the same log holds everything
// acknowledged and keeps its promises about it. reopen is given the closed store (its Path
// names the log) and, like open, must arrange for what it returns to be closed when t ends.
func RunReopen(t *testing.T, open func(t *testing.T) store.Store, reopen func(t *testing.T, closed store.Store) store.Store) {
	s := open(t)
	ctx := context.Background()
	task, other := uuid.New(), uuid.New()
	first := messages(t, 5, "before the reopen")
	logged := mustAppend(t, s, task, 0, first[:3]...).Events
	logged = append(logged, mustAppend(t, s, task, 3, first[3:]...).Events...)
	otherLog := mustAppend(t, s, other, 0, imported(t, 0), imported(t, 1)).Events
	blob := []byte("content that outlives the store")
	sum, err := s.PutBlob(blob)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutSnapshot(task, "rules", 4, []byte(`{"at":4}`)); err != nil {
		t.Fatal(err)
	}
	tasksBefore, err := s.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	r := reopen(t, s)

	t.Run("every acknowledged event is read back as it was", func(t *testing.T) {
		checkLog(t, r, task, logged)
		checkLog(t, r, other, otherLog)
	})
	t.Run("the task list is the same", func(t *testing.T) {
		got, err := r.Tasks()
		if err != nil || !slices.Equal(got, tasksBefore) {
			t.Errorf("Tasks = %+v, %v; want %+v", got, err, tasksBefore)
		}
	})
	t.Run("blobs and snapshots are kept", func(t *testing.T) {
		if got, err := r.Blob(sum); err != nil || !bytes.Equal(got, blob) {
			t.Errorf("Blob = %q, %v; want %q", got, err, blob)
		}
		if seq, data, err := r.Snapshot(task, "rules"); err != nil || seq != 4 || string(data) != `{"at":4}` {
			t.Errorf("Snapshot = %d, %q, %v; want 4, {\"at\":4}", seq, data, err)
		}
	})
	tests := []struct {
		name     string
		expected uint64
		evs      []events.Event
		first    uint64 // 0: refused with ErrDuplicateID
	}{
		{"an exact repeat of a batch is a duplicate", 0, first[:3], 1},
		{"an exact repeat of the last batch at the head is a duplicate", 5, first[3:], 4},
		{"a partial repeat is refused", 5, []events.Event{first[4], message(t, 2, "new")}, 0},
		{"a repeat in another order is refused", 5, []events.Event{first[4], first[3]}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := r.Append(ctx, task, tt.expected, tt.evs...)
			if tt.first == 0 {
				if !errors.Is(err, store.ErrDuplicateID) {
					t.Fatalf("Append = %+v, %v; want ErrDuplicateID", a, err)
				}
			} else {
				if err != nil || !a.Duplicate || a.First != tt.first {
					t.Fatalf("Append = seq %d duplicate %v, %v; want a duplicate at seq %d", a.First, a.Duplicate, err, tt.first)
				}
				sameEvents(t, "the events of the duplicate answer", a.Events, logged[tt.first-1:tt.first-1+uint64(len(tt.evs))])
			}
			checkLog(t, r, task, logged)
		})
	}
	t.Run("a stale version is a conflict at the stored head", func(t *testing.T) {
		_, err := r.Append(ctx, task, 3, message(t, 2, "stale"))
		var vc *store.VersionConflictError
		if !errors.As(err, &vc) || vc.Actual != 5 {
			t.Fatalf("Append = %v, want a conflict with actual head 5", err)
		}
	})
	t.Run("the chain continues from the stored head", func(t *testing.T) {
		next := messages(t, 3, "after the reopen")
		a := mustAppend(t, r, task, 5, next...)
		want := append(slices.Clone(logged), sealed(task, store.Head{Seq: 5, Hash: logged[4].Hash}, next)...)
		sameEvents(t, "the events appended after the reopen", a.Events, want[5:])
		checkLog(t, r, task, want)
	})
}
