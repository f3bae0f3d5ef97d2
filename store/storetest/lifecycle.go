package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/store"
)

// testVerify verifies sound logs of several shapes and a task that has none.
func testVerify(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	tests := []struct {
		name    string
		batches []int
	}{
		{"a log of one event", []int{1}},
		{"a log of one batch", []int{25}},
		{"a log of many batches", []int{1, 7, 1, 300, 2, 500, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is sound", func(t *testing.T) {
			task := uuid.New()
			var head uint64
			for _, n := range tt.batches {
				head = mustAppend(t, s, task, head, messages(t, n, "verified")...).Last
			}
			if err := s.Verify(context.Background(), task); err != nil {
				t.Fatalf("Verify = %v", err)
			}
		})
	}
	t.Run("a log with repeats and refusals in its history is sound", func(t *testing.T) {
		task := uuid.New()
		evs := messages(t, 4, "retried")
		mustAppend(t, s, task, 0, evs[:2]...)
		mustAppend(t, s, task, 0, evs[:2]...)
		if _, err := s.Append(context.Background(), task, 1, evs[2]); !errors.Is(err, store.ErrVersionConflict) {
			t.Fatalf("Append at a stale version = %v", err)
		}
		if _, err := s.Append(context.Background(), task, 2, evs[1], evs[2]); !errors.Is(err, store.ErrDuplicateID) {
			t.Fatalf("Append of a partial repeat = %v", err)
		}
		mustAppend(t, s, task, 2, evs[2:]...)
		checkLog(t, s, task, sealed(task, store.Head{}, evs))
		if err := s.Verify(context.Background(), task); err != nil {
			t.Fatalf("Verify = %v", err)
		}
	})
	t.Run("an unknown task is ErrTaskNotFound", func(t *testing.T) {
		if err := s.Verify(context.Background(), uuid.New()); !errors.Is(err, store.ErrTaskNotFound) {
			t.Errorf("Verify = %v, want ErrTaskNotFound", err)
		}
	})
	t.Run("a cancelled context stops it", func(t *testing.T) {
		task := uuid.New()
		mustAppend(t, s, task, 0, messages(t, 3, "cancelled")...)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Verify(ctx, task); !errors.Is(err, context.Canceled) {
			t.Errorf("Verify = %v, want context.Canceled", err)
		}
	})
}

// testClose closes a store: every method then fails with ErrClosed, and closing again is
// harmless.
func testClose(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	task := uuid.New()
	mustAppend(t, s, task, 0, messages(t, 2, "before close")...)
	blob, err := s.PutBlob([]byte("kept"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutSnapshot(task, "rules", 2, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	if path == "" {
		t.Error("Path is empty")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	ctx := context.Background()
	calls := []struct {
		name string
		call func() error
	}{
		{"Append", func() error { _, err := s.Append(ctx, task, 2, message(t, 1, "after close")); return err }},
		{"Append to a new task", func() error { _, err := s.Append(ctx, uuid.New(), 0, message(t, 1, "after close")); return err }},
		{"Events", func() error {
			for _, err := range s.Events(ctx, task, 1) {
				return err
			}
			return errors.New("the stream ended without an error")
		}},
		{"Head", func() error { _, err := s.Head(task); return err }},
		{"Tasks", func() error { _, err := s.Tasks(); return err }},
		{"PutBlob", func() error { _, err := s.PutBlob([]byte("late")); return err }},
		{"PutBlob of stored content", func() error { _, err := s.PutBlob([]byte("kept")); return err }},
		{"PutBlobs", func() error { _, err := s.PutBlobs([][]byte{[]byte("late")}); return err }},
		{"Blob", func() error { _, err := s.Blob(blob); return err }},
		{"HasBlob", func() error { _, err := s.HasBlob(blob); return err }},
		{"PutSnapshot", func() error { return s.PutSnapshot(task, "rules", 2, []byte("{}")) }},
		{"Snapshot", func() error { _, _, err := s.Snapshot(task, "rules"); return err }},
		{"Verify", func() error { return s.Verify(ctx, task) }},
	}
	for _, c := range calls {
		t.Run(c.name+" after Close is ErrClosed", func(t *testing.T) {
			if err := c.call(); !errors.Is(err, store.ErrClosed) {
				t.Errorf("%s = %v, want ErrClosed", c.name, err)
			}
		})
	}
	t.Run("Close again is harmless", func(t *testing.T) {
		if err := s.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
	})
	t.Run("Path still names the store", func(t *testing.T) {
		if s.Path() != path {
			t.Errorf("Path after Close = %q, want %q", s.Path(), path)
		}
	})
}
