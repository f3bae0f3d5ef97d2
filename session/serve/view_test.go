package serve

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tasklog/tasklog/store"
)

// TestViewAndChanged: Changed is closed when a hook ends, View reads what it appended (the
// server holding the database), reading tells no one, and after shutdown View refuses.
func TestViewAndChanged(t *testing.T) {
	s, _ := start(t, Options{})
	ws := workspace(t)
	c := dial(t, s)
	ctx := context.Background()
	changed := s.Changed()
	if _, err := c.Hook(ctx, "claude-code", preToolUse(ws, "s-view", "toolu_1")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(slow):
		t.Fatalf("Changed not closed within %s of a hook", slow)
	}
	var tasks []store.TaskInfo
	next := s.Changed()
	if err := s.View(ctx, func(db store.Store) error {
		var err error
		tasks, err = db.Tasks()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || tasks[0].Events == 0 {
		t.Fatalf("View sees tasks %+v, want the hook's", tasks)
	}
	select {
	case <-next:
		t.Errorf("a View closed Changed: readers would wake each other up for ever")
	default:
	}
	s.Shutdown()
	<-s.Done()
	select {
	case <-next:
	default:
		t.Errorf("Changed is still open after the server stopped: event streams would wait for ever")
	}
	err := s.View(ctx, func(store.Store) error { return nil })
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeShuttingDown {
		t.Errorf("View after shutdown: %v, want %s", err, CodeShuttingDown)
	}
}
