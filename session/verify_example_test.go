package session_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing/fstest"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// Verifying a recorded task from Go: the chain check and the replay of its decisions.
func ExampleVerify() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "tasklog-verify")
	defer os.RemoveAll(dir)
	db, _ := store.Open(filepath.Join(dir, "tasklog.db"), nil)
	defer db.Close()
	task := uuid.New()
	s, _ := session.Open(ctx, db, task, session.Options{
		Roots: []session.Root{{Path: "/shop", FS: fstest.MapFS{
			".clinerules/web.md": {Data: []byte("---\npaths: [\"apps/web/**\"]\n---\nUse the design tokens.\n")},
		}}},
		Runtime: events.Runtime{Name: "my-agent", Version: "1.0"},
	})
	s.UserMessage(ctx, "Add a cart badge to apps/web/src/Header.tsx")
	s.Decide(ctx)
	s.Close()

	fmt.Println(check(ctx, db, task))
	// Output:
	// 1 decisions reproduced
}

func check(ctx context.Context, db store.Store, task uuid.UUID) string {
	// doc: begin
	rep, err := session.Verify(ctx, db, task)
	var replayErr *session.ReplayError
	switch {
	case errors.Is(err, store.ErrChainBroken), errors.Is(err, store.ErrCorrupt), errors.As(err, &replayErr):
		// the log is not the one written, or cannot be replayed
	case err != nil:
		// the store could not be read (a *session.ReadError among others): no verdict
	case !rep.OK():
		// rep.Changes: the decisions that do not reproduce
	}
	// doc: end
	switch {
	case err != nil:
		return err.Error()
	case !rep.OK():
		return fmt.Sprintf("%d decisions changed", len(rep.Changes))
	}
	return fmt.Sprintf("%d decisions reproduced", rep.Decisions)
}
