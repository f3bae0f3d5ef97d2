package hookconf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tasklog/tasklog/session/serve/wire"
)

func TestRuntimeDir(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", base)
	dir, err := RuntimeDir()
	if err != nil || dir != filepath.Join(base, "tasklog") {
		t.Fatalf("RuntimeDir = %q, %v; want %s", dir, err, filepath.Join(base, "tasklog"))
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the folder: %v, %v; want mode 0700", st.Mode(), err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := RuntimeDir(); err == nil || !strings.Contains(err.Error(), ErrNotPrivate.Error()) {
		t.Fatalf("a folder others may enter: %v, want it refused", err)
	}
	t.Setenv("XDG_RUNTIME_DIR", "relative")
	if dir, err := RuntimeDir(); err != nil || dir != wire.PrivateDir() {
		t.Fatalf("with a relative XDG_RUNTIME_DIR: %q, %v; want %s", dir, err, wire.PrivateDir())
	}
}

// TestServerUnanswered: the note lasts ServerSkip, belongs to one database, and is not taken
// from a folder others may enter.
func TestServerUnanswered(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	db, other := filepath.Join(t.TempDir(), "a.db"), filepath.Join(t.TempDir(), "b.db")
	if ServerUnanswered(db) {
		t.Fatal("unanswered before any note")
	}
	MarkServerUnanswered(db)
	if !ServerUnanswered(db) || ServerUnanswered(other) {
		t.Fatalf("after the note: %v for its database, %v for another; want true, false", ServerUnanswered(db), ServerUnanswered(other))
	}
	p, err := serverMarker(db, false)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-ServerSkip - time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if ServerUnanswered(db) {
		t.Fatal("a note older than ServerSkip still counts")
	}
	MarkServerUnanswered(db)
	os.Chmod(filepath.Dir(p), 0o777)
	if ServerUnanswered(db) {
		t.Fatal("a note in a folder others may enter counts")
	}
}

func TestServerTimedOut(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&wire.Error{Code: "timeout"}, true},
		{&wire.Error{Code: "busy"}, false},
		{os.ErrDeadlineExceeded, true},
		{&os.PathError{Op: "connect", Path: "x", Err: os.ErrDeadlineExceeded}, true},
		{context.DeadlineExceeded, false}, // the hook's own budget, spent before it asked
		{&os.PathError{Op: "connect", Path: "x", Err: syscall.ECONNREFUSED}, false},
		{errors.New("receive hook: EOF"), false},
	} {
		if got := ServerTimedOut(tt.err); got != tt.want {
			t.Errorf("ServerTimedOut(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
